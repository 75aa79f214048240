//! RFC 822 / MIME email: recognition and parsing with `mail-parser`.
//!
//! Text and HTML parts are decoded (charsets, quoted-printable, base64; HTML turned into text by
//! mail-parser), attachments are ignored. Subject, From and To are returned separately so that
//! the pipeline can give them header-prefixed features.

use mail_parser::{Address, MessageParser};

use super::{Document, DocumentKind, EmailHeaders};

/// Header names that only mail has; two of them at the top of a file make it an email.
const MAIL_HEADERS: &[&str] = &[
    "from",
    "to",
    "cc",
    "subject",
    "date",
    "received",
    "return-path",
    "message-id",
    "mime-version",
    "content-type",
    "content-transfer-encoding",
    "delivered-to",
    "reply-to",
    "sender",
    "x-mailer",
    "in-reply-to",
    "references",
    "list-id",
    "envelope-to",
];

/// True when the bytes start with a mail header block (optionally after an mbox `From ` line).
pub fn looks_like_email(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(16 * 1024)];
    let mut known = 0;
    for (i, line) in head.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            break;
        }
        if i == 0 && line.starts_with(b"From ") {
            continue;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            continue; // folded continuation of the previous header
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return false;
        };
        let name = &line[..colon];
        if name.is_empty() || !name.iter().all(|&b| b.is_ascii_graphic()) {
            return false;
        }
        let name = String::from_utf8_lossy(name).to_ascii_lowercase();
        if MAIL_HEADERS.contains(&name.as_str()) {
            known += 1;
            if known >= 2 {
                return true;
            }
        }
    }
    false
}

/// Parses a message; `None` when mail-parser cannot make one of it.
pub fn parse(bytes: &[u8]) -> Option<Document> {
    let message = MessageParser::default().parse(bytes)?;
    let headers = EmailHeaders {
        subject: message.subject().unwrap_or_default().to_string(),
        from: addresses(message.from()),
        to: addresses(message.to()),
    };
    let mut body = String::with_capacity(bytes.len());
    body.push_str(&headers.subject);
    for i in 0..message.text_body_count() {
        if let Some(text) = message.body_text(i) {
            body.push('\n');
            body.push_str(&text);
        }
    }
    Some(Document {
        kind: DocumentKind::Email,
        body,
        headers: Some(headers),
    })
}

fn addresses(address: Option<&Address<'_>>) -> Vec<String> {
    address
        .map(|a| {
            a.iter()
                .filter_map(|addr| addr.address())
                .map(|s| s.trim().to_lowercase())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIL: &[u8] = b"From someone@example.com Mon Jan  1 00:00:00 2002\r\n\
Return-Path: <alice@Example.COM>\r\n\
From: Alice <alice@Example.COM>\r\n\
To: bob@lists.example.org, carol@example.net\r\n\
Subject: =?iso-8859-1?q?Caf=E9_meeting?=\r\n\
MIME-Version: 1.0\r\n\
Content-Type: multipart/alternative; boundary=\"b1\"\r\n\
\r\n\
--b1\r\n\
Content-Type: text/plain; charset=iso-8859-1\r\n\
Content-Transfer-Encoding: quoted-printable\r\n\
\r\n\
See you at the caf=E9.\r\n\
--b1\r\n\
Content-Type: application/octet-stream\r\n\
Content-Disposition: attachment; filename=\"x.bin\"\r\n\
Content-Transfer-Encoding: base64\r\n\
\r\n\
c2VjcmV0YXR0YWNobWVudA==\r\n\
--b1--\r\n";

    #[test]
    fn recognises_mail_but_not_prose() {
        assert!(looks_like_email(MAIL));
        assert!(!looks_like_email(
            b"Subject: my essay\n\nIt was a dark night."
        ));
        assert!(!looks_like_email(
            b"Dear diary: today was fine.\nTo: nobody"
        ));
    }

    #[test]
    fn decodes_headers_and_text_parts_and_skips_attachments() {
        let doc = parse(MAIL).unwrap();
        let h = doc.headers.unwrap();
        assert_eq!(h.subject, "Café meeting");
        assert_eq!(h.from, vec!["alice@example.com"]);
        assert_eq!(h.to, vec!["bob@lists.example.org", "carol@example.net"]);
        assert!(doc.body.contains("See you at the café."), "{}", doc.body);
        assert!(!doc.body.contains("secretattachment"));
    }

    #[test]
    fn html_parts_become_text() {
        let mail = b"From: a@b.com\nSubject: hi\nContent-Type: text/html\n\n<html><body><p>Buy <b>cheap</b> pills</p><script>x</script></body></html>\n";
        let doc = parse(mail).unwrap();
        assert!(doc.body.contains("Buy cheap pills"), "{}", doc.body);
        assert!(!doc.body.contains("<b>"));
    }
}
