//! Classifying many files at once: parallel over files (one pipeline per worker thread), results
//! in input order so that output never depends on the number of threads.

use std::path::PathBuf;

use indicatif::ProgressBar;
use rayon::prelude::*;

use crate::error::Result;
use crate::model::{Model, Prediction};
use crate::pipeline::Pipeline;
use crate::probability::Method;
use crate::train::featurize_file;

/// Predicts every file; per-file errors are returned in place.
pub fn classify_files(
    model: &Model,
    files: &[PathBuf],
    method: Method,
    progress: &ProgressBar,
) -> Result<Vec<Result<Prediction>>> {
    Pipeline::new(model.pipeline())?;
    Ok(files
        .par_iter()
        .map_init(
            || Pipeline::new(model.pipeline()).expect("validated above"),
            |pipeline, path| {
                let result = featurize_file(pipeline, path).map(|x| model.predict(&x, method));
                progress.inc(1);
                result
            },
        )
        .collect())
}
