//! mbox files: many messages in one file, each starting at a `From ` separator line
//! (`From sender Sat Jan  3 01:05:34 1996`), as mutt, Thunderbird, Apple Mail exports, `formail`
//! and every Unix mail spool write them.
//!
//! Hand-written, not a crate: the readers on crates.io do not give what a corpus needs. The
//! `mbox-reader` crate (2019, unmaintained) splits at every `From ` and keeps the quoting;
//! mail-parser 0.11 (already used here for MIME) splits at every line starting with `From `,
//! gives neither byte offsets (a message's identity here) nor `Content-Length`, and its 1.0
//! needs a newer Rust than this crate's; melib is GPL and a whole mail client. What is needed is
//! small: a line scanner that records where each message starts and ends.
//!
//! How a file is read ([RFC 4155](https://www.rfc-editor.org/rfc/rfc4155) and the variants it
//! describes):
//! * a separator is a line starting with `From ` that also carries a time (`12:34`) and a year,
//!   as every writer puts there; a body line like `From the desk of …` that a careless writer
//!   left unquoted does not split a message;
//! * the blank line before a separator belongs to the separator, not to the message;
//! * a `Content-Length` header (mboxcl, Solaris mail) is honoured when it is consistent: the body
//!   it measures must end at the end of the file or just before a separator line (optionally
//!   after a blank line); then unquoted `From ` lines inside that body do not split it. An
//!   inconsistent one is ignored with a warning;
//! * quoting is undone when a message is read ([`unquote`]): one `>` comes off a line matching
//!   `>+From `. That is mboxrd's rule; mboxo quotes only `From ` and leaves `>From ` alone, so an
//!   mboxo body line that was really `>From ` reads as `From ` — the file cannot say which
//!   variant wrote it, and for classification the difference is one `>`;
//! * lines end in LF or CRLF; both are kept as they are.
//!
//! A file that ends inside a message's header, or in the middle of a line (a truncated copy),
//! still yields its messages, with a warning naming the file and the message's offset.

use std::borrow::Cow;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

use crate::error::{Error, Result};

/// The byte range of one message in an mbox file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MboxSpan {
    /// Where its `From ` separator line starts: the message's identity in the file.
    pub offset: u64,
    /// Where its first header line starts (after the separator line).
    pub start: u64,
    /// One past its last byte (the blank line before the next separator is not part of it).
    pub end: u64,
}

/// The messages found in one mbox, and what looked wrong.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Scan {
    pub spans: Vec<MboxSpan>,
    /// Each names the file and, where it applies, the message (`FILE@OFFSET: …`).
    pub warnings: Vec<String>,
}

/// Whether `line` is an mbox separator: `From `, then a time and a four-digit year among the
/// words after it (`From MAILER-DAEMON Fri Jul  8 12:08:34 2011`, `From - Mon Jan 1 00:00:00
/// 2001` as Thunderbird writes it).
pub fn is_separator(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"From ") else {
        return false;
    };
    // Every message `cwtext serve` classifies starts here (is it an mbox?): one pass over the
    // words, no allocation.
    let rest = crate::text::input::decode::lossy_utf8(rest);
    let is_time = |w: &str| {
        let mut parts = 0;
        w.split(':').all(|p| {
            parts += 1;
            (1..=2).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit())
        }) && (2..=3).contains(&parts)
    };
    let is_year = |w: &str| w.len() == 4 && w.bytes().all(|b| b.is_ascii_digit());
    let (mut words, mut time, mut year) = (0, false, false);
    for word in rest.split_whitespace() {
        words += 1;
        time = time || is_time(word);
        year = year || is_year(word);
    }
    words >= 3 && time && year
}

/// Whether the file at `path` starts like an mbox (its first line is a separator). Reads at
/// most a kilobyte.
pub fn looks_like_mbox(path: &Path) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(1024);
    if file.take(1024).read_to_end(&mut head).is_err() {
        return false;
    }
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    is_separator(line)
}

/// Whether `bytes` start like an mbox.
pub fn bytes_look_like_mbox(bytes: &[u8]) -> bool {
    let line = &bytes[..bytes.len().min(1024)];
    is_separator(line.split(|&b| b == b'\n').next().unwrap_or_default())
}

/// Scans the mbox file at `path`. An error when it cannot be read or does not start with a
/// separator line; a problem with one message is a warning.
pub fn scan_file(path: &Path) -> Result<Scan> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    scan(BufReader::with_capacity(1 << 16, file), path)
}

/// Scans an mbox in memory (standard input, say); `name` names it in warnings and errors.
pub fn scan_bytes(bytes: &[u8], name: &Path) -> Result<Scan> {
    scan(std::io::Cursor::new(bytes), name)
}

/// The most a compressed mbox is decompressed to (a mailing list's archive of a month is a
/// few megabytes; a larger one is read up to here, with a warning).
pub const MAX_PACKED_MBOX_BYTES: usize = 1 << 30;

/// [`MAX_PACKED_MBOX_BYTES`] for people, in warnings.
const PACKED_LIMIT: &str = "the 1 GiB read of a compressed mbox";

/// What a compressed mbox holds once decompressed, at most `max` bytes of it (`limit` names
/// that bound for people), with warnings for what was left out
/// ([`decompress_within`](crate::text::input::compressed::decompress_within)); `None` when
/// `bytes` are not compressed or what they hold does not start with a `From ` separator (only
/// its first kilobyte is then decompressed).
pub fn unpack(
    bytes: &[u8],
    name: &Path,
    max: usize,
    limit: &str,
) -> Result<Option<(Vec<u8>, Vec<String>)>> {
    use crate::text::input::compressed::decompress_within;
    match decompress_within(bytes, name, 1024, limit)? {
        Some((head, _)) if bytes_look_like_mbox(&head) => {
            decompress_within(bytes, name, max, limit)
        }
        _ => Ok(None),
    }
}

/// [`unpack`] as a file of a corpus is read: at most [`MAX_PACKED_MBOX_BYTES`].
pub fn unpack_packed(bytes: &[u8], path: &Path) -> Result<Option<(Vec<u8>, Vec<String>)>> {
    unpack(bytes, path, MAX_PACKED_MBOX_BYTES, PACKED_LIMIT)
}

/// What a file of a folder-per-label corpus holds, for reading it as documents.
#[derive(Debug, PartialEq, Eq)]
pub enum Probe {
    /// One document (anything but an mbox of two or more messages; a file that cannot be read
    /// is one document too, and featurising it reports why).
    Document,
    /// An mbox of two or more messages (a mailing list's archive, a mail program's export).
    Mbox(Scan),
    /// A compressed mbox of two or more messages (a list archive's `2024-January.txt.gz`); the
    /// spans are in what it holds once decompressed.
    PackedMbox(Scan),
}

/// Whether the file at `path` is an mbox of two or more messages, compressed or not. Reads its
/// first kilobyte; an mbox is then scanned, and a compressed file is decompressed whole only
/// when what it holds starts with a `From ` separator.
pub fn probe_file(path: &Path) -> Probe {
    use crate::text::input::compressed::Compression;
    use std::io::Read;
    let Ok(mut file) = std::fs::File::open(path) else {
        return Probe::Document;
    };
    // One read (a regular file gives what it has up to the buffer's size), not `read_to_end`,
    // which reads again to see the end: this runs for every file of a corpus.
    let mut buffer = [0u8; 1024];
    let Ok(n) = file.read(&mut buffer) else {
        return Probe::Document;
    };
    let head = &buffer[..n];
    if bytes_look_like_mbox(head) {
        return match scan_file(path) {
            Ok(scan) if scan.spans.len() >= 2 => Probe::Mbox(scan),
            _ => Probe::Document,
        };
    }
    if Compression::detect(head).is_none() {
        return Probe::Document;
    }
    let Ok(bytes) = std::fs::read(path) else {
        return Probe::Document;
    };
    match unpack_packed(&bytes, path) {
        Ok(Some((whole, warnings))) => match scan_bytes(&whole, path) {
            Ok(mut scan) if scan.spans.len() >= 2 => {
                scan.warnings.extend(warnings);
                Probe::PackedMbox(scan)
            }
            _ => Probe::Document,
        },
        _ => Probe::Document,
    }
}

/// A message split out of an mbox held in memory: its name (`NAME@OFFSET`, the offset of its
/// `From ` line) and its bytes with the quoting undone.
pub type Message<'b> = (String, Cow<'b, [u8]>);

/// The messages of `bytes` when they are an mbox of two or more messages, with the scan's
/// warnings; `None` otherwise: a single message with a `From ` line (as procmail hands one
/// over) is one document, not an mbox to split. A compressed mbox (`archive.mbox.gz`) splits
/// as what it holds, at most `max_unpacked` bytes of it, its messages named by their offsets
/// there. `name` names the input (`-` for standard input).
pub fn split_bytes<'b>(
    bytes: &'b [u8],
    name: &str,
    max_unpacked: usize,
) -> Option<(Vec<Message<'b>>, Vec<String>)> {
    let unpacked = unpack(bytes, Path::new(name), max_unpacked, "--max-document-bytes");
    if let Ok(Some((whole, unpack_warnings))) = unpacked {
        // A compressed mbox (`archive.mbox.gz`) splits as what it holds; its messages are
        // named by their offsets in the decompressed bytes.
        let (messages, mut warnings) = split_bytes(&whole, name, max_unpacked)?;
        warnings.extend(unpack_warnings);
        let owned = messages
            .into_iter()
            .map(|(n, m)| (n, Cow::Owned(m.into_owned())))
            .collect();
        return Some((owned, warnings));
    }
    if !bytes_look_like_mbox(bytes) {
        return None;
    }
    // A second message needs a second separator, at the start of a line: without a `\nFrom `
    // anywhere there is one message, and the line-by-line scan is not needed (it was 4% of a
    // server's time per classified mail).
    memchr::memmem::find(bytes, b"\nFrom ")?;
    let scan = scan_bytes(bytes, Path::new(name)).ok()?;
    if scan.spans.len() < 2 {
        return None;
    }
    let messages = scan
        .spans
        .iter()
        .map(|s| {
            let message = &bytes[s.start as usize..s.end as usize];
            (format!("{name}@{}", s.offset), unquote(message))
        })
        .collect();
    Some((messages, scan.warnings))
}

/// How much of a line the scanner keeps: separators, header names and blank lines are told by a
/// line's start, so a file of gigabytes without a newline costs no memory.
const LINE_START: usize = 1024;

/// Reads one line (through its `\n`, or to the end of the input), keeping its first
/// [`LINE_START`] bytes in `line`; returns the whole line's length and whether it ended in a
/// newline.
fn read_line_start<R: BufRead>(reader: &mut R, line: &mut Vec<u8>) -> std::io::Result<(u64, bool)> {
    line.clear();
    let mut length = 0u64;
    loop {
        let buffer = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buffer.is_empty() {
            return Ok((length, false));
        }
        let (take, newline) = match memchr::memchr(b'\n', buffer) {
            Some(i) => (i + 1, true),
            None => (buffer.len(), false),
        };
        let room = LINE_START.saturating_sub(line.len());
        line.extend_from_slice(&buffer[..take.min(room)]);
        reader.consume(take);
        length += take as u64;
        if newline {
            return Ok((length, true));
        }
    }
}

fn is_blank(line: &[u8]) -> bool {
    line == b"\n" || line == b"\r\n"
}

/// The value of a `Content-Length:` header line, if `line` is one.
fn content_length(line: &[u8]) -> Option<u64> {
    const NAME: &[u8] = b"content-length:";
    if line.len() < NAME.len() || !line[..NAME.len()].eq_ignore_ascii_case(NAME) {
        return None;
    }
    std::str::from_utf8(&line[NAME.len()..])
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// A message being read.
struct Open {
    offset: u64,
    start: u64,
    in_header: bool,
    content_length: Option<u64>,
}

/// Scans an mbox from `reader` (positioned at its start); `name` names it in messages.
pub fn scan<R: BufRead + Seek>(mut reader: R, name: &Path) -> Result<Scan> {
    let io = |e| Error::io(name, e);
    let len = reader.seek(SeekFrom::End(0)).map_err(io)?;
    reader.seek(SeekFrom::Start(0)).map_err(io)?;
    let mut out = Scan::default();
    let mut line = Vec::with_capacity(256);
    let mut pos = 0u64;
    let mut open: Option<Open> = None;
    // Where the previous line started, when it was blank: a message ends there if a separator
    // follows.
    let mut blank_before: Option<u64> = None;
    let mut ended_mid_line = false;
    let mut unblanked = 0usize;
    let warn = |out: &mut Scan, offset: u64, what: String| {
        out.warnings
            .push(format!("{}@{offset}: {what}", name.display()));
    };
    loop {
        let (n, newline) = read_line_start(&mut reader, &mut line).map_err(io)?;
        if n == 0 {
            break;
        }
        let line_start = pos;
        pos += n;
        ended_mid_line = !newline;
        if is_separator(&line) {
            if let Some(m) = open.take() {
                if blank_before.is_none() {
                    // Writers put a blank line before every separator: without one, this may
                    // be a body line that was not quoted. It is read as a new message. A
                    // writer that never puts one would warn for every message: the first is
                    // named, the rest counted.
                    if unblanked == 0 {
                        warn(
                            &mut out,
                            line_start,
                            "a `From ` line with no blank line before it, read as the start of a new message (a body line the writer did not quote?)".into(),
                        );
                    }
                    unblanked += 1;
                }
                close(&mut out, m, blank_before.unwrap_or(line_start), name);
            }
            open = Some(Open {
                offset: line_start,
                start: pos,
                in_header: true,
                content_length: None,
            });
            blank_before = None;
            continue;
        }
        let Some(m) = open.as_mut() else {
            return Err(Error::Corpus {
                path: name.to_path_buf(),
                message: "not an mbox: the first line is not a `From ` separator line".into(),
            });
        };
        let blank = is_blank(&line);
        if m.in_header {
            if let Some(n) = content_length(&line) {
                m.content_length = Some(n);
            }
            if blank {
                m.in_header = false;
                if let Some(body) = m.content_length {
                    match body_end(&mut reader, pos, body, len).map_err(io)? {
                        Some((end, next)) => {
                            // The body is what Content-Length says: skip to its end, even over
                            // unquoted `From ` lines.
                            reader.seek(SeekFrom::Start(next)).map_err(io)?;
                            pos = next;
                            blank_before = (next > end).then_some(end);
                            continue;
                        }
                        None => {
                            warn(
                                &mut out,
                                m.offset,
                                format!("Content-Length {body} does not end at a `From ` line or the end of the file; ignored"),
                            );
                            reader.seek(SeekFrom::Start(pos)).map_err(io)?;
                        }
                    }
                }
            }
        }
        blank_before = blank.then_some(line_start);
    }
    if unblanked > 1 {
        out.warnings.push(format!(
            "{}: {} more `From ` lines with no blank line before them, each read as a new message",
            name.display(),
            unblanked - 1
        ));
    }
    if let Some(m) = open.take() {
        if m.in_header {
            warn(
                &mut out,
                m.offset,
                "the file ends inside this message's header (truncated?)".into(),
            );
        } else if ended_mid_line {
            warn(
                &mut out,
                m.offset,
                format!("the file ends in the middle of a line at byte {pos} (truncated?)"),
            );
        }
        close(&mut out, m, blank_before.unwrap_or(pos), name);
    }
    Ok(out)
}

/// Where a body of `length` bytes starting at `body` ends, and where the next separator line
/// starts, when that is consistent: the end of the file, or a separator line right there or
/// after one blank line. `None` otherwise.
fn body_end<R: BufRead + Seek>(
    reader: &mut R,
    body: u64,
    length: u64,
    file_len: u64,
) -> std::io::Result<Option<(u64, u64)>> {
    let end = match body.checked_add(length) {
        Some(end) if end <= file_len => end,
        _ => return Ok(None),
    };
    if end == file_len {
        return Ok(Some((end, end)));
    }
    reader.seek(SeekFrom::Start(end))?;
    let mut next = Vec::with_capacity(128);
    // The separator line, possibly after a blank one.
    for _ in 0..2 {
        let (n, _) = read_line_start(reader, &mut next)?;
        if n == 0 {
            return Ok(None);
        }
        if is_separator(&next) {
            let sep = reader.stream_position()? - n;
            return Ok(Some((end, sep)));
        }
        if !is_blank(&next) {
            return Ok(None);
        }
    }
    Ok(None)
}

fn close(out: &mut Scan, m: Open, end: u64, name: &Path) {
    if end <= m.start {
        out.warnings.push(format!(
            "{}@{}: an empty message (a `From ` line and nothing else), skipped",
            name.display(),
            m.offset
        ));
        return;
    }
    out.spans.push(MboxSpan {
        offset: m.offset,
        start: m.start,
        end,
    });
}

/// A message's bytes with the `From ` quoting undone: one `>` taken off every line that
/// matches `>+From ` (see the module doc for mboxo).
pub fn unquote(bytes: &[u8]) -> Cow<'_, [u8]> {
    let quoted = |line: &[u8]| {
        let arrows = line.iter().take_while(|&&b| b == b'>').count();
        arrows > 0 && line[arrows..].starts_with(b"From ")
    };
    if !bytes.split(|&b| b == b'\n').any(quoted) {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        out.extend_from_slice(if quoted(line) { &line[1..] } else { line });
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(text: &[u8]) -> (Vec<Vec<u8>>, Vec<String>) {
        let scan = scan_bytes(text, Path::new("box")).unwrap();
        let bodies = scan
            .spans
            .iter()
            .map(|s| unquote(&text[s.start as usize..s.end as usize]).into_owned())
            .collect();
        (bodies, scan.warnings)
    }

    const SEP1: &str = "From god@heaven.af.mil Sat Jan  3 01:05:34 1996";
    const SEP2: &str = "From - Tue Jul 23 19:39:23 2002";

    #[test]
    fn separators_need_a_time_and_a_year() {
        assert!(is_separator(SEP1.as_bytes()));
        assert!(is_separator(SEP2.as_bytes()));
        assert!(is_separator(
            b"From MAILER-DAEMON Fri Jul  8 12:08:34 2011 +0000\r\n"
        ));
        assert!(!is_separator(b"From the desk of the president\n"));
        assert!(!is_separator(b"From: someone@example.com\n"));
        assert!(!is_separator(b">From god Sat Jan  3 01:05:34 1996\n"));
        // Three words at least; a time of two or three parts of one or two digits.
        assert!(!is_separator(b"From 01:05 1996"));
        assert!(is_separator(b"From x 1:5 1996"));
        assert!(!is_separator(b"From x 1:2:3:4 1996"));
        assert!(!is_separator(b"From x 123:45 1996"));
        assert!(!is_separator(b"From x 12: 1996"));
        assert!(!is_separator(b"From x 12:30 96"));
        assert!(is_separator(b"From \xff\xfe 12:30 1996"));
    }

    #[test]
    fn messages_split_at_separators_without_the_blank_line_before_them() {
        let text = format!("{SEP1}\nSubject: a\n\none\n\n{SEP2}\nSubject: b\n\ntwo\n");
        let (m, w) = messages(text.as_bytes());
        assert_eq!(
            m,
            [
                b"Subject: a\n\none\n".to_vec(),
                b"Subject: b\n\ntwo\n".to_vec()
            ]
        );
        assert!(w.is_empty(), "{w:?}");
        let scan = scan_bytes(text.as_bytes(), Path::new("box")).unwrap();
        assert_eq!(scan.spans[0].offset, 0);
        assert_eq!(
            scan.spans[1].offset as usize,
            text.find("From - ").unwrap(),
            "identity: the separator's byte offset"
        );
    }

    #[test]
    fn crlf_files_split_the_same_way() {
        let text =
            format!("{SEP1}\r\nSubject: a\r\n\r\none\r\n\r\n{SEP2}\r\nSubject: b\r\n\r\ntwo\r\n");
        let (m, _) = messages(text.as_bytes());
        assert_eq!(
            m,
            [
                b"Subject: a\r\n\r\none\r\n".to_vec(),
                b"Subject: b\r\n\r\ntwo\r\n".to_vec()
            ]
        );
    }

    #[test]
    fn mboxrd_quoting_is_undone_and_unquoted_body_lines_do_not_split() {
        let text = format!(
            "{SEP1}\nSubject: a\n\n>From here\n>>From there\nFrom the desk of\n> From x\n\n{SEP2}\nSubject: b\n\nb\n"
        );
        let (m, _) = messages(text.as_bytes());
        assert_eq!(m.len(), 2);
        assert_eq!(
            m[0],
            b"Subject: a\n\nFrom here\n>From there\nFrom the desk of\n> From x\n".to_vec()
        );
    }

    #[test]
    fn a_consistent_content_length_is_honoured_and_an_inconsistent_one_ignored() {
        // The body holds an unquoted separator-looking line: only Content-Length keeps it whole.
        let body = format!("hello\n{SEP2}\nstill the body\n");
        let text = format!(
            "{SEP1}\nContent-Length: {}\n\n{body}\n{SEP1}\nSubject: b\n\nb\n",
            body.len()
        );
        let (m, w) = messages(text.as_bytes());
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m[0].ends_with(b"still the body\n"));
        assert!(w.is_empty(), "{w:?}");
        // At the end of the file.
        let text = format!("{SEP1}\nContent-Length: {}\n\n{body}", body.len());
        let (m, w) = messages(text.as_bytes());
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(w.is_empty(), "{w:?}");
        // Wrong: the separators decide, with a warning that names the message.
        let text = format!("{SEP1}\nContent-Length: 3\n\n{body}\n{SEP1}\nSubject: b\n\nb\n");
        let (m, w) = messages(text.as_bytes());
        assert_eq!(m.len(), 3, "{m:?}");
        assert!(w[0].starts_with("box@0: Content-Length 3"), "{w:?}");
        for huge in ["99999", "18446744073709551615"] {
            let text = format!("{SEP1}\nContent-Length: {huge}\n\nshort\n");
            let (m, w) = messages(text.as_bytes());
            assert_eq!((m.len(), w.len()), (1, 1), "{w:?}");
        }
    }

    #[test]
    fn truncated_and_odd_files_warn_with_the_message_offset() {
        let text = format!("{SEP1}\nSubject: a\n\none\n\n{SEP2}\nSubject: b\nX-Cut: ha");
        let (m, w) = messages(text.as_bytes());
        assert_eq!(m.len(), 2);
        let second = text.find("From - ").unwrap();
        assert_eq!(
            w,
            [format!(
                "box@{second}: the file ends inside this message's header (truncated?)"
            )]
        );
        let text = format!("{SEP1}\nSubject: a\n\nhalf a li");
        let (_, w) = messages(text.as_bytes());
        assert!(w[0].contains("middle of a line"), "{w:?}");
        let text = format!("{SEP1}\n{SEP2}\nSubject: b\n\nb\n");
        let (m, w) = messages(text.as_bytes());
        assert_eq!(m.len(), 1);
        assert!(w.iter().any(|w| w.contains("empty message")), "{w:?}");
        // An unquoted separator-shaped body line splits the message, with a warning.
        let text = format!("{SEP1}\nSubject: a\n\nforwarded:\n{SEP2}\nmore\n");
        let (m, w) = messages(text.as_bytes());
        assert_eq!(m.len(), 2);
        let at = text.find("From - ").unwrap();
        assert!(
            w[0].starts_with(&format!("box@{at}: a `From ` line with no blank line")),
            "{w:?}"
        );
        let text = format!("{SEP1}\n\na\n{SEP2}\n\nb\n{SEP2}\n\nc\n{SEP2}\n\nd\n");
        let (m, w) = messages(text.as_bytes());
        assert_eq!((m.len(), w.len()), (4, 2), "{w:?}");
        assert_eq!(
            w[1],
            "box: 2 more `From ` lines with no blank line before them, each read as a new message"
        );
        let err = scan_bytes(b"Subject: not an mbox\n", Path::new("x")).unwrap_err();
        assert!(err.to_string().contains("not an mbox"), "{err}");
        assert!(scan_bytes(b"", Path::new("x")).unwrap().spans.is_empty());
    }

    #[test]
    fn only_two_or_more_messages_are_split() {
        let one = format!("{SEP1}\nSubject: a\n\none\n");
        assert!(split_bytes(one.as_bytes(), "-", 1 << 20).is_none());
        assert!(split_bytes(b"Subject: a\n\nplain mail\n", "-", 1 << 20).is_none());
        let two = format!("{one}\n{SEP2}\nSubject: b\n\n>From two\n");
        let (messages, warnings) = split_bytes(two.as_bytes(), "-", 1 << 20).unwrap();
        assert!(warnings.is_empty());
        assert_eq!(messages[0].0, "-@0");
        assert_eq!(messages[1].0, format!("-@{}", one.len() + 1));
        assert_eq!(&*messages[1].1, b"Subject: b\n\nFrom two\n");
    }

    /// Lines a message may hold, the awkward ones included: separators and quoted separators
    /// in the body, blank lines, a body `From ` line that is no separator.
    const LINES: &[&str] = &[
        "Subject: hello",
        "",
        "plain words",
        "From the desk of",
        "From a@b Sat Jan  3 01:05:34 1996",
        ">From a@b Sat Jan  3 01:05:34 1996",
        ">>From x",
        "> quoted reply",
        "From:",
    ];

    proptest::proptest! {
        /// Written as mboxrd (every `>*From ` line quoted, a blank line after each message),
        /// any messages come back as they were, byte for byte, with LF or CRLF.
        #[test]
        fn what_an_mboxrd_writer_wrote_comes_back(
            written in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(LINES), 1..8), 1..6),
            crlf in proptest::bool::ANY,
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut file = String::new();
            let mut want = Vec::new();
            for lines in &written {
                file.push_str(SEP1);
                file.push_str(eol);
                let mut text = String::new();
                for line in lines {
                    let arrows = line.bytes().take_while(|&b| b == b'>').count();
                    if line[arrows..].starts_with("From ") {
                        file.push('>');
                    }
                    file.push_str(line);
                    file.push_str(eol);
                    text.push_str(line);
                    text.push_str(eol);
                }
                file.push_str(eol);
                want.push(text.into_bytes());
            }
            let (got, warnings) = messages(file.as_bytes());
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert!(warnings.is_empty(), "{:?}", warnings);
        }

        /// Any bytes: no panic, and the spans lie inside the input, in order, apart.
        #[test]
        fn any_bytes_scan_into_ordered_spans(
            head in proptest::bool::ANY,
            bytes in proptest::collection::vec(proptest::sample::select(
                b"From a@b Sat Jan  3 01:05:34 1996\n\r>Content-Length: 7\n\0x".to_vec()), 0..300),
        ) {
            let mut input = if head { format!("{SEP1}\n").into_bytes() } else { Vec::new() };
            input.extend_from_slice(&bytes);
            if let Ok(scan) = scan_bytes(&input, Path::new("x")) {
                let mut last = 0;
                for s in &scan.spans {
                    proptest::prop_assert!(last <= s.offset && s.offset < s.start && s.start < s.end);
                    proptest::prop_assert!(s.end as usize <= input.len());
                    last = s.end;
                    let _ = unquote(&input[s.start as usize..s.end as usize]);
                }
            }
        }
    }

    #[test]
    fn long_lines_are_measured_whole_but_kept_short() {
        let long = "x".repeat(3 * LINE_START);
        let text = format!("{SEP1}\nSubject: a\n\n{long}\n\n{SEP2}\nSubject: b\n\n{long}");
        let (m, w) = messages(text.as_bytes());
        assert_eq!(m.len(), 2);
        assert_eq!(m[0], format!("Subject: a\n\n{long}\n").into_bytes());
        assert_eq!(m[1], format!("Subject: b\n\n{long}").into_bytes());
        assert!(w[0].contains("middle of a line"), "{w:?}");
        let mut reader = std::io::BufReader::with_capacity(16, long.as_bytes());
        let mut line = Vec::new();
        let (n, newline) = read_line_start(&mut reader, &mut line).unwrap();
        assert_eq!(
            (n as usize, newline, line.len()),
            (long.len(), false, LINE_START)
        );
    }

    #[test]
    fn unquote_leaves_unquoted_text_borrowed() {
        assert!(matches!(unquote(b"a\nb\n"), Cow::Borrowed(_)));
        assert_eq!(
            &*unquote(b">From a\n>>From b\n>Fromage"),
            b"From a\n>From b\n>Fromage"
        );
    }
}
