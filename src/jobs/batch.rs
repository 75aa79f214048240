//! Classifying many files at once: parallel over files (one pipeline per worker thread), results
//! in input order so that output never depends on the number of threads.

use std::path::Path;

use rayon::prelude::*;

use crate::error::Result;
use crate::learn::probability::Method;
use crate::model::{Model, Prediction};
use crate::progress::Progress;
use crate::text::featurize::document_features;
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
/// `cwtext classify` classifies a file: the model's own pipeline, then its probabilities. A
/// text without a word gets the model's prior ([`Prediction::prior_only`]).
pub fn classify_text(model: &Model, text: &str, method: Method) -> Result<Prediction> {
    classify_bytes(model, text.as_bytes(), Path::new("<text>"), method)
}

/// Classifies the bytes of one document named `name` (in errors and warnings), as
/// [`classify_text`] does; an error only when they are not text (binary data).
pub fn classify_bytes(
    model: &Model,
    bytes: &[u8],
    name: &Path,
    method: Method,
) -> Result<Prediction> {
    let mut pipeline = Pipeline::new(model.pipeline())?;
    classify_bytes_with(model, &mut pipeline, bytes, name, method)
}

/// [`classify_bytes`] with a pipeline made for the model ([`Pipeline::new`] of its
/// configuration), for callers that classify many documents (a server keeps a few).
pub fn classify_bytes_with(
    model: &Model,
    pipeline: &mut Pipeline,
    bytes: &[u8],
    name: &Path,
    method: Method,
) -> Result<Prediction> {
    let limits = model.pipeline().input_limits();
    let doc = crate::text::input::document_from_bytes(bytes, name, limits)?;
    Ok(predict_document(model, pipeline, &doc, name, method))
}

/// Predicts one parsed document with `pipeline` (the model's own). A document without a word
/// (a mail of headers and attachments only, an empty file) is not an error here: a mail
/// program or a batch run must still file it somewhere, so it gets the model's prior (how often
/// each label was trained on, [`Model::label_base_rates`]) and [`Prediction::prior_only`] says so, for the caller to flag.
pub fn predict_document(
    model: &Model,
    pipeline: &mut Pipeline,
    doc: &Document,
    name: &Path,
    method: Method,
) -> Prediction {
    let x = document_features(pipeline, doc, name).unwrap_or_else(|| model.prior_features());
    model.predict(&x, method)
}

/// Predicts every document; per-document errors (unreadable, binary) are returned in place,
/// and a document without a word gets the model's prior ([`predict_document`]).
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
        let p = predict_document(model, pipeline, &doc, &source.name(), method);
        Ok((p, keep(doc)))
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

    fn spam_model() -> Model {
        crate::integrations::shelf::find("spam")
            .unwrap()
            .load(false)
            .unwrap()
    }

    #[test]
    fn a_document_without_words_gets_the_prior_and_says_so() {
        let model = spam_model();
        let prior = model.predict(&model.prior_features(), Method::Exact);
        // The base rates of the training mail, add-one: ham 3,320 and spam 1,516 documents
        // (`inspect spam`), so ham at 3,321 / 4,838 = 0.68644; the bias weights alone said
        // ham at 1.0000.
        assert_eq!(model.header.training.label_documents, vec![3320, 1516]);
        assert_eq!(model.labels()[prior.label], "ham");
        assert!((prior.probability() - 3321.0 / 4838.0).abs() < 1e-12);
        assert!((prior.probability() - 0.68644).abs() < 1e-5);
        assert!(prior.is_unsure(Some(0.9)));
        for empty in ["", "  \n\t"] {
            let p = classify_text(&model, empty, Method::Exact).unwrap();
            assert!(p.prior_only, "{empty:?}");
            assert_eq!(p, prior, "{empty:?}");
        }
        // A mail of an attachment alone has no words, but its header fields (MIME-Version,
        // Content-Type) are features of a model that reads them: not the prior alone.
        let attachment = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"x\"\n\n--x\nContent-Type: application/octet-stream\n\nAAEC\n--x--\n";
        assert!(model.pipeline().header_fields);
        let p = classify_text(&model, attachment, Method::Exact).unwrap();
        assert!(!p.prior_only);
        let mut without = model.pipeline().clone();
        without.header_fields = false;
        let doc =
            crate::text::input::parse_bytes(attachment.as_bytes(), without.input_limits()).unwrap();
        let x = crate::text::pipeline::Pipeline::new(&without)
            .unwrap()
            .features(&doc);
        assert!(x.is_none(), "without the fields it has no words: {x:?}");
        let words = "Subject: cheap pills\n\nbuy cheap pills now, discount offer\n";
        let p = classify_text(&model, words, Method::Exact).unwrap();
        assert!(!p.prior_only);
        // Binary data is still an error, naming the document.
        let err = classify_bytes(&model, &[0u8; 512], Path::new("x.bin"), Method::Exact)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.bin: binary file"), "{err}");
    }

    #[test]
    fn unsure_means_below_the_threshold() {
        let model = spam_model();
        let p = classify_text(&model, "buy cheap pills now", Method::Exact).unwrap();
        let best = p.probability();
        assert_eq!(best, p.distribution.probabilities[p.label]);
        assert!(!p.is_unsure(None));
        assert!(!p.is_unsure(Some(best)));
        assert!(p.is_unsure(Some(best + 1e-9)));
        assert!(!p.is_unsure(Some(0.0)));
    }

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
