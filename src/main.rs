//! The `cwtext` binary: parses the command line and dispatches to the library. All logic lives
//! in the `cwtext` library; the command-line layer (`cli`) is this binary's own module.

mod cli;

use std::process::ExitCode;

use clap::Parser;
use cli::{run, Cli, Outcome};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Partial) => ExitCode::from(1),
        Ok(Outcome::Code(code)) => ExitCode::from(code),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            cli::say(format_args!("cwtext: error: {e:#}"));
            ExitCode::from(2)
        }
    }
}

/// A closed output pipe (`cwtext label DIR | head`) is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
