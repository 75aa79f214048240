//! Layer 6, experiment: uses every layer below; nothing in the library uses it (the command line
//! and the tests do). Its functions may take settings no user would, for the papers' sake.
//!
//! Reproductions of the papers' experiments, as library functions that return tables, so that
//! `cwtext experiment …` prints them and tests assert their shape:
//!
//! * [`synthetic`]: NIPS 2008 §5, cumulative mistakes on 1,000 points in R²⁰ (Fig. 2a);
//! * [`epochs`]: EMNLP 2009 §6, test accuracy after each training epoch for the constraint
//!   strategies and the baselines (Fig. 1, Tables 2–3);
//! * [`shards`]: JMLR 2012 §7.10 Fig. 6, models trained on disjoint shards and combined;
//! * [`calibration`]: test-set calibration of the shipped model under each way of fitting its
//!   probability scale;
//! * [`corrections`]: what `cwtext learn` does to a trained router (new folders, one-sided
//!   corrections, one correction, mixed corrections), set up from a corpus by [`scenarios`].
//!
//! [`Split::read`] reads a corpus's training and test files (the 20 Newsgroups by-date split:
//! `train-*` / `test-*`) for the experiments on real corpora.
//!
//! Each experiment is also a whole run, as `cwtext experiment …` asks for it: a struct of its
//! settings (a [`SplitSpec`] naming the corpus, [`synthetic::Setup`], [`epochs::Experiment`],
//! [`shards::Experiment`], [`calibration::Experiment`], [`scenarios::Experiment`]) whose `run`
//! checks them before any work, reads the corpus, trains and returns the Markdown table, telling
//! what it does through [`Note`]s.

pub mod calibration;
pub mod corrections;
pub mod epochs;
pub mod scenarios;
pub mod shards;
pub mod synthetic;

use std::path::{Path, PathBuf};

use crate::jobs::corpus::{scan_labelled, FileFilter, LabelledCorpus};
use crate::jobs::train::{featurize_corpus, Example};
use crate::progress::Progress;
use crate::text::pipeline::PipelineConfig;
use crate::{Error, Result};

/// A labelled corpus split into training and test files by name.
#[derive(Debug)]
pub struct Split {
    /// The training files.
    pub corpus: LabelledCorpus,
    /// The training labels; test examples use their indices.
    pub labels: Vec<String>,
    pub train: Vec<Example>,
    pub test: Vec<Example>,
    /// What the scan warned about and the files skipped, for the caller to print.
    pub warnings: Vec<String>,
}

impl Split {
    /// Reads the files of `dir` matching `train_glob` and `test_glob` through `pipeline`;
    /// `progress` counts the files of each part in turn. A test label without training files is
    /// an error.
    pub fn read(
        dir: &Path,
        train_glob: &str,
        test_glob: &str,
        pipeline: &PipelineConfig,
        progress: &dyn Progress,
    ) -> Result<Split> {
        let mut warnings = Vec::new();
        let mut read = |glob: &str| -> Result<(LabelledCorpus, Vec<Example>)> {
            let corpus = scan_labelled(dir, &FileFilter::new(&[glob.to_string()], &[])?)?;
            warnings.extend(corpus.warnings.iter().cloned());
            progress.reset();
            let (examples, skipped) = featurize_corpus(&corpus, pipeline, progress)?;
            warnings.extend(skipped.iter().map(|e| format!("skipped {e}")));
            Ok((corpus, examples))
        };
        let (corpus, train) = read(train_glob)?;
        let (test_corpus, mut test) = read(test_glob)?;
        let labels = corpus.labels.clone();
        // The test files' label indices follow their own folders: map them to the training labels.
        for e in &mut test {
            let name = &test_corpus.labels[e.label];
            e.label = labels
                .iter()
                .position(|l| l == name)
                .ok_or_else(|| Error::Corpus {
                    path: dir.to_path_buf(),
                    message: format!("label {name:?} has test files but no training files"),
                })?;
        }
        Ok(Split {
            corpus,
            labels,
            train,
            test,
            warnings,
        })
    }
}

/// Something an experiment tells people while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// What it is about to do ("shards: 10 shards, 5 epochs, …").
    Info(String),
    /// Something left out: a file skipped, a folder the scan warned about.
    Warning(String),
}

/// Where an experiment's [`Note`]s go, as they happen.
pub type Notes<'a> = &'a mut dyn FnMut(Note);

/// A corpus holding a training and a test split, told apart by file-name globs, and the seed of
/// the runs on it: what the experiments on real corpora share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitSpec {
    /// Corpus root: `DIR/<label>/**/<file>`, holding both splits.
    pub dir: PathBuf,
    /// File-name glob of the training split.
    pub train_include: String,
    /// File-name glob of the test split.
    pub test_include: String,
    /// Seed of the per-epoch shuffle.
    pub seed: u64,
}

impl SplitSpec {
    /// The 20 Newsgroups by-date split of `dir` (`train-*` / `test-*`), seed 1.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        SplitSpec {
            dir: dir.into(),
            train_include: "train-*".into(),
            test_include: "test-*".into(),
            seed: 1,
        }
    }

    /// The corpus's name in a table's header: its folder's name.
    pub fn name(&self) -> String {
        self.dir.file_name().map_or_else(
            || self.dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }

    /// Reads both splits through `pipeline` ([`Split::read`]); the scan's warnings and the
    /// skipped files go to `notes` (and not into [`Split::warnings`]).
    pub fn read(
        &self,
        pipeline: &PipelineConfig,
        progress: &dyn Progress,
        notes: Notes,
    ) -> Result<Split> {
        let mut split = Split::read(
            &self.dir,
            &self.train_include,
            &self.test_include,
            pipeline,
            progress,
        )?;
        for w in std::mem::take(&mut split.warnings) {
            notes(Note::Warning(w));
        }
        Ok(split)
    }
}

/// Mean and (population) standard deviation.
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}
