//! A file per label, a line per document: the layout of the sentence corpora of the field
//! (`rt-polarity.pos` and `rt-polarity.neg` of Pang and Lee's movie-review sentences,
//! `quote.tok.gt9.5000` and `plot.tok.gt9.5000` of their subjectivity set, `custrev.pos` and
//! `custrev.neg`), and of a user's own `spam.txt` and `ham.txt`.
//!
//! A folder of such files is told from a folder of documents or mail ([`is_document_lines`]):
//! every file there is text (no NUL byte), holds two lines or more, starts with no mail header
//! and is no file of labelled rows ([`crate::text::rows`]), whose lines carry their own labels.
//! The labels are the part of the file names that differs ([`label_names`]): the dot-separated
//! parts every name shares at its end are taken off (`.txt`, `.tok.gt9.5000`), or else those
//! it shares at its start (`rt-polarity.`). A line is a [`RowSpan`] of format [`RowFormat::Lines`], read again when it is
//! featurised, like a row of a file of rows.

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::text::rows::{each_line, RowFormat, RowSpan};

/// The most files a folder may hold to be detected as a file per label: beyond, it is taken for
/// a folder of documents (`--layout lines` reads any number).
pub const MAX_LABEL_FILES: usize = 100;

/// Whether names read as labels look like labels, not like the names of documents: every one
/// has a letter, and they still differ with their digits taken out (`00012`, `note-3` and
/// `note-4` are documents' names; `pos`, `neg`, `class1` and `spam` are labels).
pub fn names_look_like_labels(labels: &[String]) -> bool {
    let mut letters: Vec<String> = labels
        .iter()
        .map(|l| l.chars().filter(|c| !c.is_ascii_digit()).collect())
        .collect();
    let all_have_letters = labels.iter().all(|l| l.chars().any(char::is_alphabetic));
    letters.sort();
    letters.dedup();
    all_have_letters && letters.len() == labels.len()
}

/// The split names (`train`, `test`…) that labels start with when a folder holds two splits of
/// one corpus side by side (`train.pos`, `test.pos`), sorted; empty unless there are two or
/// more, which make each split's files labels of their own.
pub fn split_prefixes(labels: &[String]) -> Vec<String> {
    let splits: std::collections::BTreeSet<String> = labels
        .iter()
        .map(|l| {
            l.split(['.', '_', '-'])
                .next()
                .unwrap_or_default()
                .to_lowercase()
        })
        .filter(|part| ["train", "test", "dev", "valid", "validation"].contains(&part.as_str()))
        .collect();
    if splits.len() >= 2 {
        splits.into_iter().collect()
    } else {
        Vec::new()
    }
}

/// What is read of a file to judge it.
const HEAD_BYTES: u64 = 64 << 10;

/// Whether a file of a folder is there to describe it, not to be read as a label: `README`,
/// `LICENSE`, `COPYING` and their variants (`rt-polaritydata.README.1.0.txt`).
pub fn is_notice(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_uppercase())
        .unwrap_or_default();
    name.split(['.', '-', '_'])
        .any(|part| matches!(part, "README" | "LICENSE" | "LICENCE" | "COPYING"))
}

/// Whether `path` looks like a label's documents a line each: text without NUL bytes in its
/// first 64 KiB, two non-blank lines or more there and fewer than one blank line in ten (prose
/// has paragraphs between blank lines), not a mail message (no `From ` line or
/// mail header field first), and not a file of labelled rows: no `.csv`/`.tsv`/`.jsonl` name, no `__label__` or
/// JSON object on its first line, and no column of its first 64 KiB read as a table with
/// labels that repeat (`ham<tab>text`, `earn,text`).
pub fn is_document_lines(path: &Path) -> bool {
    let Ok(head) = read_head(path) else {
        return false;
    };
    if head.contains(&0) || crate::text::input::email::starts_like_email(&head) {
        return false;
    }
    let body = head.strip_suffix(b"\n").unwrap_or(&head);
    let (mut lines, mut blank) = (0usize, 0usize);
    for line in body.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            blank += 1;
        } else {
            lines += 1;
        }
    }
    lines >= 2 && blank * 10 < lines && !crate::text::rows::head_has_labels(path, &head)
}

/// The first 64 KiB of `path`, cut after its last whole line when it is longer.
fn read_head(path: &Path) -> Result<Vec<u8>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut head = Vec::new();
    file.take(HEAD_BYTES + 1)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, e))?;
    if head.len() as u64 > HEAD_BYTES {
        head.truncate(HEAD_BYTES as usize);
        let end = head.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        head.truncate(end);
    }
    Ok(head)
}

/// The label of each file, in the order given: its name without the dot-separated parts that
/// every name ends with (`spam.txt`, `ham.txt` → `spam`, `ham`; `quote.tok.gt9.5000` →
/// `quote`), or, when no part ends every name, without those every name starts with
/// (`rt-polarity.pos`, `rt-polarity.neg` → `pos`, `neg`); a lone file's name without a `.txt`
/// ending. When that leaves a name empty or two alike, the whole names. Endings first, so that
/// `sci.space.txt` is `sci.space` beside `sci.med.txt` as beside `rec.autos.txt`: a test
/// folder of fewer labels names them as the training folder did.
pub fn label_names(paths: &[PathBuf]) -> Vec<String> {
    let names: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let parts: Vec<Vec<&str>> = names.iter().map(|n| n.split('.').collect()).collect();
    let shortest = parts.iter().map(Vec::len).min().unwrap_or(0);
    // Whether every name has the same part at `i` counted from the start (or from the end).
    let shared = |i: usize, from_end: bool| {
        parts.windows(2).all(|w| {
            let (a, b) = (&w[0], &w[1]);
            if from_end {
                a[a.len() - 1 - i] == b[b.len() - 1 - i]
            } else {
                a[i] == b[i]
            }
        })
    };
    let (mut front, mut back) = (0, 0);
    if let [one] = parts.as_slice() {
        back =
            usize::from(one.len() > 1 && one.last().is_some_and(|e| e.eq_ignore_ascii_case("txt")));
    } else {
        while back < shortest && shared(back, true) {
            back += 1;
        }
        while back == 0 && front < shortest && shared(front, false) {
            front += 1;
        }
    }
    let labels: Vec<String> = parts
        .iter()
        .map(|p| p[front..p.len() - back].join("."))
        .collect();
    let mut sorted = labels.clone();
    sorted.sort();
    sorted.dedup();
    if sorted.len() < labels.len() || sorted.iter().any(String::is_empty) {
        names
    } else {
        labels
    }
}

/// The non-blank lines of `path`, each a document: its number, and its bytes without the line
/// break (after a byte-order mark on the first line).
pub fn scan(path: &Path) -> Result<Vec<RowSpan>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut spans = Vec::new();
    each_line(
        path,
        BufReader::with_capacity(256 << 10, file),
        &mut |line, start, text| {
            if text.iter().all(u8::is_ascii_whitespace) {
                return;
            }
            let trimmed = text
                .strip_suffix(b"\n")
                .map(|t| t.strip_suffix(b"\r").unwrap_or(t))
                .unwrap_or(text);
            spans.push(RowSpan {
                line,
                start,
                end: start + trimmed.len() as u64,
                format: RowFormat::Lines,
                label_column: 0,
                skip: 0,
            });
        },
    )?;
    Ok(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(names: &[&str]) -> Vec<String> {
        let paths: Vec<PathBuf> = names.iter().map(|n| PathBuf::from("d").join(n)).collect();
        label_names(&paths)
    }

    #[test]
    fn labels_are_the_part_of_the_names_that_differs() {
        assert_eq!(
            labels(&["rt-polarity.neg", "rt-polarity.pos"]),
            ["neg", "pos"]
        );
        assert_eq!(
            labels(&["plot.tok.gt9.5000", "quote.tok.gt9.5000"]),
            ["plot", "quote"]
        );
        assert_eq!(labels(&["ham.txt", "spam.txt"]), ["ham", "spam"]);
        // Dots inside the differing part stay: the news groups' names.
        assert_eq!(
            labels(&["posts.rec.sport.hockey", "posts.sci.space"]),
            ["rec.sport.hockey", "sci.space"]
        );
        assert_eq!(
            labels(&["train_neg.txt", "train_pos.txt"]),
            ["train_neg", "train_pos"]
        );
        // Endings first: the same label from a folder of fewer files.
        assert_eq!(
            labels(&["rec.autos.txt", "sci.med.txt", "sci.space.txt"]),
            ["rec.autos", "sci.med", "sci.space"]
        );
        assert_eq!(
            labels(&["sci.med.txt", "sci.space.txt"]),
            ["sci.med", "sci.space"]
        );
        // Nothing shared: the whole names.
        assert_eq!(labels(&["negative", "positive"]), ["negative", "positive"]);
        // A name that would be left empty: the whole names.
        assert_eq!(labels(&["neg", "neg.old"]), ["neg", "neg.old"]);
        assert_eq!(labels(&["sci.space.txt"]), ["sci.space"]);
        assert_eq!(labels(&["rt-polarity.pos"]), ["rt-polarity.pos"]);
        assert_eq!(labels(&[".txt"]), [".txt"]);
    }

    #[test]
    fn numbered_names_are_documents_not_labels() {
        let names = |n: &[&str]| {
            names_look_like_labels(&n.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        };
        assert!(names(&["pos", "neg"]));
        assert!(names(&["class1", "spam"]));
        assert!(!names(&["00000", "00001"]));
        assert!(!names(&["note-3", "note-4"]));
        assert!(!names(&["class1", "class2"]));
    }

    #[test]
    fn notices_are_told_by_name() {
        for name in [
            "README",
            "readme.md",
            "rt-polaritydata.README.1.0.txt",
            "LICENSE.txt",
            "COPYING",
        ] {
            assert!(is_notice(Path::new(name)), "{name}");
        }
        for name in ["rt-polarity.pos", "reader.txt", "licensed.neg"] {
            assert!(!is_notice(Path::new(name)), "{name}");
        }
    }

    #[test]
    fn sentence_files_are_lines_and_rows_mail_or_binaries_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let judge = |name: &str, content: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, content).unwrap();
            is_document_lines(&path)
        };
        // Sentences with commas and the odd tab: no column of them repeats.
        assert!(judge(
            "rt-polarity.neg",
            b"simplistic , silly and tedious . \nit's so laddish and juvenile , only teenage boys could possibly find it funny . \nexploitative and largely devoid of the depth or sophistication\tthat would make watching such a graphic treatment of the crimes bearable . \n"
        ));
        assert!(judge(
            "latin1.txt",
            b"un film tr\xe8s lent\nsans \xe9motion\n"
        ));
        // One line is one document, not a label's documents, and so is prose in paragraphs.
        assert!(!judge("one.txt", b"a single line\n"));
        assert!(!judge(
            "essay.txt",
            b"The first paragraph,\nwrapped at the margin.\n\nThe second one,\nwrapped too.\n"
        ));
        // Labelled rows: fastText, label<tab>text, label,text, JSON lines.
        assert!(!judge("ft.txt", b"__label__pos good\n__label__neg bad\n"));
        let tsv: String = (0..20)
            .map(|i| format!("{}\tmessage number {i}\n", ["ham", "spam"][i % 2]))
            .collect();
        assert!(!judge("SMSSpamCollection", tsv.as_bytes()));
        let csv: String = (0..20)
            .map(|i| {
                format!(
                    "{},text of row {i}, with a comma\n",
                    ["earn", "acq", "trade"][i % 3]
                )
            })
            .collect();
        assert!(!judge("r8.txt", csv.as_bytes()));
        assert!(!judge(
            "data.txt",
            b"{\"text\": \"a\", \"label\": 1}\n{\"text\": \"b\", \"label\": 0}\n"
        ));
        assert!(!judge("reviews.csv", b"a review, of sorts\nanother one\n"));
        // A mail message, a binary file.
        assert!(!judge(
            "msg.eml",
            b"From: a@example.org\nSubject: hi\nTo: b@example.org\n\nbody\nmore\n"
        ));
        assert!(!judge("2.eml", b"Subject: one header only\n\nbody\nmore\n"));
        assert!(!judge("pic.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\n"));
    }

    #[test]
    fn every_non_blank_line_is_a_document_without_its_line_break() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pos");
        let content = b"\xEF\xBB\xBFfirst line\r\n\n  \nsecond line\nlast, no break";
        std::fs::write(&path, content).unwrap();
        let spans = scan(&path).unwrap();
        let texts: Vec<(u64, &[u8])> = spans
            .iter()
            .map(|s| (s.line, &content[s.start as usize..s.end as usize]))
            .collect();
        assert_eq!(
            texts,
            [
                (1, &b"first line"[..]),
                (4, &b"second line"[..]),
                (5, &b"last, no break"[..])
            ]
        );
        assert!(spans.iter().all(|s| s.format == RowFormat::Lines));
    }
}
