//! The delivery filter (`cwtext filter`): one message in, the same message out with the decision
//! in added header fields, for procmail, maildrop, Sieve, Postfix and imapfilter to branch on.
//!
//! What mail filters people already run do (bogofilter `-p`, SpamAssassin's `spamc`, POPFile):
//! the message passes through, every byte as it came, and the verdict is added to the header.
//! Here that is three fields at the end of the header block,
//!
//! ```text
//! X-Cwtext-Label: spam
//! X-Cwtext-Probability: 0.9731
//! X-Cwtext-Runner-Up: ham 0.0269
//! ```
//!
//! plus `X-Cwtext-Note` when the decision rests on the model's prior alone (a message without a
//! single word) and `X-Cwtext-Error` when no decision could be made. **A filter never loses
//! mail**: whatever goes wrong (no model, a model that does not load, a message that cannot be
//! parsed, a panic in classification), [`filter_message`] still returns every input byte, with
//! the error in a header field. The added lines use the message's own line ending (CRLF when
//! its first line ends so), and nothing else changes, 8-bit bodies included, unless a subject
//! tag is asked for.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::jobs::batch::classify_bytes_with;
use crate::learn::probability::Method;
use crate::model::Model;
use crate::text::pipeline::Pipeline;

/// The prefix of every added field.
pub const FIELD_PREFIX: &str = "X-Cwtext";

/// How the filter decides and what it adds.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterOptions {
    /// Below this probability of the best label the message is unsure (`None`: never).
    pub min_prob: Option<f64>,
    /// The label unsure messages get (`_unsure`, the folder `label --min-prob` uses).
    pub unsure_label: String,
    /// Prefix the Subject with `[label] ` (added when the message has none).
    pub subject_tag: bool,
    /// How probabilities are computed.
    pub method: Method,
}

impl Default for FilterOptions {
    fn default() -> Self {
        FilterOptions {
            min_prob: None,
            unsure_label: "_unsure".into(),
            subject_tag: false,
            method: Method::Exact,
        }
    }
}

/// What the filter decided about a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The best label (an index into the model's labels) with its probability, and the
    /// runner-up when the model has more than one label.
    Label {
        label: usize,
        probability: f64,
        runner_up: Option<(usize, f64)>,
        /// The message had no word: the decision is the model's prior (its training base rates).
        prior_only: bool,
    },
    /// The best label's probability was below `min_prob`.
    Unsure {
        label: usize,
        probability: f64,
        runner_up: Option<(usize, f64)>,
        prior_only: bool,
    },
    /// No decision: the message passes with the error in a header field.
    Error(String),
}

/// The exit code of an unsure message.
pub const EXIT_UNSURE: u8 = 100;
/// The exit code when no decision could be made (the message still passed through).
pub const EXIT_ERROR: u8 = 101;
/// Labels past this index share its exit code.
pub const MAX_LABEL_EXIT: usize = 99;

impl Verdict {
    /// The exit code `cwtext filter` gives (and the server's `X-Cwtext-Exit-Code`): the label's
    /// index (labels past 99 share 99), [`EXIT_UNSURE`] or [`EXIT_ERROR`].
    pub fn exit_code(&self) -> u8 {
        match self {
            Verdict::Label { label, .. } => (*label).min(MAX_LABEL_EXIT) as u8,
            Verdict::Unsure { .. } => EXIT_UNSURE,
            Verdict::Error(_) => EXIT_ERROR,
        }
    }
}

/// The filtered message and the verdict.
#[derive(Debug, Clone)]
pub struct Filtered {
    pub message: Vec<u8>,
    pub verdict: Verdict,
}

/// Classifies `message` with `model` (or passes it with the error when the model could not be
/// loaded) and returns it with the decision added. Never fails and never drops a byte.
pub fn filter_message(
    model: Result<&Model, String>,
    message: &[u8],
    options: &FilterOptions,
) -> Filtered {
    let with_pipeline = model.and_then(|m| {
        Pipeline::new(m.pipeline())
            .map(|p| (m, p))
            .map_err(|e| e.to_string())
    });
    match with_pipeline {
        Ok((m, mut pipeline)) => filter_message_with(Ok((m, &mut pipeline)), message, options),
        Err(e) => filter_message_with(Err(e), message, options),
    }
}

/// [`filter_message`] with a pipeline made for the model (a server keeps a few rather than
/// building one per message). Never fails and never drops a byte.
pub fn filter_message_with(
    model: Result<(&Model, &mut Pipeline), String>,
    message: &[u8],
    options: &FilterOptions,
) -> Filtered {
    let labels: &[String] = match &model {
        Ok((m, _)) => m.labels(),
        Err(_) => &[],
    };
    let verdict = match model {
        Err(e) => Verdict::Error(e),
        Ok((model, pipeline)) => match catch_unwind(AssertUnwindSafe(|| {
            decide(model, pipeline, message, options)
        })) {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => Verdict::Error(e),
            Err(_) => {
                Verdict::Error("internal error while classifying (a bug: please report it)".into())
            }
        },
    };
    let fields = header_fields(&verdict, labels, &options.unsure_label);
    let tag = match (&verdict, options.subject_tag) {
        (Verdict::Label { label, .. }, true) => Some(labels[*label].clone()),
        (Verdict::Unsure { .. }, true) => Some(options.unsure_label.clone()),
        _ => None,
    };
    Filtered {
        message: add_fields(message, &fields, tag.as_deref()),
        verdict,
    }
}

/// The decision for one message.
fn decide(
    model: &Model,
    pipeline: &mut Pipeline,
    message: &[u8],
    options: &FilterOptions,
) -> Result<Verdict, String> {
    let path = std::path::Path::new("<stdin>");
    let prediction = classify_bytes_with(model, pipeline, message, path, options.method)
        .map_err(|e| e.to_string())?;
    let prior_only = prediction.prior_only;
    let probabilities = &prediction.distribution.probabilities;
    let label = prediction.label;
    let probability = probabilities[label];
    let runner_up = (0..probabilities.len())
        .filter(|&i| i != label)
        .max_by(|&a, &b| {
            probabilities[a]
                .total_cmp(&probabilities[b])
                .then(b.cmp(&a))
        })
        .map(|i| (i, probabilities[i]));
    Ok(match prediction.is_unsure(options.min_prob) {
        true => Verdict::Unsure {
            label,
            probability,
            runner_up,
            prior_only,
        },
        false => Verdict::Label {
            label,
            probability,
            runner_up,
            prior_only,
        },
    })
}

/// The header fields for a verdict, as (name, value) pairs; values are ASCII (labels that are
/// not are encoded as RFC 2047 encoded words).
pub fn header_fields(verdict: &Verdict, labels: &[String], unsure: &str) -> Vec<(String, String)> {
    let field = |name: &str, value: String| (format!("{FIELD_PREFIX}-{name}"), value);
    let decided = |shown: &str,
                   label: usize,
                   probability: f64,
                   runner_up: &Option<(usize, f64)>,
                   prior_only: bool| {
        let mut fields = vec![
            field("Label", encode_word(shown)),
            field("Probability", format!("{probability:.4}")),
        ];
        if shown != labels[label] {
            fields.push(field("Best", encode_word(&labels[label])));
        }
        if let Some((r, p)) = runner_up {
            fields.push(field(
                "Runner-Up",
                format!("{} {p:.4}", encode_word(&labels[*r])),
            ));
        }
        if prior_only {
            fields.push(field(
                "Note",
                "no words: the label rests on the model's prior alone".into(),
            ));
        }
        fields
    };
    match verdict {
        Verdict::Label {
            label,
            probability,
            runner_up,
            prior_only,
        } => decided(
            &labels[*label],
            *label,
            *probability,
            runner_up,
            *prior_only,
        ),
        Verdict::Unsure {
            label,
            probability,
            runner_up,
            prior_only,
        } => decided(unsure, *label, *probability, runner_up, *prior_only),
        Verdict::Error(e) => vec![field("Error", one_line(e))],
    }
}

/// A label as a header value: as it is when it is printable ASCII without `=?`, otherwise an
/// RFC 2047 "Q" encoded word (hand-written: a dozen lines against a dependency for one use).
fn encode_word(text: &str) -> String {
    let plain = text.bytes().all(|b| (0x21..0x7f).contains(&b) || b == b' ')
        && !text.contains("=?")
        && !text.starts_with(' ')
        && !text.is_empty();
    if plain {
        return text.to_string();
    }
    let mut out = String::from("=?UTF-8?Q?");
    for b in text.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'!' | b'*' | b'+' | b'-' | b'/' => {
                out.push(b as char)
            }
            b' ' => out.push('_'),
            _ => out.push_str(&format!("={b:02X}")),
        }
    }
    out.push_str("?=");
    out
}

/// An error message on one header line: control characters become spaces, at most 300 bytes.
fn one_line(text: &str) -> String {
    let mut s: String = text
        .chars()
        .map(|c| {
            if c.is_control() || !c.is_ascii() {
                ' '
            } else {
                c
            }
        })
        .collect();
    if s.len() > 300 {
        s.truncate(297);
        s.push_str("...");
    }
    s
}

/// Where the header block ends in `message`: the offset of the empty line that separates it
/// from the body (or of the end, when there is no body), and the line ending to use. `None`
/// when the message does not start with a header field (plain text).
fn header_end(message: &[u8]) -> Option<(usize, &'static [u8])> {
    // The first line must look like a field (name: value) or an mbox "From " line.
    let first_end = message
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(message.len());
    let first = &message[..first_end];
    let is_field = first.iter().position(|&b| b == b':').is_some_and(|colon| {
        colon > 0 && first[..colon].iter().all(|&b| (0x21..0x7f).contains(&b))
    });
    if !is_field && !first.starts_with(b"From ") {
        return None;
    }
    let crlf = first.ends_with(b"\r");
    let eol: &'static [u8] = if crlf { b"\r\n" } else { b"\n" };
    // The first empty line (LF LF, or LF CR LF): the fields go before it.
    let mut line_start = 0;
    while line_start < message.len() {
        let end = message[line_start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(message.len(), |p| line_start + p);
        let line = &message[line_start..end];
        if line.is_empty() || line == b"\r" {
            return Some((line_start, eol));
        }
        line_start = end + 1;
    }
    Some((message.len(), eol))
}

/// `message` with `fields` added at the end of its header block and, with `tag`, its Subject
/// prefixed by `[tag] `. Every other byte is kept. A message without a header block (plain
/// text) gets the fields and an empty line in front, so that it becomes one.
pub fn add_fields(message: &[u8], fields: &[(String, String)], tag: Option<&str>) -> Vec<u8> {
    let Some((end, eol)) = header_end(message) else {
        let eol: &[u8] = if message.windows(2).any(|w| w == b"\r\n") {
            b"\r\n"
        } else {
            b"\n"
        };
        let mut out = Vec::with_capacity(message.len() + 200);
        write_fields(&mut out, fields, eol);
        if let Some(tag) = tag {
            out.extend_from_slice(format!("Subject: {}", subject_tag(tag)).as_bytes());
            out.extend_from_slice(eol);
        }
        out.extend_from_slice(eol);
        out.extend_from_slice(message);
        return out;
    };
    let mut out = Vec::with_capacity(message.len() + 200);
    let mut header = &message[..end];
    let mut tagged = false;
    if let Some(tag) = tag {
        if let Some(at) = subject_value_start(header) {
            let prefix = format!("{} ", subject_tag(tag));
            out.extend_from_slice(&header[..at]);
            if !header[at..].starts_with(prefix.as_bytes()) {
                out.extend_from_slice(prefix.as_bytes());
            }
            header = &header[at..];
            tagged = true;
        }
    }
    out.extend_from_slice(header);
    // A header block that ends without a line ending (no body, no final newline) gets one.
    if !header.is_empty() && !header.ends_with(b"\n") {
        out.extend_from_slice(eol);
    }
    write_fields(&mut out, fields, eol);
    if let (Some(tag), false) = (tag, tagged) {
        out.extend_from_slice(format!("Subject: {}", subject_tag(tag)).as_bytes());
        out.extend_from_slice(eol);
    }
    out.extend_from_slice(&message[end..]);
    out
}

/// `[tag]`, as one encoded word when the tag is not ASCII (`=?UTF-8?Q?=5BB=C3=BCro=5D?=`):
/// an encoded word must stand apart from other text to be decoded (RFC 2047, section 5), so
/// the brackets go inside it.
fn subject_tag(tag: &str) -> String {
    encode_word(&format!("[{tag}]"))
}

fn write_fields(out: &mut Vec<u8>, fields: &[(String, String)], eol: &[u8]) {
    for (name, value) in fields {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(eol);
    }
}

/// The offset in `header` where the first Subject field's value starts (after `Subject:` and
/// one optional space).
fn subject_value_start(header: &[u8]) -> Option<usize> {
    let mut line_start = 0;
    while line_start < header.len() {
        let line = &header[line_start..];
        if line.len() >= 8 && line[..8].eq_ignore_ascii_case(b"subject:") {
            let mut at = line_start + 8;
            if header.get(at) == Some(&b' ') {
                at += 1;
            }
            return Some(at);
        }
        match line.iter().position(|&b| b == b'\n') {
            Some(p) => line_start += p + 1,
            None => break,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Vec<(String, String)> {
        vec![("X-Cwtext-Label".into(), "spam".into())]
    }

    /// A message `cwtext filter` passed on (its fields added, its Subject tagged) gives the
    /// features it gave before: a refiled, filtered message must not teach the model its own
    /// earlier verdict. Every fixture mail, each kind of verdict, ASCII and encoded labels.
    #[test]
    fn a_filtered_message_has_the_features_of_the_original() {
        use crate::text::input::parse_bytes;
        use crate::text::pipeline::PipelineConfig;
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mail");
        let mut pipeline = Pipeline::new(&PipelineConfig::default()).unwrap();
        let mut features = |bytes: &[u8]| {
            let doc = parse_bytes(bytes, PipelineConfig::default().input_limits()).unwrap();
            pipeline
                .features(&doc)
                .map(|f| (f.indices().to_vec(), f.data().to_vec()))
        };
        let labels = vec!["spam".to_string(), "Büro".to_string()];
        let verdicts = [
            Verdict::Label {
                label: 0,
                probability: 0.97,
                runner_up: Some((1, 0.03)),
                prior_only: false,
            },
            Verdict::Label {
                label: 1,
                probability: 0.6,
                runner_up: Some((0, 0.4)),
                prior_only: false,
            },
            Verdict::Unsure {
                label: 0,
                probability: 0.51,
                runner_up: Some((1, 0.49)),
                prior_only: false,
            },
        ];
        let mut checked = 0;
        for folder in ["ham", "spam"] {
            for entry in std::fs::read_dir(fixtures.join(folder)).unwrap() {
                let message = std::fs::read(entry.unwrap().path()).unwrap();
                let before = features(&message);
                for verdict in &verdicts {
                    let fields = header_fields(verdict, &labels, "_unsure");
                    let shown = match verdict {
                        Verdict::Unsure { .. } => "_unsure",
                        Verdict::Label { label, .. } => &labels[*label],
                        Verdict::Error(_) => unreachable!(),
                    };
                    for tag in [None, Some(shown)] {
                        let filtered = add_fields(&message, &fields, tag);
                        assert_eq!(features(&filtered), before, "{verdict:?}, tag {tag:?}");
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 80 * 6);
    }

    #[test]
    fn fields_go_before_the_empty_line_and_nothing_else_changes() {
        let m = b"From: a@b\nSubject: hi\n\nbody\n\nmore\n";
        let out = add_fields(m, &fields(), None);
        assert_eq!(
            out,
            b"From: a@b\nSubject: hi\nX-Cwtext-Label: spam\n\nbody\n\nmore\n".to_vec()
        );
    }

    #[test]
    fn crlf_messages_get_crlf_fields_and_8_bit_bodies_pass() {
        let mut m = b"From: a@b\r\nSubject: hi\r\n\r\n".to_vec();
        m.extend_from_slice(&[0xe9, 0xff, 0x00, b'\r', b'\n']);
        let out = add_fields(&m, &fields(), None);
        let mut want = b"From: a@b\r\nSubject: hi\r\nX-Cwtext-Label: spam\r\n\r\n".to_vec();
        want.extend_from_slice(&[0xe9, 0xff, 0x00, b'\r', b'\n']);
        assert_eq!(out, want);
    }

    #[test]
    fn folded_fields_stay_whole_and_headers_without_body_get_a_line_end() {
        let m = b"Subject: a long\n subject\nTo: x";
        let out = add_fields(m, &fields(), None);
        assert_eq!(
            out,
            b"Subject: a long\n subject\nTo: x\nX-Cwtext-Label: spam\n".to_vec()
        );
    }

    #[test]
    fn plain_text_becomes_a_message_with_the_fields_as_its_header() {
        let m = b"just some words\nand more\n";
        let out = add_fields(m, &fields(), None);
        assert_eq!(
            out,
            b"X-Cwtext-Label: spam\n\njust some words\nand more\n".to_vec()
        );
        // A body line with a colon is still not a header: the first line decides.
        let m = b"Note that: this is text\n";
        assert!(add_fields(m, &fields(), None).starts_with(b"X-Cwtext-Label: spam\n\n"));
    }

    #[test]
    fn the_subject_tag_prefixes_the_subject_once_or_adds_one() {
        let m = b"subject: hello\nFrom: a\n\nbody\n";
        let once = add_fields(m, &fields(), Some("spam"));
        assert_eq!(
            once,
            b"subject: [spam] hello\nFrom: a\nX-Cwtext-Label: spam\n\nbody\n".to_vec()
        );
        let twice = add_fields(b"Subject: [spam] hello\n\nb\n", &[], Some("spam"));
        assert_eq!(twice, b"Subject: [spam] hello\n\nb\n".to_vec());
        let none = add_fields(b"From: a\n\nb\n", &[], Some("spam"));
        assert_eq!(none, b"From: a\nSubject: [spam]\n\nb\n".to_vec());
    }

    #[test]
    fn labels_outside_printable_ascii_are_encoded_words() {
        assert_eq!(encode_word("Work/Projects"), "Work/Projects");
        assert_eq!(encode_word("Rechnungen 2026"), "Rechnungen 2026");
        assert_eq!(encode_word("Büro"), "=?UTF-8?Q?B=C3=BCro?=");
        assert_eq!(encode_word("a\nb"), "=?UTF-8?Q?a=0Ab?=");
        assert_eq!(one_line("bad\nmodel\u{7}"), "bad model ");
    }

    #[test]
    fn an_error_still_returns_every_byte_with_the_error_in_a_field() {
        let m = b"From: a\n\nbody\n";
        let out = filter_message(
            Err("cannot read m.cwm: gone".into()),
            m,
            &FilterOptions::default(),
        );
        assert_eq!(
            out.verdict,
            Verdict::Error("cannot read m.cwm: gone".into())
        );
        assert_eq!(
            out.message,
            b"From: a\nX-Cwtext-Error: cannot read m.cwm: gone\n\nbody\n".to_vec()
        );
    }
}
