//! The `sector-estimate` binary: the only place that touches stdout, stderr and exit codes.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

#[path = "../cli/mod.rs"]
mod cli;

fn main() {
    // Deeply nested sources recurse deeply; give the work a generous stack of its own.
    let code = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(cli::run)
        .map(|h| h.join().unwrap_or(1))
        .unwrap_or_else(|_| cli::run());
    std::process::exit(code);
}
