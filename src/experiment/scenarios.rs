//! The corrections experiment set up from a corpus (`cwtext experiment corrections`, issue 16's
//! scenarios): which files train the router, which arrive as corrections and which test it.
//! [`Experiment::run`] reads the corpus, trains the models as `cwtext train` does (through a
//! checked [`TrainPlan`], with the rehearsal capacity asked for) and runs the scenarios of
//! [`super::corrections`] on them:
//!
//! * **new folders**: a model of every label but the new ones, then refiles of the new labels;
//! * the others start from a model of half of every label's training files (a fixed hash of the
//!   path, [`in_pool`]), the other half being the pool of corrections: **one-sided** corrections
//!   from two labels, a **single** correction at a time, and **mixed** corrections from the
//!   whole pool.

use std::path::{Path, PathBuf};

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::corrections::{self, Doc};
use super::{Note, Notes, SplitSpec};
use crate::error::{Error, Result};
use crate::jobs::corpus::{scan_labelled, FileFilter, FileTable, Groups, LabelledCorpus};
use crate::jobs::online::LearnOptions;
use crate::jobs::plan::TrainPlan;
use crate::jobs::train::{check_epochs, featurize_corpus, fill_rehearsal, Example};
use crate::learn::probability::{Method, DEFAULT_SAMPLES};
use crate::model::Model;
use crate::progress::Progress;
use crate::text::pipeline::PipelineConfig;

/// The scenarios [`Experiment::scenarios`] may name.
pub const SCENARIOS: [&str; 4] = ["new", "one-sided", "single", "mixed"];

/// `cwtext experiment corrections`: the corpus, the scenarios and their sizes, and how the
/// models are trained and corrected.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    pub split: SplitSpec,
    /// Labels the first model is not trained on and that arrive as refiled folders; empty: the
    /// two labels with the fewest training files.
    pub new_labels: Vec<String>,
    /// File-name glob of the old labels' files that train the model of the new-folder scenario
    /// (`None`: the training split's glob); the refiles come from the new labels' training files.
    pub base_include: Option<String>,
    /// Refiles per new label, one row each.
    pub refiles: Vec<usize>,
    /// The labels of the one-sided corrections; empty: the two labels with the most files in
    /// the pool (the larger one of a corpus of two labels).
    pub one_sided: Vec<String>,
    /// One-sided corrections, one row each.
    pub one_sided_counts: Vec<usize>,
    /// Misclassified messages learned one at a time.
    pub single: usize,
    /// Mixed corrections, one row each (the whole pool is the last row).
    pub mixed: Vec<usize>,
    /// Epochs of the trained models.
    pub epochs: usize,
    /// Documents kept per label for rehearsal (0: none); None: as `train` chooses
    /// ([`crate::learn::rehearsal::chosen_capacity`]).
    pub rehearsal: Option<usize>,
    /// How corrections are learned (`cwtext learn`'s options).
    pub options: LearnOptions,
    /// The scenarios to run, of [`SCENARIOS`]; others are ignored.
    pub scenarios: Vec<String>,
}

impl Experiment {
    /// `cwtext experiment corrections`'s defaults on the corpus of `split`.
    pub fn new(split: SplitSpec) -> Self {
        Experiment {
            split,
            new_labels: Vec::new(),
            base_include: None,
            refiles: vec![10, 50, 200],
            one_sided: Vec::new(),
            one_sided_counts: vec![100, 500],
            single: 20,
            mixed: vec![500, 2000],
            epochs: 5,
            rehearsal: None,
            options: LearnOptions::default(),
            scenarios: SCENARIOS.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// The plan every model of the experiment trains with, checked: `cwtext train`'s base
    /// pipeline and [`crate::learn::learner::CwConfig::default`]'s learner (η 0.99, flat prior,
    /// the settings issue 16 was measured with; plain `train` now uses η 0.9 and chooses the
    /// prior), calibrated, for [`Experiment::epochs`] epochs.
    pub fn plan(&self) -> Result<TrainPlan> {
        check_epochs(self.epochs)?;
        crate::jobs::plan::TrainRequest {
            epochs: self.epochs,
            seed: self.split.seed,
            ..crate::jobs::plan::TrainRequest::default()
        }
        .plan()
    }

    /// Checks the settings, reads the corpus, trains the models, runs the scenarios and returns
    /// the report in Markdown. The labels named are checked against the training split before
    /// any model is trained.
    pub fn run(&self, progress: &dyn Progress, notes: Notes) -> Result<String> {
        if let Some(unknown) = self
            .scenarios
            .iter()
            .find(|s| !SCENARIOS.contains(&s.as_str()))
        {
            return Err(Error::InvalidSetting(format!(
                "no scenario is called {unknown:?}: the scenarios are {}",
                SCENARIOS.join(", ")
            )));
        }
        let plan = self.plan()?;
        let seed = self.split.seed;
        let method = Method::Gibbs {
            samples: DEFAULT_SAMPLES,
            seed: 0,
        };
        let options = &self.options;
        let dir = &self.split.dir;
        let train = scan(dir, &self.split.train_include, notes)?;
        let want = |s: &str| self.scenarios.iter().any(|x| x == s);
        let halves = want("one-sided") || want("single") || want("mixed");
        // The labels named are checked before any model is trained, and only for the scenarios
        // that use them: a corpus of two labels has no new folders to try, but its one-sided,
        // single and mixed corrections can be measured.
        let new_labels = if !want("new") {
            Vec::new()
        } else if self.new_labels.is_empty() {
            labels_by_size(&train, 2, true)
        } else {
            self.new_labels.clone()
        };
        if want("new") {
            check_labels(&train, dir, &new_labels, "new label")?;
            if new_labels.len() >= train.labels.len() {
                return Err(Error::InvalidSetting(
                    "the new labels must leave at least one label to train on".into(),
                ));
            }
        }
        let root = train.root.clone();
        let pool_corpus = sub_corpus(&train, |_| true, |p| in_pool(&root, p));
        let one_sided_labels = if !want("one-sided") {
            Vec::new()
        } else if self.one_sided.is_empty() {
            // Two labels, or one when there are only two: the others are what is judged.
            labels_by_size(
                &pool_corpus,
                2.min(train.labels.len().saturating_sub(1)).max(1),
                false,
            )
        } else {
            self.one_sided.clone()
        };
        check_labels(&train, dir, &one_sided_labels, "one-sided label")?;
        let shuffled = |mut docs: Vec<Doc>, salt: u64| {
            docs.shuffle(&mut ChaCha8Rng::seed_from_u64(seed ^ salt));
            docs
        };
        let test_corpus = scan(dir, &self.split.test_include, notes)?;
        // Each model reads the test and pool documents with its own pipeline: `train` chooses
        // the pipeline from the data, and the model of the old labels and the model of half of
        // every label's files may choose differently.
        let mut tested = 0;

        // New folders: a model of the old labels, then refiles of the new ones.
        let new_folders = if want("new") {
            let is_new = |l: &str| new_labels.iter().any(|n| n == l);
            let base_corpus = match &self.base_include {
                Some(glob) => sub_corpus(&scan(dir, glob, notes)?, |l| !is_new(l), |_| true),
                None => sub_corpus(&train, |l| !is_new(l), |_| true),
            };
            notes(Note::Info(format!(
                "new folders: training on {} files of {} labels",
                base_corpus.files.len(),
                base_corpus.labels.len()
            )));
            let base = train_model(&base_corpus, &plan, self.rehearsal, progress, notes)?;
            let test = read(&test_corpus, base.pipeline(), progress, notes)?;
            tested = test.len();
            let refile_pool = read(
                &sub_corpus(&train, is_new, |_| true),
                base.pipeline(),
                progress,
                notes,
            )?;
            let refiles: Vec<Vec<Doc>> = new_labels
                .iter()
                .map(|l| {
                    let docs = refile_pool
                        .iter()
                        .filter(|d| &d.label == l)
                        .cloned()
                        .collect();
                    shuffled(docs, 1)
                })
                .collect();
            corrections::new_folders(&base, &refiles, &self.refiles, &test, seed, method, options)?
        } else {
            Vec::new()
        };

        // The other scenarios: half of every label trained, the other half the pool.
        let (mut one_sided, mut singles, mut mixed) = (Vec::new(), Vec::new(), Vec::new());
        if halves {
            let kept = sub_corpus(&train, |_| true, |p| !in_pool(&root, p));
            notes(Note::Info(format!(
                "one-sided, single and mixed corrections: training on {} files, {} in the pool",
                kept.files.len(),
                pool_corpus.files.len()
            )));
            let half = train_model(&kept, &plan, self.rehearsal, progress, notes)?;
            let test = read(&test_corpus, half.pipeline(), progress, notes)?;
            tested = test.len();
            let pool = shuffled(read(&pool_corpus, half.pipeline(), progress, notes)?, 2);
            let one_sided_stream: Vec<&Doc> = pool
                .iter()
                .filter(|d| one_sided_labels.contains(&d.label))
                .collect();
            let others: Vec<String> = train
                .labels
                .iter()
                .filter(|l| !one_sided_labels.contains(l))
                .cloned()
                .collect();
            if want("one-sided") {
                one_sided = corrections::stream(
                    &half,
                    &one_sided_stream,
                    &self.one_sided_counts,
                    &test,
                    &others,
                    method,
                    options,
                )?;
            }
            if want("single") {
                singles =
                    corrections::single_corrections(&half, &pool, self.single, &test, options)?;
            }
            if want("mixed") {
                let all: Vec<&Doc> = pool.iter().collect();
                let mut sizes = self.mixed.clone();
                sizes.push(all.len());
                mixed = corrections::stream(
                    &half,
                    &all,
                    &sizes,
                    &test,
                    &train.labels,
                    method,
                    options,
                )?;
            }
        }
        let header = format!(
            "Corrections on {}: models trained as `cwtext train` does ({} epochs, seed {}, calibrated), corrections learned as `cwtext learn` does; test figures on {} documents ({}) as `cwtext eval` computes them (accuracy in %).",
            self.split.name(),
            self.epochs,
            seed,
            tested,
            self.split.test_include
        );
        Ok(corrections::Report {
            header,
            new_labels: &new_labels,
            new_folders: want("new").then_some(&new_folders[..]),
            one_sided_labels: &one_sided_labels,
            one_sided: want("one-sided").then_some(&one_sided[..]),
            singles: want("single").then_some(&singles[..]),
            mixed: want("mixed").then_some(&mixed[..]),
        }
        .markdown())
    }
}

/// The files of `dir` whose name matches `glob`, a folder per label; the scan's warnings go to
/// `notes`.
fn scan(dir: &Path, glob: &str, notes: Notes) -> Result<LabelledCorpus> {
    let corpus = scan_labelled(dir, &FileFilter::new(&[glob.to_string()], &[])?)?;
    for w in &corpus.warnings {
        notes(Note::Warning(w.clone()));
    }
    Ok(corpus)
}

/// Every one of `names` must be a label of the training split `train` (of `dir`).
fn check_labels(train: &LabelledCorpus, dir: &Path, names: &[String], what: &str) -> Result<()> {
    match names.iter().find(|n| !train.labels.contains(n)) {
        Some(n) => Err(Error::InvalidSetting(format!(
            "{what} {n:?} has no training files in {} (labels: {})",
            dir.display(),
            train.labels.join(", ")
        ))),
        None => Ok(()),
    }
}

/// Whether a training file is in the half of its label that the scenarios keep back as the pool
/// of corrections: a fixed hash of the path relative to the corpus root (salted, so that it is
/// independent of the calibration fifth and the shards).
pub fn in_pool(root: &Path, path: &Path) -> bool {
    use std::hash::Hasher;
    let relative = path.strip_prefix(root).unwrap_or(path);
    let mut h = crate::text::pipeline::hash::FrozenHasher::default();
    h.write(b"corrections\0");
    h.write(relative.to_string_lossy().as_bytes());
    (h.finish() >> 32) % 2 == 1
}

/// The part of `corpus` whose labels pass `keep_label` and whose files pass `keep_file`.
fn sub_corpus(
    corpus: &LabelledCorpus,
    keep_label: impl Fn(&str) -> bool,
    keep_file: impl Fn(&Path) -> bool,
) -> LabelledCorpus {
    let mut labels = Vec::new();
    let mut map = vec![None; corpus.labels.len()];
    for (i, l) in corpus.labels.iter().enumerate() {
        if keep_label(l) {
            map[i] = Some(labels.len());
            labels.push(l.clone());
        }
    }
    // The experiments' corpora are small: their lists are held in memory.
    let files = FileTable::from_vec(
        corpus
            .files
            .to_vec()
            .expect("an experiment's corpus list is in memory")
            .into_iter()
            .filter(|(s, _)| keep_file(s.path()))
            .filter_map(|(p, l)| map[l].map(|l| (p, l)))
            .collect(),
    );
    let groups = Groups::of(&corpus.root, &files, labels.len())
        .expect("an experiment's corpus list is in memory");
    LabelledCorpus {
        root: corpus.root.clone(),
        layout: corpus.layout,
        labels,
        files,
        warnings: Vec::new(),
        notes: Vec::new(),
        groups,
    }
}

/// Featurises a corpus into documents named by label, in the corpus's order; the skipped files
/// go to `notes`.
fn docs_of(
    corpus: &LabelledCorpus,
    pipeline: &PipelineConfig,
    progress: &dyn Progress,
    notes: Notes,
) -> Result<Vec<(PathBuf, Doc)>> {
    let (examples, skipped) = featurize_corpus(corpus, pipeline, progress)?;
    for e in &skipped {
        notes(Note::Warning(format!("skipped {e}")));
    }
    Ok(examples
        .into_iter()
        .map(|e| {
            (
                corpus
                    .files
                    .get(e.file)
                    .expect("an experiment's corpus list is in memory")
                    .0
                    .path()
                    .to_path_buf(),
                Doc {
                    x: e.x,
                    label: corpus.labels[e.label].clone(),
                },
            )
        })
        .collect())
}

/// The documents of `corpus` as a model of `pipeline` reads them.
fn read(
    corpus: &LabelledCorpus,
    pipeline: &PipelineConfig,
    progress: &dyn Progress,
    notes: Notes,
) -> Result<Vec<Doc>> {
    Ok(docs_of(corpus, pipeline, progress, notes)?
        .into_iter()
        .map(|d| d.1)
        .collect())
}

/// Trains a model as `cwtext train` does (`plan`), keeping `rehearsal` documents per label
/// (None: as many as `train` keeps).
fn train_model(
    corpus: &LabelledCorpus,
    plan: &TrainPlan,
    rehearsal: Option<usize>,
    progress: &dyn Progress,
    notes: Notes,
) -> Result<Model> {
    progress.reset();
    let trained = plan
        .clone()
        .train(corpus, None, progress, &mut |m| notes(Note::Info(m)))?;
    let mut model = trained.trained.model;
    if let Some(rehearsal) = rehearsal {
        let docs = docs_of(corpus, model.pipeline(), progress, notes)?;
        let labels = model.labels().to_vec();
        let examples: Vec<Example> = docs
            .into_iter()
            .enumerate()
            .map(|(file, (_, d))| Example {
                file,
                label: labels
                    .iter()
                    .position(|l| *l == d.label)
                    .expect("a trained label"),
                x: d.x,
                // Only offered to the rehearsal memory, which no split concerns.
                split: Default::default(),
            })
            .collect();
        fill_rehearsal(&mut model, &examples, Some(rehearsal))?;
    }
    Ok(model)
}

/// `n` labels of `corpus` by file count (the fewest when `fewest`), ties by name.
fn labels_by_size(corpus: &LabelledCorpus, n: usize, fewest: bool) -> Vec<String> {
    let counts = corpus
        .files
        .label_counts(corpus.labels.len())
        .expect("an experiment's corpus list is in memory");
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    /// A corpus of `labels`, each with two training files and one test file.
    fn corpus(labels: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for label in labels {
            let d = dir.path().join(label);
            std::fs::create_dir_all(&d).unwrap();
            for name in ["train-1.txt", "train-2.txt", "test-1.txt"] {
                std::fs::write(d.join(name), format!("words about {label}")).unwrap();
            }
        }
        dir
    }

    fn refused(experiment: Experiment, message: &str) {
        let err = experiment
            .run(&NoProgress, &mut |_| {})
            .expect_err("refused")
            .to_string();
        assert!(err.starts_with("invalid setting: "), "{err}");
        assert!(err.contains(message), "{message:?} not in {err:?}");
    }

    #[test]
    fn the_settings_and_labels_are_checked_before_any_model_is_trained() {
        let dir = corpus(&["ham", "spam", "work"]);
        let experiment = Experiment::new(SplitSpec::new(dir.path()));
        refused(
            Experiment {
                epochs: 0,
                ..experiment.clone()
            },
            "epochs must be in [1, 1000], but is 0",
        );
        refused(
            Experiment {
                new_labels: vec!["ham".into(), "news".into()],
                ..experiment.clone()
            },
            "new label \"news\" has no training files in",
        );
        refused(
            Experiment {
                new_labels: vec!["ham".into(), "spam".into(), "work".into()],
                ..experiment.clone()
            },
            "the new labels must leave at least one label to train on",
        );
        // A scenario named wrong ran nothing and printed a report of no sections.
        refused(
            Experiment {
                scenarios: vec!["new".into(), "new-folders".into()],
                ..experiment
            },
            "no scenario is called \"new-folders\": the scenarios are new, one-sided, single, mixed",
        );
    }

    /// A corpus of two labels has no new folders to try (the two smallest labels would leave
    /// none to train on, which was refused whatever was asked for); without `new`, its
    /// one-sided, single and mixed corrections run, and the report has only their sections.
    #[test]
    fn two_labels_run_the_scenarios_that_need_no_new_folder() {
        let dir = tempfile::tempdir().unwrap();
        let words = |label: &str, i: usize| match label {
            "neg" => format!("dull and tedious plot number {i} with a flat ending"),
            _ => format!("bright and moving story number {i} with a warm ending"),
        };
        for label in ["neg", "pos"] {
            let d = dir.path().join(label);
            std::fs::create_dir_all(&d).unwrap();
            for i in 0..16 {
                std::fs::write(d.join(format!("train-{i:02}.txt")), words(label, i)).unwrap();
            }
            for i in 0..4 {
                std::fs::write(d.join(format!("test-{i}.txt")), words(label, 100 + i)).unwrap();
            }
        }
        let experiment = Experiment {
            scenarios: vec!["one-sided".into(), "single".into(), "mixed".into()],
            one_sided_counts: vec![2],
            mixed: vec![2],
            single: 2,
            epochs: 2,
            ..Experiment::new(SplitSpec::new(dir.path()))
        };
        let report = experiment.run(&NoProgress, &mut |_| {}).unwrap();
        assert!(!report.contains("**New folders**"), "{report}");
        // One label of two is corrected one-sidedly (the larger: a tie, by name), the other
        // judged.
        assert!(
            report.contains("**One-sided corrections** from neg only"),
            "{report}"
        );
        assert!(report.contains("**One correction**"), "{report}");
        assert!(report.contains("**Mixed corrections**"), "{report}");
        assert!(report.contains("test figures on 8 documents"), "{report}");
        // Asked for, new folders are still refused on two labels.
        refused(
            Experiment::new(SplitSpec::new(dir.path())),
            "the new labels must leave at least one label to train on",
        );
    }

    /// The routers the scenarios correct are what `cwtext train` makes: its η, prior, choice of
    /// stop words and prior, label shift and calibration (before, they were CW's library
    /// defaults, η 0.99 and a flat prior, calibrated, with nothing chosen: not the model a user
    /// corrects).
    #[test]
    fn the_models_are_trained_as_train_trains_them() {
        let dir = corpus(&["ham", "spam"]);
        let experiment = Experiment::new(SplitSpec::new(dir.path()));
        let train = crate::jobs::plan::TrainRequest {
            epochs: experiment.epochs,
            seed: experiment.split.seed,
            ..crate::jobs::plan::TrainRequest::default()
        }
        .plan()
        .unwrap();
        // TrainSettings has no PartialEq (it holds stop-word lists); the Debug text is every field.
        assert_eq!(
            format!("{:?}", experiment.plan().unwrap().settings()),
            format!("{:?}", train.settings())
        );
        let plan = experiment.plan().unwrap();
        let settings = plan.settings();
        assert_eq!(settings.learner.eta, crate::jobs::train::TRAIN_ETA);
        assert!(settings.calibrate);
        assert!(settings.choose.stopwords && settings.choose.prior && settings.choose.label_shift);
    }

    #[test]
    fn labels_by_size_breaks_ties_by_name() {
        let dir = corpus(&["b", "a", "c"]);
        let mut train = scan_labelled(
            dir.path(),
            &FileFilter::new(&["train-*".to_string()], &[]).unwrap(),
        )
        .unwrap();
        // "c" gets a third file.
        let extra = train.files.get(0).unwrap().0;
        let c = train.labels.iter().position(|l| l == "c").unwrap();
        train.files.push(extra, c).unwrap();
        train.files.seal().unwrap();
        assert_eq!(labels_by_size(&train, 2, true), ["a", "b"]);
        assert_eq!(labels_by_size(&train, 1, false), ["c"]);
        let half = sub_corpus(&train, |l| l != "b", |_| true);
        assert_eq!(half.labels, ["a", "c"]);
        assert_eq!(half.files.len(), 5);
    }
}
