//! Puts the commit into `sector-estimate --version` (`0.1.0 (commit 1a2b3c4d5e6f)`). Outside a git
//! checkout (a crate tarball), or without git, the version stands alone.

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let o = Command::new("git").args(args).current_dir(dir).output().ok()?;
    let s = String::from_utf8_lossy(&o.stdout).trim().to_string();
    (o.status.success() && !s.is_empty()).then_some(s)
}

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let dir = Path::new(&dir);
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let line = match git(dir, &["rev-parse", "--short=12", "HEAD"]) {
        Some(c) => format!("{version} (commit {c})"),
        None => version,
    };
    println!("cargo:rustc-env=SECTOR_ESTIMATE_VERSION={line}");
    println!("cargo:rerun-if-changed=build.rs");
    // Again when HEAD moves: HEAD itself, the branch it names, packed refs. Only paths that
    // exist (a missing one would rebuild every time).
    let mut watch = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(r) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        watch.push(r);
    }
    for w in watch {
        if let Some(p) = git(dir, &["rev-parse", "--path-format=absolute", "--git-path", &w]) {
            if Path::new(&p).exists() {
                println!("cargo:rerun-if-changed={p}");
            }
        }
    }
}
