//! Labelled rows in one file: the corpus as fastText, Vowpal Wabbit and scikit-learn users keep
//! it, one labelled example per line (`train.txt`, `reviews.csv`), read as documents without
//! being cut into a folder per label.
//!
//! Five formats, told apart by the file's name and its first line ([`sniff`], `format_of`):
//! * **fastText**: `__label__LABEL text…`, the label tokens first (as `fasttext supervised`
//!   reads them); a line with two labels is left out with a warning (cwtext learns one label per
//!   document);
//! * **TREC question lines**: `COARSE:fine text` (Li and Roth's `train_5500.label`), the
//!   coarse class the label;
//! * **tab-separated** (`.tsv`, `.tab`, or a first line with a tab): fields split at every tab,
//!   no quoting (IANA's text/tab-separated-values);
//! * **comma-separated** (`.csv`, or a first line with a comma): RFC 4180, quoted fields with
//!   commas, quotes and line breaks inside; with semicolons instead when the first line has more
//!   of them outside quotes (a spreadsheet's CSV where the comma is the decimal mark);
//! * **JSON lines** (`.jsonl`, `.ndjson`, or a first line that is a JSON object): the label is a
//!   key's value, the text the other string values.
//!
//! For the tables [`scan`] decides which column is the label: the one a header row names
//! `label`, `class`, `category`, `sentiment`… (a first row with such a name is a header), else
//! the column with the fewest distinct values, two at least (`3,"Wall St. Bears…","Reuters - …"`
//! of AG News: the first); a column of scores is refused. Every other column is the text,
//! joined by line breaks (a title, then a description), but for those a header names `id`,
//! `index` or leaves unnamed (the row numbers pandas writes). What it decided is said in one
//! line ([`RowScan::describe`]).
//!
//! A document is a [`RowSpan`]: the record's line and bytes in the file, read again only when it
//! is featurised ([`text_of`]), like an mbox message. The csv crate parses the tables (the
//! quoting, the record positions) and serde_json the JSON lines: hand-written only is the
//! fastText line, which is a split at white space.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::{Error, Result};

/// The prefix of a label token in fastText's format.
pub const FASTTEXT_LABEL: &str = "__label__";

/// How a file of rows is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RowFormat {
    /// `__label__LABEL text`.
    FastText,
    /// Fields apart at tabs, no quoting.
    Tsv,
    /// RFC 4180 comma-separated values.
    Csv,
    /// The same with semicolons, as spreadsheets write "CSV" where the comma is the decimal
    /// mark.
    Semicolon,
    /// JSON Lines: an object per line (`{"text": "…", "label": 1}`, as a Hugging Face dataset's
    /// `to_json` writes it).
    JsonLines,
    /// A whole line of a file whose name is the label ([`crate::text::line_files`]).
    Lines,
    /// TREC's question lines (Li and Roth's `train_5500.label`): `COARSE:fine text`, read with
    /// the coarse class as the label.
    Trec,
}

impl RowFormat {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            RowFormat::FastText => "fastText lines (__label__LABEL text)",
            RowFormat::Tsv => "tab-separated rows",
            RowFormat::Csv => "comma-separated rows",
            RowFormat::Semicolon => "semicolon-separated rows",
            RowFormat::JsonLines => "JSON lines",
            RowFormat::Lines => "a file per label, a line per document",
            RowFormat::Trec => "TREC question lines (COARSE:fine text)",
        }
    }

    /// The number kept in the corpus's file list.
    pub fn code(self) -> u8 {
        match self {
            RowFormat::FastText => 0,
            RowFormat::Tsv => 1,
            RowFormat::Csv => 2,
            RowFormat::Semicolon => 3,
            RowFormat::JsonLines => 4,
            RowFormat::Lines => 5,
            RowFormat::Trec => 6,
        }
    }

    /// The format of [`RowFormat::code`].
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(RowFormat::FastText),
            1 => Some(RowFormat::Tsv),
            2 => Some(RowFormat::Csv),
            3 => Some(RowFormat::Semicolon),
            4 => Some(RowFormat::JsonLines),
            5 => Some(RowFormat::Lines),
            6 => Some(RowFormat::Trec),
            _ => None,
        }
    }
}

/// One labelled row: where it is in its file and how its text is taken out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RowSpan {
    /// The line the row starts on, from 1: its identity in the file.
    pub line: u64,
    /// Its first byte: for fastText where the text starts (after the labels), for a table where
    /// the record starts.
    pub start: u64,
    /// One past its last byte (for a table, the record's line break included).
    pub end: u64,
    pub format: RowFormat,
    /// The label's column, which is not text (tables only).
    pub label_column: u16,
    /// Columns that are not text either, one bit each (the first 64 columns; tables); for JSON
    /// lines the [`key_hash`] of the label's key.
    pub skip: u64,
}

/// A file's rows and what was decided reading it.
#[derive(Debug, Default)]
pub struct RowScan {
    /// The label names in the order of their first row.
    pub labels: Vec<String>,
    /// Each row with its label's number in [`RowScan::labels`], in file order.
    pub rows: Vec<(RowSpan, usize)>,
    /// Rows left out and why, each naming the file and line (at most [`MAX_WARNINGS`], then a
    /// count).
    pub warnings: Vec<String>,
    /// How the file was read, for people.
    pub description: String,
}

impl RowScan {
    /// One line saying how the file was read.
    pub fn describe(&self) -> &str {
        &self.description
    }
}

/// Warnings about single rows before the rest are counted.
pub const MAX_WARNINGS: usize = 10;

/// Header names of a label column, lowercased.
const LABEL_NAMES: &[&str] = &[
    "label",
    "labels",
    "class",
    "class_label",
    "category",
    "categories",
    "target",
    "sentiment",
    "polarity",
    "intent",
    "topic",
    "tag",
    "y",
    "genre",
    "folder",
    "type",
    "rating",
    "stars",
];

/// Header names of columns that are neither label nor text (row numbers).
const ID_NAMES: &[&str] = &["", "id", "index", "unnamed: 0", "row", "row_id", "idx"];

/// Header names of text columns: with a label name, they tell a header row from data.
const TEXT_NAMES: &[&str] = &[
    "text",
    "sentence",
    "sentences",
    "review",
    "review_text",
    "content",
    "message",
    "body",
    "document",
    "question",
    "tweet",
    "title",
    "description",
    "comment",
    "utterance",
    "query",
    "sms",
    "headline",
    "abstract",
    "summary",
];

/// Distinct values counted per column before a column counts as having "many".
const DISTINCT_CAP: usize = 4096;

/// Whether `path` looks like a file of labelled rows: a name ending in `.csv`, `.tsv` or `.tab`,
/// or a first line that starts with `__label__`.
pub fn looks_like_rows(path: &Path) -> bool {
    sniff(path).is_ok_and(|f| f.is_some())
}

/// Whether the first 64 KiB of `path` (`head`, whole lines) are labelled rows: its name or
/// first line says so ([`sniff`]), or read as a table, one of its columns is a label that
/// repeats (at most half as many labels as rows). Lines of text with commas or tabs in them
/// (`simplistic , silly and tedious .`) have no such column.
pub fn head_has_labels(path: &Path, head: &[u8]) -> bool {
    let first = head.split_inclusive(|&b| b == b'\n').next().unwrap_or(head);
    if sniff_name(path).is_some() || sniff_line(first).is_some() {
        return true;
    }
    let Ok(format) = format_of(path, first) else {
        return false;
    };
    scan_bytes(head, path, format)
        .is_ok_and(|scan| scan.labels.len() >= 2 && scan.labels.len() * 2 <= scan.rows.len())
}

/// The format of the rows in `path`, by its name (`.csv`, `.tsv`, `.tab`) or its first line
/// (`__label__`, else a tab, else a comma); `None` for a file that looks like none of them.
pub fn sniff(path: &Path) -> Result<Option<RowFormat>> {
    match sniff_name(path) {
        Some(format) => Ok(Some(format)),
        None => Ok(sniff_line(&first_line(path)?)),
    }
}

/// The format a file's name says (`.csv`, `.tsv`, `.tab`, `.jsonl`, `.ndjson`), if any.
fn sniff_name(path: &Path) -> Option<RowFormat> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if name.ends_with(".csv") {
        Some(RowFormat::Csv)
    } else if name.ends_with(".tsv") || name.ends_with(".tab") {
        Some(RowFormat::Tsv)
    } else if name.ends_with(".jsonl") || name.ends_with(".ndjson") {
        Some(RowFormat::JsonLines)
    } else {
        None
    }
}

/// The first line of `path` (at most 64 KiB of it), line break included.
fn first_line(path: &Path) -> Result<Vec<u8>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut first = Vec::new();
    BufReader::new(file.take(64 << 10))
        .read_until(b'\n', &mut first)
        .map_err(|e| Error::io(path, e))?;
    Ok(first)
}

/// [`sniff`]'s judgement of a first line: fastText, a JSON object, or neither.
fn sniff_line(first: &[u8]) -> Option<RowFormat> {
    let first = first.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(first);
    if first.starts_with(FASTTEXT_LABEL.as_bytes()) {
        Some(RowFormat::FastText)
    } else if !first.contains(&b'\t') && trec_label(first).is_some() {
        // A tab makes it a table whose text may start `URGENT:call now`.
        Some(RowFormat::Trec)
    } else if serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(first).is_ok() {
        Some(RowFormat::JsonLines)
    } else {
        None
    }
}

/// The format a file that `looks_like_rows` or was named as rows is read in: [`sniff`], else by
/// its first line's separators.
fn format_of(path: &Path, first_line: &[u8]) -> Result<RowFormat> {
    // Commas and semicolons outside quotes: the more frequent separates (commas on a tie).
    let separators = |line: &[u8]| {
        let (mut quoted, mut commas, mut semicolons) = (false, 0, 0);
        for &b in line {
            match b {
                b'"' => quoted = !quoted,
                b',' if !quoted => commas += 1,
                b';' if !quoted => semicolons += 1,
                _ => {}
            }
        }
        if semicolons > commas {
            RowFormat::Semicolon
        } else {
            RowFormat::Csv
        }
    };
    // The line in hand, not the file read again.
    match sniff_name(path).or_else(|| sniff_line(first_line)) {
        Some(RowFormat::Csv) => return Ok(separators(first_line)),
        Some(format) => return Ok(format),
        None => {}
    }
    if first_line.contains(&b'\t') {
        Ok(RowFormat::Tsv)
    } else if first_line.contains(&b',') || first_line.contains(&b';') {
        Ok(separators(first_line))
    } else {
        Err(rows_error(
            path,
            "its first line has no __label__, tab, comma or semicolon: expected one labelled example per line, `__label__LABEL text` (fastText), LABEL<tab>TEXT, or CSV with a label column",
        ))
    }
}

fn rows_error(path: &Path, message: impl Into<String>) -> Error {
    Error::Corpus {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// A row's label as text: its bytes decoded (UTF-8, else as the text decoder guesses), trimmed.
fn label_text(bytes: &[u8]) -> String {
    let text = match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => crate::text::input::decode::decode_text(bytes)
            .map(|(t, _)| t)
            .unwrap_or_else(|_| String::from_utf8_lossy(bytes)),
    };
    text.trim_start_matches('\u{feff}').trim().to_string()
}

/// Collects the warnings about single rows: the first [`MAX_WARNINGS`], then a count.
struct Warnings<'a> {
    path: &'a Path,
    list: Vec<String>,
    more: usize,
}

impl Warnings<'_> {
    fn add(&mut self, line: u64, message: impl std::fmt::Display) {
        if self.list.len() < MAX_WARNINGS {
            self.list
                .push(format!("{}:{line}: {message}", self.path.display()));
        } else {
            self.more += 1;
        }
    }

    fn finish(mut self) -> Vec<String> {
        if self.more > 0 {
            self.list.push(format!(
                "{}: {} more row(s) left out for the same reasons",
                self.path.display(),
                self.more
            ));
        }
        self.list
    }
}

/// Gives labels numbers in the order they first appear.
#[derive(Default)]
struct LabelNumbers {
    names: Vec<String>,
    numbers: std::collections::HashMap<String, usize>,
}

impl LabelNumbers {
    fn number(&mut self, label: String) -> usize {
        if let Some(&n) = self.numbers.get(&label) {
            return n;
        }
        let n = self.names.len();
        self.names.push(label.clone());
        self.numbers.insert(label, n);
        n
    }
}

/// Reads the rows of `path`: their format, which column is the label, and every row's place
/// and label. Rows without a label, or with a field count unlike the others, are left out with
/// a warning naming the line; a file with no labelled row, or whose columns none looks like a
/// label, is refused.
pub fn scan(path: &Path) -> Result<RowScan> {
    let head = first_line(path)?;
    if head.starts_with(b"\xFF\xFE") || head.starts_with(b"\xFE\xFF") {
        return Err(rows_error(
            path,
            "a file of rows in UTF-16 (a spreadsheet's \"Unicode text\"): save it as UTF-8 (CSV UTF-8, or tab-separated UTF-8) and train on that",
        ));
    }
    let format = format_of(path, &head)?;
    let open = || -> Result<BufReader<std::fs::File>> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        Ok(BufReader::with_capacity(256 << 10, file))
    };
    let scan = match format {
        RowFormat::FastText | RowFormat::Trec => scan_prefixed(path, format, open()?)?,
        RowFormat::JsonLines => scan_json_lines(path, &open)?,
        RowFormat::Tsv | RowFormat::Csv | RowFormat::Semicolon => scan_table(path, format, &open)?,
        RowFormat::Lines => return Err(lines_carry_no_labels(path)),
    };
    refuse_empty(path, format, scan)
}

/// [`scan`] of bytes in memory (`path` only names them in messages), in a known format: what
/// the fuzzer runs.
pub fn scan_bytes(bytes: &[u8], path: &Path, format: RowFormat) -> Result<RowScan> {
    let scan = match format {
        RowFormat::FastText | RowFormat::Trec => scan_prefixed(path, format, bytes)?,
        RowFormat::JsonLines => scan_json_lines(path, &|| Ok(bytes))?,
        RowFormat::Tsv | RowFormat::Csv | RowFormat::Semicolon => {
            scan_table(path, format, &|| Ok(bytes))?
        }
        RowFormat::Lines => return Err(lines_carry_no_labels(path)),
    };
    refuse_empty(path, format, scan)
}

/// Lines of a file per label have their label in the file's name, not in the lines.
fn lines_carry_no_labels(path: &Path) -> Error {
    rows_error(
        path,
        "lines of a file per label carry no labels of their own: read the folder of such files (--layout lines)",
    )
}

fn refuse_empty(path: &Path, format: RowFormat, scan: RowScan) -> Result<RowScan> {
    if scan.rows.is_empty() {
        let why = scan
            .warnings
            .first()
            .map(|w| format!(" (e.g. {w})"))
            .unwrap_or_default();
        return Err(rows_error(
            path,
            format!(
                "no labelled row, read as {}{why}: expected one labelled example per line, `__label__LABEL text` (fastText), LABEL<tab>TEXT, or CSV with a label column",
                format.name()
            ),
        ));
    }
    Ok(scan)
}

/// fastText lines: the leading `__label__` tokens are the label, the rest of the line the text.
/// Hands every line of `reader` to `f`: its number (from 1), the byte where it starts (after
/// a byte-order mark on the first), and the line without the mark, line break included.
pub(crate) fn each_line(
    path: &Path,
    mut reader: impl BufRead,
    f: &mut dyn FnMut(u64, u64, &[u8]),
) -> Result<()> {
    let (mut line, mut at, mut buf) = (0u64, 0u64, Vec::new());
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::io(path, e))?;
        if n == 0 {
            return Ok(());
        }
        line += 1;
        let mut text = buf.as_slice();
        if line == 1 {
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        }
        f(line, at + (n - text.len()) as u64, text);
        at += n as u64;
    }
}

/// Lines that start with their label: fastText's (`__label__LABEL text`) or TREC's
/// (`COARSE:fine text`).
fn scan_prefixed(path: &Path, format: RowFormat, reader: impl BufRead) -> Result<RowScan> {
    let mut warnings = Warnings {
        path,
        list: Vec::new(),
        more: 0,
    };
    let mut labels = LabelNumbers::default();
    let mut rows = Vec::new();
    let mut fine: std::collections::BTreeSet<Vec<u8>> = Default::default();
    each_line(path, reader, &mut |line, start, text| {
        let (found, text_at) = if format == RowFormat::Trec {
            match trec_label(text) {
                Some((coarse, sub, at)) => {
                    // `COARSE:fine` as it stands in the line, kept once per class.
                    let class = &text[..coarse.len() + 1 + sub.len()];
                    if !fine.contains(class) {
                        fine.insert(class.to_vec());
                    }
                    (vec![coarse], at)
                }
                None if text.iter().all(u8::is_ascii_whitespace) => (Vec::new(), 0),
                None => {
                    return warnings.add(
                        line,
                        "no COARSE:fine label at the start of the line, left out",
                    )
                }
            }
        } else {
            fasttext_labels(text)
        };
        match found.as_slice() {
            [] if text.iter().all(u8::is_ascii_whitespace) => {}
            [] => warnings.add(line, "no __label__ at the start of the line, left out"),
            [one] => {
                let label = label_text(one);
                if label.is_empty() {
                    return warnings.add(line, "an empty label (__label__ alone), left out");
                }
                let begin = start + text_at as u64;
                let end = start + text.len() as u64 - trailing_line_break(text);
                rows.push((
                    RowSpan {
                        line,
                        start: begin,
                        end: end.max(begin),
                        format,
                        label_column: 0,
                        skip: 0,
                    },
                    labels.number(label),
                ));
            }
            many => warnings.add(
                line,
                format!(
                    "{} labels; cwtext learns one label per document: left out",
                    many.len()
                ),
            ),
        }
    })?;
    let description = format!(
        "read {} as {}: {} rows, {}{}",
        path.display(),
        format.name(),
        rows.len(),
        labels_said(labels.names.len()),
        if format == RowFormat::Trec {
            format!(
                ", the coarse classes of {} fine ones (to learn the fine classes, write them as fastText labels: `__label__DESC:manner text`)",
                fine.len()
            )
        } else {
            String::new()
        }
    );
    Ok(RowScan {
        labels: labels.names,
        rows,
        warnings: warnings.finish(),
        description,
    })
}

fn trailing_line_break(line: &[u8]) -> u64 {
    match line {
        [.., b'\r', b'\n'] => 2,
        [.., b'\n'] => 1,
        _ => 0,
    }
}

/// The label of a TREC question line, `COARSE:fine text` (`DESC:manner How did serfdom
/// develop …`): the coarse class (two capitals or more), the fine one (small letters), and where
/// the text starts.
fn trec_label(line: &[u8]) -> Option<(&[u8], &[u8], usize)> {
    let token_end = line.iter().position(u8::is_ascii_whitespace)?;
    let (coarse, fine) =
        line[..token_end].split_at(line[..token_end].iter().position(|&b| b == b':')?);
    let fine = &fine[1..];
    let coarse_ok = coarse.len() >= 2 && coarse.iter().all(u8::is_ascii_uppercase);
    let fine_ok = !fine.is_empty() && fine.iter().all(u8::is_ascii_lowercase);
    let rest = &line[token_end..];
    let text_at = token_end + rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let has_text = text_at < line.len();
    (coarse_ok && fine_ok && has_text).then_some((coarse, fine, text_at))
}

/// The leading `__label__` tokens of a fastText line (their names) and where the text after
/// them starts.
fn fasttext_labels(line: &[u8]) -> (Vec<&[u8]>, usize) {
    let prefix = FASTTEXT_LABEL.as_bytes();
    let mut labels = Vec::new();
    let mut at = 0;
    loop {
        let rest = &line[at..];
        let lead = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
        let token = &rest[lead..];
        if !token.starts_with(prefix) {
            let text_at = if labels.is_empty() { 0 } else { at + lead };
            return (labels, text_at);
        }
        let len = token
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(token.len());
        labels.push(&token[prefix.len()..len]);
        at += lead + len;
    }
}

/// The non-blank lines of `bytes` with their numbers (from 1), each without its line break and
/// without the `__label__` tokens it starts with.
pub fn unlabelled_lines(bytes: &[u8]) -> impl Iterator<Item = (u64, &[u8])> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(i, line)| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let (_, at) = fasttext_labels(line);
            let text = &line[at.min(line.len())..];
            let blank = text.iter().all(u8::is_ascii_whitespace);
            (!blank).then_some((i as u64 + 1, text))
        })
}

fn table_reader<R: Read>(format: RowFormat, input: R) -> csv::Reader<R> {
    csv::ReaderBuilder::new()
        .delimiter(match format {
            RowFormat::Tsv => b'\t',
            RowFormat::Semicolon => b';',
            _ => b',',
        })
        .quoting(format != RowFormat::Tsv)
        // Records end at a line feed; a carriage return before it stays in the last field,
        // where trimming (the label) and tokenising (the text) drop it. The crate's default
        // ends a record at the CR of a CRLF and starts the next at its LF, one line too early
        // (found by the fuzzer: two rows named line 1).
        .terminator(csv::Terminator::Any(b'\n'))
        .has_headers(false)
        .flexible(true)
        .from_reader(input)
}

/// What the first pass learns of each column.
#[derive(Default, Clone)]
struct ColumnStats {
    /// Values and how often each occurs, up to [`DISTINCT_CAP`] values.
    counts: std::collections::HashMap<Vec<u8>, usize>,
    /// More values than the cap.
    many: bool,
}

/// A column's values with the label of their rows, to tell a copy of the label from text: the
/// `label_text` beside `label` of a Hugging Face dataset, TREC's fine label beside its coarse
/// one, the US airline tweets' `negativereason` (given for negative tweets only). Read as text,
/// such a column gave the label away: every document of the training and test rows held it,
/// and none that `classify` is given does.
#[derive(Default)]
struct LabelCopy {
    /// Each non-blank value and the label it came with.
    label_of: std::collections::HashMap<Vec<u8>, usize>,
    /// Rows with a non-blank value.
    filled: usize,
    /// A value seen with two labels, or more values than [`DISTINCT_CAP`]: text.
    mixed: bool,
}

impl LabelCopy {
    /// A column to watch when its first pass (`stats`, over `records` records, a header and an
    /// empty value among them) leaves it the chance of a copy: values that repeat. Other
    /// columns start as text, so a column of long unique texts is not held a second time.
    fn new(stats: Option<&ColumnStats>, records: usize) -> Self {
        let repeats =
            stats.is_some_and(|s| !s.many && 2 * s.counts.len().saturating_sub(2) <= records);
        LabelCopy {
            mixed: !repeats,
            ..LabelCopy::default()
        }
    }

    fn see(&mut self, value: &[u8], label: usize) {
        if self.mixed {
            return;
        }
        let value = value.trim_ascii();
        if value.is_empty() {
            return;
        }
        self.filled += 1;
        match self.label_of.get(value) {
            Some(&l) if l != label => self.mixed = true,
            Some(_) => {}
            None if self.label_of.len() >= DISTINCT_CAP => self.mixed = true,
            None => {
                self.label_of.insert(value.to_vec(), label);
            }
        }
    }

    /// Whether the column copies the label, among `rows` rows of `labels` labels: every value
    /// goes with one label, values repeat (at most half as many as the rows that have one), and
    /// a tenth of the rows or more have one.
    fn is_copy(&self, rows: usize, labels: usize) -> bool {
        labels >= 2
            && !self.mixed
            && self.filled > 0
            && 10 * self.filled >= rows
            && 2 * self.label_of.len() <= self.filled
    }
}

/// "1 label", "3 labels".
fn labels_said(n: usize) -> String {
    if n == 1 {
        "1 label".into()
    } else {
        format!("{n} labels")
    }
}

/// What a description says of the columns or keys left out as copies of the label.
fn copies_said(names: &[String]) -> String {
    if names.is_empty() {
        return String::new();
    }
    format!(
        "; {} left out: each of {} values goes with one label (a copy of the label, not text)",
        names.join(" and "),
        if names.len() == 1 { "its" } else { "their" }
    )
}

/// The label column among `stats`, given `fewest`, the column of fewest distinct values (two
/// at least, fewer than the rows). That one, unless it holds texts (most values with a space,
/// most rows a value of their own: one repeated, the same spam refiled twice) while another
/// column holds one word
/// throughout: then the rows all carry that one label (corrections refiled to one folder, a
/// test file of one class). Without a `fewest`, such a column of one word beside texts, if
/// there is exactly one. A column of one value beside another label column (sentiment140's
/// NO_QUERY) is never taken; two columns of one word each leave it undecided (`None`).
/// `header`: the first record is a header, its values not counted.
fn label_column(
    fewest: Option<usize>,
    stats: &[&ColumnStats],
    first: &[Vec<u8>],
    header: bool,
) -> Option<usize> {
    let values = |c: usize| {
        stats[c]
            .counts
            .keys()
            .filter(move |v| !(header && first.get(c) == Some(*v)))
    };
    let word = |v: &[u8]| {
        let v = v.trim_ascii();
        !v.is_empty() && v.len() <= 40 && !v.iter().any(u8::is_ascii_whitespace)
    };
    let spaced = |c: usize| {
        let (with, all) = values(c).fold((0, 0), |(w, a), v| {
            (
                w + usize::from(v.iter().any(u8::is_ascii_whitespace)),
                a + 1,
            )
        });
        all > 0 && 2 * with > all
    };
    // Texts: most values hold a space, and most rows have a value of their own (labels repeat,
    // even labels of two words such as `World News`).
    let rows = |c: usize| {
        stats[c].counts.values().sum::<usize>() - usize::from(header && first.get(c).is_some())
    };
    let texts = |c: usize| spaced(c) && 2 * values(c).count() > rows(c);
    if let Some(c) = fewest.filter(|&c| !texts(c)) {
        return Some(c);
    }
    let single: Vec<usize> = (0..stats.len())
        .filter(|&c| !stats[c].many && values(c).count() == 1 && values(c).all(|v| word(v)))
        .collect();
    match single[..] {
        [c] if (0..stats.len()).any(|t| t != c && spaced(t)) => Some(c),
        _ => fewest,
    }
}

/// A table: the first pass finds its width, header and label column, the second its rows.
fn scan_table<R: Read>(
    path: &Path,
    format: RowFormat,
    input: &dyn Fn() -> Result<R>,
) -> Result<RowScan> {
    let open = || -> Result<csv::Reader<R>> { Ok(table_reader(format, input()?)) };
    let csv_error = |e: csv::Error| {
        let line = e.position().map(|p| p.line()).unwrap_or(0);
        rows_error(
            path,
            format!("line {line}: not readable as {}: {e}", format.name()),
        )
    };
    // Pass 1: widths, the first record, and the values of every column.
    let mut reader = open()?;
    let mut record = csv::ByteRecord::new();
    let mut widths: std::collections::BTreeMap<usize, usize> = Default::default();
    let mut first: Option<Vec<Vec<u8>>> = None;
    let mut stats: Vec<ColumnStats> = Vec::new();
    let mut records = 0usize;
    while reader.read_byte_record(&mut record).map_err(csv_error)? {
        if is_blank(&record) {
            continue;
        }
        records += 1;
        *widths.entry(record.len()).or_default() += 1;
        if first.is_none() {
            first = Some(record.iter().map(<[u8]>::to_vec).collect());
        }
        if stats.len() < record.len() {
            stats.resize(record.len(), ColumnStats::default());
        }
        for (column, value) in record.iter().enumerate() {
            let s = &mut stats[column];
            if let Some(n) = s.counts.get_mut(value) {
                *n += 1;
            } else if s.counts.len() < DISTINCT_CAP {
                s.counts.insert(value.to_vec(), 1);
            } else {
                s.many = true;
            }
        }
    }
    let Some(first) = first else {
        return Ok(RowScan::default());
    };
    // The width most rows have (the widest of equals): rows of another are left out.
    let width = widths
        .iter()
        .max_by_key(|&(w, n)| (*n, *w))
        .map(|(w, _)| *w)
        .unwrap_or(0);
    if width < 2 {
        return Err(rows_error(
            path,
            format!(
                "read as {}, its rows have one field: expected a label column and a text column",
                format.name()
            ),
        ));
    }
    let names: Vec<String> = first.iter().map(|f| label_text(f).to_lowercase()).collect();
    let named = |list: &[&str]| {
        names
            .iter()
            .position(|n| list.contains(&n.as_str()) && !n.is_empty())
    };
    let mut header = first.len() == width
        && (named(LABEL_NAMES).is_some() || named(TEXT_NAMES).is_some())
        && records > 1;
    let label_column = match named(LABEL_NAMES).filter(|_| header) {
        Some(c) => c,
        None => {
            // The column with the fewest distinct values (the first of equals), among those
            // with two or more where some value occurs twice (a column of one value, like
            // sentiment140's NO_QUERY, labels nothing).
            let distinct = |c: usize| {
                let s = &stats[c];
                let header_value = usize::from(header);
                if s.many {
                    usize::MAX
                } else {
                    s.counts.len() - header_value.min(s.counts.len())
                }
            };
            let rows = records - usize::from(header);
            let column = (0..width)
                .filter(|&c| (2..rows).contains(&distinct(c)))
                .min_by_key(|&c| (distinct(c), c));
            match label_column(
                column,
                &stats[..width].iter().collect::<Vec<_>>(),
                &first,
                header,
            ) {
                Some(c) => c,
                None => {
                    return Err(rows_error(
                        path,
                        format!(
                            "read as {} ({width} columns), no column looks like a label: each has a different value on almost every row; name the label column `label` in a header row",
                            format.name()
                        ),
                    ))
                }
            }
        }
    };
    // A first row without the usual names is a header too when its label occurs nowhere else
    // and either every other label occurs at least twice ("Polarity,Review"), or its fields are
    // single words where the text columns' values mostly have spaces ("Kommentar;Kategorie").
    if !header && records >= 3 && first.len() == width && !stats[label_column].many {
        let counts = &stats[label_column].counts;
        let once = counts.get(&first[label_column]) == Some(&1);
        let others_repeat = counts
            .iter()
            .filter(|(v, _)| **v != first[label_column])
            .all(|(_, &n)| n >= 2);
        let word =
            |f: &[u8]| !f.is_empty() && f.len() <= 40 && !f.iter().any(u8::is_ascii_whitespace);
        let spaced = |c: usize| {
            let values = &stats[c].counts;
            let with = values
                .keys()
                .filter(|v| v.iter().any(u8::is_ascii_whitespace));
            2 * with.count() > values.len()
        };
        let names_like =
            first.iter().all(|f| word(f)) && (0..width).any(|c| c != label_column && spaced(c));
        header = once && ((records >= 5 && others_repeat) || names_like);
    }
    let label_name = if header {
        format!(
            "column {} {:?}",
            label_column + 1,
            label_text(&first[label_column])
        )
    } else {
        format!("column {}", label_column + 1)
    };
    if let Some(why) = scores_not_labels(&stats[label_column], &label_name, header) {
        return Err(rows_error(path, why));
    }
    let mut skip = 0u64;
    if header {
        for (c, name) in names.iter().enumerate().take(64) {
            if c != label_column && is_id_key(name) {
                skip |= 1 << c;
            }
        }
    }
    let text_columns: Vec<usize> = (0..width)
        .filter(|&c| c != label_column && (c >= 64 || skip & (1 << c) == 0))
        .collect();
    if text_columns.is_empty() {
        return Err(rows_error(
            path,
            format!(
                "read as {}, no column is left for the text (the label is column {}, the others are ids)",
                format.name(),
                label_column + 1
            ),
        ));
    }
    // Pass 2: every row's place and label.
    let mut reader = open()?;
    let mut warnings = Warnings {
        path,
        list: Vec::new(),
        more: 0,
    };
    let mut labels = LabelNumbers::default();
    let mut rows = Vec::new();
    let mut copies: Vec<(usize, LabelCopy)> = text_columns
        .iter()
        .filter(|&&c| c < 64)
        .map(|&c| (c, LabelCopy::new(stats.get(c), records)))
        .collect();
    let mut seen_first = false;
    let label_column16 = u16::try_from(label_column).map_err(|_| {
        rows_error(
            path,
            "the label is past the 65,536th column: too wide a table",
        )
    })?;
    loop {
        let start = reader.position().clone();
        if !reader.read_byte_record(&mut record).map_err(csv_error)? {
            break;
        }
        let end = reader.position().byte();
        if is_blank(&record) {
            continue;
        }
        let line = record.position().map_or(start.line(), |p| p.line());
        let begin = record.position().map_or(start.byte(), |p| p.byte());
        if !seen_first {
            seen_first = true;
            if header {
                continue;
            }
        }
        // A row with more fields than the table, whose label comes before its last column, has
        // tabs or unquoted commas in its text (`spam,Free entry, call now`): the extra fields
        // are text too. With the label last they would move it, and the row is left out.
        let text_spilled = record.len() > width && label_column + 1 < width;
        if record.len() != width && !text_spilled {
            // A record over several lines that does not fit is most often a quote left open.
            let last = reader.position().line().saturating_sub(1);
            let hint = if last > line + 1 {
                format!(" (it runs to line {last}: a quote left open?)")
            } else {
                String::new()
            };
            warnings.add(
                line,
                format!(
                    "{} fields where the table has {width}, left out{hint}",
                    record.len()
                ),
            );
            continue;
        }
        let label = label_text(&record[label_column]);
        if label.is_empty() {
            warnings.add(line, "an empty label, left out");
            continue;
        }
        let number = labels.number(label);
        for (c, copy) in &mut copies {
            copy.see(record.get(*c).unwrap_or_default(), number);
        }
        rows.push((
            RowSpan {
                line,
                start: begin,
                end,
                format,
                label_column: label_column16,
                skip,
            },
            number,
        ));
    }
    // Copies of the label are no text, unless no text would be left.
    let copied: Vec<usize> = copies
        .iter()
        .filter(|(_, copy)| copy.is_copy(rows.len(), labels.names.len()))
        .map(|(c, _)| *c)
        .collect();
    let copied = if copied.len() < text_columns.len() {
        copied
    } else {
        Vec::new()
    };
    if !copied.is_empty() {
        let more = copied.iter().fold(0u64, |m, c| m | 1 << c);
        for (span, _) in &mut rows {
            span.skip |= more;
        }
    }
    let text_columns: Vec<usize> = text_columns
        .into_iter()
        .filter(|c| !copied.contains(c))
        .collect();
    let column_name = |c: usize| {
        if header {
            format!("column {} {:?}", c + 1, label_text(&first[c]))
        } else {
            format!("column {}", c + 1)
        }
    };
    let texts: Vec<String> = text_columns.iter().map(|&c| column_name(c)).collect();
    let copied: Vec<String> = copied.iter().map(|&c| column_name(c)).collect();
    let description = format!(
        "read {} as {}: {} rows, labels from {} ({}), text from {}{}{}",
        path.display(),
        format.name(),
        rows.len(),
        column_name(label_column),
        labels_said(labels.names.len()),
        texts.join(" and "),
        if header {
            "; line 1 is a header"
        } else {
            "; no header row"
        },
        copies_said(&copied)
    );
    Ok(RowScan {
        labels: labels.names,
        rows,
        warnings: warnings.finish(),
        description,
    })
}

/// Labels that are scores: more than [`MAX_SCORE_LABELS`] distinct values, every one a number
/// and some with a fraction (`2.726315789`, `-0.9`), are a quantity to predict, not classes;
/// `None` for labels. (`header` leaves the header's own value out of the count.)
fn scores_not_labels(stats: &ColumnStats, name: &str, header: bool) -> Option<String> {
    let values: Vec<&Vec<u8>> = stats.counts.keys().collect();
    let number = |v: &[u8]| std::str::from_utf8(v).is_ok_and(|s| s.trim().parse::<f64>().is_ok());
    let numbers = values.iter().filter(|v| number(v)).count();
    let fractions = values
        .iter()
        .filter(|v| number(v) && v.iter().any(|&b| b == b'.' || b == b'e' || b == b'E'))
        .count();
    let all_numbers = numbers + usize::from(header) >= values.len();
    if !(all_numbers && fractions > 0 && (numbers > MAX_SCORE_LABELS || stats.many)) {
        return None;
    }
    // The first three in the order of the file would need another pass; the three smallest
    // as text are as telling, and the same in every run.
    let mut examples: Vec<String> = values
        .iter()
        .filter(|v| number(v))
        .map(|v| String::from_utf8_lossy(v).trim().to_string())
        .collect();
    examples.sort();
    examples.truncate(3);
    Some(format!(
        "the labels would come from {name}, which holds {}{} different numbers ({}, …): a score to predict, not classes; cwtext learns labels, so cut the scores into classes first (e.g. negative and positive)",
        if stats.many { "more than " } else { "" },
        numbers,
        examples.join(", ")
    ))
}

/// Distinct numbers with fractions a label column may hold before it counts as a score.
const MAX_SCORE_LABELS: usize = 20;

/// A stable hash of a JSON key's name, which a [`RowSpan`] of JSON lines carries for its label's
/// key (the frozen hash of the pipeline, the same in every run).
pub fn key_hash(key: &str) -> u64 {
    use std::hash::Hasher;
    let mut h = crate::text::pipeline::hash::FrozenHasher::default();
    h.write(key.as_bytes());
    h.finish()
}

type JsonObject = serde_json::Map<String, serde_json::Value>;

/// A JSON value as a label: a string trimmed, a number or a truth value as written, a list of
/// one such; `Err` says why not.
fn json_label(value: &serde_json::Value) -> std::result::Result<String, String> {
    use serde_json::Value;
    match value {
        Value::String(s) => Ok(s.trim().to_string()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Array(items) if items.len() == 1 => json_label(&items[0]),
        Value::Array(items) => Err(format!(
            "{} labels; cwtext learns one label per document",
            items.len()
        )),
        Value::Null => Err("a null label".into()),
        Value::Object(_) => Err("an object as its label".into()),
    }
}

/// Whether a key or header names row numbers or other ids, not text: [`ID_NAMES`], or a name
/// ending in `_id` (`tweet_id`, `review_id`).
fn is_id_key(key: &str) -> bool {
    let key = key.to_lowercase();
    ID_NAMES.contains(&key.as_str()) || key.ends_with("_id")
}

/// JSON lines: the first pass finds the label's key (one a label name names, else the scalar
/// key of fewest distinct values), the second every row. The text is every string value but
/// the label's and the ids'.
fn scan_json_lines<R: BufRead>(path: &Path, input: &dyn Fn() -> Result<R>) -> Result<RowScan> {
    // Every non-blank line: its number, span and object (or why it is none), one at a time.
    type Object = std::result::Result<JsonObject, String>;
    let each = |f: &mut dyn FnMut(u64, u64, u64, Object)| -> Result<()> {
        each_line(path, input()?, &mut |line, start, text| {
            if text.iter().all(u8::is_ascii_whitespace) {
                return;
            }
            let object = serde_json::from_slice::<JsonObject>(text)
                .map_err(|e| format!("not a JSON object ({e}), left out"));
            f(line, start, start + text.len() as u64, object);
        })
    };
    // Pass 1: the keys of the first object, and the distinct scalar values of every key.
    let mut order: Vec<String> = Vec::new();
    let mut stats: std::collections::HashMap<String, ColumnStats> = Default::default();
    let mut records = 0usize;
    each(&mut |_, _, _, object| {
        let Ok(object) = object else { return };
        records += 1;
        if order.is_empty() {
            order = object.keys().cloned().collect();
        }
        for (key, value) in &object {
            let Ok(label) = json_label(value) else {
                continue;
            };
            let s = stats.entry(key.clone()).or_default();
            let value = label.into_bytes();
            if let Some(n) = s.counts.get_mut(&value) {
                *n += 1;
            } else if s.counts.len() < DISTINCT_CAP {
                s.counts.insert(value, 1);
            } else {
                s.many = true;
            }
        }
    })?;
    let named = order
        .iter()
        .find(|k| LABEL_NAMES.contains(&k.to_lowercase().as_str()));
    let label_key = match named {
        Some(k) => k.clone(),
        None => {
            let distinct = |k: &String| {
                stats
                    .get(k)
                    .filter(|s| !s.many)
                    .map_or(usize::MAX, |s| s.counts.len())
            };
            let fewest = order
                .iter()
                .filter(|k| {
                    // Row numbers are no label; `label_id` may be.
                    !ID_NAMES.contains(&k.to_lowercase().as_str())
                        && (2..records).contains(&distinct(k))
                })
                .min_by_key(|k| distinct(k));
            // Lines that all carry one label: the one key of a single word beside texts.
            let none = ColumnStats::default();
            let columns: Vec<&ColumnStats> = order
                .iter()
                .map(|k| stats.get(k).unwrap_or(&none))
                .collect();
            let fewest = fewest.and_then(|k| order.iter().position(|o| o == k));
            match label_column(fewest, &columns, &[], false).map(|c| &order[c]) {
                Some(k) => k.clone(),
                None if records == 0 => String::new(),
                None => {
                    return Err(rows_error(
                        path,
                        format!(
                            "read as JSON lines (keys {}), no key looks like a label: each has a different value on almost every line; call the label's key `label`",
                            order.join(", ")
                        ),
                    ))
                }
            }
        }
    };
    if let Some(s) = stats.get(&label_key) {
        if let Some(why) = scores_not_labels(s, &format!("key {label_key:?}"), false) {
            return Err(rows_error(path, why));
        }
    }
    let texts: Vec<&String> = order
        .iter()
        .filter(|k| **k != label_key && !is_id_key(k))
        .collect();
    // Pass 2: every row.
    let mut warnings = Warnings {
        path,
        list: Vec::new(),
        more: 0,
    };
    let mut labels = LabelNumbers::default();
    let mut rows = Vec::new();
    let hash = key_hash(&label_key);
    let mut copies: std::collections::BTreeMap<String, LabelCopy> = Default::default();
    each(&mut |line, start, end, object| {
        let object = match object {
            Ok(o) => o,
            Err(why) => return warnings.add(line, why),
        };
        let label = match object.get(&label_key).map(json_label) {
            None => return warnings.add(line, format!("no {label_key:?}, left out")),
            Some(Err(why)) => return warnings.add(line, format!("{why}: left out")),
            Some(Ok(l)) if l.is_empty() => return warnings.add(line, "an empty label, left out"),
            Some(Ok(l)) => l,
        };
        let number = labels.number(label);
        for (key, value) in &object {
            if let serde_json::Value::String(s) = value {
                if *key != label_key && !is_id_key(key) {
                    if !copies.contains_key(key) {
                        copies.insert(key.clone(), LabelCopy::new(stats.get(key), records));
                    }
                    copies
                        .get_mut(key)
                        .expect("inserted above")
                        .see(s.as_bytes(), number);
                }
            }
        }
        rows.push((
            RowSpan {
                line,
                start,
                end,
                format: RowFormat::JsonLines,
                label_column: 0,
                skip: hash,
            },
            number,
        ));
    })?;
    // Copies of the label are no text (unless no text would be left): the label's key and
    // theirs become bits of a mask ([`key_bit`]), with the first salt under which no other key
    // shares a bit (the salt kept in the label column, from 1).
    let copied: Vec<&String> = copies
        .iter()
        .filter(|(_, copy)| copy.is_copy(rows.len(), labels.names.len()))
        .map(|(k, _)| k)
        .collect();
    let masked = (0..MASK_SALTS).find_map(|salt| {
        let mask = copied
            .iter()
            .fold(key_bit(&label_key, salt), |m, k| m | key_bit(k, salt));
        let clash = stats
            .keys()
            .chain(copies.keys())
            .any(|k| *k != label_key && !copied.contains(&k) && mask & key_bit(k, salt) != 0);
        (!clash).then_some((salt, mask))
    });
    let copied = match masked {
        Some((salt, mask)) if !copied.is_empty() && copied.len() < copies.len() => {
            for (span, _) in &mut rows {
                span.label_column = salt + 1;
                span.skip = mask;
            }
            copied
        }
        _ => Vec::new(),
    };
    let texts: Vec<&String> = texts.into_iter().filter(|k| !copied.contains(k)).collect();
    let quoted: Vec<String> = texts.iter().map(|k| format!("{k:?}")).collect();
    let copied: Vec<String> = copied.iter().map(|k| format!("{k:?}")).collect();
    let description = format!(
        "read {} as JSON lines: {} rows, labels from {label_key:?} ({}), text from {}{}",
        path.display(),
        rows.len(),
        labels_said(labels.names.len()),
        if quoted.is_empty() {
            "the other string values".to_string()
        } else {
            quoted.join(" and ")
        },
        copies_said(&copied)
    );
    Ok(RowScan {
        labels: labels.names,
        rows,
        warnings: warnings.finish(),
        description,
    })
}

/// The salts tried for a mask of the keys a JSON line leaves out. A JSON line's
/// [`RowSpan::label_column`] is 0 when its [`RowSpan::skip`] is the label key's [`key_hash`],
/// and salt + 1 when it is a mask of the label's and its copies' [`key_bit`]s.
const MASK_SALTS: u16 = 64;

/// A key's bit in a mask of keys, under `salt`.
fn key_bit(key: &str, salt: u16) -> u64 {
    use std::hash::Hasher;
    let mut h = crate::text::pipeline::hash::FrozenHasher::default();
    h.write(&salt.to_le_bytes());
    h.write(key.as_bytes());
    1 << (h.finish() % 64)
}

/// The text of a JSON line: its string values but the label's ([`RowSpan::skip`]), its copies'
/// and the ids', in the object's order, joined by line breaks.
fn json_text(span: &RowSpan, bytes: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let object: JsonObject =
        serde_json::from_slice(bytes).map_err(|e| format!("not a JSON object ({e})"))?;
    let left_out = |key: &str| {
        if span.label_column > 0 {
            span.skip & key_bit(key, span.label_column - 1) != 0
        } else {
            key_hash(key) == span.skip
        }
    };
    let mut text = Vec::new();
    for (key, value) in &object {
        let serde_json::Value::String(s) = value else {
            continue;
        };
        if left_out(key) || is_id_key(key) {
            continue;
        }
        if !text.is_empty() {
            text.push(b'\n');
        }
        text.extend_from_slice(s.as_bytes());
    }
    Ok(text)
}

/// An empty line read as a record of one empty field.
fn is_blank(record: &csv::ByteRecord) -> bool {
    record.len() == 1 && record[0].iter().all(u8::is_ascii_whitespace)
}

/// The text of a row from the bytes of its span ([`RowSpan::start`]..[`RowSpan::end`]): for
/// fastText the bytes themselves, for a table its text columns, unquoted and joined by line
/// breaks.
pub fn text_of(span: &RowSpan, bytes: &[u8]) -> std::result::Result<Vec<u8>, String> {
    match span.format {
        RowFormat::FastText | RowFormat::Lines | RowFormat::Trec => return Ok(bytes.to_vec()),
        RowFormat::JsonLines => return json_text(span, bytes),
        _ => {}
    }
    let mut reader = table_reader(span.format, bytes);
    let mut record = csv::ByteRecord::new();
    match reader.read_byte_record(&mut record) {
        Ok(true) => {}
        Ok(false) => return Err("the row is gone (the file changed since it was read?)".into()),
        Err(e) => return Err(format!("not readable as {}: {e}", span.format.name())),
    }
    let mut text = Vec::new();
    for (c, field) in record.iter().enumerate() {
        let skipped = c < 64 && span.skip & (1 << c) != 0;
        if c == usize::from(span.label_column) || skipped {
            continue;
        }
        if !text.is_empty() {
            text.push(b'\n');
        }
        text.extend_from_slice(field);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, content: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        (dir, path)
    }

    fn texts(path: &Path, scan: &RowScan) -> Vec<(String, String)> {
        let bytes = std::fs::read(path).unwrap();
        scan.rows
            .iter()
            .map(|(span, label)| {
                let raw = &bytes[span.start as usize..span.end as usize];
                let text = text_of(span, raw).unwrap();
                (
                    scan.labels[*label].clone(),
                    String::from_utf8(text).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn fasttext_lines_give_their_label_and_the_rest_of_the_line() {
        let (_d, path) = file(
            "train.txt",
            "\u{feff}__label__pos I loved it\r\n\n__label__neg  awful film\n__label__a __label__b two\nno label here\n__label__neg\tdull",
        );
        assert_eq!(sniff(&path).unwrap(), Some(RowFormat::FastText));
        let scan = scan(&path).unwrap();
        assert_eq!(scan.labels, ["pos", "neg"]);
        assert_eq!(
            texts(&path, &scan),
            [
                ("pos".into(), "I loved it".into()),
                ("neg".into(), "awful film".into()),
                ("neg".into(), "dull".into())
            ]
        );
        let lines: Vec<u64> = scan.rows.iter().map(|(s, _)| s.line).collect();
        assert_eq!(lines, [1, 3, 6]);
        assert_eq!(scan.warnings.len(), 2, "{:?}", scan.warnings);
        assert!(scan.warnings[0].contains("train.txt:4: 2 labels"));
        assert!(scan.warnings[1].contains("train.txt:5: no __label__"));
    }

    #[test]
    fn a_csv_header_names_the_label_and_quoted_text_keeps_its_commas_and_lines() {
        let (_d, path) = file(
            "reviews.csv",
            ",text,sentiment\n0,\"Great, really \"\"great\"\"\nsecond line\",pos\n1,Bad,neg\n2,Fine,pos\n",
        );
        let scan = scan(&path).unwrap();
        assert_eq!(scan.labels, ["pos", "neg"]);
        assert_eq!(
            texts(&path, &scan),
            [
                ("pos".into(), "Great, really \"great\"\nsecond line".into()),
                ("neg".into(), "Bad".into()),
                ("pos".into(), "Fine".into())
            ]
        );
        assert_eq!(scan.rows[1].0.line, 4);
        assert!(
            scan.describe()
                .contains("labels from column 3 \"sentiment\" (2 labels), text from column 2 \"text\"; line 1 is a header"),
            "{}",
            scan.describe()
        );
    }

    #[test]
    fn without_a_header_the_label_is_the_column_of_fewest_values_and_the_others_are_text() {
        // AG News: class, title, description.
        let (_d, path) = file(
            "ag.csv",
            "3,\"Wall St. Bears\",\"Short-sellers, see green\"\n1,Peace talks,Envoys meet\n3,Oil up,Prices rise\n2,Cup final,A late goal\n",
        );
        let scan = scan(&path).unwrap();
        assert_eq!(scan.labels, ["3", "1", "2"]);
        assert_eq!(
            texts(&path, &scan)[0],
            (
                "3".into(),
                "Wall St. Bears\nShort-sellers, see green".into()
            )
        );
        assert!(
            scan.describe().contains("no header row"),
            "{}",
            scan.describe()
        );
    }

    #[test]
    fn scores_are_refused_as_labels_and_numbered_classes_are_not() {
        let mut scored = String::from("id,sentiment,text\n");
        for i in 0..30 {
            scored.push_str(&format!("{i},{}.5,text number {i}\n", i % 25));
        }
        let (_d, path) = file("scores.csv", &scored);
        let err = scan(&path).unwrap_err().to_string();
        assert!(
            err.contains("column 2 \"sentiment\", which holds 25 different numbers")
                && err.contains("a score to predict, not classes"),
            "{err}"
        );
        // Star ratings 1 to 5, and 40 numbered classes, are labels.
        let mut classes = String::from("label\ttext\n");
        for i in 0..80 {
            classes.push_str(&format!("{}\ttext number {i}\n", i % 40));
        }
        let (_d, path) = file("classes.tsv", &classes);
        assert_eq!(scan(&path).unwrap().labels.len(), 40);
    }

    #[test]
    fn a_column_of_one_value_is_no_label() {
        // sentiment140: target, id, date, query, user, text; the query is NO_QUERY throughout.
        let (_d, path) = file(
            "140.csv",
            "\"0\",\"1467810369\",\"Mon Apr 06\",\"NO_QUERY\",\"a\",\"sad day\"\n\"4\",\"1467810672\",\"Mon Apr 06\",\"NO_QUERY\",\"b\",\"great day\"\n\"0\",\"1467810917\",\"Tue Apr 07\",\"NO_QUERY\",\"c\",\"awful\"\n",
        );
        let scan = scan(&path).unwrap();
        assert_eq!(scan.labels, ["0", "4"]);
        assert!(
            scan.describe().contains("labels from column 1 (2 labels)"),
            "{}",
            scan.describe()
        );
    }

    #[test]
    fn rows_that_all_carry_one_label_are_read_as_that_label() {
        // Corrections refiled to one folder: the label column holds one word throughout.
        let (_d, path) = file(
            "refiled.csv",
            "spam,Win a prize now\nspam,\"Cheap pills, today only\"\nspam,Click here\n",
        );
        let read = scan(&path).unwrap();
        assert_eq!(read.labels, ["spam"]);
        assert_eq!(read.rows.len(), 3);
        assert!(
            read.describe().contains(
                "3 rows, labels from column 1 (1 label), text from column 2; no header row"
            ),
            "{}",
            read.describe()
        );
        // The same behind a header that names only the text.
        let (_d, path) = file(
            "kinds.csv",
            "kind,text\nspam,Win a prize now\nspam,Click here\n",
        );
        let read = scan(&path).unwrap();
        assert_eq!(read.labels, ["spam"]);
        assert!(
            read.describe()
                .contains("labels from column 1 \"kind\" (1 label)"),
            "{}",
            read.describe()
        );
        // A text that repeats (the same spam refiled twice) leaves the texts with fewer values
        // than rows: they are still the text, not 2 labels of whole messages.
        let (_d, path) = file(
            "repeats.csv",
            "spam,Win a prize now\nspam,Win a prize now\nspam,Click here today\n",
        );
        let read = scan(&path).unwrap();
        assert_eq!(read.labels, ["spam"]);
        assert!(
            read.describe()
                .contains("labels from column 1 (1 label), text from column 2"),
            "{}",
            read.describe()
        );
        // Labels of two words repeat: they stay the labels beside a column of one word.
        let (_d, path) = file(
            "news.csv",
            "NO_QUERY,World News,Stocks fell today\nNO_QUERY,World News,Markets rose\nNO_QUERY,Sci Tech,A new chip\nNO_QUERY,Sci Tech,Rockets launch\n",
        );
        assert_eq!(scan(&path).unwrap().labels, ["World News", "Sci Tech"]);
        // One row is one label too.
        let (_d, path) = file("one.csv", "ham,see you at noon\n");
        assert_eq!(scan(&path).unwrap().labels, ["ham"]);
        // Still refused: two one-word columns (which is the label?), and a column of one
        // value that is a text, not a word.
        for (name, rows) in [
            ("words.csv", "spam,x\nspam,x\n"),
            ("texts.csv", "1,a text\n2,another text\n3,a third\n"),
            ("sentences.csv", "good film,x y\ngood film,z w\n"),
        ] {
            let (_d, path) = file(name, rows);
            let err = scan(&path).unwrap_err().to_string();
            assert!(
                err.contains("no column looks like a label"),
                "{name}: {err}"
            );
        }
    }

    #[test]
    fn json_lines_that_all_carry_one_label_are_read_as_that_label() {
        let (_d, path) = file(
            "refiled.jsonl",
            "{\"kind\":\"spam\",\"body\":\"Win a prize now\"}\n{\"kind\":\"spam\",\"body\":\"Cheap pills today\"}\n",
        );
        let read = scan(&path).unwrap();
        assert_eq!(read.labels, ["spam"]);
        assert!(
            read.describe()
                .contains("2 rows, labels from \"kind\" (1 label), text from \"body\""),
            "{}",
            read.describe()
        );
        // A text that repeats does not make the texts the labels.
        let (_d, path) = file(
            "repeats.jsonl",
            "{\"kind\":\"spam\",\"body\":\"Win a prize now\"}\n{\"kind\":\"spam\",\"body\":\"Win a prize now\"}\n{\"kind\":\"spam\",\"body\":\"Cheap pills today\"}\n",
        );
        assert_eq!(scan(&path).unwrap().labels, ["spam"]);
    }

    #[test]
    fn tab_separated_rows_have_no_quoting_and_odd_rows_are_named() {
        let (_d, path) = file(
            "q.tsv",
            "Question\tType\n\"What\" is a caldera?\tDESC\nWho wrote Hamlet?\tHUM\nWhen?\tNUM\textra\nWhy is the sky blue?\tDESC\nWho is he?\tHUM\n",
        );
        let scan = scan(&path).unwrap();
        // "Question" names a text column: a header.
        assert_eq!(scan.labels, ["DESC", "HUM"]);
        assert_eq!(texts(&path, &scan)[0].1, "\"What\" is a caldera?");
        assert_eq!(scan.warnings.len(), 1);
        assert!(scan.warnings[0].contains("q.tsv:4: 3 fields where the table has 2"));
    }

    #[test]
    fn commas_and_tabs_in_a_text_after_the_label_stay_text() {
        let (_d, path) = file(
            "sms.csv",
            "label,text\nspam,Free entry, call now\nham,see you\nspam,Win cash\nham,ok, ok, fine\n",
        );
        let scan = scan(&path).unwrap();
        assert!(scan.warnings.is_empty(), "{:?}", scan.warnings);
        assert_eq!(
            texts(&path, &scan)[0],
            ("spam".into(), "Free entry\n call now".into())
        );
        assert_eq!(texts(&path, &scan)[3].1, "ok\n ok\n fine");
        // With the label last, a comma in the text would move it: that row is left out.
        let (_d, path) = file(
            "last.csv",
            "text,label\nFree entry, call now,spam\nsee you,ham\nWin cash,spam\n",
        );
        let scan = super::scan(&path).unwrap();
        assert_eq!(scan.rows.len(), 2);
        assert!(scan.warnings[0].contains("last.csv:2: 3 fields where the table has 2"));
    }

    #[test]
    fn a_quote_left_open_is_named_where_it_starts() {
        let (_d, path) = file(
            "open.csv",
            "text,label\nfine,a\n\"open quote,b\nswallowed,a\nand this,b\nlast,a\n",
        );
        let scan = scan(&path).unwrap();
        assert_eq!(scan.rows.len(), 1);
        assert!(
            scan.warnings[0].contains("open.csv:3: 1 fields where the table has 2, left out (it runs to line 6: a quote left open?)"),
            "{:?}",
            scan.warnings
        );
    }

    #[test]
    fn unlabelled_lines_are_numbered_without_their_labels() {
        let lines: Vec<(u64, &[u8])> = unlabelled_lines(
            b"\xEF\xBB\xBFfirst text\r\n\n__label__x  second\n  \n__label__y\nlast",
        )
        .collect();
        assert_eq!(
            lines,
            [(1, &b"first text"[..]), (3, b"second"), (6, b"last")]
        );
    }

    #[test]
    fn windows_line_ends_keep_the_line_numbers() {
        let (_d, path) = file(
            "win.csv",
            "text,label\r\n\"two\r\nlines\",a\r\nb text,b\r\n\r\nodd,b,c\r\nlast,a\r\n",
        );
        let scan = scan(&path).unwrap();
        let lines: Vec<u64> = scan.rows.iter().map(|(s, _)| s.line).collect();
        assert_eq!(lines, [2, 4, 7]);
        assert_eq!(scan.labels, ["a", "b"]);
        assert_eq!(texts(&path, &scan)[0].1, "two\r\nlines");
        assert!(
            scan.warnings[0].contains("win.csv:6: 3 fields"),
            "{:?}",
            scan.warnings
        );
    }

    #[test]
    fn json_lines_give_the_label_key_and_the_string_values() {
        // As a Hugging Face dataset's to_json writes them: the label a number.
        let (_d, path) = file(
            "train.jsonl",
            "{\"idx\": 0, \"sentence\": \"a gripping, \\\"tender\\\" film\", \"label\": 1}\n\n{\"idx\": 1, \"sentence\": \"dull\", \"label\": 0}\nnot json\n{\"idx\": 2, \"sentence\": \"meh\", \"label\": [0, 1]}\n{\"sentence\": \"fine\", \"label\": 1}",
        );
        let scan = scan(&path).unwrap();
        assert_eq!(scan.labels, ["1", "0"]);
        assert_eq!(
            texts(&path, &scan),
            [
                ("1".into(), "a gripping, \"tender\" film".into()),
                ("0".into(), "dull".into()),
                ("1".into(), "fine".into())
            ]
        );
        let lines: Vec<u64> = scan.rows.iter().map(|(s, _)| s.line).collect();
        assert_eq!(lines, [1, 3, 6]);
        assert!(
            scan.warnings[0].contains("train.jsonl:4: not a JSON object"),
            "{:?}",
            scan.warnings
        );
        assert!(
            scan.warnings[1].contains("train.jsonl:5: 2 labels"),
            "{:?}",
            scan.warnings
        );
        assert!(
            scan.describe()
                .contains("labels from \"label\" (2 labels), text from \"sentence\""),
            "{}",
            scan.describe()
        );
        // Without a label name: the key of fewest values; a first line sniffs as JSON.
        let (_d, path) = file(
            "data",
            "{\"review\": \"good one\", \"score\": 5, \"user\": \"u1\"}\n{\"review\": \"bad\", \"score\": 1, \"user\": \"u2\"}\n{\"review\": \"ok\", \"score\": 5, \"user\": \"u3\"}\n",
        );
        assert_eq!(sniff(&path).unwrap(), Some(RowFormat::JsonLines));
        let scan = super::scan(&path).unwrap();
        assert_eq!(scan.labels, ["5", "1"]);
        assert_eq!(texts(&path, &scan)[0].1, "good one\nu1");
    }

    #[test]
    fn trec_question_lines_give_their_coarse_class() {
        // As Li and Roth's train_5500.label has them.
        let (_d, path) = file(
            "train_5500.label",
            "DESC:manner How did serfdom develop in and then leave Russia ?\nENTY:cremat What films featured the character Popeye Doyle ?\n\nHUM:ind What is the name of the man who painted Guernica ?\nno label here ?\nDESC:def What is caf\u{e9} au lait ?\n",
        );
        assert_eq!(sniff(&path).unwrap(), Some(RowFormat::Trec));
        let scan = scan(&path).unwrap();
        assert_eq!(scan.labels, ["DESC", "ENTY", "HUM"]);
        assert_eq!(
            texts(&path, &scan)[0],
            (
                "DESC".into(),
                "How did serfdom develop in and then leave Russia ?".into()
            )
        );
        let lines: Vec<u64> = scan.rows.iter().map(|(s, _)| s.line).collect();
        assert_eq!(lines, [1, 2, 4, 6]);
        assert!(
            scan.warnings[0].contains("train_5500.label:5: no COARSE:fine label"),
            "{:?}",
            scan.warnings
        );
        assert!(
            scan.describe()
                .contains("4 rows, 3 labels, the coarse classes of 4 fine ones"),
            "{}",
            scan.describe()
        );
        // What only looks like a label is text: a lower-case class, a capital in the fine one,
        // nothing after it.
        for line in [
            "desc:manner How ?",
            "NOTE:Read this",
            "DESC:manner",
            "A:b text",
        ] {
            assert_eq!(trec_label(line.as_bytes()), None, "{line}");
        }
    }

    #[test]
    fn a_table_whose_text_starts_like_a_trec_label_stays_a_table() {
        let rows: String = (0..6)
            .map(|i| format!("URGENT:call now {i}\t{}\n", ["spam", "ham"][i % 2]))
            .collect();
        let (_d, path) = file("sms.txt", &rows);
        assert_eq!(sniff(&path).unwrap(), None);
        assert_eq!(scan(&path).unwrap().labels, ["spam", "ham"]);
    }

    #[test]
    fn copies_of_the_label_are_no_text() {
        // A Hugging Face dataset exported as SetFit's are: `label` and its name `label_text`.
        // Read as text, the name gave the label away to every training and test row.
        let rows: String = (0..8)
            .map(|i| {
                let (label, name) = [(0, "negative"), (1, "positive")][i % 2];
                format!("review number {i},{label},{name}\n")
            })
            .collect();
        let (_d, path) = file("setfit.csv", &format!("text,label,label_text\n{rows}"));
        let scan = scan(&path).unwrap();
        assert_eq!(
            texts(&path, &scan)[0],
            ("0".into(), "review number 0".into())
        );
        assert!(
            scan.describe().contains("text from column 1 \"text\"; line 1 is a header; column 3 \"label_text\" left out: each of its values goes with one label (a copy of the label, not text)"),
            "{}",
            scan.describe()
        );
        // The same as JSON lines; TREC's fine label beside the coarse one (a value per label
        // and more); a reason given for the negative rows only (a tenth of the rows or more).
        let rows: String = (0..12)
            .map(|i| {
                let (coarse, fine) = [("DESC", "DESC:manner"), ("HUM", "HUM:ind"), ("HUM", "HUM:gr")][i % 3];
                let reason = if i % 3 == 0 { "Late Flight" } else { "" };
                format!("{{\"text\": \"question {i}\", \"coarse\": \"{coarse}\", \"fine\": \"{fine}\", \"reason\": \"{reason}\", \"tweet_id\": \"{i}\"}}\n")
            })
            .collect();
        let (_d, path) = file("trec.jsonl", &rows);
        let scan = super::scan(&path).unwrap();
        assert_eq!(scan.labels, ["DESC", "HUM"]);
        assert_eq!(texts(&path, &scan)[1], ("HUM".into(), "question 1".into()));
        assert!(
            scan.describe().contains("labels from \"coarse\" (2 labels), text from \"text\"; \"fine\" and \"reason\" left out"),
            "{}",
            scan.describe()
        );
        // Among many keys, the copy is left out and every other string kept: a salt is found
        // under which no kept key shares a bit of the mask with the left-out ones.
        let rows: String = (0..6)
            .map(|i| {
                let fields: String = (0..40)
                    .map(|k| format!("\"t{k}\": \"w{k}r{i}\", "))
                    .collect();
                let (label, name) = [("0", "neg"), ("1", "pos")][i % 2];
                format!("{{{fields}\"label\": {label}, \"label_text\": \"{name}\"}}\n")
            })
            .collect();
        let (_d, path) = file("wide.jsonl", &rows);
        let scan = super::scan(&path).unwrap();
        let text = &texts(&path, &scan)[0].1;
        assert_eq!(text.lines().count(), 40, "{text}");
        assert!(
            text.starts_with("w0r0\nw1r0") && !text.contains("neg"),
            "{text}"
        );
        // A label key whose name ends like an id's is still the label.
        let rows: String = (0..6)
            .map(|i| format!("{{\"text\": \"review {i}\", \"label_id\": {}}}\n", i % 2))
            .collect();
        let (_d, path) = file("ids.jsonl", &rows);
        assert_eq!(super::scan(&path).unwrap().labels, ["0", "1"]);
        // Columns whose values go with several labels, or seldom repeat, stay text.
        let rows: String = (0..12)
            .map(|i| {
                format!(
                    "{},{},title {}\n",
                    ["spam", "ham"][i % 2],
                    ["mobile", "web", "mail"][i % 3],
                    i / 2
                )
            })
            .collect();
        let (_d, path) = file("mixed.csv", &format!("label,channel,title\n{rows}"));
        let scan = super::scan(&path).unwrap();
        assert_eq!(texts(&path, &scan)[0].1, "mobile\ntitle 0");
        assert!(!scan.describe().contains("left out"), "{}", scan.describe());
        // A file whose only other column copies the label keeps it: no text would be left.
        let (_d, path) = file("names.csv", "label,name\n0,neg\n1,pos\n0,neg\n1,pos\n");
        let scan = super::scan(&path).unwrap();
        assert_eq!(texts(&path, &scan)[0].1, "neg");
    }

    #[test]
    fn a_spreadsheet_csv_with_semicolons_is_read_by_its_separator() {
        let (_d, path) = file(
            "export.csv",
            "Kommentar;Kategorie\n\"Gut; sehr gut, danke\";lob\nZu teuer;kritik\nSchnell, freundlich;lob\n",
        );
        let scan = scan(&path).unwrap();
        assert_eq!(scan.labels, ["lob", "kritik"]);
        assert_eq!(texts(&path, &scan)[0].1, "Gut; sehr gut, danke");
        assert!(
            scan.describe().contains("semicolon-separated"),
            "{}",
            scan.describe()
        );
    }

    #[test]
    fn files_that_are_no_table_are_refused_with_what_was_expected() {
        let (_d, path) = file("notes.txt", "just some words\nand more\n");
        assert_eq!(sniff(&path).unwrap(), None);
        let err = scan(&path).unwrap_err().to_string();
        assert!(
            err.contains("notes.txt") && err.contains("no __label__, tab, comma or semicolon"),
            "{err}"
        );
        let (_d, path) = file("ids.csv", "1,a\n2,b\n3,c\n");
        let err = scan(&path).unwrap_err().to_string();
        assert!(err.contains("no column looks like a label"), "{err}");
        let (_d, path) = file("empty.tsv", "");
        assert!(scan(&path)
            .unwrap_err()
            .to_string()
            .contains("no labelled row"));
        let (_d, path) = file("u16.tsv", "");
        std::fs::write(&path, b"\xFF\xFEl\0a\0").unwrap();
        assert!(scan(&path).unwrap_err().to_string().contains("UTF-16"));
    }
}
