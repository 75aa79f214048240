//! `cwtext experiment synthetic|epochs`: the papers' experiments, printed as Markdown tables
//! (and written to a file with `-o`, e.g. under `benches/results/`).

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::common::Ui;
use super::Outcome;
use crate::experiment::{epochs, synthetic};
use crate::train::{check_epochs, Example, TrainSettings};

const EXAMPLES: &str = "\
Examples:
  cwtext experiment synthetic -o benches/results/nips2008-synthetic.md
  cwtext experiment epochs ~/.cache/cwtext-corpora/20ng -o benches/results/emnlp2009-20ng.md
  cwtext experiment shards ~/.cache/cwtext-corpora/20ng -o benches/results/jmlr2012-fig6-20ng.md";

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
}

#[derive(Debug, Args)]
pub struct CalibrationArgs {
    #[command(flatten)]
    pub split: SplitArgs,
    /// Epochs per model.
    #[arg(long, default_value_t = 5)]
    pub epochs: usize,
    /// Confidence η of the learner.
    #[arg(long, default_value_t = crate::learner::CwConfig::default().eta)]
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
    let table = match args.which {
        Which::Synthetic(a) => {
            ui.info(format!(
                "synthetic: {} algorithms × {} runs (tuned on {})",
                synthetic::Algorithm::ALL.len(),
                a.runs,
                a.tuning_runs
            ));
            for (name, sd) in [("long", a.long_axis_sd), ("short", a.short_axis_sd)] {
                anyhow::ensure!(
                    sd.is_finite() && sd > 0.0,
                    "invalid setting: --{name}-axis-sd must be positive, but is {sd}"
                );
            }
            let setup = synthetic::Setup {
                runs: a.runs as usize,
                tuning_runs: a.tuning_runs as usize,
                long_sd: a.long_axis_sd,
                short_sd: a.short_axis_sd,
            };
            let rows = synthetic::table(&setup);
            let table = synthetic::markdown(&rows, &setup);
            write(&a.output, &table)?;
            table
        }
        Which::Epochs(a) => {
            let table = run_epochs(&a, ui)?;
            write(&a.split.output, &table)?;
            table
        }
        Which::Shards(a) => {
            let table = run_shards(&a, ui)?;
            write(&a.split.output, &table)?;
            table
        }
        Which::Calibration(a) => {
            let table = run_calibration(&a, ui)?;
            write(&a.split.output, &table)?;
            table
        }
    };
    print!("{table}");
    Ok(Outcome::Success)
}

fn write(output: &Option<PathBuf>, table: &str) -> anyhow::Result<()> {
    if let Some(path) = output {
        std::fs::write(path, table).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok(())
}

impl SplitArgs {
    fn read(
        &self,
        pipeline: &crate::pipeline::PipelineConfig,
        ui: &Ui,
    ) -> anyhow::Result<crate::experiment::Split> {
        let progress = ui.progress(0);
        let split = crate::experiment::Split::read(
            &self.dir,
            &self.train_include,
            &self.test_include,
            pipeline,
            &progress,
        )?;
        progress.finish_and_clear();
        split.warnings.iter().for_each(|w| ui.warn(w));
        Ok(split)
    }

    fn name(&self) -> String {
        self.dir.file_name().map_or_else(
            || self.dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }
}

fn run_shards(a: &ShardsArgs, ui: &Ui) -> anyhow::Result<String> {
    check_epochs(a.epochs)?;
    anyhow::ensure!(
        (2..=1024).contains(&a.shards),
        "invalid setting: shards must be in [2, 1024], but is {}",
        a.shards
    );
    let base = TrainSettings::new(a.epochs, a.split.seed);
    let split = a.split.read(&base.pipeline, ui)?;
    ui.info(format!(
        "shards: {} shards, {} epochs, {} training and {} test documents",
        a.shards,
        a.epochs,
        split.train.len(),
        split.test.len()
    ));
    let shard = |e: &Example| {
        crate::train::shard_of(&split.corpus.root, &split.corpus.files[e.file].0, a.shards)
    };
    let lines = crate::experiment::shards::run(
        &base,
        &split.labels,
        &split.train,
        &split.test,
        a.shards,
        &shard,
    )?;
    let header = format!(
        "JMLR 2012 §7.10 (Fig. 6) on {}: {} shards by a hash of each file's path, {} epochs, seed {}; {} training / {} test documents ({} / {}), cwtext's default pipeline and learner (CW-Stdev, KL projection).",
        a.split.name(),
        a.shards,
        a.epochs,
        a.split.seed,
        split.train.len(),
        split.test.len(),
        a.split.train_include,
        a.split.test_include
    );
    Ok(crate::experiment::shards::markdown(&lines, &header))
}

fn run_epochs(a: &EpochsArgs, ui: &Ui) -> anyhow::Result<String> {
    check_epochs(a.epochs)?;
    let configs: Vec<epochs::Config> = epochs::emnlp_configs()
        .into_iter()
        .filter(|c| a.only.is_empty() || a.only.iter().any(|o| c.name.contains(o.as_str())))
        .collect();
    anyhow::ensure!(
        !configs.is_empty(),
        "invalid setting: no configuration name contains {:?}",
        a.only
    );
    let base = TrainSettings::new(a.epochs, a.split.seed);
    let split = a.split.read(&base.pipeline, ui)?;
    let (labels, train, test) = (split.labels, split.train, split.test);
    ui.info(format!(
        "epochs: {} configurations × {} epochs, {} training and {} test documents, {} labels",
        configs.len(),
        a.epochs,
        train.len(),
        test.len(),
        labels.len()
    ));
    let progress = ui.progress(0);
    progress.set_message("training");
    let curves = epochs::run(
        &configs,
        &base,
        labels.len(),
        &train,
        &test,
        a.epochs,
        &progress,
    )?;
    progress.finish_and_clear();
    let header = format!(
        "EMNLP 2009 §6 on {}: test accuracy (%) after each epoch; {} training / {} test \
         documents ({} / {}), {} labels, seed {}, cwtext's default pipeline and η.",
        a.split.name(),
        train.len(),
        test.len(),
        a.split.train_include,
        a.split.test_include,
        labels.len(),
        a.split.seed
    );
    Ok(epochs::markdown(&curves, &header))
}

fn run_calibration(a: &CalibrationArgs, ui: &Ui) -> anyhow::Result<String> {
    check_epochs(a.epochs)?;
    let mut base = TrainSettings::new(a.epochs, a.split.seed);
    base.learner.eta = a.eta;
    base.pipeline.symbols = true;
    if !a.stopwords {
        base.pipeline
            .filters
            .retain(|f| !matches!(f, crate::pipeline::filter::FilterConfig::StopWords { .. }));
    }
    let split = a.split.read(&base.pipeline, ui)?;
    let held =
        |e: &Example| crate::train::held_out(&split.corpus.root, &split.corpus.files[e.file].0);
    let rows = crate::experiment::calibration::run(
        &base,
        &split.labels,
        &split.train,
        &held,
        &split.test,
    )?;
    let header = format!(
        "Calibration on {}: {} training / {} test documents, {} labels, {} epochs, eta {}, stop words {}, seed {}.",
        a.split.name(),
        split.train.len(),
        split.test.len(),
        split.labels.len(),
        a.epochs,
        a.eta,
        if a.stopwords { "english" } else { "none" },
        a.split.seed
    );
    Ok(crate::experiment::calibration::markdown(&rows, &header))
}
