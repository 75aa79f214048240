//! `cwtext completions SHELL` and `cwtext man [--dir DIR]`: shell completions and man pages,
//! generated from the same clap definitions as the parser, so they never drift from it.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, CommandFactory};

use super::common::Ui;
use super::{Cli, Outcome};

const COMPLETION_EXAMPLES: &str = "\
Install (then start a new shell):
  bash: cwtext completions bash > ~/.local/share/bash-completion/completions/cwtext
  zsh:  cwtext completions zsh > ~/.zfunc/_cwtext   (with fpath+=~/.zfunc in ~/.zshrc)
  fish: cwtext completions fish > ~/.config/fish/completions/cwtext.fish";

#[derive(Debug, Args)]
#[command(after_help = COMPLETION_EXAMPLES)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn completions(args: CompletionsArgs) -> anyhow::Result<Outcome> {
    // Into memory first: clap_complete panics on a write error, and a closed pipe
    // (`cwtext completions bash | head`) must end quietly.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "cwtext", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(Outcome::Success)
}

const MAN_EXAMPLES: &str = "\
Install for the current user (man looks in ~/.local/share/man on most systems):
  cwtext man --dir ~/.local/share/man/man1
  man cwtext-classify";

#[derive(Debug, Args)]
#[command(after_help = MAN_EXAMPLES)]
pub struct ManArgs {
    /// Write cwtext.1 and one page per subcommand (cwtext-train.1 …) into DIR, instead of
    /// printing cwtext.1 on standard output.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn man(args: ManArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    let command = Cli::command();
    let Some(dir) = args.dir else {
        let mut out = std::io::stdout().lock();
        clap_mangen::Man::new(command).render(&mut out)?;
        out.flush()?;
        return Ok(Outcome::Success);
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    clap_mangen::generate_to(command, &dir)
        .with_context(|| format!("cannot write man pages into {}", dir.display()))?;
    ui.info(format!("wrote the man pages into {}", dir.display()));
    Ok(Outcome::Success)
}
