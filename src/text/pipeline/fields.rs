//! Which of a mail's header fields become features, and which part of each.
//!
//! A classifier is trained on past mail and used on later mail. A field that names its own
//! moment (Date, the relays' queue ids and times, Message-ID) or the owner's mailbox (the
//! address it was delivered to, the flags the mail store wrote) gives many weak features that
//! never recur, or recur only in the period the training mail came from; together they
//! outweigh the body on mail of another time. Trained on one of SpamAssassin's two periods and
//! tested on the other, every field cost ham/spam 2.1 and 4.1 points against none
//! (`benches/results/header-fields-2026-11-24.md`), while the fields that name the sending
//! software, the list and the MIME structure carried over and helped.
//!
//! The rule follows SpamAssassin's Bayes tokenizer (`IGNORED_HDRS`, `MARK_PRESENCE_ONLY_HDRS`,
//! its special handling of Received): every field is used except well-known ones that are
//! noise, so that unknown fields (a spammer's tracking field, a service's own) still teach.
//! One difference: SpamAssassin ignores the list fields (a mailing list that discusses spam
//! would become a sign of ham); cwtext routes mail into folders, where List-Id is often the
//! best sign there is, so they stay.

use std::borrow::Cow;

use super::config::FieldRule;

/// What a header field gives the classifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldUse<'a> {
    /// Nothing.
    Skip,
    /// Its presence only (`header:dkim-signature`): the value is a signature or a picture.
    Presence,
    /// Its presence and the words of this text (the value, or the stable part of it).
    Words(Cow<'a, str>),
}

/// Fields that are left out whole: the message's moment, the owner's delivery, the mail
/// store's and other filters' annotations, and per-message ids of one mail program.
const SKIPPED: &[&str] = &[
    // The moment: can only tell periods apart.
    "date",
    "delivery-date",
    "x-original-date",
    "resent-date",
    "x-originalarrivaltime",
    // The owner's own delivery: the same for every message, or names an old address.
    "delivered-to",
    "envelope-to",
    "x-envelope-to",
    "x-original-to",
    "x-apparently-to",
    "x-delivery-agent",
    "resent-to",
    "resent-from",
    "resent-message-id",
    // Written by the owner's mail store or reader, not by the sender.
    "status",
    "x-status",
    "x-keywords",
    "x-flags",
    "x-uid",
    "x-uidl",
    "x-imapbase",
    "x-imap",
    "lines",
    "content-length",
    "xref",
    "replied",
    "forwarded",
    "x-gnus-mail-source",
    "x-mime-autoconverted",
    "x-converted-to-plain-text",
    // Other filters' verdicts: they change when the filter does, and a model that learns them
    // copies the filter instead of its owner's judgement.
    "x-bogosity",
    "x-antispam",
    "x-rbl-warning",
    "x-virus-scanned",
    "x-virus-status",
    "x-scanned-by",
    "x-scanner",
    "x-filtered-by",
    "x-pyzor",
    "x-mass-check-id",
    // One mail program's per-message ids.
    "content-class",
    "thread-index",
    "thread-topic",
];

/// Prefixes of left-out field names (the same kinds as [`SKIPPED`]).
const SKIPPED_PREFIXES: &[&str] = &[
    "x-spam",
    "x-mailscanner",
    "x-dcc-",
    "x-vm-",
    "x-forefront-antispam",
    "x-microsoft-antispam",
];

/// Fields whose value is a signature, a key or a picture: one hapax each.
const PRESENCE_ONLY: &[&str] = &[
    "dkim-signature",
    "domainkey-signature",
    "x-google-dkim-signature",
    "arc-seal",
    "arc-message-signature",
    "x-face",
    "face",
    "autocrypt",
];

/// Prefixes of presence-only fields: Exchange's dozens of fields of GUIDs and times.
const PRESENCE_ONLY_PREFIXES: &[&str] = &["x-ms-", "x-microsoft-"];

/// Fields made of relay hops: `from HOST (HOST [IP]) by HOST with ESMTP id QUEUEID; DATE`.
const RELAY_FIELDS: &[&str] = &["received", "x-received"];

/// Fields made of message ids or addresses whose local part is an id (`<20021009.ab1@host>`,
/// a VERP bounce address): only their domains recur.
const ID_FIELDS: &[&str] = &["message-id", "in-reply-to", "references", "return-path"];

/// What the field `name` (lowercased, as [`crate::text::input::EmailHeaders::fields`] holds it)
/// with `value` gives under `rule`.
pub fn field_use<'a>(rule: FieldRule, name: &str, value: &'a str) -> FieldUse<'a> {
    if rule == FieldRule::EveryFieldWhole {
        FieldUse::Words(Cow::Borrowed(value))
    } else if SKIPPED.contains(&name) || SKIPPED_PREFIXES.iter().any(|p| name.starts_with(p)) {
        FieldUse::Skip
    } else if PRESENCE_ONLY.contains(&name)
        || PRESENCE_ONLY_PREFIXES.iter().any(|p| name.starts_with(p))
        || name.ends_with("-fingerprint")
    {
        FieldUse::Presence
    } else if RELAY_FIELDS.contains(&name) {
        FieldUse::Words(Cow::Owned(relay_hosts(value)))
    } else if ID_FIELDS.contains(&name) {
        FieldUse::Words(Cow::Owned(id_domains(value)))
    } else {
        FieldUse::Words(Cow::Borrowed(value))
    }
}

/// The host names of a Received field: the words with a dot and a letter made only of what a
/// host name holds, before the `;` that starts the date. Queue ids, addresses, times and the
/// software's words are left out; the hosts name the path mail takes.
fn relay_hosts(value: &str) -> String {
    let hops = value.rsplit_once(';').map_or(value, |(hops, _date)| hops);
    host_names(hops.split(|c: char| {
        c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | '<' | '>' | ',' | '=')
    }))
}

/// The domains of the ids or addresses in `value` (the part after each `@`).
fn id_domains(value: &str) -> String {
    host_names(
        value
            .split(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | ','))
            .filter_map(|id| id.rsplit_once('@').map(|(_, domain)| domain)),
    )
}

/// The pieces that are host names (a final dot taken off), space-separated.
fn host_names<'a>(pieces: impl Iterator<Item = &'a str>) -> String {
    let hosts: Vec<&str> = pieces
        .map(|piece| piece.trim_end_matches('.'))
        .filter(|piece| is_host_name(piece))
        .collect();
    hosts.join(" ")
}

/// A name with a dot, a letter, and only letters, digits, dots, hyphens and underscores: not an
/// IP address (no letter), an id or a time.
fn is_host_name(s: &str) -> bool {
    s.contains('.')
        && !s.starts_with('.')
        && s.bytes().any(|b| b.is_ascii_alphabetic())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(name: &str, value: &str) -> String {
        match field_use(FieldRule::Stable, name, value) {
            FieldUse::Words(w) => w.into_owned(),
            other => panic!("{name}: {other:?}"),
        }
    }

    /// A Received field gives its hosts: not the IP address, the queue id, the software, the
    /// recipient or the date.
    #[test]
    fn a_relay_hop_gives_its_host_names() {
        let hop = "from mail.example.net (mail.example.net [192.0.2.7]) by mx1.owner.org \
                   (Postfix) with ESMTP id 8A1B2C3D4E for <me@owner.org>; \
                   Mon, 12 Aug 2002 10:00:00 +0100";
        assert_eq!(
            words("received", hop),
            "mail.example.net mail.example.net mx1.owner.org"
        );
        // Gmail's own hop: an IPv6 address and an id, no host name.
        let gmail = "by 2002:a05:6a10:8c0e:b0:4f1 with SMTP id x14csp123; Tue, 3 Nov 2026 \
                     01:02:03 -0800 (PST)";
        assert_eq!(words("x-received", gmail), "");
        // No date: every piece is a hop.
        assert_eq!(
            words("received", "from a.example.org by b.example.org"),
            "a.example.org b.example.org"
        );
    }

    /// Ids and VERP addresses give their domains only.
    #[test]
    fn ids_give_their_domains() {
        assert_eq!(
            words("message-id", "<20020812.ab1C@mail.example.net>"),
            "mail.example.net"
        );
        assert_eq!(
            words(
                "references",
                "<1@a.example.org> <2@b.example.org>,<x@localhost>"
            ),
            "a.example.org b.example.org"
        );
        assert_eq!(
            words(
                "return-path",
                "<debian-user-request-me=owner.org@lists.debian.org>"
            ),
            "lists.debian.org"
        );
    }

    #[test]
    fn moments_deliveries_and_annotations_are_skipped() {
        for name in [
            "date",
            "delivered-to",
            "x-original-to",
            "x-keywords",
            "status",
            "x-spam-status",
            "x-spam-flag",
            "x-mailscanner-spamcheck",
            "x-uid",
        ] {
            assert_eq!(
                field_use(FieldRule::Stable, name, "anything"),
                FieldUse::Skip,
                "{name}"
            );
        }
    }

    #[test]
    fn signatures_give_their_presence() {
        for name in [
            "dkim-signature",
            "x-face",
            "x-pgp-fingerprint",
            "x-ms-exchange-crosstenant-id",
        ] {
            assert_eq!(
                field_use(FieldRule::Stable, name, "v=1; a=rsa-sha256; b=Zm9v"),
                FieldUse::Presence,
                "{name}"
            );
        }
    }

    /// The fields that carried over from one period to the other keep their whole value, and so
    /// does a field nobody listed (a sender's or a service's own).
    #[test]
    fn software_list_mime_and_unknown_fields_keep_their_words() {
        for (name, value) in [
            ("x-mailer", "Microsoft Outlook Express 6.00.2600.0000"),
            ("list-id", "Debian user list <debian-user.lists.debian.org>"),
            ("content-type", "text/plain; charset=us-ascii"),
            ("precedence", "bulk"),
            ("x-campaign-tracker", "spring-offer"),
        ] {
            assert_eq!(words(name, value), value, "{name}");
        }
    }
}
