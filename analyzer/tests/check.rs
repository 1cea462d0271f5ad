//! `check`: the repository's own config passes; a config over every example case analyses them
//! all; a failing config exits 1 with findings as text (source snippets), JSON, GitHub
//! annotations and SARIF 2.1.0 (checked for the schema's required fields); bad configs are
//! usage errors that name the place.

use sector_analyzer::check::{check_config, render_sarif, Config};
use sector_analyzer::manifest::{examples_in, Manifest};
use sector_analyzer::source::DiskLoader;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({
        snapshot_path => "../../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

fn check_cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sector-estimate")).current_dir(root()).arg("check").args(args).output().unwrap()
}

const FAILING: &str = "analyzer/tests/check/failing.toml";

#[test]
fn repository_config_passes() {
    let o = check_cli(&[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("every budget holds"), "{text}");
    // The book's chapter on check says how many launches this config holds.
    let launches: String =
        text.split("sector-estimate.toml: ").nth(1).unwrap_or("").chars().take_while(char::is_ascii_digit).collect();
    let chapter = std::fs::read_to_string(root().join("docs/src/check.md")).unwrap();
    let claim = format!("holds every example to budgets ({launches} launches)");
    assert!(chapter.split_whitespace().collect::<Vec<_>>().join(" ").contains(&claim), "docs/src/check.md: `{claim}`");
}

/// Every case of every example, held to loose budgets: each launch is analysed. The repository's
/// config (run above) holds most manifests already; this runs the others, and asserts that
/// together they are every example's.
#[test]
fn every_example_case_is_checked() {
    let repo_config = std::fs::read_to_string(root().join("sector-estimate.toml")).unwrap();
    let mut toml = String::from("[budgets]\nmax_sectors_per_request = 64\n");
    let mut cases = 0;
    for (src, manifest) in examples_in(&root().join("examples")) {
        let relative = manifest.strip_prefix(root()).unwrap_or(&manifest).display().to_string();
        if repo_config.contains(&format!("manifest = {relative:?}")) {
            continue;
        }
        cases += Manifest::load(&manifest).unwrap().cases.len();
        toml.push_str(&format!(
            "\n[[kernel]]\nfile = {:?}\nmanifest = {:?}\n",
            src.display().to_string(),
            manifest.display().to_string()
        ));
    }
    assert!(cases > 0, "sector-estimate.toml holds every example: drop this test's second half");
    let path = root().join("target").join("every-example-check.toml");
    let config = Config::parse(&toml, &path).unwrap_or_else(|d| panic!("{}", d.message));
    let r = check_config(&config, &path, &DiskLoader).unwrap();
    assert_eq!(r.launches, cases);
    let failed: Vec<&String> = r.findings.iter().map(|f| &f.finding.message).collect();
    assert!(r.passed, "{failed:#?}");
    assert!(r.checked.iter().all(|c| c.ok && c.accesses > 0));
}

#[test]
fn failing_config_text_json_github_sarif() {
    let o = check_cli(&["--config", FAILING]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    for rule in
        ["max-sectors-per-request", "min-efficiency", "max-sectors", "max-wavefronts-per-request", "analysis-failed"]
    {
        assert!(text.contains(&format!("error[{rule}]")), "{rule}: {text}");
    }
    // The snippet: the line, a caret under the access, the numbers.
    assert!(text.contains("24 │         out[col * rows + row] = in[row * cols + col];"), "{text}");
    assert!(text.contains("^^^^^^^^^^^^^^^^^^^^^ 32.00 sectors per request (budget 8)"), "{text}");
    snapshot("check_failing.text", &text);

    let o = check_cli(&["--config", FAILING, "--format", "github"]);
    assert_eq!(o.status.code(), Some(1));
    let gh = String::from_utf8(o.stdout).unwrap();
    assert!(gh.lines().all(|l| l.starts_with("::error file=examples/")), "{gh}");
    assert!(gh.contains("::error file=examples/transpose_naive.cu,line=24,col=9,endColumn=30,title=sector-estimate max-sectors-per-request::"));
    snapshot("check_failing.github", &gh);

    let o = check_cli(&["--config", FAILING, "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["passed"], false);
    assert_eq!(v["launches"], 5);
    assert_eq!(v["findings"].as_array().unwrap().len(), 7);

    let o = check_cli(&["--config", FAILING, "--format", "sarif"]);
    assert_eq!(o.status.code(), Some(1));
    let sarif: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    sarif_has_required_fields(&sarif);
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 7);
    // The repository's absolute URI (%SRCROOT%) depends on where it was cloned.
    let base = sarif["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"].as_str().unwrap().to_string();
    assert!(base.starts_with("file:///") && base.ends_with('/'), "{base}");
    snapshot("check_failing.sarif", &String::from_utf8(o.stdout).unwrap().replace(&base, "file:///REPOSITORY/"));
}

/// The required properties of SARIF 2.1.0 (sarif-schema-2.1.0.json) for what this tool writes:
/// sarifLog {version, runs}; run {tool}; tool {driver}; toolComponent {name}; result {message};
/// message {text}; physicalLocation {artifactLocation or address}; region {startLine >= 1};
/// reportingDescriptor {id}.
fn sarif_has_required_fields(s: &serde_json::Value) {
    assert_eq!(s["version"], "2.1.0");
    assert!(s["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let runs = s["runs"].as_array().expect("runs");
    assert!(!runs.is_empty());
    for run in runs {
        let driver = &run["tool"]["driver"];
        assert!(driver["name"].is_string(), "tool.driver.name");
        let rules = driver["rules"].as_array().expect("rules");
        let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().expect("rule id")).collect();
        for r in run["results"].as_array().expect("results") {
            assert!(r["message"]["text"].is_string(), "result.message.text");
            let id = r["ruleId"].as_str().expect("ruleId");
            assert!(ids.contains(&id), "{id} is among the driver's rules");
            let index = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
            assert_eq!(ids[index], id, "ruleIndex points at ruleId");
            assert!(["none", "note", "warning", "error"].contains(&r["level"].as_str().unwrap()));
            for loc in r["locations"].as_array().expect("locations") {
                let p = &loc["physicalLocation"];
                assert!(p["artifactLocation"]["uri"].is_string(), "artifactLocation.uri");
                let region = &p["region"];
                assert!(region["startLine"].as_u64().unwrap() >= 1);
                assert!(region["startColumn"].as_u64().unwrap() >= 1);
                assert!(region["endColumn"].as_u64().unwrap() > region["startColumn"].as_u64().unwrap());
            }
        }
    }
}

#[test]
fn sarif_of_a_passing_run_has_empty_results() {
    // One kernel of the repository's config (the whole config passes in the test above).
    let text = "[[kernel]]\nfile = \"examples/vec_add.cu\"\nmanifest = \"examples/vec_add.toml\"\n\
                budgets = { max_sectors_per_request = 5, min_efficiency = 0.8 }\n";
    let path = root().join("sector-estimate.toml");
    let config = Config::parse(text, &path).unwrap_or_else(|d| panic!("{}", d.message));
    let r = check_config(&config, &path, &DiskLoader).unwrap();
    assert!(r.launches > 0);
    assert!(r.passed);
    let s: serde_json::Value = serde_json::from_str(&render_sarif(&r)).unwrap();
    sarif_has_required_fields(&s);
    assert_eq!(s["runs"][0]["results"].as_array().unwrap().len(), 0);
}

#[test]
fn bad_configs_are_usage_errors_with_a_place() {
    let dir = std::env::temp_dir().join(format!("sector-estimate-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let case = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        let o = check_cli(&["--config", p.to_str().unwrap()]);
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (code, err) =
        case("syntax.toml", "[[kernel]]\nfile = \"x.cu\"\nlaunch = [{ grid = 1, block = 32 }]\nbudget = 3\n");
    assert_eq!(code, Some(2));
    assert!(err.contains("syntax.toml:4:1") && err.contains("unknown field `budget`"), "{err}");
    let (code, err) = case(
        "eff.toml",
        "[budgets]\nmin_efficiency = 2\n[[kernel]]\nfile = \"x.cu\"\nlaunch = [{ grid = 1, block = 32 }]\n",
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("between 0 and 1"), "{err}");
    let (code, err) = case("empty.toml", "");
    assert_eq!(code, Some(2));
    assert!(err.contains("no [[kernel]]"), "{err}");
    let (code, err) = case("nolaunch.toml", "[[kernel]]\nfile = \"x.cu\"\n");
    assert_eq!(code, Some(2));
    assert!(err.contains("give its launches"), "{err}");
    // A missing source file is a failed check, not a crash.
    let (code, _) = case(
        "missing.toml",
        "[[kernel]]\nfile = \"nowhere.cu\"\nlaunch = [{ grid = 1, block = 32 }]\nbudgets = { max_sectors = 1 }\n",
    );
    assert_eq!(code, Some(1));
    let o = check_cli(&["--config", "no/such/config.toml"]);
    assert_eq!(o.status.code(), Some(2));
}
