//! The attribute in a user's crate: `tests/fixtures/user-crate` (the README's "Use it in your
//! crate", outside the workspace, edition 2024) must build with warnings denied, and each
//! compile-error case `tests/ui/NAME.rs` (an example of that crate) must fail with the errors in
//! `tests/ui/NAME.stderr`, as the user sees them. One build of the macro and the analyzer serves
//! them all (trybuild built them once more, apart). Regenerate the `.stderr` files with
//! `UI_OVERWRITE=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap()
}

fn cargo(fixture: &Path, sub: &str) -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    // The workspace's target folder: the outer `cargo test` releases its lock once its builds
    // are done, and the dependencies this crate shares with the workspace (syn, tree-sitter and
    // its grammar, ...) are found there already built instead of built once more.
    c.arg(sub)
        .arg("--offline")
        .arg("--manifest-path")
        .arg(fixture.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(repo().join("target"))
        .env("CARGO_TERM_COLOR", "never")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    c
}

/// The compiler's errors for the example `name`, rendered, with the ui folder's path as
/// `tests/ui/` (warnings left out: edition 2024 has its own about the kernels' bodies).
fn errors_of(fixture: &Path, name: &str) -> String {
    let o =
        cargo(fixture, "build").args(["--example", name, "--message-format", "json"]).arg("--quiet").output().unwrap();
    assert!(!o.status.success(), "{name} compiled, but must fail");
    let ui = repo().join("estimator-macros/tests/ui");
    let mut out = String::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let Ok(v) = serde_json_lite(line) else { continue };
        if v.0 != "compiler-message" || v.1 != "error" || v.2.starts_with("aborting due to") {
            continue;
        }
        out.push_str(&v.3);
    }
    assert!(!out.is_empty(), "{name}: no error from the compiler:\n{}", String::from_utf8_lossy(&o.stderr));
    let out = out
        .replace(&format!("{}/", ui.display()), "tests/ui/")
        .replace("../../../estimator-macros/tests/ui/", "tests/ui/");
    out.trim_end().to_string() + "\n"
}

/// (reason, level, message, rendered) of one line of cargo's JSON messages; no JSON crate in
/// this macro crate's dependencies, and these four strings are all it needs.
fn serde_json_lite(line: &str) -> Result<(String, String, String, String), ()> {
    fn field(line: &str, key: &str) -> Option<String> {
        let at = line.find(&format!("\"{key}\":\""))? + key.len() + 4;
        let mut s = String::new();
        let mut chars = line[at..].chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return Some(s),
                '\\' => match chars.next()? {
                    'n' => s.push('\n'),
                    't' => s.push('\t'),
                    'u' => {
                        let hex: String = chars.by_ref().take(4).collect();
                        s.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    c => s.push(c),
                },
                c => s.push(c),
            }
        }
        None
    }
    let reason = field(line, "reason").ok_or(())?;
    if reason != "compiler-message" {
        return Ok((reason, String::new(), String::new(), String::new()));
    }
    // The message's own fields come after `"message":{`: search from there.
    let msg = &line[line.find("\"message\":{").ok_or(())?..];
    let rendered = field(msg, "rendered").ok_or(())?;
    let level = field(msg, "level").ok_or(())?;
    let text = field(msg, "message").ok_or(())?;
    Ok((reason, level, text, rendered))
}

#[test]
fn the_readme_crate_builds_and_each_error_case_fails_as_recorded() {
    let fixture = repo().join("tests/fixtures/user-crate");
    let o = cargo(&fixture, "rustc").args(["--locked", "--lib", "--quiet", "--", "-D", "warnings"]).output().unwrap();
    assert!(o.status.success(), "the README's crate does not build:\n{}", String::from_utf8_lossy(&o.stderr));
    let overwrite = std::env::var_os("UI_OVERWRITE").is_some();
    let mut failed = Vec::new();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(repo().join("estimator-macros/tests/ui"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    cases.sort();
    let manifest = std::fs::read_to_string(fixture.join("Cargo.toml")).unwrap();
    for case in cases {
        let name = case.file_stem().unwrap().to_str().unwrap().to_string();
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "add tests/ui/{name}.rs as an [[example]] of {}",
            fixture.display()
        );
        let got = errors_of(&fixture, &name);
        let expected_path = case.with_extension("stderr");
        if overwrite {
            std::fs::write(&expected_path, &got).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected != got {
            failed.push(format!("tests/ui/{name}.stderr expected:\n{expected}\ngot:\n{got}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
