//! Featurisation: a document through a pipeline into a [`FeatureVector`], the one step that
//! training and every kind of inference (classify, label, explain, learn) share, so that a
//! model always sees its documents the way it was trained on them.

use std::path::Path;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::features::FeatureVector;
use crate::progress::Progress;
use crate::text::input::read_document;
use crate::text::pipeline::{Pipeline, PipelineConfig};
use crate::text::source::Source;

/// Reads one file and runs the pipeline on it. A document without any word is an error, since
/// nothing can be learned from or said about it.
pub fn featurize_file(pipeline: &mut Pipeline, path: &Path) -> Result<FeatureVector> {
    let doc = read_document(path, pipeline.config().input_limits())?;
    featurize_document(pipeline, &doc, path)
}

/// Reads one document (a file or an mbox message) and runs the pipeline on it, as
/// [`featurize_file`] does.
pub fn featurize_source(pipeline: &mut Pipeline, source: &Source) -> Result<FeatureVector> {
    let doc = source.read(pipeline.config().input_limits())?;
    featurize_document(pipeline, &doc, &source.name())
}

/// Runs the pipeline on a parsed document from `path`: an error when it has no word (nothing to
/// learn from), a warning when it had more tokens than the limit.
pub fn featurize_document(
    pipeline: &mut Pipeline,
    doc: &crate::text::input::Document,
    path: &Path,
) -> Result<FeatureVector> {
    document_features(pipeline, doc, path).ok_or_else(|| Error::EmptyDocument {
        path: path.to_path_buf(),
    })
}

/// Runs the pipeline on a parsed document from `path`, `None` when it has no word (what to do
/// then is the caller's: training refuses it, classifying falls back on the model's prior);
/// a warning when it had more tokens than the limit.
pub fn document_features(
    pipeline: &mut Pipeline,
    doc: &crate::text::input::Document,
    path: &Path,
) -> Option<FeatureVector> {
    let x = pipeline.features(doc)?;
    if pipeline.truncated() {
        log::warn!(
            "{}: more than {} tokens, only the first were used (--max-tokens)",
            path.display(),
            pipeline.config().max_tokens
        );
    }
    Some(x)
}

/// Featurises documents in parallel; results come back in the input order, so the outcome does
/// not depend on the number of threads.
pub fn featurize_files<T: Sync>(
    items: &[T],
    source_of: impl Fn(&T) -> &Source + Sync,
    config: &PipelineConfig,
    progress: &dyn Progress,
) -> Result<Vec<Result<FeatureVector>>> {
    // Validate once up front so that worker threads cannot fail on the configuration.
    Pipeline::new(config)?;
    Ok(items
        .par_iter()
        .map_init(
            || Pipeline::new(config).expect("validated above"),
            |pipeline, item| {
                let result = featurize_source(pipeline, source_of(item));
                progress.inc(1);
                result
            },
        )
        .collect())
}
