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
//!   corrections, one correction, mixed corrections).
//!
//! [`Split::read`] reads a corpus's training and test files (the 20 Newsgroups by-date split:
//! `train-*` / `test-*`) for the experiments on real corpora.

pub mod calibration;
pub mod corrections;
pub mod epochs;
pub mod shards;
pub mod synthetic;

use std::path::Path;

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

/// Mean and (population) standard deviation.
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}
