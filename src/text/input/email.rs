//! RFC 822 / MIME email: recognition and parsing with `mail-parser`.
//!
//! Text and HTML parts are decoded (charsets, quoted-printable, base64; HTML turned into text by
//! mail-parser), attachments are ignored. Subject, From and To are returned separately so that
//! the pipeline can give them header-prefixed features.

use mail_parser::{Address, MessageParser, MessagePart, PartType};

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

/// True when the bytes start like a mail message: an mbox `From ` line, or a header field
/// that only mail has (`Subject: …`, `Received: …`), as a message of one header starts.
pub fn starts_like_email(bytes: &[u8]) -> bool {
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or(bytes);
    if first.starts_with(b"From ") {
        return true;
    }
    first.iter().position(|&b| b == b':').is_some_and(|colon| {
        let name = String::from_utf8_lossy(&first[..colon]).to_ascii_lowercase();
        MAIL_HEADERS.contains(&name.as_str())
    })
}

/// Parses a message; `None` when mail-parser cannot make one of it. Text parts nested deeper
/// than `max_depth` multipart levels are left out and counted in
/// [`Document::skipped_deep_parts`]; mail-parser builds the tree iteratively, so parsing stays
/// linear in the input however deep the nesting.
///
/// With `html_text`, an HTML part is read by [`super::html::to_text`] (its title, and its
/// words kept apart at block-level tags); without, by mail-parser's own conversion, which joins
/// the words on both sides of a tag (what models written before it read).
pub fn parse(bytes: &[u8], max_depth: usize, html_text: bool) -> Option<Document> {
    parse_with(parser(), bytes, max_depth, html_text)
}

/// The parser that reads only what [`parse`] uses: the MIME fields that find and decode the
/// text parts (Content-Type, Content-Disposition, Content-Transfer-Encoding), Subject and the
/// address fields; every other field is skipped unparsed. mail-parser's default parses every
/// field it knows, and a message's `Received:` trail alone took 11% of a server's time per
/// classified mail (profiled); what [`parse`] returns is the same (tested on every fixture mail
/// against the default parser).
fn parser() -> &'static MessageParser {
    static PARSER: std::sync::OnceLock<MessageParser> = std::sync::OnceLock::new();
    PARSER.get_or_init(|| {
        MessageParser::new()
            .with_minimal_headers()
            .default_header_ignore()
    })
}

fn parse_with(
    parser: &MessageParser,
    bytes: &[u8],
    max_depth: usize,
    html_text: bool,
) -> Option<Document> {
    let message = parser.parse(bytes)?;
    let depths = part_depths(&message.parts);
    let (fields, own_label) = other_fields(&message);
    let subject = message.subject().unwrap_or_default();
    let headers = EmailHeaders {
        subject: untagged(subject, own_label.as_deref()).to_string(),
        from: addresses(message.from()),
        to: addresses(message.to()),
        fields,
    };
    let mut body = String::with_capacity(bytes.len());
    body.push_str(&headers.subject);
    let mut skipped_deep_parts = 0;
    for (i, &id) in message.text_body.iter().enumerate() {
        if depths.get(id as usize).is_some_and(|&d| d > max_depth) {
            skipped_deep_parts += 1;
            continue;
        }
        let html = match message.part(id).map(|p| &p.body) {
            Some(PartType::Html(html)) if html_text => Some(super::html::to_text(html)),
            _ => None,
        };
        if let Some(text) = html.map(Into::into).or_else(|| message.body_text(i)) {
            body.push('\n');
            body.push_str(&text);
        }
    }
    Some(Document {
        kind: DocumentKind::Email,
        body,
        headers: Some(headers),
        skipped_deep_parts,
    })
}

/// The `Message-ID` of a message's header as mail-parser reads it (folded lines joined, the
/// angle brackets and comments taken off); `None` when the header has none.
///
/// This keeps mail-parser's full parser: it is part of a message's identity in the decision log,
/// and a field before `Message-ID` that the full parser misreads can hide it (a `Date:` of
/// `05 Jul 01 4:00:55 PM` in one fixture spam), which a parser skipping that field would find.
pub fn message_id(bytes: &[u8]) -> Option<String> {
    MessageParser::new()
        .parse_headers(bytes)?
        .message_id()
        .map(str::to_string)
}

/// The multipart nesting depth of every part (the root is 0, its children 1, ...), found with
/// an explicit stack so that a crafted 100,000-deep message cannot overflow the call stack.
/// Parts not reachable from the root keep depth 0.
fn part_depths(parts: &[MessagePart<'_>]) -> Vec<usize> {
    let mut depth = vec![0; parts.len()];
    let mut seen = vec![false; parts.len()];
    let mut stack = vec![0usize];
    while let Some(id) = stack.pop() {
        let Some(part) = parts.get(id) else { continue };
        if std::mem::replace(&mut seen[id], true) {
            continue; // a malformed tree that refers to a part twice
        }
        if let PartType::Multipart(children) = &part.body {
            let below = depth[id] + 1;
            for &child in children {
                if let Some(d) = depth.get_mut(child as usize) {
                    *d = below;
                    stack.push(child as usize);
                }
            }
        }
    }
    depth
}

/// The names of the fields `cwtext filter` adds start with this (lowercased): they are the
/// classifier's own earlier verdict, not part of the message.
const OWN_FIELD_PREFIX: &str = "x-cwtext-";

/// The fields of the message's own header other than Subject, From and To (which
/// [`EmailHeaders`] holds parsed): lowercased name and raw value with its folding and runs of
/// white space made single spaces. Raw, because the parser skips most fields unparsed (see
/// [`parser`]) and a field's words are what is wanted; encoded words stay encoded (the same
/// encoded text gives the same features).
///
/// The fields `cwtext filter` added are left out, so that a filtered message reads as it did
/// before (a model must not learn its own verdicts back from a refiled message, as bogofilter
/// skips its X-Bogosity line); the value of the label field is returned apart, to take the
/// filter's `[label] ` tag off the Subject.
fn other_fields(message: &mail_parser::Message<'_>) -> (Vec<(String, String)>, Option<String>) {
    use mail_parser::HeaderName;
    let Some(root) = message.parts.first() else {
        return (Vec::new(), None);
    };
    let raw = message.raw_message();
    let mut own_label = None;
    let mut fields = Vec::with_capacity(root.headers.len());
    for h in &root.headers {
        if matches!(
            h.name,
            HeaderName::Subject | HeaderName::From | HeaderName::To
        ) {
            continue;
        }
        let Some(value) = raw.get(h.offset_start as usize..h.offset_end as usize) else {
            continue;
        };
        let name = h.name.as_str().to_ascii_lowercase();
        if !name.bytes().all(|b| b.is_ascii_graphic()) {
            // Not a field (RFC 5322 names are printable ASCII): mail-parser reads an mbox
            // `From ` line as one named up to its first colon. Return-Path holds its sender.
            continue;
        }
        if let Some(own) = name.strip_prefix(OWN_FIELD_PREFIX) {
            if own == "label" {
                // Decoded as the Subject is (a label that is not ASCII is an encoded word).
                let decoded = mail_parser::parsers::MessageStream::new(value).parse_unstructured();
                own_label = decoded.as_text().map(str::to_string);
            }
            continue;
        }
        let mut joined = String::with_capacity(value.len());
        for word in super::decode::lossy_utf8(value).split_ascii_whitespace() {
            if !joined.is_empty() {
                joined.push(' ');
            }
            joined.push_str(word);
        }
        fields.push((name, joined));
    }
    (fields, own_label)
}

/// `subject` without the `[label] ` tag `cwtext filter --tag` put in front of it, when the
/// message's label field names that label.
fn untagged<'a>(subject: &'a str, own_label: Option<&str>) -> &'a str {
    let Some(label) = own_label else {
        return subject;
    };
    // Spaces inside the brackets: how mail-parser reads `[=?UTF-8?Q?B=C3=BCro?=]`, the tag
    // of a non-ASCII label as the filter wrote it at first.
    let Some(rest) = subject
        .strip_prefix('[')
        .and_then(|s| s.trim_start_matches(' ').strip_prefix(label))
        .and_then(|s| s.trim_start_matches(' ').strip_prefix(']'))
    else {
        return subject;
    };
    rest.strip_prefix(' ').unwrap_or(rest)
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
        let doc = parse(MAIL, 32, true).unwrap();
        let h = doc.headers.unwrap();
        assert_eq!(h.subject, "Café meeting");
        assert_eq!(h.from, vec!["alice@example.com"]);
        assert_eq!(h.to, vec!["bob@lists.example.org", "carol@example.net"]);
        assert!(doc.body.contains("See you at the café."), "{}", doc.body);
        assert!(!doc.body.contains("secretattachment"));
    }

    /// A text part under `levels` nested multiparts, and one at the top.
    fn nested(levels: usize) -> Vec<u8> {
        let mut m = String::from(
            "From: a@b.com\nTo: c@d.com\nSubject: deep\nContent-Type: multipart/mixed; boundary=\"b0\"\n\n\
             --b0\nContent-Type: text/plain\n\ntop part\n",
        );
        for i in 0..levels {
            m += &format!(
                "--b{i}\nContent-Type: multipart/mixed; boundary=\"b{}\"\n\n",
                i + 1
            );
        }
        m += &format!("--b{levels}\nContent-Type: text/plain\n\ndeep part\n--b{levels}--\n");
        for i in (0..levels).rev() {
            m += &format!("--b{i}--\n");
        }
        m.into_bytes()
    }

    #[test]
    fn parts_deeper_than_the_limit_are_skipped_and_counted() {
        // The deep text part sits under the root multipart and `levels` more: depth levels + 1.
        let mail = nested(4);
        let doc = parse(&mail, 5, true).unwrap();
        assert!(doc.body.contains("top part") && doc.body.contains("deep part"));
        assert_eq!(doc.skipped_deep_parts, 0);
        let doc = parse(&mail, 4, true).unwrap();
        assert!(doc.body.contains("top part") && !doc.body.contains("deep part"));
        assert_eq!(doc.skipped_deep_parts, 1);
    }

    #[test]
    fn a_hundred_thousand_levels_do_not_overflow_the_stack() {
        let doc = parse(&nested(100_000), 32, true).unwrap();
        assert!(doc.body.contains("top part"));
        assert_eq!(doc.skipped_deep_parts, 1);
    }

    /// Every mail under tests/fixtures, and the hand-made ones above: the parser that skips the
    /// fields [`parse`] does not use gives what mail-parser's full default parser gives.
    #[test]
    fn skipping_unused_fields_changes_nothing() {
        fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    files(&p, out);
                } else {
                    out.push(p);
                }
            }
        }
        let mut paths = Vec::new();
        files(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"),
            &mut paths,
        );
        paths.sort();
        let mut mails: Vec<(String, Vec<u8>)> = paths
            .iter()
            .map(|p| (p.display().to_string(), std::fs::read(p).unwrap()))
            .filter(|(_, b)| looks_like_email(b))
            .collect();
        mails.push(("MAIL".into(), MAIL.to_vec()));
        mails.push(("nested(6)".into(), nested(6)));
        assert!(mails.len() >= 80, "only {} fixture mails", mails.len());
        let full = MessageParser::default();
        for (name, bytes) in &mails {
            for depth in [2, 32] {
                let a = parse_with(&full, bytes, depth, true);
                let b = parse(bytes, depth, true);
                assert_eq!(
                    a.as_ref()
                        .map(|d| (&d.body, &d.headers, d.skipped_deep_parts)),
                    b.as_ref()
                        .map(|d| (&d.body, &d.headers, d.skipped_deep_parts)),
                    "{name}"
                );
            }
        }
    }

    /// The other fields of the message's own header come in order, named in lower case, with
    /// folded lines joined; those of its parts do not come (they describe the part).
    #[test]
    fn other_header_fields_come_raw_and_unfolded() {
        let doc = parse(MAIL, 32, true).unwrap();
        let fields = doc.headers.unwrap().fields;
        let want = [
            ("return-path", "<alice@Example.COM>"),
            ("mime-version", "1.0"),
            ("content-type", "multipart/alternative; boundary=\"b1\""),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        assert_eq!(fields, want);
        let folded =
            b"Received: from a.example.org\r\n\tby b.example.net;\r\n  Tue, 1 Oct 2002\r\n\
List-Id: Alpha <alpha.lists.example.org>\r\nSubject: s\r\nFrom: x@y.z\r\n\r\nbody\r\n";
        let fields = parse(folded, 32, true).unwrap().headers.unwrap().fields;
        assert_eq!(
            fields,
            vec![
                (
                    "received".to_string(),
                    "from a.example.org by b.example.net; Tue, 1 Oct 2002".to_string()
                ),
                (
                    "list-id".to_string(),
                    "Alpha <alpha.lists.example.org>".to_string()
                ),
            ]
        );
    }

    /// What `cwtext filter` adds is not the message: its fields are left out, and its
    /// `[label] ` tag comes off the Subject when the label field names that label (also in the
    /// spaced form mail-parser reads an encoded tag in), not otherwise.
    #[test]
    fn the_filters_own_fields_and_subject_tag_are_left_out() {
        let mail = |subject: &str, label: &str| {
            format!(
                "From: x@y.z\nSubject: {subject}\nX-Cwtext-Label: {label}\nX-Cwtext-Probability: 0.9\n\
X-Mailer: m\n\nbody\n"
            )
        };
        let read = |m: String| parse(m.as_bytes(), 32, true).unwrap().headers.unwrap();
        let h = read(mail("[spam] cheap pills", "spam"));
        assert_eq!(h.subject, "cheap pills");
        assert_eq!(h.fields, vec![("x-mailer".to_string(), "m".to_string())]);
        assert_eq!(read(mail("[spam]", "spam")).subject, "");
        assert_eq!(
            read(mail(
                "[=?UTF-8?Q?B=C3=BCro?=] Re: x",
                "=?UTF-8?Q?B=C3=BCro?="
            ))
            .subject,
            "Re: x"
        );
        assert_eq!(
            read(mail(
                "=?UTF-8?Q?=5BB=C3=BCro=5D?= Re: x",
                "=?UTF-8?Q?B=C3=BCro?="
            ))
            .subject,
            "Re: x"
        );
        // A bracketed subject of the sender's own, or another label's tag, stays.
        assert_eq!(read(mail("[ham] hello", "spam")).subject, "[ham] hello");
        assert_eq!(
            read(mail("[spammy] hello", "spam")).subject,
            "[spammy] hello"
        );
    }

    #[test]
    fn html_parts_become_text() {
        let mail = b"From: a@b.com\nSubject: hi\nContent-Type: text/html\n\n<html><body><p>Buy <b>cheap</b> pills</p><script>x</script></body></html>\n";
        let doc = parse(mail, 32, true).unwrap();
        assert!(doc.body.contains("Buy cheap pills"), "{}", doc.body);
        assert!(!doc.body.contains("<b>"));
        // Table cells and list items: words apart as a reader sees them (html_text), joined by
        // mail-parser's own conversion (what models written before it read).
        let table = b"From: a@b.com\nSubject: offer\nContent-Type: text/html\n\n<html><head><title>Deal</title></head><body><table><tr><td>Unsubscribe</td><td>Privacy</td></tr></table><ul><li>Pills</li><li>Loans</li></ul></body></html>\n";
        let words = |html_text| {
            let body = parse(table, 32, html_text).unwrap().body;
            body.split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            words(true),
            ["offer", "Deal", "Unsubscribe", "Privacy", "Pills", "Loans"]
        );
        assert_eq!(words(false), ["offer", "UnsubscribePrivacyPillsLoans"]);
    }
}
