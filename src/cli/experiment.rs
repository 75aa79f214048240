//! `cwtext experiment synthetic|epochs|shards|calibration|corrections`: the papers' experiments
//! and the corrections scenarios, printed as Markdown tables (and written to a file with `-o`,
//! e.g. under `benches/results/`). Flags → the experiment's settings ([`cwtext::experiment`]) →
//! run → table.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::common::Ui;
use super::Outcome;
use cwtext::experiment::{calibration, epochs, scenarios, shards, synthetic, Note, SplitSpec};

const EXAMPLES: &str = "\
Examples:
  cwtext experiment synthetic -o benches/results/nips2008-synthetic.md
  cwtext experiment epochs ~/.cache/cwtext-corpora/20ng -o benches/results/emnlp2009-20ng.md
  cwtext experiment shards ~/.cache/cwtext-corpora/20ng -o benches/results/jmlr2012-fig6-20ng.md
  cwtext experiment corrections ~/.cache/cwtext-corpora/20ng --base-include 'train-0*'";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct ExperimentArgs {
    #[command(subcommand)]
    pub which: Which,
}

#[derive(Debug, Subcommand)]
pub enum Which {
    /// NIPS 2008 §5: cumulative mistakes on synthetic data in R^20 (Fig. 2a, b).
    Synthetic(SyntheticArgs),
    /// EMNLP 2009 §6: test accuracy after each epoch, per constraint strategy and baseline.
    Epochs(EpochsArgs),
    /// JMLR 2012 §7.10 (Fig. 6): shard models, their uniform average and KL combination.
    Shards(ShardsArgs),
    /// Test-set calibration of the shipped model under each way of fitting its probability
    /// scale.
    Calibration(CalibrationArgs),
    /// What `learn` does to a trained router: new folders, one-sided corrections, one
    /// correction, mixed corrections (issue 16's scenarios).
    Corrections(Box<CorrectionsArgs>),
}

#[derive(Debug, Args)]
pub struct CorrectionsArgs {
    #[command(flatten)]
    pub split: SplitArgs,
    /// Labels the first model is not trained on and that arrive as refiled folders
    /// (comma-separated) [default: the two labels with the fewest training files].
    #[arg(long, value_delimiter = ',', value_name = "LABEL,…")]
    pub new_labels: Vec<String>,
    /// File-name glob of the old labels' files that train the model of the new-folder scenario
    /// [default: --train-include]; the refiles come from the new labels' --train-include files.
    #[arg(long, value_name = "GLOB")]
    pub base_include: Option<String>,
    /// Refiles per new label, one row each.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "10,50,200",
        value_name = "N,…"
    )]
    pub refiles: Vec<usize>,
    /// The labels of the one-sided corrections (comma-separated) [default: the two labels with
    /// the most files in the pool; the larger one of two labels].
    #[arg(long, value_delimiter = ',', value_name = "LABEL,…")]
    pub one_sided: Vec<String>,
    /// One-sided corrections, one row each.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "100,500",
        value_name = "N,…"
    )]
    pub one_sided_counts: Vec<usize>,
    /// Misclassified messages learned one at a time.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub single: usize,
    /// Mixed corrections, one row each (the whole pool is the last row).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "500,2000",
        value_name = "N,…"
    )]
    pub mixed: Vec<usize>,
    /// Epochs of the trained models.
    #[arg(long, default_value_t = 5)]
    pub epochs: usize,
    /// Documents kept per label for rehearsal (0: none) [default: as many as `train` keeps]
    #[arg(long)]
    pub rehearsal: Option<usize>,
    /// Confidence η of corrections.
    #[arg(long)]
    pub correction_eta: Option<f64>,
    /// Corrections demand the confidence η on the calibrated score variance c·v (`learn`'s
    /// default); `--calibrated false` demands it on v, as training does.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub calibrated: bool,
    /// With --calibrated: a misfiled document of a label added since the scale was fitted is
    /// learned on v while the label is new (`learn`'s default); `--new-labels-raw false` learns
    /// it on c·v, as before 2026-12-07.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub new_labels_raw: bool,
    /// Update only on corrections the model mispredicts.
    #[arg(long)]
    pub mistakes_only: bool,
    /// Replay kept documents with the constraint "their label beats the corrected one" (with
    /// `--protect false`).
    #[arg(long)]
    pub against: bool,
    /// Replays demand η on the calibrated score variance.
    #[arg(long)]
    pub replay_calibrated: bool,
    /// Protect the kept documents after each correction (`learn`'s default); `--protect false`
    /// replays them instead (see --against, --budget) or, with --rehearsal 0, does nothing.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub protect: bool,
    /// How far towards the best other label's reference score a raised label may rise on a kept
    /// document (0: not above its own reference).
    #[arg(long, default_value_t = 0.0)]
    pub slack: f64,
    /// Kept documents replayed per correction (0: all).
    #[arg(long, default_value_t = 0)]
    pub budget: usize,
    /// With --protect: replay the corrected label's own kept documents first.
    #[arg(long)]
    pub own: bool,
    /// Scenarios to run.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "new,one-sided,single,mixed",
        value_parser = clap::builder::PossibleValuesParser::new(scenarios::SCENARIOS)
    )]
    pub scenarios: Vec<String>,
    /// Where a new label starts (to compare with `learn`'s default, `labels`).
    #[arg(long, value_enum, default_value_t = cwtext::learn::learner::LabelStart::Labels)]
    pub new_label_start: cwtext::learn::learner::LabelStart,
}

#[derive(Debug, Args)]
pub struct CalibrationArgs {
    #[command(flatten)]
    pub split: SplitArgs,
    /// Epochs per model.
    #[arg(long, default_value_t = 5)]
    pub epochs: usize,
    /// Confidence η of the learner.
    #[arg(long, default_value_t = cwtext::learn::learner::CwConfig::default().eta)]
    pub eta: f64,
    /// Keep the English stop-word list (default: none).
    #[arg(long)]
    pub stopwords: bool,
}

#[derive(Debug, Args)]
pub struct ShardsArgs {
    #[command(flatten)]
    pub split: SplitArgs,
    /// Number of shards.
    #[arg(long, default_value_t = 10)]
    pub shards: usize,
    /// Epochs per model.
    #[arg(long, default_value_t = 5)]
    pub epochs: usize,
}

/// The corpus and its two splits, shared by `epochs` and `shards`.
#[derive(Debug, Args)]
pub struct SplitArgs {
    /// Corpus root: DIR/<label>/**/<file>, holding both splits.
    pub dir: PathBuf,
    /// File-name glob of the training split.
    #[arg(long, default_value = "train-*", value_name = "GLOB")]
    pub train_include: String,
    /// File-name glob of the test split.
    #[arg(long, default_value = "test-*", value_name = "GLOB")]
    pub test_include: String,
    /// Seed of the per-epoch shuffle.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the table to this file.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SyntheticArgs {
    /// Reported runs (seeds).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub runs: u64,
    /// Runs on other seeds used to tune η (and AROW's r) for each algorithm.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub tuning_runs: u64,
    /// Standard deviation of the long, uninformative axis.
    #[arg(long, default_value_t = synthetic::LONG_AXIS_SD, value_name = "SD")]
    pub long_axis_sd: f64,
    /// Standard deviation of the informative short axis (the paper does not give it).
    #[arg(long, default_value_t = synthetic::SHORT_AXIS_SD, value_name = "SD")]
    pub short_axis_sd: f64,
    /// Also write the table to this file.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct EpochsArgs {
    #[command(flatten)]
    pub split: SplitArgs,
    /// Epochs to train (accuracy is measured after each).
    #[arg(long, default_value_t = 10)]
    pub epochs: usize,
    /// Only the configurations whose name contains this text (repeatable), e.g. 'k=1'.
    #[arg(long, value_name = "TEXT")]
    pub only: Vec<String>,
}

pub fn run(args: ExperimentArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    let progress = ui.progress(0);
    let mut notes = |note: Note| {
        progress.suspend(|| match note {
            Note::Info(message) => ui.info(message),
            Note::Warning(message) => ui.warn(message),
        })
    };
    let (table, output) = match args.which {
        Which::Synthetic(a) => {
            let setup = synthetic::Setup {
                runs: a.runs as usize,
                tuning_runs: a.tuning_runs as usize,
                long_sd: a.long_axis_sd,
                short_sd: a.short_axis_sd,
            };
            (setup.run(&mut notes)?, a.output)
        }
        Which::Epochs(a) => {
            let experiment = epochs::Experiment {
                split: a.split.spec(),
                epochs: a.epochs,
                only: a.only,
            };
            (experiment.run(&progress, &mut notes)?, a.split.output)
        }
        Which::Shards(a) => {
            let experiment = shards::Experiment {
                split: a.split.spec(),
                shards: a.shards,
                epochs: a.epochs,
            };
            (experiment.run(&progress, &mut notes)?, a.split.output)
        }
        Which::Calibration(a) => {
            let experiment = calibration::Experiment {
                split: a.split.spec(),
                epochs: a.epochs,
                eta: a.eta,
                stopwords: a.stopwords,
            };
            (experiment.run(&progress, &mut notes)?, a.split.output)
        }
        Which::Corrections(a) => {
            let experiment = a.experiment();
            (experiment.run(&progress, &mut notes)?, a.split.output)
        }
    };
    progress.finish_and_clear();
    if let Some(path) = &output {
        std::fs::write(path, &table)
            .with_context(|| format!("{}: cannot write", path.display()))?;
    }
    let mut out = std::io::stdout().lock();
    out.write_all(table.as_bytes())?;
    out.flush()?;
    Ok(Outcome::Success)
}

impl SplitArgs {
    fn spec(&self) -> SplitSpec {
        SplitSpec {
            dir: self.dir.clone(),
            train_include: self.train_include.clone(),
            test_include: self.test_include.clone(),
            seed: self.seed,
        }
    }
}

impl CorrectionsArgs {
    fn experiment(&self) -> scenarios::Experiment {
        scenarios::Experiment {
            split: self.split.spec(),
            new_labels: self.new_labels.clone(),
            base_include: self.base_include.clone(),
            refiles: self.refiles.clone(),
            one_sided: self.one_sided.clone(),
            one_sided_counts: self.one_sided_counts.clone(),
            single: self.single,
            mixed: self.mixed.clone(),
            epochs: self.epochs,
            rehearsal: self.rehearsal,
            options: cwtext::jobs::online::LearnOptions {
                new_label: self.new_label_start,
                eta: self.correction_eta,
                calibrated: self.calibrated,
                new_labels_raw: self.new_labels_raw,
                mistakes_only: self.mistakes_only,
                against: self.against,
                replay_calibrated: self.replay_calibrated,
                protect: self.protect,
                slack: self.slack,
                budget: self.budget,
                own: self.own,
                ..cwtext::jobs::online::LearnOptions::default()
            },
            scenarios: self.scenarios.clone(),
        }
    }
}
