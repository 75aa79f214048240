//! What the subcommands share: loading the model (or the embedded default), file filters,
//! progress bars and warnings on stderr.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use cwtext::integrations::shelf;
use cwtext::jobs::corpus::{scan_corpus, CorpusOptions, FileFilter, LabelledCorpus};
use cwtext::model::{Checksum, Model};
use cwtext::progress::Progress;
use cwtext::text::mailbox::Layout;

/// Writes one line for people on standard error. A closed standard error (`cwtext train …
/// 2>&1 | head -1` once head has gone, a delivery agent that runs cwtext without one) drops
/// the line where `eprintln!` would panic: the notes are not the work, and training, labelling
/// or passing a message on goes on.
pub fn say(line: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Where messages for people go.
pub struct Ui {
    pub quiet: bool,
}

impl Ui {
    pub fn warn(&self, message: impl std::fmt::Display) {
        if !self.quiet {
            say(format_args!("cwtext: warning: {message}"));
        }
    }

    pub fn info(&self, message: impl std::fmt::Display) {
        if !self.quiet {
            say(format_args!("{message}"));
        }
    }

    /// A progress bar on stderr, drawn only when stderr is a terminal and not `--quiet`.
    pub fn progress(&self, len: u64) -> Bar {
        if self.quiet {
            return Bar(ProgressBar::hidden());
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{msg:>12} [{bar:30}] {human_pos}/{human_len} {rate} (eta {eta})",
            )
            .expect("the template is valid")
            .with_key(
                "rate",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&rate(state.per_sec()));
                },
            )
            .progress_chars("=> "),
        );
        Bar(bar)
    }
}

/// A bar's rate for people: whole items a second with thousands separators (`3,584/s`, where
/// indicatif's own `{per_sec}` printed `3,584.2064/s`), one decimal below 10 a second.
fn rate(per_second: f64) -> String {
    if !per_second.is_finite() || per_second < 0.0 {
        return "-/s".into();
    }
    if per_second < 10.0 {
        return format!("{per_second:.1}/s");
    }
    format!("{}/s", indicatif::HumanCount(per_second.round() as u64))
}

/// An `indicatif` bar as the library's [`Progress`]: the library reports, the command line
/// draws.
pub struct Bar(pub ProgressBar);

impl std::ops::Deref for Bar {
    type Target = ProgressBar;

    fn deref(&self) -> &ProgressBar {
        &self.0
    }
}

impl Progress for Bar {
    fn set_length(&self, len: u64) {
        self.0.set_length(len);
    }

    fn inc_length(&self, delta: u64) {
        self.0.inc_length(delta);
    }

    fn set_position(&self, position: u64) {
        self.0.set_position(position);
    }

    fn inc(&self, delta: u64) {
        self.0.inc(delta);
    }

    fn set_message(&self, message: &str) {
        self.0.set_message(message.to_string());
    }

    fn reset(&self) {
        self.0.reset();
    }
}

/// Prints the library's warnings (`log::warn!`, e.g. a document cut at the size limit) on
/// stderr as `cwtext: warning: …`, unless quiet.
struct WarningLogger;

impl log::Log for WarningLogger {
    /// Up to the log's maximum level: warnings, informational lines too for `serve`
    /// ([`log_info_too`]), nothing when quiet.
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            match record.level() {
                log::Level::Error => say(format_args!("cwtext: error: {}", record.args())),
                log::Level::Warn => say(format_args!("cwtext: warning: {}", record.args())),
                _ => say(format_args!("cwtext: {}", record.args())),
            }
        }
    }

    fn flush(&self) {}
}

static LOGGER: WarningLogger = WarningLogger;

/// Installs the warning logger once (later calls, e.g. in tests, are no-ops).
pub fn install_warning_logger(quiet: bool) {
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(if quiet {
            log::LevelFilter::Off
        } else {
            log::LevelFilter::Warn
        });
    }
}

/// Prints informational lines of the library's log too (a long-running `serve`), unless quiet.
#[cfg(feature = "serve")]
pub fn log_info_too(quiet: bool) {
    if !quiet {
        log::set_max_level(log::LevelFilter::Info);
    }
}

/// `--format text|json` of the commands that print one report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TextOrJson {
    Text,
    Json,
}

/// A whole document from standard input, with a hint when it is a terminal.
pub fn read_stdin(ui: &Ui) -> anyhow::Result<Vec<u8>> {
    use std::io::{IsTerminal, Read};
    if std::io::stdin().is_terminal() {
        ui.info("cwtext: reading a document from standard input (end it with Ctrl-D)");
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .context("cannot read standard input")?;
    Ok(bytes)
}

/// `-m/--model`, with the embedded default when absent.
#[derive(Debug, Args)]
pub struct ModelArg {
    /// A model file, or a ready model built in: topics (20 Newsgroups, the default), spam
    /// (spam or ham mail), sentiment (positive or negative reviews). `cwtext models` lists them.
    #[arg(short, long, value_name = "MODEL", env = "CWTEXT_MODEL")]
    pub model: Option<PathBuf>,
    /// Verify the model's checksum even when the file is larger than 64 MiB (smaller files are
    /// always verified; a large model is memory-mapped and only the pages a document needs
    /// are read), or when it is a built-in model (checked when cwtext is tested, not on every
    /// start).
    #[arg(long)]
    pub verify: bool,
}

impl ModelArg {
    pub fn load(&self, ui: &Ui) -> anyhow::Result<Model> {
        Ok(self.load_named(ui)?.0)
    }

    /// The model and how to name it (see [`load_model`]).
    pub fn load_named(&self, ui: &Ui) -> anyhow::Result<(Model, String)> {
        load_model(self.model.as_deref(), self.verify, ui)
    }
}

/// Loads a model by name or path (the default shelf model when `None`), returning it and how
/// to name it: the shelf model's name, or the path as given. A name that is also a file in the
/// current directory means the built-in model, with a warning.
pub fn load_model(spec: Option<&Path>, verify: bool, ui: &Ui) -> anyhow::Result<(Model, String)> {
    let shelf = match spec {
        None => Some(shelf::default_model()),
        Some(path) => shelf::named(path).map(|(m, file_too)| {
            if file_too {
                ui.warn(shelf::also_a_file(m.name));
            }
            m
        }),
    };
    if let Some(m) = shelf {
        let model = m
            .load(verify)
            .with_context(|| format!("the built-in model {} is damaged", m.name))?;
        return Ok((model, m.name.to_string()));
    }
    let path = spec.expect("no path means the default model");
    let checksum = if verify {
        Checksum::Verify
    } else {
        Checksum::IfSmall
    };
    let model = Model::open(path, checksum).map_err(|e| {
        let missing = matches!(&e, cwtext::error::Error::Io { error, .. }
            if error.kind() == std::io::ErrorKind::NotFound);
        let e = anyhow::Error::from(e);
        if missing {
            e.context(format!(
                "{} is neither a model file nor a built-in model ({})",
                path.display(),
                shelf::names()
            ))
        } else {
            e
        }
    })?;
    Ok((model, path.display().to_string()))
}

/// The model's vocabulary, if it keeps one; `name` names the model in errors.
pub fn vocabulary_of(
    model: &Model,
    name: &str,
) -> anyhow::Result<Option<std::sync::Arc<cwtext::text::vocabulary::Vocabulary>>> {
    model
        .vocabulary()
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))
}

/// `--include` / `--exclude`, `--layout` and `--inbox-label`: which documents of a directory
/// are read, and how.
#[derive(Debug, Args)]
pub struct FilterArgs {
    /// Only read files whose name matches this glob (repeatable), e.g. 'train-*' (for a mail
    /// store: the message file's name, or the mbox file's).
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Skip files whose name matches this glob (repeatable), e.g. '*.bak'.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// How the directory is laid out: a folder per label with a file per document, a Maildir or
    /// Maildir++ store, a directory of mbox files (one per label, Thunderbird's Name.sbd/
    /// nesting included) or MH folders; lines: a file per label with a line per document
    /// (rt-polarity.pos, rt-polarity.neg); or, given a file, one file of labelled rows
    /// (`__label__LABEL text` lines as fastText reads them, .tsv or .csv with a label column).
    /// auto tells them apart by the top level.
    #[arg(long, value_enum, default_value_t = LayoutArg::Auto)]
    pub layout: LayoutArg,
    /// The label of a mail store's inbox (the Maildir++ root, or a top-level folder called
    /// inbox). Without it the inbox is left out: it holds mail still to be sorted, of every
    /// kind, which as one label would take documents from every real folder.
    #[arg(long, value_name = "NAME")]
    pub inbox_label: Option<String>,
    /// Leave out the label folders, or the mail-store folders, whose label matches this glob
    /// (repeatable, case ignored), e.g. 'Trash', 'Sent*', 'Archive/*', 'unsup'.
    #[arg(long, value_name = "GLOB")]
    pub skip_folder: Vec<String>,
}

/// `--layout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LayoutArg {
    Auto,
    Files,
    Maildir,
    Mbox,
    Mh,
    Rows,
    Lines,
}

impl FilterArgs {
    /// These options as typed, to give another command the same corpus.
    pub fn flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        let mut each = |name: &str, values: &[String]| {
            for v in values {
                flags.extend([name.to_string(), v.clone()]);
            }
        };
        each("--include", &self.include);
        each("--exclude", &self.exclude);
        each("--skip-folder", &self.skip_folder);
        if let Some(name) = &self.inbox_label {
            flags.extend(["--inbox-label".to_string(), name.clone()]);
        }
        if self.layout != LayoutArg::Auto {
            if let Some(v) = clap::ValueEnum::to_possible_value(&self.layout) {
                flags.extend(["--layout".to_string(), v.get_name().to_string()]);
            }
        }
        flags
    }

    pub fn build(&self) -> anyhow::Result<FileFilter> {
        Ok(FileFilter::new(&self.include, &self.exclude)?.skipping_folders(&self.skip_folder)?)
    }

    /// The layout asked for; `None` to detect it.
    pub fn layout(&self) -> Option<Layout> {
        match self.layout {
            LayoutArg::Auto => None,
            LayoutArg::Files => Some(Layout::Files),
            LayoutArg::Maildir => Some(Layout::Maildir),
            LayoutArg::Mbox => Some(Layout::Mbox),
            LayoutArg::Mh => Some(Layout::Mh),
            LayoutArg::Rows => Some(Layout::Rows),
            LayoutArg::Lines => Some(Layout::Lines),
        }
    }

    /// How a labelled corpus is read, refusing fewer than `min_labels` labels.
    pub fn options(&self, min_labels: usize) -> CorpusOptions {
        CorpusOptions {
            layout: self.layout(),
            inbox_label: self.inbox_label.clone(),
            min_labels,
        }
    }

    /// Reads the labelled corpus at `dir`, refusing fewer than `min_labels` labels.
    pub fn scan(&self, dir: &Path, min_labels: usize) -> anyhow::Result<LabelledCorpus> {
        Ok(scan_corpus(dir, &self.build()?, &self.options(min_labels))?)
    }
}

/// `--server URL` of classify, filter and learn: ask a running `cwtext serve`.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Ask a running `cwtext serve` at URL (http://HOST:PORT or unix:/PATH) instead of loading
    /// the model; -m NAME (or the model file's path) picks one of its models.
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// When the server cannot be reached or fails: fail (exit 2, naming the URL; filter still
    /// passes the message on, with X-Cwtext-Error) or use the local model (-m) instead.
    #[arg(long, value_enum, default_value_t = Fallback::Fail, requires = "server")]
    pub server_fallback: Fallback,
    /// Seconds to wait for the server's answer.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 30.0,
        requires = "server"
    )]
    pub server_timeout: f64,
}

/// `--server-fallback`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Fallback {
    Fail,
    Local,
}

/// `--samples` and `--seed` of the Gibbs estimate.
#[derive(Debug, Args)]
pub struct SamplingArgs {
    /// Gibbs samples per document for the label probabilities.
    #[arg(long, value_name = "N", default_value_t = cwtext::learn::probability::DEFAULT_SAMPLES as u64,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub samples: u64,
    /// Seed of the sampler (the same input and seed always give the same probabilities).
    #[arg(long = "sample-seed", value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// How label probabilities are computed: Gibbs sampling from the weight Gaussian (EMNLP §7),
    /// or exactly, by one-dimensional quadrature over the independent label scores.
    #[arg(long, value_enum, default_value_t = ProbabilityMethod::Gibbs)]
    pub probabilities: ProbabilityMethod,
}

/// `--probabilities`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProbabilityMethod {
    Gibbs,
    Exact,
}

impl SamplingArgs {
    pub fn method(&self) -> cwtext::learn::probability::Method {
        match self.probabilities {
            ProbabilityMethod::Gibbs => cwtext::learn::probability::Method::Gibbs {
                samples: self.samples as usize,
                seed: self.seed,
            },
            ProbabilityMethod::Exact => cwtext::learn::probability::Method::Exact,
        }
    }
}

pub use cwtext::jobs::classify_output::PRIOR_NOTE;

/// Parses a probability flag (`--min-prob`), naming the value when it is not one.
pub fn probability(s: &str) -> Result<f64, String> {
    let p: f64 = s.parse().map_err(|_| format!("not a number: {s}"))?;
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("a probability must be in [0, 1], but is {p}"))
    }
}

/// Prints skipped-file warnings and returns the outcome they imply.
pub fn report_skipped(ui: &Ui, skipped: &[cwtext::Error]) -> super::Outcome {
    for e in skipped {
        ui.warn(format!("skipped {e}"));
    }
    if skipped.is_empty() {
        super::Outcome::Success
    } else {
        ui.warn(format!("{} file(s) skipped", skipped.len()));
        super::Outcome::Partial
    }
}

#[cfg(test)]
mod tests {
    use super::rate;

    #[test]
    fn a_bar_prints_its_rate_in_whole_items_with_separators() {
        assert_eq!(rate(3584.2064), "3,584/s");
        assert_eq!(rate(1_234_567.5), "1,234,568/s");
        assert_eq!(rate(10.4), "10/s");
        assert_eq!(rate(2.46), "2.5/s");
        assert_eq!(rate(0.0), "0.0/s");
        assert_eq!(rate(f64::NAN), "-/s");
    }
}
