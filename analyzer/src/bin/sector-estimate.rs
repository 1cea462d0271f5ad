//! The `sector-estimate` binary: the only place that touches stdout, stderr and exit codes.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

#[path = "../cli/mod.rs"]
mod cli;

fn main() {
    std::process::exit(cli::run());
}
