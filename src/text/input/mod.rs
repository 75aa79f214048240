//! From raw bytes to a [`Document`]: the first stage of every command.
//!
//! Files arrive in any encoding and as plain text or RFC 822 mail, possibly compressed
//! ([`compressed`]: gzip, bzip2, xz, zstd). [`decode`] finds the encoding and refuses binary data; [`email`] recognises and parses mail; [`html`] reads an HTML page or part as its text. What comes out is the text to
//! tokenise plus, for mail, the header fields that yield header-prefixed features.

pub mod compressed;
pub mod decode;
pub mod email;
pub mod html;

use std::path::Path;

use crate::error::{Error, Result};

/// The header fields of an email that become features of their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmailHeaders {
    pub subject: String,
    /// Sender addresses, lowercased (`user@example.com`).
    pub from: Vec<String>,
    /// Recipient addresses, lowercased.
    pub to: Vec<String>,
    /// Every other field of the message's own header, in order: its name lowercased and its
    /// value as written (folded lines joined, encoded words left encoded), for
    /// [`crate::text::pipeline::PipelineConfig::header_fields`].
    pub fields: Vec<(String, String)>,
}

/// How the input was understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    /// Plain text in the named encoding.
    Text { encoding: &'static str },
    /// An HTML page in the named encoding, read as its text ([`html::to_text`]).
    Html { encoding: &'static str },
    /// An RFC 822 / MIME message.
    Email,
}

/// One decoded input document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub kind: DocumentKind,
    /// The text to tokenise: the whole file for plain text; subject and text parts for mail.
    pub body: String,
    pub headers: Option<EmailHeaders>,
    /// Mail text parts left out because they were nested deeper than the MIME depth limit.
    pub skipped_deep_parts: usize,
}

/// How one input is read: the limits that keep a single document's cost bounded, and how HTML
/// is read (from the model's [`crate::text::pipeline::PipelineConfig::input_limits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLimits {
    /// Bytes read from a file; the rest is cut off with a warning.
    pub max_bytes: usize,
    /// Multipart nesting levels of mail; text parts deeper down are skipped with a warning.
    pub max_mime_depth: usize,
    /// An HTML page, and a mail's HTML part, is read as its text ([`html::to_text`]); without,
    /// a page is read as it is (markup included) and an HTML part by mail-parser's conversion.
    pub html_text: bool,
}

/// Why bytes could not be turned into a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// Binary data; the string says what it looks like.
    Binary(String),
}

/// Parses a file's bytes: email when it looks like mail (text parts at most `max_mime_depth`
/// multipart levels deep), otherwise decoded plain text, or an HTML page's text
/// ([`html::is_html`], with `html_text`). `max_bytes` is the caller's to apply.
pub fn parse_bytes(bytes: &[u8], limits: InputLimits) -> std::result::Result<Document, ParseError> {
    if email::looks_like_email(bytes) {
        if let Some(doc) = email::parse(bytes, limits.max_mime_depth, limits.html_text) {
            return Ok(doc);
        }
    }
    let (body, encoding) = decode::decode_text(bytes).map_err(ParseError::Binary)?;
    let (kind, body) = if limits.html_text && html::is_html(&body) {
        (DocumentKind::Html { encoding }, html::to_text(&body))
    } else {
        (DocumentKind::Text { encoding }, body.into_owned())
    };
    Ok(Document {
        kind,
        body,
        headers: None,
        skipped_deep_parts: 0,
    })
}

/// Reads and parses one file within `limits`, naming it in any error and in the warnings that
/// say what was cut.
pub fn read_document(path: &Path, limits: InputLimits) -> Result<Document> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::new();
    file.take(limits.max_bytes as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    document_from_bytes(&bytes, path, limits)
}

/// Parses bytes read from `path` within `limits`: at most `max_bytes` of them (a warning names
/// the file when it was longer), mail parts at most `max_mime_depth` deep. Compressed bytes
/// (gzip, bzip2, xz, zstd) are first decompressed, and the limit applies to what they hold.
pub fn document_from_bytes(bytes: &[u8], path: &Path, limits: InputLimits) -> Result<Document> {
    let max = limits.max_bytes;
    if let Some((whole, warnings)) =
        compressed::decompress_within(bytes, path, max, "--max-document-bytes")?
    {
        warnings.iter().for_each(|w| log::warn!("{w}"));
        return parse_document(&whole, path, limits);
    }
    if bytes.len() > max {
        log::warn!(
            "{}: longer than {max} bytes, only the first {max} were read (--max-document-bytes)",
            path.display()
        );
    }
    parse_document(&bytes[..bytes.len().min(max)], path, limits)
}

/// Parses bytes read from `path`, naming it in any error and in a warning when mail parts were
/// nested too deep to be read.
fn parse_document(bytes: &[u8], path: &Path, limits: InputLimits) -> Result<Document> {
    let max_mime_depth = limits.max_mime_depth;
    let doc = parse_bytes(bytes, limits).map_err(|ParseError::Binary(reason)| Error::Binary {
        path: path.to_path_buf(),
        reason,
    })?;
    if doc.skipped_deep_parts > 0 {
        log::warn!(
            "{}: {} text part(s) nested more than {max_mime_depth} MIME levels deep were skipped (--max-mime-depth)",
            path.display(),
            doc.skipped_deep_parts
        );
    }
    Ok(doc)
}
