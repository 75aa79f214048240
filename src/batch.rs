//! Classifying many files at once: parallel over files (one pipeline per worker thread), results
//! in input order so that output never depends on the number of threads.

use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use rayon::prelude::*;

use crate::error::Result;
use crate::input::{read_document, Document};
use crate::model::{Model, Prediction};
use crate::pipeline::Pipeline;
use crate::probability::Method;
use crate::train::featurize_document;

/// The readable text of a classified document, kept for the search archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentText {
    /// The mail subject, or the first non-empty line of plain text (cut to a sane length).
    pub subject: String,
    /// The decoded text, UTF-8 whatever the file's encoding.
    pub body: String,
}

impl DocumentText {
    pub fn of(doc: Document) -> DocumentText {
        let subject =
            crate::archive::subject_of(doc.headers.as_ref().map(|h| h.subject.as_str()), &doc.body);
        DocumentText {
            subject,
            body: doc.body,
        }
    }
}

/// Predicts every file; per-file errors are returned in place.
pub fn classify_files(
    model: &Model,
    files: &[PathBuf],
    method: Method,
    progress: &ProgressBar,
) -> Result<Vec<Result<Prediction>>> {
    classify_each(model, files, method, progress, |_| ())
        .map(|results| results.into_iter().map(|r| r.map(|(p, ())| p)).collect())
}

/// Predicts every file and keeps its text (for `label --index`); per-file errors in place.
pub fn classify_files_keeping_text(
    model: &Model,
    files: &[PathBuf],
    method: Method,
    progress: &ProgressBar,
) -> Result<Vec<Result<(Prediction, DocumentText)>>> {
    classify_each(model, files, method, progress, DocumentText::of)
}

/// Reads, featurises and predicts each file in parallel; `keep` turns the parsed document into
/// what the caller wants besides the prediction (nothing for plain labelling).
fn classify_each<T: Send>(
    model: &Model,
    files: &[PathBuf],
    method: Method,
    progress: &ProgressBar,
    keep: impl Fn(Document) -> T + Sync,
) -> Result<Vec<Result<(Prediction, T)>>> {
    Pipeline::new(model.pipeline())?;
    let limits = model.pipeline().input_limits();
    let one = |pipeline: &mut Pipeline, path: &Path| -> Result<(Prediction, T)> {
        let doc = read_document(path, limits)?;
        let x = featurize_document(pipeline, &doc, path)?;
        Ok((model.predict(&x, method), keep(doc)))
    };
    Ok(files
        .par_iter()
        .map_init(
            || Pipeline::new(model.pipeline()).expect("validated above"),
            |pipeline, path| {
                let result = one(pipeline, path);
                progress.inc(1);
                result
            },
        )
        .collect())
}
