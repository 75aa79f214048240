//! Gmail's export (Google Takeout's `All mail Including Spam and Trash.mbox`): one mbox of every
//! message, each carrying its Gmail labels in an `X-Gmail-Labels:` field
//! (`X-Gmail-Labels: Archived,Work/Projects,Opened`). Read as one mbox, the export would be one
//! label named after the file; here each message goes to the folder its labels name, so that a
//! user's Gmail labels train a router as folders do.
//!
//! Which label a message gets ([`placement`]): the one label the user gave it, with `/` between
//! levels as Gmail writes nested labels. Gmail's own labels are not the user's filing: the
//! states (`Opened`, `Unread`, `Important`, `Starred`, `Archived`, ...), the tabs Gmail chose
//! (`Category Updates`, ...) and the flags IMAP clients set (`IMAP_$Forwarded`, ...) are passed
//! over. `Spam` is a label (what the user or Gmail filed as spam), `Inbox` the inbox (a label
//! only with `--inbox-label`). Left out: mail in the trash, mail the user wrote (sent, drafts,
//! chats), archived mail under no label of the user's, and mail under two or more of them
//! (cwtext learns one label a message; which one the user would file it under is not known).
//!
//! The field is read with mail-parser (folded lines joined, RFC 2047 encoded words decoded); the
//! list is split here, at commas outside double quotes (a label holding a comma is quoted).

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::mbox::MboxSpan;
use crate::error::{Error, Result};

/// How [`Split::describe`] names what it read, for messages that explain what was found.
pub const EXPORT: &str = "a Gmail export (X-Gmail-Labels)";

/// The folder of JSON files Google Takeout puts beside the export (`Takeout/Mail/User
/// Settings/`): no mail, passed over when the export's folder is read as mbox files.
pub const SETTINGS_FOLDER: &str = "User Settings";

/// The field Gmail writes each message's labels into.
pub const LABELS_FIELD: &str = "X-Gmail-Labels";

/// Header bytes read from each message to find the field, at most: a header is rarely a tenth
/// of this, and a field past it is not looked for.
const HEADER_BYTES: usize = 256 * 1024;

/// Gmail's labels that are states or places of its own, not the user's filing (compared without
/// case: Takeout has written both `Category Updates` and `Category updates`).
const STATES: &[&str] = &[
    "Archived",
    "Opened",
    "Unread",
    "Important",
    "Starred",
    "Snoozed",
    "Muted",
    "Scheduled",
    "All Mail",
];

/// Labels of mail the user wrote or threw away: left out.
const WRITTEN: &[&str] = &["Sent", "Draft", "Drafts", "Chat", "Chats"];

/// Prefixes of Gmail's tabs and of the flags IMAP clients set.
const GMAIL_PREFIXES: &[&str] = &["Category ", "IMAP_"];

/// Why a message of the export is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LeftOut {
    /// In the trash.
    Trash,
    /// Written by the user: sent mail, drafts, chats.
    Written,
    /// Under none of the user's labels and not in the inbox (archived, or only Gmail's states).
    Unlabelled,
    /// Under two or more of the user's labels.
    Several,
    /// Without an `X-Gmail-Labels` field at all.
    NoField,
}

impl LeftOut {
    fn describe(self) -> &'static str {
        match self {
            LeftOut::Trash => "in the trash",
            LeftOut::Written => "sent, drafts or chats (mail you wrote)",
            LeftOut::Unlabelled => "archived under no label of yours",
            LeftOut::Several => "under two or more of your labels (cwtext learns one a message)",
            LeftOut::NoField => "without an X-Gmail-Labels field",
        }
    }
}

/// Where one message of the export goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// The folder of this label.
    Label(String),
    /// The inbox (a label only when the caller names one).
    Inbox,
    /// Nowhere, and why.
    LeftOut(LeftOut),
}

/// The labels of an `X-Gmail-Labels` value: split at commas outside double quotes, trimmed,
/// quotes taken off, empty ones dropped.
pub fn labels_of(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut push = |s: &mut String| {
        let t = s.trim();
        if !t.is_empty() {
            out.push(t.to_string());
        }
        s.clear();
    };
    for c in value.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => push(&mut current),
            _ => current.push(c),
        }
    }
    push(&mut current);
    out
}

fn is_any(label: &str, names: &[&str]) -> bool {
    names.iter().any(|n| n.eq_ignore_ascii_case(label))
}

fn is_gmails(label: &str) -> bool {
    is_any(label, STATES)
        || GMAIL_PREFIXES.iter().any(|p| {
            label.len() >= p.len() && label.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
        })
}

/// Where a message with these Gmail labels goes (see the module's notes).
pub fn placement(labels: &[String]) -> Placement {
    if labels.iter().any(|l| l.eq_ignore_ascii_case("Trash")) {
        return Placement::LeftOut(LeftOut::Trash);
    }
    if labels.iter().any(|l| is_any(l, WRITTEN)) {
        return Placement::LeftOut(LeftOut::Written);
    }
    if labels.iter().any(|l| l.eq_ignore_ascii_case("Spam")) {
        return Placement::Label("Spam".to_string());
    }
    let mut own: Vec<&String> = labels
        .iter()
        .filter(|l| !l.eq_ignore_ascii_case("Inbox") && !is_gmails(l))
        .collect();
    own.dedup();
    match own.as_slice() {
        [one] => Placement::Label(one.trim_matches('/').to_string()),
        [] if labels.iter().any(|l| l.eq_ignore_ascii_case("Inbox")) => Placement::Inbox,
        [] => Placement::LeftOut(LeftOut::Unlabelled),
        _ => Placement::LeftOut(LeftOut::Several),
    }
}

/// The `X-Gmail-Labels` value of the message whose header starts `header` (mail-parser:
/// folded lines joined, encoded words decoded); `None` without one.
pub fn field_value(header: &[u8]) -> Option<String> {
    static PARSER: std::sync::OnceLock<mail_parser::MessageParser> = std::sync::OnceLock::new();
    let parser = PARSER.get_or_init(|| {
        mail_parser::MessageParser::new()
            .header_text(LABELS_FIELD)
            .default_header_ignore()
    });
    let message = parser.parse_headers(header)?;
    let value = message.header(LABELS_FIELD)?;
    value
        .as_text()
        .map(str::to_string)
        .or_else(|| value.as_text_list().map(|l| l.join(",")))
}

/// The header of the message at `span` of `file` (up to the first blank line, at most
/// [`HEADER_BYTES`]), read a few KiB at a time: a message's attachments are not read.
fn read_header(file: &mut std::fs::File, span: &MboxSpan, path: &Path) -> Result<Vec<u8>> {
    const CHUNK: usize = 8 * 1024;
    let io = |e| Error::io(path, e);
    file.seek(SeekFrom::Start(span.start)).map_err(io)?;
    let len = usize::try_from(span.end.saturating_sub(span.start))
        .unwrap_or(usize::MAX)
        .min(HEADER_BYTES);
    let mut bytes = Vec::with_capacity(len.min(CHUNK));
    while bytes.len() < len {
        let from = bytes.len().saturating_sub(3);
        let take = CHUNK.min(len - bytes.len());
        let old = bytes.len();
        bytes.resize(old + take, 0);
        file.read_exact(&mut bytes[old..]).map_err(io)?;
        let tail = &bytes[from..];
        let end = tail
            .windows(2)
            .position(|w| w == b"\n\n")
            .map(|i| from + i + 2)
            .or_else(|| {
                tail.windows(4)
                    .position(|w| w == b"\r\n\r\n")
                    .map(|i| from + i + 4)
            });
        if let Some(end) = end {
            bytes.truncate(end);
            break;
        }
    }
    Ok(bytes)
}

/// A Gmail export's messages by folder.
#[derive(Debug, Default)]
pub struct Split {
    /// (the label, `None` for the inbox; its messages in file order), labels in first-seen order.
    pub folders: Vec<(Option<String>, Vec<MboxSpan>)>,
    /// Messages left out, by why.
    pub left_out: std::collections::BTreeMap<LeftOut, usize>,
}

impl Split {
    /// One line for people: what the file was read as and what was left out.
    pub fn describe(&self, path: &Path) -> String {
        let labelled: usize = self.folders.iter().map(|(_, m)| m.len()).sum();
        let labels = self.folders.iter().filter(|(l, _)| l.is_some()).count();
        let mut text = format!(
            "{}: {EXPORT}: {labelled} messages in {labels} label(s){}",
            path.display(),
            if self.folders.iter().any(|(l, _)| l.is_none()) {
                " and the inbox"
            } else {
                ""
            }
        );
        if !self.left_out.is_empty() {
            let parts: Vec<String> = self
                .left_out
                .iter()
                .map(|(why, n)| format!("{n} {}", why.describe()))
                .collect();
            text.push_str(&format!("; left out: {}", parts.join(", ")));
        }
        text
    }
}

/// The messages of the mbox `path` (its `spans`) by their Gmail labels, when it is a Gmail
/// export: when its first message has an `X-Gmail-Labels` field. `None` for any other mbox.
pub fn split(path: &Path, spans: &[MboxSpan]) -> Result<Option<Split>> {
    let Some(first) = spans.first() else {
        return Ok(None);
    };
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    if field_value(&read_header(&mut file, first, path)?).is_none() {
        return Ok(None);
    }
    let mut out = Split::default();
    let mut index: std::collections::HashMap<Option<String>, usize> =
        std::collections::HashMap::new();
    for span in spans {
        let placement = match field_value(&read_header(&mut file, span, path)?) {
            Some(value) => placement(&labels_of(&value)),
            None => Placement::LeftOut(LeftOut::NoField),
        };
        let folder = match placement {
            Placement::Label(l) => Some(l),
            Placement::Inbox => None,
            Placement::LeftOut(why) => {
                *out.left_out.entry(why).or_default() += 1;
                continue;
            }
        };
        let i = *index.entry(folder.clone()).or_insert_with(|| {
            out.folders.push((folder, Vec::new()));
            out.folders.len() - 1
        });
        out.folders[i].1.push(*span);
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(value: &str) -> Placement {
        placement(&labels_of(value))
    }

    #[test]
    fn the_labels_are_split_at_commas_outside_quotes() {
        assert_eq!(
            labels_of(r#"Archived,"Clients, 2024",Opened, Work/Projects ,,"#),
            ["Archived", "Clients, 2024", "Opened", "Work/Projects"]
        );
    }

    #[test]
    fn a_message_goes_to_the_one_label_the_user_gave_it() {
        let label = |l: &str| Placement::Label(l.to_string());
        assert_eq!(
            place("Archived,Work/Projects,Opened"),
            label("Work/Projects")
        );
        assert_eq!(
            place("Inbox,Travel,Category updates,Important,Starred,IMAP_$Forwarded"),
            label("Travel"),
            "Gmail's states, tabs and IMAP flags are not the user's filing"
        );
        assert_eq!(place("Spam,Unread"), label("Spam"));
        assert_eq!(place("Inbox,Opened,Category Promotions"), Placement::Inbox);
        assert_eq!(
            place("Archived,Opened"),
            Placement::LeftOut(LeftOut::Unlabelled)
        );
        assert_eq!(place("Trash,Work"), Placement::LeftOut(LeftOut::Trash));
        assert_eq!(place("Sent,Work"), Placement::LeftOut(LeftOut::Written));
        assert_eq!(place("Drafts"), Placement::LeftOut(LeftOut::Written));
        assert_eq!(
            place("Work,Travel,Opened"),
            Placement::LeftOut(LeftOut::Several)
        );
    }

    #[test]
    fn the_field_is_unfolded_and_decoded() {
        let header = b"X-GM-THRID: 17\r\nX-Gmail-Labels: Archived,\r\n =?UTF-8?Q?R=C3=A9servations?=,Opened\r\nSubject: x\r\n\r\n";
        let value = field_value(header).unwrap();
        assert_eq!(
            place(&value),
            Placement::Label("Réservations".to_string()),
            "{value:?}"
        );
        assert_eq!(field_value(b"Subject: x\n\nbody\n"), None);
    }

    #[test]
    fn the_field_is_found_past_a_long_header_and_before_a_large_body() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("All mail.mbox");
        let relays =
            "Received: from relay.example.net by mx.example.org; Mon, 1 Jan 2024\r\n".repeat(300);
        let body = "x".repeat(1 << 20);
        let mut text = String::new();
        for (i, labels) in ["Archived,Work", "Inbox,Opened", "Trash", "Archived,Work"]
            .iter()
            .enumerate()
        {
            text.push_str(&format!(
                "From {i}@xxx Mon Jan 01 00:00:00 +0000 2024\r\n{relays}X-Gmail-Labels: {labels}\r\nSubject: {i}\r\n\r\n{body}\r\n\r\n"
            ));
        }
        std::fs::write(&path, text).unwrap();
        let scan = super::super::mbox::scan_file(&path).unwrap();
        assert_eq!(scan.spans.len(), 4);
        let split = split(&path, &scan.spans).unwrap().unwrap();
        let folders: Vec<(Option<&str>, usize)> = split
            .folders
            .iter()
            .map(|(l, m)| (l.as_deref(), m.len()))
            .collect();
        assert_eq!(folders, [(Some("Work"), 2), (None, 1)]);
        assert_eq!(split.left_out.get(&LeftOut::Trash), Some(&1));
        // An mbox of any other writer is left as it is.
        let plain = dir.path().join("Work");
        std::fs::write(
            &plain,
            "From a@b Mon Jan 01 00:00:00 2024\nSubject: x\n\nx\n",
        )
        .unwrap();
        let scan = super::super::mbox::scan_file(&plain).unwrap();
        assert!(super::split(&plain, &scan.spans).unwrap().is_none());
    }
}
