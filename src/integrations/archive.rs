//! The archive: a full-text index (tantivy) of labelled documents, so that what `label` decided
//! can be searched later, filtered and counted by label and by confidence ("every `sci.space`
//! post under 0.6 that mentions orbit").
//!
//! `cwtext label DIR --index IDX` writes it, `cwtext search IDX QUERY` reads it. One document per
//! file, keyed by its absolute path: labelling the same files again replaces their documents
//! (delete by the path term, then add) instead of adding copies. Each document keeps its subject
//! (mail) or first line (text), the decoded text as UTF-8 whatever the file's encoding, the
//! label, the probability of that label, every label's probability, the normalised entropy and
//! the identity of the model that decided (its name and CRC-32).
//!
//! All writes of one run become visible in a single tantivy commit, which is atomic: a run that
//! fails or is killed leaves the archive as the previous run committed it.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};

use tantivy::collector::{Collector, SegmentCollector, TopDocs};
use tantivy::columnar::StrColumn;
use tantivy::directory::MmapDirectory;
use tantivy::query::{
    AllQuery, BooleanQuery, ConstScoreQuery, Occur, Query, QueryParser, RangeQuery, TermQuery,
};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, Value, FAST, INDEXED, STORED, STRING, TEXT,
};
use tantivy::{
    DocId, Index, IndexReader, IndexSettings, IndexWriter, ReloadPolicy, Score, SegmentOrdinal,
    SegmentReader, TantivyDocument, TantivyError, Term,
};

use crate::error::{ArchiveError, Error, Result};

/// Memory of the index writer per indexing thread: tantivy flushes a segment when it is full.
/// Bounded so that archiving millions of files costs a fixed amount of memory.
pub const WRITER_HEAP_PER_THREAD: usize = 24 << 20;

/// Indexing threads at most (tantivy's own cap is 8; more adds memory and little speed).
pub const MAX_WRITER_THREADS: usize = 4;

/// One labelled document as the archive stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchivedDocument {
    /// The file's absolute path: the key that makes re-labelling update instead of duplicate.
    pub path: String,
    /// The mail subject, or the first non-empty line of a text document.
    pub subject: String,
    /// The decoded text (UTF-8).
    pub body: String,
    /// The predicted label.
    pub label: String,
    /// The probability of the predicted label.
    pub probability: f64,
    /// Every label's probability, best first. Stored as a JSON object, so a value read back
    /// may differ from the one written in the last binary digit (serde_json's float parsing).
    pub probabilities: Vec<(String, f64)>,
    /// Normalised entropy of the distribution (0 = certain, 1 = uniform).
    pub entropy: f64,
    /// The model that decided: its name and CRC-32, e.g. `mail.cwm crc32:1a2b3c4d`.
    pub model: String,
}

/// The schema's fields, looked up once.
#[derive(Debug, Clone, Copy)]
struct Fields {
    path: Field,
    subject: Field,
    body: Field,
    label: Field,
    probability: Field,
    probabilities: Field,
    entropy: Field,
    model: Field,
}

/// The archive schema. Changing it makes older archives refuse to open (tantivy compares the
/// stored schema), so it is versioned only by staying the same.
fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let fields = Fields {
        path: b.add_text_field("path", STRING | STORED),
        subject: b.add_text_field("subject", TEXT | STORED),
        body: b.add_text_field("body", TEXT | STORED),
        // Raw (untokenised) and fast: exact `--label` filters and counts per label.
        label: b.add_text_field("label", STRING | STORED | FAST),
        probability: b.add_f64_field("probability", INDEXED | STORED | FAST),
        // A JSON object, label → probability, best first; stored only (nothing searches it).
        probabilities: b.add_text_field("probabilities", STORED),
        entropy: b.add_f64_field("entropy", STORED | FAST),
        model: b.add_text_field("model", STRING | STORED),
    };
    (b.build(), fields)
}

/// A search: full-text query plus the label and confidence filters.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    /// tantivy query syntax over subject and body; terms are joined by AND unless `OR` is
    /// written. Empty or `*` matches every document.
    pub query: String,
    /// Only documents with exactly this label.
    pub label: Option<String>,
    /// Only documents whose predicted label has at least this probability.
    pub min_probability: Option<f64>,
    /// Only documents whose predicted label has at most this probability.
    pub max_probability: Option<f64>,
    /// How many of the best-scoring documents to return.
    pub top: usize,
}

impl SearchRequest {
    /// Checks the probability bounds; the error names the bad value.
    pub fn validate(&self) -> Result<()> {
        for (name, p) in [
            ("--min-prob", self.min_probability),
            ("--max-prob", self.max_probability),
        ] {
            if let Some(p) = p.filter(|p| !(0.0..=1.0).contains(p)) {
                return Err(Error::InvalidSetting(format!(
                    "{name} must be in [0, 1], but is {p}"
                )));
            }
        }
        if let (Some(lo), Some(hi)) = (self.min_probability, self.max_probability) {
            if lo > hi {
                return Err(Error::InvalidSetting(format!(
                    "--min-prob ({lo}) is above --max-prob ({hi}), so nothing can match"
                )));
            }
        }
        Ok(())
    }
}

/// One document found, with its relevance score (BM25 over subject and body).
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub score: f32,
    pub document: ArchivedDocument,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResults {
    /// The best `top` documents, best first.
    pub hits: Vec<Hit>,
    /// Every matching document (not only the top ones), counted per label.
    pub label_counts: BTreeMap<String, usize>,
}

impl SearchResults {
    /// All matching documents.
    pub fn total(&self) -> usize {
        self.label_counts.values().sum()
    }
}

/// An open archive.
pub struct Archive {
    path: PathBuf,
    index: Index,
    fields: Fields,
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive").field("path", &self.path).finish()
    }
}

impl Archive {
    /// Opens the archive at `path`, creating it when the directory is missing or empty. An
    /// existing directory with other files in it is refused rather than written into.
    pub fn open_or_create(path: &Path) -> Result<Archive> {
        std::fs::create_dir_all(path).map_err(|e| Error::io(path, e))?;
        let dir = open_directory(path)?;
        let exists = Index::exists(&dir).map_err(|e| fail(path, e.into()))?;
        if exists {
            return Archive::from_index(path, Index::open(dir).map_err(|e| fail(path, e))?);
        }
        let empty = std::fs::read_dir(path)
            .map_err(|e| Error::io(path, e))?
            .next()
            .is_none();
        if !empty {
            return Err(archive_error(path, ArchiveError::NotEmpty));
        }
        let (schema, fields) = schema();
        let index =
            Index::create(dir, schema, IndexSettings::default()).map_err(|e| fail(path, e))?;
        Ok(Archive {
            path: path.to_path_buf(),
            index,
            fields,
        })
    }

    /// Opens an existing archive for searching.
    pub fn open(path: &Path) -> Result<Archive> {
        if !path.exists() {
            let missing = std::io::Error::new(std::io::ErrorKind::NotFound, "no such archive");
            return Err(Error::io(path, missing));
        }
        let dir = open_directory(path)?;
        if !Index::exists(&dir).map_err(|e| fail(path, e.into()))? {
            return Err(archive_error(path, ArchiveError::NotAnArchive));
        }
        Archive::from_index(path, Index::open(dir).map_err(|e| fail(path, e))?)
    }

    fn from_index(path: &Path, index: Index) -> Result<Archive> {
        let (schema, fields) = schema();
        if index.schema() != schema {
            return Err(archive_error(path, ArchiveError::OtherSchema));
        }
        Ok(Archive {
            path: path.to_path_buf(),
            index,
            fields,
        })
    }

    /// Where the archive lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A writer with `threads` indexing threads (at most [`MAX_WRITER_THREADS`]), each with
    /// [`WRITER_HEAP_PER_THREAD`] bytes. Only one writer can be open on an archive at a time.
    pub fn writer(&self, threads: usize) -> Result<ArchiveWriter> {
        let threads = threads.clamp(1, MAX_WRITER_THREADS);
        let writer = self
            .index
            .writer_with_num_threads(threads, threads * WRITER_HEAP_PER_THREAD)
            .map_err(|e| match e {
                TantivyError::LockFailure(..) => archive_error(&self.path, ArchiveError::Locked),
                e => fail(&self.path, e),
            })?;
        Ok(ArchiveWriter {
            path: self.path.clone(),
            writer,
            fields: self.fields,
            added: 0,
        })
    }

    fn reader(&self) -> Result<IndexReader> {
        self.index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| fail(&self.path, e))
    }

    /// Documents in the archive.
    pub fn len(&self) -> Result<u64> {
        Ok(self.reader()?.searcher().num_docs())
    }

    /// True when the archive holds no document.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Runs a search: the full-text query, filtered by label and probability, returning the
    /// best `top` documents and the count per label of every match.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults> {
        request.validate()?;
        let f = self.fields;
        let text: Box<dyn Query> = if request.query.trim().is_empty() {
            Box::new(AllQuery)
        } else {
            let mut parser = QueryParser::for_index(&self.index, vec![f.subject, f.body]);
            parser.set_conjunction_by_default();
            parser.parse_query(&request.query).map_err(|e| {
                archive_error(
                    &self.path,
                    ArchiveError::Query {
                        query: request.query.clone(),
                        reason: e.to_string(),
                    },
                )
            })?
        };
        // Filters score 0, so that the scores shown are the text relevance alone.
        let filter = |q: Box<dyn Query>| -> (Occur, Box<dyn Query>) {
            (Occur::Must, Box::new(ConstScoreQuery::new(q, 0.0)))
        };
        let mut clauses = vec![(Occur::Must, text)];
        if let Some(label) = &request.label {
            clauses.push(filter(Box::new(TermQuery::new(
                Term::from_field_text(f.label, label),
                IndexRecordOption::Basic,
            ))));
        }
        if request.min_probability.is_some() || request.max_probability.is_some() {
            let bound = |p: Option<f64>| match p {
                Some(p) => Bound::Included(Term::from_field_f64(f.probability, p)),
                None => Bound::Unbounded,
            };
            clauses.push(filter(Box::new(RangeQuery::new(
                bound(request.min_probability),
                bound(request.max_probability),
            ))));
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader()?.searcher();
        // Never more than there are documents: the collector reserves room for its limit.
        let limit = request.top.min(searcher.num_docs() as usize).max(1);
        let top = TopDocs::with_limit(limit).order_by_score();
        let (top_docs, label_counts) = searcher
            .search(&query, &(top, LabelCounts))
            .map_err(|e| fail(&self.path, e))?;
        let mut hits = Vec::with_capacity(limit);
        for (score, address) in top_docs.into_iter().take(request.top) {
            let doc: TantivyDocument = searcher.doc(address).map_err(|e| fail(&self.path, e))?;
            hits.push(Hit {
                score,
                document: self.read_document(&doc)?,
            });
        }
        Ok(SearchResults { hits, label_counts })
    }

    fn read_document(&self, doc: &TantivyDocument) -> Result<ArchivedDocument> {
        let f = self.fields;
        let text = |field| {
            doc.get_first(field)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        let number = |field| {
            doc.get_first(field)
                .and_then(|v| v.as_f64())
                .unwrap_or(f64::NAN)
        };
        let probabilities: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&text(f.probabilities)).map_err(|e| {
                archive_error(
                    &self.path,
                    ArchiveError::Damaged(format!("unreadable stored probabilities: {e}")),
                )
            })?;
        Ok(ArchivedDocument {
            path: text(f.path),
            subject: text(f.subject),
            body: text(f.body),
            label: text(f.label),
            probability: number(f.probability),
            probabilities: probabilities
                .into_iter()
                .map(|(l, p)| (l, p.as_f64().unwrap_or(f64::NAN)))
                .collect(),
            entropy: number(f.entropy),
            model: text(f.model),
        })
    }
}

/// Adds and replaces documents; nothing is visible to searches until [`ArchiveWriter::commit`].
/// Dropped without a commit, it leaves the archive as it was.
pub struct ArchiveWriter {
    path: PathBuf,
    writer: IndexWriter,
    fields: Fields,
    added: usize,
}

impl std::fmt::Debug for ArchiveWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArchiveWriter")
            .field("path", &self.path)
            .field("added", &self.added)
            .finish()
    }
}

impl ArchiveWriter {
    /// Adds `doc`, replacing any document with the same path.
    pub fn upsert(&mut self, doc: &ArchivedDocument) -> Result<()> {
        let f = self.fields;
        // Deletes apply to the documents added before them, so the new one survives.
        self.writer
            .delete_term(Term::from_field_text(f.path, &doc.path));
        let probabilities: serde_json::Map<String, serde_json::Value> = doc
            .probabilities
            .iter()
            .map(|(l, p)| (l.clone(), serde_json::json!(p)))
            .collect();
        let mut d = TantivyDocument::default();
        d.add_text(f.path, &doc.path);
        d.add_text(f.subject, &doc.subject);
        d.add_text(f.body, &doc.body);
        d.add_text(f.label, &doc.label);
        d.add_f64(f.probability, doc.probability);
        d.add_text(
            f.probabilities,
            serde_json::Value::Object(probabilities).to_string(),
        );
        d.add_f64(f.entropy, doc.entropy);
        d.add_text(f.model, &doc.model);
        self.writer
            .add_document(d)
            .map_err(|e| fail(&self.path, e))?;
        self.added += 1;
        Ok(())
    }

    /// Documents added (or replaced) so far.
    pub fn added(&self) -> usize {
        self.added
    }

    /// Makes every change visible at once, then waits for background merges to finish.
    pub fn commit(mut self) -> Result<()> {
        self.writer.commit().map_err(|e| fail(&self.path, e))?;
        self.writer
            .wait_merging_threads()
            .map_err(|e| fail(&self.path, e))
    }
}

/// Counts the matching documents per label, reading the label's fast column (term ordinals
/// per segment, turned into strings once at the end of each segment).
struct LabelCounts;

struct SegmentLabelCounts {
    column: Option<StrColumn>,
    counts: Vec<usize>,
}

impl Collector for LabelCounts {
    type Fruit = BTreeMap<String, usize>;
    type Child = SegmentLabelCounts;

    fn for_segment(
        &self,
        _segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SegmentLabelCounts> {
        let column = reader.fast_fields().str("label")?;
        let terms = column.as_ref().map_or(0, |c| c.num_terms());
        Ok(SegmentLabelCounts {
            column,
            counts: vec![0; terms],
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(
        &self,
        segments: Vec<BTreeMap<String, usize>>,
    ) -> tantivy::Result<BTreeMap<String, usize>> {
        let mut all = BTreeMap::new();
        for (label, n) in segments.into_iter().flatten() {
            *all.entry(label).or_default() += n;
        }
        Ok(all)
    }
}

impl SegmentCollector for SegmentLabelCounts {
    type Fruit = BTreeMap<String, usize>;

    fn collect(&mut self, doc: DocId, _score: Score) {
        if let Some(column) = &self.column {
            for ord in column.term_ords(doc) {
                self.counts[ord as usize] += 1;
            }
        }
    }

    fn harvest(self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        let Some(column) = &self.column else {
            return out;
        };
        let mut label = String::new();
        for (ord, &n) in self.counts.iter().enumerate() {
            // A term absent from the dictionary cannot have been counted; skip it quietly.
            if n > 0 && column.ord_to_str(ord as u64, &mut label).unwrap_or(false) {
                out.insert(label.clone(), n);
            }
        }
        out
    }
}

fn open_directory(path: &Path) -> Result<MmapDirectory> {
    MmapDirectory::open(path).map_err(|e| match e {
        tantivy::directory::error::OpenDirectoryError::NotADirectory(_) => {
            archive_error(path, ArchiveError::NotAnArchive)
        }
        e => fail(path, e.into()),
    })
}

fn archive_error(path: &Path, kind: ArchiveError) -> Error {
    Error::Archive {
        path: path.to_path_buf(),
        kind,
    }
}

/// A failure inside tantivy, with the archive's path.
fn fail(path: &Path, e: TantivyError) -> Error {
    archive_error(path, ArchiveError::Index(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(path: &str, subject: &str, body: &str, label: &str, p: f64) -> ArchivedDocument {
        let other = if label == "space" { "hockey" } else { "space" };
        ArchivedDocument {
            path: path.into(),
            subject: subject.into(),
            body: body.into(),
            label: label.into(),
            probability: p,
            probabilities: vec![(label.into(), p), (other.into(), 1.0 - p)],
            entropy: 0.5,
            model: "test.cwm crc32:0000abcd".into(),
        }
    }

    fn three() -> Vec<ArchivedDocument> {
        vec![
            doc(
                "/a/orbit.txt",
                "Launch window",
                "the shuttle reached orbit after launch",
                "space",
                0.95,
            ),
            doc(
                "/a/unsure.txt",
                "Lunar orbit?",
                "is a lunar orbit stable for a station",
                "space",
                0.55,
            ),
            doc(
                "/a/goal.txt",
                "Overtime goal",
                "the goalie stopped 40 shots and the orbit of the puck",
                "hockey",
                0.80,
            ),
        ]
    }

    fn archive_with(docs: &[ArchivedDocument]) -> (tempfile::TempDir, Archive) {
        let dir = tempfile::tempdir().unwrap();
        let archive = Archive::open_or_create(&dir.path().join("idx")).unwrap();
        let mut w = archive.writer(1).unwrap();
        for d in docs {
            w.upsert(d).unwrap();
        }
        w.commit().unwrap();
        (dir, archive)
    }

    /// Equal, the probabilities to within JSON's rounding.
    fn assert_same(a: &ArchivedDocument, b: &ArchivedDocument) {
        let strip = |d: &ArchivedDocument| ArchivedDocument {
            probabilities: vec![],
            ..d.clone()
        };
        assert_eq!(strip(a), strip(b));
        assert_eq!(a.probabilities.len(), b.probabilities.len());
        for ((la, pa), (lb, pb)) in a.probabilities.iter().zip(&b.probabilities) {
            assert_eq!(la, lb);
            assert!((pa - pb).abs() <= 1e-15, "{pa} {pb}");
        }
    }

    fn request(query: &str) -> SearchRequest {
        SearchRequest {
            query: query.into(),
            label: None,
            min_probability: None,
            max_probability: None,
            top: 10,
        }
    }

    fn paths(r: &SearchResults) -> Vec<&str> {
        let mut p: Vec<&str> = r.hits.iter().map(|h| h.document.path.as_str()).collect();
        p.sort();
        p
    }

    #[test]
    fn finds_documents_by_words_and_returns_what_was_stored() {
        let docs = three();
        let (_dir, archive) = archive_with(&docs);
        assert_eq!(archive.len().unwrap(), 3);
        let r = archive.search(&request("shuttle")).unwrap();
        assert_eq!(r.hits.len(), 1);
        assert_same(&r.hits[0].document, &docs[0]);
        assert!(r.hits[0].score > 0.0);
        // Words are joined by AND: both must occur.
        let r = archive.search(&request("lunar station")).unwrap();
        assert_eq!(paths(&r), ["/a/unsure.txt"]);
        // The subject is searched too.
        assert_eq!(
            paths(&archive.search(&request("overtime")).unwrap()),
            ["/a/goal.txt"]
        );
        assert_eq!(archive.search(&request("orbit")).unwrap().total(), 3);
        assert_eq!(archive.search(&request("")).unwrap().total(), 3);
        let mut all = request("*");
        all.top = usize::MAX;
        assert_eq!(archive.search(&all).unwrap().hits.len(), 3);
        assert_eq!(
            archive.search(&request("nothingmatches")).unwrap().total(),
            0
        );
    }

    #[test]
    fn label_and_probability_filters_combine_with_the_query() {
        let (_dir, archive) = archive_with(&three());
        let mut r = request("orbit");
        r.label = Some("space".into());
        assert_eq!(
            paths(&archive.search(&r).unwrap()),
            ["/a/orbit.txt", "/a/unsure.txt"]
        );
        r.max_probability = Some(0.6);
        assert_eq!(paths(&archive.search(&r).unwrap()), ["/a/unsure.txt"]);
        r.max_probability = None;
        r.min_probability = Some(0.6);
        assert_eq!(paths(&archive.search(&r).unwrap()), ["/a/orbit.txt"]);
        // Bounds are inclusive.
        let mut r = request("*");
        r.min_probability = Some(0.8);
        r.max_probability = Some(0.8);
        assert_eq!(paths(&archive.search(&r).unwrap()), ["/a/goal.txt"]);
        // Labels match exactly, not as words.
        let mut r = request("orbit");
        r.label = Some("spac".into());
        assert_eq!(archive.search(&r).unwrap().total(), 0);
    }

    /// Probability bounds outside [0, 1], or crossed, are refused naming the value.
    #[test]
    fn probability_bounds_are_checked_with_the_bad_value() {
        let mut r = request("*");
        r.min_probability = Some(1.5);
        let err = r.validate().unwrap_err().to_string();
        assert!(
            err.contains("--min-prob must be in [0, 1], but is 1.5"),
            "{err}"
        );
        r.min_probability = None;
        r.max_probability = Some(-0.1);
        let err = r.validate().unwrap_err().to_string();
        assert!(
            err.contains("--max-prob must be in [0, 1], but is -0.1"),
            "{err}"
        );
        r.min_probability = Some(0.9);
        r.max_probability = Some(0.2);
        let err = r.validate().unwrap_err().to_string();
        assert!(
            err.contains("--min-prob (0.9) is above --max-prob (0.2)"),
            "{err}"
        );
    }

    #[test]
    fn label_counts_cover_every_match_not_only_the_top() {
        let (_dir, archive) = archive_with(&three());
        let mut r = request("orbit");
        r.top = 1;
        let found = archive.search(&r).unwrap();
        assert_eq!(found.hits.len(), 1);
        assert_eq!(
            found.label_counts,
            BTreeMap::from([("hockey".to_string(), 1), ("space".to_string(), 2)])
        );
        assert_eq!(found.total(), 3);
    }

    #[test]
    fn adding_the_same_path_again_replaces_the_document() {
        let docs = three();
        let (_dir, archive) = archive_with(&docs);
        let mut relabelled = docs[1].clone();
        relabelled.label = "hockey".into();
        relabelled.probability = 0.7;
        let mut w = archive.writer(2).unwrap();
        w.upsert(&relabelled).unwrap();
        w.upsert(&docs[0]).unwrap();
        w.commit().unwrap();
        assert_eq!(archive.len().unwrap(), 3);
        let r = archive.search(&request("lunar")).unwrap();
        assert_eq!(r.hits.len(), 1);
        assert_same(&r.hits[0].document, &relabelled);
        assert_eq!(
            archive.search(&request("*")).unwrap().label_counts,
            BTreeMap::from([("hockey".to_string(), 2), ("space".to_string(), 1)])
        );
        // Reopened from disk, the same.
        let again = Archive::open(archive.path()).unwrap();
        assert_eq!(again.len().unwrap(), 3);
    }

    #[test]
    fn uncommitted_changes_are_not_visible() {
        let docs = three();
        let (_dir, archive) = archive_with(&docs[..1]);
        let mut w = archive.writer(1).unwrap();
        w.upsert(&docs[1]).unwrap();
        drop(w);
        assert_eq!(archive.len().unwrap(), 1);
    }

    #[test]
    fn bad_queries_and_non_archives_are_refused_by_name() {
        let (dir, archive) = archive_with(&three());
        let e = archive
            .search(&request("body:(orbit"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("body:(orbit"), "{e}");
        assert!(e.contains(&archive.path().display().to_string()), "{e}");
        let other = dir.path().join("not-an-index");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join("notes.txt"), "hello").unwrap();
        let e = Archive::open(&other).unwrap_err().to_string();
        assert!(e.starts_with(&other.display().to_string()), "{e}");
        assert!(e.contains("not a cwtext archive"), "{e}");
        let e = Archive::open_or_create(&other).unwrap_err().to_string();
        assert!(e.contains("not empty"), "{e}");
        let e = Archive::open(&dir.path().join("missing")).unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e}");
        let e = Archive::open(&other.join("notes.txt"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a cwtext archive"), "{e}");
    }

    #[test]
    fn one_writer_at_a_time() {
        let (_dir, archive) = archive_with(&three());
        let _w = archive.writer(1).unwrap();
        let e = archive.writer(1).unwrap_err().to_string();
        assert!(e.contains("another cwtext is writing"), "{e}");
    }
}
