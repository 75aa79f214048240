//! The command-line layer of the `cwtext` binary (a module of `main.rs`, not of the library):
//! one module per subcommand, each an argument struct (clap) turned into the library's checked
//! settings and a `run` that reports. Only this layer uses clap, `anyhow` and `indicatif`;
//! `main.rs` just calls [`run`].

mod archiving;
mod classify;
mod common;
mod eval;
mod experiment;
mod explain;
mod filter;
mod inspect;
mod label;
mod learn;
mod merge;
mod models;
#[cfg(feature = "serve")]
mod remote;
#[cfg(feature = "archive")]
mod search;
#[cfg(feature = "serve")]
mod serve;
mod shell;
mod train;
mod tune;

use clap::{Parser, Subcommand};

pub use common::say;

const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  partial failure in batch modes (some files skipped; a summary says which)
  2  usage or fatal error (bad arguments, unreadable model, nothing to do)
`cwtext filter` has its own: one per label, unsure and error (`cwtext filter --help`).

A closed output pipe (e.g. `cwtext label DIR | head`) ends quietly with 0; a closed standard
error (`cwtext train DIR -o M 2>&1 | head -1`) drops the notes, and the work goes on.";

/// Confidence-weighted text classification: route mail, news and reviews into labels, with an
/// honest probability for every label.
#[derive(Debug, Parser)]
#[command(name = "cwtext", version, after_help = EXIT_CODES, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Worker threads for batch work (default: one per core).
    #[arg(long, global = true, value_name = "N")]
    pub threads: Option<usize>,
    /// No progress bars, warnings or summaries on stderr (errors are still printed, and a run
    /// that skipped files, exit 1, says so in one line).
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Train a model on a folder-organised corpus DIR/<label>/<file>, a mail store, a folder of
    /// a file per label, or a file of labelled rows (fastText or TREC lines, TSV, CSV, JSON).
    Train(train::TrainArgs),
    /// Label documents (files or standard input) with per-label probabilities.
    Classify(classify::ClassifyArgs),
    /// Mail filter: pass one message from standard input to standard output with its label in
    /// added header fields, and exit with a code per label (never loses the message).
    Filter(filter::FilterArgs),
    /// Label every file below a directory, optionally copying or moving each into DEST/<label>/
    /// and archiving it in a search index (--index).
    Label(label::LabelArgs),
    /// Search an archive written by `label --index`, by words, label and confidence.
    #[cfg(feature = "archive")]
    Search(search::SearchArgs),
    /// Evaluate a model on a labelled folder: accuracy, macro-F1, per-label scores, confusion.
    Eval(eval::EvalArgs),
    /// Apply corrections to a model in place: one update per labelled document.
    Learn(learn::LearnArgs),
    /// Combine models trained on different data into one.
    Merge(merge::MergeArgs),
    /// Search the settings on a validation fifth of a corpus and train the best model.
    Tune(tune::TuneArgs),
    /// Reproduce the papers' experiments (NIPS 2008 synthetic data, EMNLP 2009 epochs).
    Experiment(experiment::ExperimentArgs),
    /// Serve models over HTTP (or a Unix socket): classify, filter, and learn with a journal
    /// that loses no correction.
    #[cfg(feature = "serve")]
    Serve(serve::ServeArgs),
    /// Show the features that decided a document's label, in words, with their weights.
    Explain(explain::ExplainArgs),
    /// Describe a model: labels, training, pipeline and its strongest features per label.
    Inspect(inspect::InspectArgs),
    /// List the ready models built in (for -m NAME): topics, spam, sentiment; --save one as a
    /// file to teach.
    Models(models::ModelsArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(shell::CompletionsArgs),
    /// Print the man page, or write one per subcommand into a directory.
    Man(shell::ManArgs),
}

/// How a successful run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything was processed.
    Success,
    /// Some inputs were skipped (exit code 1).
    Partial,
    /// An exit code chosen by the command (`filter`: one per outcome).
    Code(u8),
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    if let Some(n) = cli.threads {
        anyhow::ensure!(
            n >= 1,
            "invalid setting: threads must be at least 1, but is 0"
        );
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| anyhow::anyhow!("cannot start {n} threads: {e}"))?;
    }
    let ui = common::Ui { quiet: cli.quiet };
    common::install_warning_logger(cli.quiet);
    let outcome = dispatch(cli.command, cli.threads, &ui)?;
    if cli.quiet && matches!(outcome, Outcome::Partial) {
        // --quiet drops the warnings naming the skipped files, but exit 1 must not go unexplained.
        say(format_args!(
            "cwtext: some files were skipped (exit 1); run without --quiet to see which and why"
        ));
    }
    Ok(outcome)
}

/// Runs one command.
fn dispatch(command: Command, threads: Option<usize>, ui: &common::Ui) -> anyhow::Result<Outcome> {
    #[cfg(not(feature = "serve"))]
    let _ = threads;
    match command {
        Command::Train(args) => train::run(args, ui),
        Command::Classify(args) => classify::run(args, ui),
        Command::Filter(args) => filter::run(args, ui),
        Command::Label(args) => label::run(args, ui),
        #[cfg(feature = "archive")]
        Command::Search(args) => search::run(args, ui),
        Command::Eval(args) => eval::run(args, ui),
        Command::Experiment(args) => experiment::run(args, ui),
        Command::Tune(args) => tune::run(args, ui),
        Command::Learn(args) => learn::run(args, ui),
        Command::Merge(args) => merge::run(args, ui),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::run(args, threads, ui),
        Command::Explain(args) => explain::run(args, ui),
        Command::Inspect(args) => inspect::run(args, ui),
        Command::Models(args) => models::run(args, ui),
        Command::Completions(args) => shell::completions(args),
        Command::Man(args) => shell::man(args, ui),
    }
}
