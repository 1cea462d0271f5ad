//! The first hour of a new user (issue 17): one shape syntax, the usage errors a CI script
//! meets, CI formats from the repository root, messages as clang words them, and the README's
//! first commands and Rust crate as they are.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sector-estimate"));
    c.env_remove("NO_COLOR").env_remove("TERM");
    c
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn ex(name: &str) -> String {
    root().join("examples").join(name).display().to_string()
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh directory under the system's temporary one.
fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sector-estimate-first-hour-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn one_shape_syntax_in_analyze_explain_and_sweep() {
    let t = ex("transpose_naive.cu");
    let a = |block: &str| {
        run(&["analyze", &t, "--grid", "8,32", "--block", block, "--arg", "rows=256", "--arg", "cols=256"])
    };
    let (comma, x) = (a("32,8"), a("32x8"));
    assert_eq!(comma.status.code(), Some(0), "{}", text(&comma.stderr));
    assert_eq!(comma.stdout, x.stdout);
    assert!(text(&x.stdout).contains("block (32, 8, 1)"));
    let e = run(&[
        "explain", &t, "--grid", "8x32", "--block", "32x8", "--arg", "rows=256", "--arg", "cols=256", "--line", "24",
    ]);
    assert_eq!(e.status.code(), Some(0), "{}", text(&e.stderr));
    let s = run(&["sweep", &t, "--grid", "8,32", "--block", "32x8", "--arg", "rows=256", "--arg", "cols=256"]);
    assert_eq!(s.status.code(), Some(0), "{}", text(&s.stderr));
    // The kernel's name is in the header though --kernel was left out; one configuration.
    let out = text(&s.stdout);
    assert!(out.starts_with("sector-estimate sweep: kernel `transpose_naive` in "), "{out}");
    assert!(out.contains("\n1 configuration (1 analysed"), "{out}");
}

#[test]
fn sweep_usage_errors_exit_2() {
    let v = ex("vec_add.cu");
    let o = run(&["sweep", &v, "--grid", "ceil(n/block)", "--block", "128,256", "--arg", "nn=1024"]);
    assert_eq!(o.status.code(), Some(2), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stderr).contains("no parameter named `nn`"), "{}", text(&o.stderr));
    let base = ["sweep", &v, "--grid", "4", "--block", "256", "--arg", "n=1024"];
    let o = run(&[&base[..], &["--jobs", "0"]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--jobs 0"), "{}", text(&o.stderr));
    let o = run(&[&base[..], &["--metric", "efficiency"]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--svg"), "{}", text(&o.stderr));
}

#[test]
fn emit_dot_needs_no_launch_and_the_sheet_does() {
    let o = run(&["analyze", &ex("vec_add.cu"), "--emit", "dot"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).starts_with("digraph \"vec_add\""));
    let o = run(&["analyze", &ex("vec_add.cu"), "--grid", "4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--block"), "{}", text(&o.stderr));
}

#[test]
fn kernels_in_source_order_with_signatures_and_json() {
    let o = run(&["kernels", &ex("gather.cu")]);
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("gather(") && lines[0].contains("int* index") && lines[0].ends_with("line 19"),
        "{out}"
    );
    assert!(lines[1].starts_with("scatter("), "{out}");
    let o = run(&["kernels", &ex("gather.cu"), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["name"], "gather");
    assert_eq!(v[0]["line"], 19);
    assert_eq!(v[0]["parameters"][3]["name"], "n");
    assert_eq!(v[1]["name"], "scatter");
}

#[test]
fn messages_as_a_compiler_words_them() {
    let d = tmp("messages");
    let p = d.join("missing_semicolon.cu");
    std::fs::write(&p, "__global__ void k(float *a) {\n    int i = threadIdx.x\n    a[i] = 1.0f;\n}\n").unwrap();
    let o = run(&["analyze", p.to_str().unwrap(), "--grid", "1", "--block", "32"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    // clang: `missing_semicolon.cu:2:24: error: expected ';' at end of declaration`.
    assert!(err.contains("expected `;` after `threadIdx.x`") && err.contains(":2:23"), "{err}");
    // An unsupported statement is quoted by its first line, not its whole text on one line.
    let p = d.join("switch.cu");
    std::fs::write(
        &p,
        "__global__ void k(float *a, int mode) {\n    for (int x : {1, 2}) {\n    a[0] = 1.0f;\n    a[1] = 2.0f;\n    }\n}\n",
    )
    .unwrap();
    let o =
        run(&["analyze", p.to_str().unwrap(), "--grid", "1", "--block", "32", "--arg", "mode=0", "--via", "source"]);
    let err = text(&o.stderr);
    assert!(err.contains("is not supported: `for (int x : {1, 2}) { ...`") && !err.contains("a[0] = 1.0f;  "), "{err}");
    // A fill shorter than the reads: index[1000..] has no value (an out-of-bounds read on a GPU).
    let o = run(&[
        "analyze",
        &ex("gather.cu"),
        "--kernel",
        "gather",
        "--grid",
        "8",
        "--block",
        "256",
        "--arg",
        "n=2048",
        "--fill",
        "index=permutation:1000:1",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    let err = text(&o.stderr);
    assert!(err.contains("the fill of `index` ran out: the kernel reads element 1000"), "{err}");
    // A fill for an array of vectors would never be read back: a usage error, not ignored.
    let o = run(&[
        "analyze",
        &ex("intrinsics.cu"),
        "--kernel",
        "ldcs_float4_stwt",
        "--grid",
        "1",
        "--block",
        "32",
        "--fill",
        "v=constant:1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    let err = text(&o.stderr);
    assert!(err.contains("--fill v=constant:1: the elements of `v` are float4"), "{err}");
}

#[test]
fn plurals_color_version_and_help() {
    let o = run(&["analyze", &ex("vec_add.cu"), "--grid", "1", "--block", "32", "--arg", "n=32"]);
    assert!(text(&o.stdout).contains("1 block of 32 threads (1 warp)"), "{}", text(&o.stdout));
    // Colour only when asked (the tests' stderr is not a terminal).
    let bad = ["analyze", "/nonexistent/x.cu", "--grid", "1", "--block", "32"];
    let o = run(&[&["--color", "always"][..], &bad[..]].concat());
    assert!(text(&o.stderr).contains("\x1b["), "{}", text(&o.stderr));
    for color in ["never", "auto"] {
        let o = run(&[&["--color", color][..], &bad[..]].concat());
        assert!(!text(&o.stderr).contains("\x1b["), "{}", text(&o.stderr));
    }
    // The commit, when built from a git checkout.
    let v = text(&run(&["--version"]).stdout);
    assert!(v.starts_with(&format!("sector-estimate {}", env!("CARGO_PKG_VERSION"))), "{v}");
    if root().join(".git").exists() {
        assert!(v.contains("(commit "), "{v}");
    }
    // Every option of every subcommand is described; each subcommand shows examples.
    for sub in ["analyze", "explain", "sweep", "check", "kernels"] {
        let h = text(&run(&[sub, "--help"]).stdout);
        assert!(h.contains("Example"), "{sub}: {h}");
        let lines: Vec<&str> = h.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            // Option lines (`-D`, `--grid`), not the lists of values (`- enumerate: ...`).
            let option = t.starts_with("--") || t.as_bytes().get(1).is_some_and(|b| b.is_ascii_alphabetic());
            if !t.starts_with('-') || !option {
                continue;
            }
            let described = t.split_once("  ").is_some_and(|(_, d)| !d.trim().is_empty())
                || lines.get(i + 1).is_some_and(|n| n.starts_with("          ") && !n.trim().is_empty());
            assert!(described, "{sub} --help: `{l}` has no description");
        }
    }
}

/// A repository with a config at its root, checked from a folder below it.
fn repo_with_config(name: &str, config: &str) -> (PathBuf, PathBuf) {
    let repo = tmp(name);
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("kernels")).unwrap();
    std::fs::copy(root().join("examples/strided.cu"), repo.join("kernels/strided.cu")).unwrap();
    std::fs::write(repo.join("sector-estimate.toml"), config).unwrap();
    let below = repo.join("src/deep");
    std::fs::create_dir_all(&below).unwrap();
    (repo, below)
}

const STRIDED_OVER_BUDGET: &str = "[[kernel]]\nfile = \"kernels/strided.cu\"\nbudgets = { max_sectors_per_request = 4 }\nlaunch = [{ name = \"s2\", grid = 4, block = 256, args = { stride = 2 } }]\n";

#[test]
fn check_finds_its_config_upward_and_reports_from_the_repository_root() {
    let (repo, below) = repo_with_config("upward", STRIDED_OVER_BUDGET);
    let check = |format: &str| bin().current_dir(&below).args(["check", "--format", format]).output().unwrap();
    let o = check("text");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("check ../../sector-estimate.toml"), "{}", text(&o.stdout));
    // GitHub: `file=` from the repository root, or the annotation attaches to nothing.
    let gh = text(&check("github").stdout);
    assert!(gh.starts_with("::error file=kernels/strided.cu,line=19,col="), "{gh}");
    // SARIF: a relative URI against %SRCROOT%, which is the repository's absolute URI.
    let s: serde_json::Value = serde_json::from_slice(&check("sarif").stdout).unwrap();
    let loc = &s["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(loc["uri"], "kernels/strided.cu");
    assert_eq!(loc["uriBaseId"], "SRCROOT");
    let base = s["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"].as_str().unwrap();
    let canonical = repo.canonicalize().unwrap();
    assert_eq!(base, format!("file://{}/", canonical.display()));
    // No config anywhere up: a usage error that says where it looked.
    let lonely = tmp("lonely");
    let o = bin().current_dir(&lonely).arg("check").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no sector-estimate.toml in"), "{}", text(&o.stderr));
}

#[test]
fn config_errors_in_the_format_asked_for() {
    let bad = "[[kernel]]\nfile = \"kernels/strided.cu\"\nlaunch = [{ grid = 1, block = 32 }]\nbudget = 3\n";
    let (_repo, below) = repo_with_config("config-error", bad);
    let check = |format: &str| bin().current_dir(&below).args(["check", "--format", format]).output().unwrap();
    let o = check("github");
    assert_eq!(o.status.code(), Some(2));
    let gh = text(&o.stdout);
    assert!(gh.starts_with("::error file=sector-estimate.toml,line=4,col=1,title=sector-estimate config::"), "{gh}");
    let o = check("json");
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["passed"], false);
    assert!(v["findings"][0]["message"].as_str().unwrap().contains("unknown field `budget`"));
    let o = check("sarif");
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["runs"][0]["results"][0]["ruleId"], "config");
    assert_eq!(s["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"], 4);
    // An entry without a single budget checks nothing: a usage error.
    let none =
        "[[kernel]]\nfile = \"kernels/strided.cu\"\nlaunch = [{ grid = 1, block = 32, args = { stride = 1 } }]\n";
    let (_repo, below) = repo_with_config("no-budgets", none);
    let o = bin().current_dir(&below).arg("check").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no budgets to check"), "{}", text(&o.stderr));
}

/// A Markdown text between a line and the closing fence of the block that follows it.
fn block_after(doc: &str, marker: &str) -> String {
    let at = doc.find(marker).unwrap_or_else(|| panic!("no `{marker}` in the document"));
    let rest = &doc[at..];
    let open = rest.find("```").unwrap();
    let body = &rest[open..];
    let body = &body[body.find('\n').unwrap() + 1..];
    body[..body.find("```").unwrap()].to_string()
}

/// What a user reads: the README, then every page of the book (`docs/src/**/*.md`), sorted.
fn user_docs() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut pages = Vec::new();
    walk(&root().join("docs/src"), &mut pages);
    pages.sort();
    assert!(pages.len() >= 10, "the book has only {} pages", pages.len());
    let mut docs = vec![root().join("README.md")];
    docs.extend(pages);
    docs
}

/// `path` from the repository root, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(root()).unwrap_or(path).display().to_string()
}

/// The crate a document shows (`Cargo.toml`: and `src/lib.rs`: blocks) is
/// tests/fixtures/user-crate, which .ci/run builds with warnings denied (edition 2024).
fn assert_shows_the_fixture_crate(doc: &str, name: &str) {
    let fixture = root().join("tests/fixtures/user-crate");
    let lib = std::fs::read_to_string(fixture.join("src/lib.rs")).unwrap();
    assert!(block_after(doc, "`src/lib.rs`:") == lib, "{name}'s src/lib.rs is not tests/fixtures/user-crate's");
    let manifest = block_after(doc, "`Cargo.toml`:");
    let fixture_manifest = std::fs::read_to_string(fixture.join("Cargo.toml")).unwrap();
    for line in manifest.lines().filter(|l| !l.starts_with('#') && !l.contains("path = ")) {
        assert!(fixture_manifest.contains(line), "{name}'s Cargo.toml line `{line}` is not the fixture's");
    }
    assert!(manifest.contains("estimator-macros = { path = "), "{manifest}");
}

#[test]
fn readme_first_commands_and_rust_crate_are_the_tested_ones() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    // The landing page stays one: the rest is in the book.
    let lines = readme.lines().count();
    assert!(lines < 250, "README.md has {lines} lines: move the details into the book (docs/src)");
    let first = block_after(&readme, "## First commands on a fresh machine");
    let first: Vec<&str> = first.lines().collect();
    // One command runs the main job on an example (run below and in the commands test), one runs
    // every test (.ci/run runs exactly that), one installs the binary the docs call by name.
    assert_eq!(first.len(), 3, "{first:?}");
    assert!(first[0].starts_with("cargo run --release -p sector-analyzer --bin sector-estimate -- analyze examples/"));
    assert_eq!(first[1], "cargo test --workspace");
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l.trim() == first[1]), ".ci/run does not run `{}`", first[1]);
    assert_eq!(first[2], "cargo install --locked --path analyzer");
    // The crate the README shows, and the attribute's chapter of the book.
    assert_shows_the_fixture_crate(&readme, "README.md");
    let chapter = std::fs::read_to_string(root().join("docs/src/attribute.md")).unwrap();
    assert_shows_the_fixture_crate(&chapter, "docs/src/attribute.md");
    // The count of example launches the README gives is the manifests'.
    let (mut cuda, mut rust) = (0, 0);
    for (src, manifest) in sector_analyzer::manifest::examples_in(&root().join("examples")) {
        let cases = sector_analyzer::manifest::Manifest::load(&manifest).unwrap().cases.len();
        if src.extension().is_some_and(|x| x == "rs") {
            rust += cases;
        } else {
            cuda += cases;
        }
    }
    let claim = format!("every example launch ({}: {cuda} CUDA, {rust} Rust)", cuda + rust);
    assert!(readme.replace('\n', " ").contains(&claim), "README.md should say `{claim}`");
}

/// A Markdown text's fenced blocks (fences at the start of a line), in order: (info string, body).
fn fenced_blocks(doc: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in doc.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_string(), String::new())),
            (Some(_), Some(_)) => out.push(open.take().unwrap()),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// A directory holding `sector-estimate` (this build), for a shell's `PATH`.
fn bin_dir() -> PathBuf {
    let d = tmp("path");
    let link = d.join("sector-estimate");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_sector-estimate"), &link).unwrap();
    d
}

/// `command` as a shell runs it in the repository root, `sector-estimate` being this build. The
/// cache model's estimate gets no time limit (`--estimate-time-limit 0`): a debug build on a busy
/// machine may pass the command line's 1 s, where the boundaries become bounds.
fn shell(command: &str, path: &Path) -> Output {
    let command = command
        .replace("sector-estimate analyze ", "sector-estimate analyze --estimate-time-limit 0 ")
        .replace("sector-estimate sweep ", "sector-estimate sweep --estimate-time-limit 0 ");
    let old = std::env::var("PATH").unwrap_or_default();
    Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(root())
        .env("PATH", format!("{}:{old}", path.display()))
        .env_remove("NO_COLOR")
        .env_remove("TERM")
        .output()
        .unwrap()
}

/// Whether a command needs the CUDA toolkit (nvcc, nvdisasm): the SASS path.
fn needs_toolkit(command: &str) -> bool {
    command.contains("--via sass") || command.contains("--emit sass") || command.contains(".cubin")
}

/// Every `$ sector-estimate ...` that the README and the book show prints, byte for byte, what
/// they show under it (a `--svg FILE` goes to a temporary file, which must be FILE as the
/// repository holds it); the README's first sheet is its first command's; the usage block names
/// every flag a user meets; a `sh` block's `sector-estimate` lines run (those of the SASS path
/// where the CUDA toolkit is found). Placeholder commands go in blocks of another kind.
#[test]
fn doc_commands_print_what_the_docs_show() {
    let path = bin_dir();
    let svg = tmp("doc-svg").join("made.svg");
    let mut ran = 0;
    let mut sh_lines = 0;
    let toolkit = sector_analyzer::analyze::toolkit_found();
    for doc in user_docs() {
        let name = shown(&doc);
        let text_of_doc = std::fs::read_to_string(&doc).unwrap();
        let blocks = fenced_blocks(&text_of_doc);
        for (_, body) in blocks.iter().filter(|(_, b)| b.starts_with("$ sector-estimate")) {
            // Commands and what each prints, up to the next `$ `.
            let mut cmds: Vec<(String, String)> = Vec::new();
            for line in body.lines() {
                match line.strip_prefix("$ ") {
                    Some(c) => cmds.push((c.to_string(), String::new())),
                    None => {
                        let (_, want) = cmds.last_mut().unwrap();
                        want.push_str(line);
                        want.push('\n');
                    }
                }
            }
            for (cmd, want) in cmds {
                if needs_toolkit(&cmd) && !toolkit {
                    continue;
                }
                let shown_svg = cmd.split_whitespace().skip_while(|w| *w != "--svg").nth(1).map(str::to_string);
                let run_cmd = match &shown_svg {
                    Some(file) => cmd.replace(&format!("--svg {file}"), &format!("--svg {}", svg.display())),
                    None => cmd.clone(),
                };
                let o = shell(&run_cmd, &path);
                assert_eq!(text(&o.stdout), want, "{name}: `$ {cmd}` prints otherwise (stderr: {})", text(&o.stderr));
                if let Some(file) = shown_svg {
                    let made = std::fs::read_to_string(&svg).unwrap();
                    let kept = std::fs::read_to_string(root().join(&file))
                        .unwrap_or_else(|e| panic!("{name}: `$ {cmd}`: the repository has no {file}: {e}"));
                    assert!(made == kept, "{name}: {file} is not what `$ {cmd}` writes");
                }
                ran += 1;
            }
        }
        // `sh` blocks: each `sector-estimate` line runs.
        for (info, body) in blocks.iter().filter(|(i, _)| i == "sh") {
            for line in body.lines().filter(|l| l.starts_with("sector-estimate ")) {
                if needs_toolkit(line) && !toolkit {
                    continue;
                }
                let o = shell(line, &path);
                assert_eq!(o.status.code(), Some(0), "{name} ({info}): `{line}`: {}", text(&o.stderr));
                sh_lines += 1;
            }
        }
    }
    assert!(ran >= 6, "only {ran} commands with their output found in the README and the book");
    assert!(sh_lines >= 1 || !toolkit, "no `sh` block ran");

    // The README's first command and the sheet the README says it prints.
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let at = readme.find("## First commands on a fresh machine").unwrap();
    let after = fenced_blocks(&readme[at..]);
    let first = after[0].1.lines().next().unwrap();
    let args = first.split_once(" -- ").unwrap().1;
    let o = shell(&format!("sector-estimate {args}"), &path);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), after[1].1, "README's first sheet is not what `{first}` prints");

    // Usage: every flag a user meets on the first day is listed.
    let usage = std::fs::read_to_string(root().join("docs/src/usage.md")).unwrap();
    let usage = block_after(&usage, "# Usage");
    for flag in [
        "--shared-bytes",
        "--time-limit",
        "--message-format",
        "--emit dot|ir|sass",
        "--via fallback|source|sass|auto",
        "--verbose",
        "--launch-site",
    ] {
        assert!(usage.contains(flag), "docs/src/usage.md's usage block lacks `{flag}`:\n{usage}");
    }
}

/// The targets of a Markdown text's links and images, with their line numbers; code blocks and
/// code spans (which may run over a line break, not over a blank line) are left out.
fn link_targets(doc: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let (mut fence, mut code) = (false, false);
    for (n, line) in doc.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if line.trim().is_empty() {
            code = false;
        }
        if fence {
            continue;
        }
        let mut plain = String::new();
        for c in line.chars() {
            if c == '`' {
                code = !code;
                plain.push(' ');
            } else if !code {
                plain.push(c);
            }
        }
        let mut rest = plain.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push((n + 1, after[..end].split_whitespace().next().unwrap_or("").to_string()));
            rest = &after[end..];
        }
    }
    out
}

/// The anchors GitHub gives a Markdown text's headings: lower case, letters, digits, `-` and
/// `_` kept, spaces as `-`, the rest dropped; a repeated one gets `-1`, `-2`, ...
fn anchors(doc: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut fence = false;
    for line in doc.lines() {
        if line.starts_with("```") {
            fence = !fence;
        }
        if fence || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#').trim();
        let slug: String = heading
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let times = seen.entry(slug.clone()).or_insert(0);
        out.push(if *times == 0 { slug } else { format!("{slug}-{times}") });
        *times += 1;
    }
    out
}

/// `path` with `.` and `..` taken out, without touching the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => match out.components().next_back() {
                Some(std::path::Component::Normal(_)) => {
                    out.pop();
                }
                Some(std::path::Component::RootDir | std::path::Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Every relative link of the README, the book and the other Markdown files at the root leads
/// to a file (or folder) the repository holds, tracked by git where it is a git checkout, so it
/// resolves in a clone; a link to a Markdown file's heading names one of its headings. No link
/// leaves the repository.
#[test]
fn doc_links_resolve_in_a_clone() {
    let root = normalise(&std::path::absolute(root()).unwrap());
    // The files a clone has: git's list where there is one, else the disk.
    let tracked: Option<std::collections::BTreeSet<PathBuf>> = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .ok()
        .filter(|o| o.status.success() && !o.stdout.is_empty())
        .map(|o| o.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()).map(|p| PathBuf::from(text(p))).collect());
    let exists = |rel: &Path| match &tracked {
        Some(files) => files.contains(rel) || files.iter().any(|f| f.starts_with(rel)),
        None => root.join(rel).exists(),
    };
    let mut docs = user_docs();
    for extra in ["ARCHITECTURE.md", "CHANGELOG.md"] {
        docs.push(root.join(extra));
    }
    let mut checked = 0;
    let mut broken = Vec::new();
    for doc in docs {
        let doc = normalise(&std::path::absolute(&doc).unwrap());
        let rel_doc = doc.strip_prefix(&root).unwrap().to_path_buf();
        let body = std::fs::read_to_string(&doc).unwrap();
        assert!(!body.contains("../shared/"), "{}: points into ../shared/, which a clone lacks", rel_doc.display());
        for (line, target) in link_targets(&body) {
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let at = format!("{}:{line}: `{target}`", rel_doc.display());
            let rel = if file.is_empty() { rel_doc.clone() } else { normalise(&rel_doc.parent().unwrap().join(file)) };
            checked += 1;
            if rel.starts_with("..") || rel.is_absolute() {
                broken.push(format!("{at} leaves the repository"));
                continue;
            }
            if !exists(&rel) {
                broken.push(format!("{at}: the repository has no {}", rel.display()));
                continue;
            }
            if let Some(anchor) = anchor.filter(|_| rel.extension().is_some_and(|x| x == "md")) {
                let target_text = std::fs::read_to_string(root.join(&rel)).unwrap();
                if !anchors(&target_text).iter().any(|a| a == anchor) {
                    broken.push(format!("{at}: {} has no heading `#{anchor}`", rel.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked >= 50, "only {checked} relative links found");
}

/// `--help` points only to files in the clone.
#[test]
fn help_names_only_files_in_the_clone() {
    for sub in [&[][..], &["analyze"], &["explain"], &["sweep"], &["check"], &["kernels"]] {
        let h = text(&run(&[sub, &["--help"][..]].concat()).stdout);
        assert!(!h.contains("CONTRACT") && !h.contains("shared/") && !h.contains("DESIGN"), "{sub:?}: {h}");
        for word in h.split(|c: char| c.is_whitespace() || "(),`'".contains(c)) {
            let word = word.trim_end_matches(['.', ':', ';']);
            if word.ends_with(".md") || word.starts_with("docs/") {
                assert!(root().join(word).exists(), "{sub:?} --help names {word}, which the clone lacks");
            }
        }
    }
}
