//! Classifying many files at once: parallel over files (one pipeline per worker thread), results
//! in input order so that output never depends on the number of threads.

use std::path::Path;

use rayon::prelude::*;

use crate::error::Result;
use crate::learn::probability::Method;
use crate::model::{Model, Prediction};
use crate::progress::Progress;
use crate::text::featurize::featurize_document;
use crate::text::input::Document;
use crate::text::pipeline::Pipeline;
use crate::text::source::Source;

/// Subjects taken from the first line of a plain-text document are cut to this many characters.
pub const MAX_SUBJECT_CHARS: usize = 200;

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
        let subject = subject_of(doc.headers.as_ref().map(|h| h.subject.as_str()), &doc.body);
        DocumentText {
            subject,
            body: doc.body,
        }
    }
}

/// Classifies one text held in memory (plain text or a raw email message), the way
/// `cwtext classify` classifies a file: the model's own pipeline, then its probabilities.
/// An error when the text has no word.
pub fn classify_text(model: &Model, text: &str, method: Method) -> Result<Prediction> {
    let mut pipeline = Pipeline::new(model.pipeline())?;
    let path = Path::new("<text>");
    let limits = model.pipeline().input_limits();
    let doc = crate::text::input::document_from_bytes(text.as_bytes(), path, limits)?;
    let x = featurize_document(&mut pipeline, &doc, path)?;
    Ok(model.predict(&x, method))
}

/// Predicts every document; per-document errors are returned in place.
pub fn classify_files(
    model: &Model,
    files: &[Source],
    method: Method,
    progress: &dyn Progress,
) -> Result<Vec<Result<Prediction>>> {
    classify_each(model, files, method, progress, |_| ())
        .map(|results| results.into_iter().map(|r| r.map(|(p, ())| p)).collect())
}

/// Predicts every file and keeps its text (for `label --index`); per-file errors in place.
pub fn classify_files_keeping_text(
    model: &Model,
    files: &[Source],
    method: Method,
    progress: &dyn Progress,
) -> Result<Vec<Result<(Prediction, DocumentText)>>> {
    classify_each(model, files, method, progress, DocumentText::of)
}

/// Reads, featurises and predicts each file in parallel; `keep` turns the parsed document into
/// what the caller wants besides the prediction (nothing for plain labelling).
fn classify_each<T: Send>(
    model: &Model,
    files: &[Source],
    method: Method,
    progress: &dyn Progress,
    keep: impl Fn(Document) -> T + Sync,
) -> Result<Vec<Result<(Prediction, T)>>> {
    Pipeline::new(model.pipeline())?;
    let limits = model.pipeline().input_limits();
    let one = |pipeline: &mut Pipeline, source: &Source| -> Result<(Prediction, T)> {
        let doc = source.read(limits)?;
        let x = featurize_document(pipeline, &doc, &source.name())?;
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

/// The subject to store for a document: the mail subject, else the first non-empty line, cut
/// to [`MAX_SUBJECT_CHARS`] characters at a word boundary when there is one.
pub fn subject_of(headers_subject: Option<&str>, body: &str) -> String {
    if let Some(s) = headers_subject.map(str::trim).filter(|s| !s.is_empty()) {
        return s.to_string();
    }
    let line = body
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    match line.char_indices().nth(MAX_SUBJECT_CHARS) {
        None => line.to_string(),
        Some((cut, _)) => {
            let head = &line[..cut];
            let head = head.rfind(char::is_whitespace).map_or(head, |i| &head[..i]);
            format!("{}…", head.trim_end())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_come_from_mail_or_the_first_line() {
        assert_eq!(subject_of(Some(" Re: orbit "), "body"), "Re: orbit");
        assert_eq!(
            subject_of(Some(""), "\n\n  first line \nsecond"),
            "first line"
        );
        assert_eq!(subject_of(None, ""), "");
        let long = "word ".repeat(100);
        let s = subject_of(None, &long);
        assert!(s.ends_with("word…"), "{s}");
        assert!(s.chars().count() <= MAX_SUBJECT_CHARS + 1);
        let wide = "é".repeat(300);
        assert_eq!(
            subject_of(None, &wide).chars().count(),
            MAX_SUBJECT_CHARS + 1
        );
    }
}
