//! `cwtext experiment synthetic|epochs|shards|corrections`: the papers' experiments and the
//! corrections scenarios, printed as Markdown tables (and written to a file with `-o`, e.g. under
//! `benches/results/`).

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::common::Ui;
use super::Outcome;
use cwtext::experiment::{corrections, epochs, synthetic};
use cwtext::jobs::corpus::{scan_labelled, FileFilter};
use cwtext::jobs::train::{check_epochs, featurize_corpus, Example, TrainSettings};

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
    Corrections(CorrectionsArgs),
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
    /// the most files in the pool].
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
    /// Documents kept per label for rehearsal (0: none).
    #[arg(long, default_value_t = cwtext::learn::rehearsal::DEFAULT_CAPACITY)]
    pub rehearsal: usize,
    /// Confidence η of corrections.
    #[arg(long)]
    pub correction_eta: Option<f64>,
    /// Corrections demand the confidence η on the calibrated score variance c·v (`learn`'s
    /// default); `--calibrated false` demands it on v, as training does.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub calibrated: bool,
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
        default_value = "new,one-sided,single,mixed"
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
        Which::Corrections(a) => {
            let table = run_corrections(&a, ui)?;
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
        pipeline: &cwtext::text::pipeline::PipelineConfig,
        ui: &Ui,
    ) -> anyhow::Result<cwtext::experiment::Split> {
        let progress = ui.progress(0);
        let split = cwtext::experiment::Split::read(
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
        cwtext::jobs::corpus::shard_of(&split.corpus.root, &split.corpus.files[e.file].0, a.shards)
    };
    let lines = cwtext::experiment::shards::run(
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
    Ok(cwtext::experiment::shards::markdown(&lines, &header))
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
        base.pipeline.filters.retain(|f| {
            !matches!(
                f,
                cwtext::text::pipeline::config::FilterConfig::StopWords { .. }
            )
        });
    }
    let split = a.split.read(&base.pipeline, ui)?;
    let held = |e: &Example| {
        cwtext::jobs::corpus::held_out(&split.corpus.root, &split.corpus.files[e.file].0)
    };
    let rows = cwtext::experiment::calibration::run(
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
    Ok(cwtext::experiment::calibration::markdown(&rows, &header))
}

/// The half of a label's training files that the corrections scenarios keep back as the pool
/// of corrections: a fixed hash of the path relative to the corpus root (salted, so that it is
/// independent of the calibration fifth and the shards).
fn in_pool(root: &std::path::Path, path: &std::path::Path) -> bool {
    use std::hash::Hasher;
    let relative = path.strip_prefix(root).unwrap_or(path);
    let mut h = cwtext::text::pipeline::hash::FrozenHasher::default();
    h.write(b"corrections\0");
    h.write(relative.to_string_lossy().as_bytes());
    (h.finish() >> 32) % 2 == 1
}

/// The part of `corpus` whose labels pass `keep_label` and whose files pass `keep_file`.
fn sub_corpus(
    corpus: &cwtext::jobs::corpus::LabelledCorpus,
    keep_label: impl Fn(&str) -> bool,
    keep_file: impl Fn(&std::path::Path) -> bool,
) -> cwtext::jobs::corpus::LabelledCorpus {
    let mut labels = Vec::new();
    let mut map = vec![None; corpus.labels.len()];
    for (i, l) in corpus.labels.iter().enumerate() {
        if keep_label(l) {
            map[i] = Some(labels.len());
            labels.push(l.clone());
        }
    }
    let files = corpus
        .files
        .iter()
        .filter(|(s, _)| keep_file(s.path()))
        .filter_map(|(p, l)| map[*l].map(|l| (p.clone(), l)))
        .collect();
    cwtext::jobs::corpus::LabelledCorpus {
        root: corpus.root.clone(),
        layout: corpus.layout,
        labels,
        files,
        warnings: Vec::new(),
    }
}

/// Featurises a corpus into documents named by label, in the corpus's order.
fn docs_of(
    corpus: &cwtext::jobs::corpus::LabelledCorpus,
    pipeline: &cwtext::text::pipeline::PipelineConfig,
    ui: &Ui,
) -> anyhow::Result<Vec<(std::path::PathBuf, corrections::Doc)>> {
    let progress = ui.progress(corpus.files.len() as u64);
    let (examples, skipped) = featurize_corpus(corpus, pipeline, &progress)?;
    progress.finish_and_clear();
    skipped.iter().for_each(|e| ui.warn(format!("skipped {e}")));
    Ok(examples
        .into_iter()
        .map(|e| {
            (
                corpus.files[e.file].0.path().to_path_buf(),
                corrections::Doc {
                    x: e.x,
                    label: corpus.labels[e.label].clone(),
                },
            )
        })
        .collect())
}

/// Trains a model as `cwtext train` does (calibrated).
fn train_model(
    corpus: &cwtext::jobs::corpus::LabelledCorpus,
    settings: &TrainSettings,
    rehearsal: usize,
    ui: &Ui,
) -> anyhow::Result<cwtext::model::Model> {
    let progress = ui.progress(0);
    let trained = cwtext::jobs::train::train_corpus(corpus, settings, None, &progress)?;
    progress.finish_and_clear();
    let mut model = trained.model;
    if rehearsal != cwtext::learn::rehearsal::DEFAULT_CAPACITY {
        let docs = docs_of(corpus, model.pipeline(), ui)?;
        let labels = model.labels().to_vec();
        let examples: Vec<cwtext::jobs::train::Example> = docs
            .into_iter()
            .enumerate()
            .map(|(file, (_, d))| cwtext::jobs::train::Example {
                file,
                label: labels
                    .iter()
                    .position(|l| *l == d.label)
                    .expect("a trained label"),
                x: d.x,
            })
            .collect();
        cwtext::jobs::train::fill_rehearsal(&mut model, &examples, rehearsal);
    }
    Ok(model)
}

/// `n` labels of `corpus` by file count (the fewest when `fewest`), ties by name.
fn labels_by_size(
    corpus: &cwtext::jobs::corpus::LabelledCorpus,
    n: usize,
    fewest: bool,
) -> Vec<String> {
    let mut counts = vec![0usize; corpus.labels.len()];
    corpus.files.iter().for_each(|(_, l)| counts[*l] += 1);
    let mut order: Vec<usize> = (0..counts.len()).collect();
    order.sort_by_key(|&i| {
        if fewest {
            counts[i] as i64
        } else {
            -(counts[i] as i64)
        }
    });
    order
        .into_iter()
        .take(n)
        .map(|i| corpus.labels[i].clone())
        .collect()
}

fn run_corrections(a: &CorrectionsArgs, ui: &Ui) -> anyhow::Result<String> {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    check_epochs(a.epochs)?;
    let seed = a.split.seed;
    let settings = TrainSettings {
        calibrate: true,
        ..TrainSettings::new(a.epochs, seed)
    };
    let method = cwtext::learn::probability::Method::Gibbs {
        samples: cwtext::learn::probability::DEFAULT_SAMPLES,
        seed: 0,
    };
    let options = cwtext::jobs::online::LearnOptions {
        new_label: a.new_label_start,
        eta: a.correction_eta,
        calibrated: a.calibrated,
        mistakes_only: a.mistakes_only,
        against: a.against,
        replay_calibrated: a.replay_calibrated,
        protect: a.protect,
        slack: a.slack,
        budget: a.budget,
        own: a.own,
        ..cwtext::jobs::online::LearnOptions::default()
    };
    let dir = &a.split.dir;
    let scan = |glob: &str| -> anyhow::Result<cwtext::jobs::corpus::LabelledCorpus> {
        let corpus = scan_labelled(dir, &FileFilter::new(&[glob.to_string()], &[])?)?;
        corpus.warnings.iter().for_each(|w| ui.warn(w));
        Ok(corpus)
    };
    let train = scan(&a.split.train_include)?;
    let check = |names: &[String], what: &str| -> anyhow::Result<()> {
        for n in names {
            anyhow::ensure!(
                train.labels.contains(n),
                "invalid setting: {what} {n:?} has no training files in {} (labels: {})",
                dir.display(),
                train.labels.join(", ")
            );
        }
        Ok(())
    };
    let new_labels = if a.new_labels.is_empty() {
        labels_by_size(&train, 2, true)
    } else {
        a.new_labels.clone()
    };
    check(&new_labels, "new label")?;
    anyhow::ensure!(
        new_labels.len() < train.labels.len(),
        "invalid setting: the new labels must leave at least one label to train on"
    );
    let is_new = |l: &str| new_labels.iter().any(|n| n == l);
    let shuffled = |mut docs: Vec<corrections::Doc>, salt: u64| {
        docs.shuffle(&mut ChaCha8Rng::seed_from_u64(seed ^ salt));
        docs
    };
    use rand_chacha::ChaCha8Rng;

    // New folders: a model of the old labels, then refiles of the new ones.
    let base_corpus = match &a.base_include {
        Some(glob) => sub_corpus(&scan(glob)?, |l| !is_new(l), |_| true),
        None => sub_corpus(&train, |l| !is_new(l), |_| true),
    };
    ui.info(format!(
        "new folders: training on {} files of {} labels",
        base_corpus.files.len(),
        base_corpus.labels.len()
    ));
    let base = train_model(&base_corpus, &settings, a.rehearsal, ui)?;
    let pipeline = base.pipeline().clone();
    let test: Vec<corrections::Doc> = docs_of(&scan(&a.split.test_include)?, &pipeline, ui)?
        .into_iter()
        .map(|d| d.1)
        .collect();
    let refile_pool = docs_of(&sub_corpus(&train, is_new, |_| true), &pipeline, ui)?;
    let refiles: Vec<Vec<corrections::Doc>> = new_labels
        .iter()
        .map(|l| {
            let docs = refile_pool
                .iter()
                .filter(|d| &d.1.label == l)
                .map(|d| d.1.clone())
                .collect();
            shuffled(docs, 1)
        })
        .collect();
    let want = |s: &str| a.scenarios.iter().any(|x| x == s);
    let new_folders = if want("new") {
        corrections::new_folders(&base, &refiles, &a.refiles, &test, seed, method, &options)?
    } else {
        Vec::new()
    };
    drop(base);

    // The other scenarios: half of every label trained, the other half the pool.
    let root = train.root.clone();
    let kept = sub_corpus(&train, |_| true, |p| !in_pool(&root, p));
    let pool_corpus = sub_corpus(&train, |_| true, |p| in_pool(&root, p));
    ui.info(format!(
        "one-sided, single and mixed corrections: training on {} files, {} in the pool",
        kept.files.len(),
        pool_corpus.files.len()
    ));
    let half = train_model(&kept, &settings, a.rehearsal, ui)?;
    let pool = shuffled(
        docs_of(&pool_corpus, &pipeline, ui)?
            .into_iter()
            .map(|d| d.1)
            .collect(),
        2,
    );
    let one_sided_labels = if a.one_sided.is_empty() {
        labels_by_size(&pool_corpus, 2, false)
    } else {
        a.one_sided.clone()
    };
    check(&one_sided_labels, "one-sided label")?;
    let one_sided_stream: Vec<&corrections::Doc> = pool
        .iter()
        .filter(|d| one_sided_labels.contains(&d.label))
        .collect();
    let others: Vec<String> = train
        .labels
        .iter()
        .filter(|l| !one_sided_labels.contains(l))
        .cloned()
        .collect();
    let one_sided = if want("one-sided") {
        corrections::stream(
            &half,
            &one_sided_stream,
            &a.one_sided_counts,
            &test,
            &others,
            method,
            &options,
        )?
    } else {
        Vec::new()
    };
    let singles = if want("single") {
        corrections::single_corrections(&half, &pool, a.single, &test, &options)?
    } else {
        Vec::new()
    };
    let all: Vec<&corrections::Doc> = pool.iter().collect();
    let mut sizes = a.mixed.clone();
    sizes.push(all.len());
    let mixed = if want("mixed") {
        corrections::stream(&half, &all, &sizes, &test, &train.labels, method, &options)?
    } else {
        Vec::new()
    };
    let header = format!(
        "Corrections on {}: models trained as `cwtext train` does ({} epochs, seed {}, calibrated), corrections learned as `cwtext learn` does; test figures on {} documents ({}) as `cwtext eval` computes them (accuracy in %).",
        a.split.name(),
        a.epochs,
        seed,
        test.len(),
        a.split.test_include
    );
    Ok(corrections::Report {
        header,
        new_labels: &new_labels,
        new_folders: &new_folders,
        one_sided_labels: &one_sided_labels,
        one_sided: &one_sided,
        singles: &singles,
        mixed: &mixed,
    }
    .markdown())
}
