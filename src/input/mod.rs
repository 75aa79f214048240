//! From raw bytes to a [`Document`]: the first stage of every command.
//!
//! Files arrive in any encoding and as plain text or RFC 822 mail. [`decode`] finds the encoding
//! and refuses binary data; [`email`] recognises and parses mail. What comes out is the text to
//! tokenise plus, for mail, the header fields that yield header-prefixed features.

pub mod decode;
pub mod email;

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
}

/// How the input was understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    /// Plain text in the named encoding.
    Text { encoding: &'static str },
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
}

/// Why bytes could not be turned into a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// Binary data; the string says what it looks like.
    Binary(String),
}

/// Parses a file's bytes: email when it looks like mail, otherwise decoded plain text.
pub fn parse_bytes(bytes: &[u8]) -> std::result::Result<Document, ParseError> {
    if email::looks_like_email(bytes) {
        if let Some(doc) = email::parse(bytes) {
            return Ok(doc);
        }
    }
    let (body, encoding) = decode::decode_text(bytes).map_err(ParseError::Binary)?;
    Ok(Document {
        kind: DocumentKind::Text { encoding },
        body: body.into_owned(),
        headers: None,
    })
}

/// Reads and parses one file, naming it in any error; at most `max_bytes` are read (a warning
/// says when a file was cut).
pub fn read_document(path: &Path, max_bytes: usize) -> Result<Document> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::new();
    file.take(max_bytes as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    limit_bytes(&mut bytes, max_bytes, path);
    parse_document(&bytes, path)
}

/// Cuts `bytes` to `max_bytes`, with a warning naming `path`.
pub fn limit_bytes(bytes: &mut Vec<u8>, max_bytes: usize, path: &Path) {
    if bytes.len() > max_bytes {
        bytes.truncate(max_bytes);
        log::warn!(
            "{}: longer than {max_bytes} bytes, only the first {max_bytes} were read (--max-document-bytes)",
            path.display()
        );
    }
}

/// Parses bytes read from `path`, naming it in any error.
pub fn parse_document(bytes: &[u8], path: &Path) -> Result<Document> {
    parse_bytes(bytes).map_err(|ParseError::Binary(reason)| Error::Binary {
        path: path.to_path_buf(),
        reason,
    })
}
