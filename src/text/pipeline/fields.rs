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
use super::hash::HashMap;

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
    // Written by the owner's mail store or reader, not by the sender (and [`FILING`]).
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
    // One mail program's per-message ids (Gmail's export: its thread id).
    "x-gm-thrid",
    "content-class",
    "thread-index",
    "thread-topic",
];

/// Fields that hold the owner's filing of the message, the label itself: left out under every
/// rule, [`FieldRule::EveryFieldWhole`] too. Gmail's export writes each message's labels into
/// `X-Gmail-Labels` ([`crate::text::mailbox::gmail`]), Thunderbird its tags and junk marks
/// (`junk`, `nonjunk`, `$label1`) into `X-Mozilla-Keys` of each message in its mbox files;
/// learned as words, they would decide the training messages and be absent from the mail the
/// model files. With them the flags those readers keep there (`X-Mozilla-Status`, Evolution's
/// `X-Evolution`: read, replied, deleted), which follow the folder (a junk folder goes
/// unread), so that the whole fields would win `train`'s held-out trial on them alone; and
/// the same flags as mutt and Dovecot keep them in mbox files (`Status: RO`, `X-Status`,
/// Dovecot's `X-Keywords: $Junk NonJunk`). SpamAssassin's corpus carries `X-Keywords` (610 of
/// its messages, 556 of them in spam-2): left out under the whole fields too, its two
/// comparisons' splits gave the same choices and accuracies (ham/spam 0.9936, five folders
/// 0.9808).
const FILING: &[&str] = &[
    "status",
    "x-status",
    "x-keywords",
    "x-gmail-labels",
    "x-mozilla-keys",
    "x-mozilla-status",
    "x-mozilla-status2",
    "x-evolution",
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
    if FILING.contains(&name) {
        return FieldUse::Skip;
    }
    if rule == FieldRule::EveryFieldWhole {
        return FieldUse::Words(Cow::Borrowed(value));
    }
    let listed = listed(name);
    if listed == Some(Listed::Skipped) || SKIPPED_PREFIXES.iter().any(|p| name.starts_with(p)) {
        FieldUse::Skip
    } else if listed == Some(Listed::PresenceOnly)
        || PRESENCE_ONLY_PREFIXES.iter().any(|p| name.starts_with(p))
        || name.ends_with("-fingerprint")
    {
        FieldUse::Presence
    } else if listed == Some(Listed::Relay) {
        FieldUse::Words(Cow::Owned(relay_hosts(value)))
    } else if listed == Some(Listed::Id) {
        FieldUse::Words(Cow::Owned(id_domains(value)))
    } else {
        FieldUse::Words(Cow::Borrowed(value))
    }
}

/// The list a field name is in (the lists share no name: tested).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listed {
    Skipped,
    PresenceOnly,
    Relay,
    Id,
}

/// The list `name` is in: one hash lookup instead of comparing the name with each of the 59
/// listed names (a mail has twenty fields or more, each looked up).
fn listed(name: &str) -> Option<Listed> {
    static LISTED: std::sync::LazyLock<HashMap<&'static str, Listed>> =
        std::sync::LazyLock::new(|| {
            let lists = [
                (SKIPPED, Listed::Skipped),
                (PRESENCE_ONLY, Listed::PresenceOnly),
                (RELAY_FIELDS, Listed::Relay),
                (ID_FIELDS, Listed::Id),
            ];
            lists
                .into_iter()
                .flat_map(|(names, list)| names.iter().map(move |&name| (name, list)))
                .collect()
        });
    LISTED.get(name).copied()
}

/// The host names of a Received field: the words with a dot and a letter made only of what a
/// host name holds, before the `;` that starts the date. Queue ids, addresses, times and the
/// software's words are left out; the hosts name the path mail takes.
fn relay_hosts(value: &str) -> String {
    let hops = value.rsplit_once(';').map_or(value, |(hops, _date)| hops);
    host_names(hops, RELAY_SEPARATOR, false)
}

/// The domains of the ids or addresses in `value` (the part after each `@`).
fn id_domains(value: &str) -> String {
    host_names(value, ID_SEPARATOR, true)
}

/// The host names among the pieces of `text`, space-separated. The pieces lie between
/// separators: white space (`char::is_whitespace`, Unicode's too) and the ASCII characters of
/// the class `separator`; with `after_at`, a piece is its part after its last `@`, and a piece
/// without one is none. A host name is a piece, a final dot taken off, with a dot, a letter,
/// only letters, digits, dots, hyphens and underscores, and no dot first: not an IP address
/// (no letter), an id or a time.
///
/// One pass over the bytes with a class table, keeping what the piece so far is. Written as
/// `str::split` on a char predicate, then `trim_end_matches` and four scans of each piece (the
/// definition, kept in the tests, which compare the two on any text), a Received field cost
/// about 25 instructions a byte, most of the header fields' features and 9% of a classified
/// mail's work (callgrind, the typical mail's five Received fields).
fn host_names(text: &str, separator: u8, after_at: bool) -> String {
    let bytes = text.as_bytes();
    let mut hosts = String::new();
    // What the piece so far is: where it starts; where it ends without its final dots; the AND
    // and the OR of its bytes' classes (dots included: they are host name characters and no
    // letter); whether dots came since its last other byte, and whether a dot has another
    // byte after it; whether an `@` came before its start.
    let (mut start, mut end, mut all, mut any) = (0, 0, HOST, 0);
    let (mut dots, mut inner_dot, mut at) = (false, false, false);
    let stop = SPACE | separator | NON_ASCII | if after_at { AT } else { 0 };
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let class = HOST_CLASS[usize::from(b)];
        if class & stop == 0 {
            all &= class;
            any |= class;
            if b == b'.' {
                dots = true;
            } else {
                inner_dot |= dots;
                dots = false;
                end = i + 1;
            }
            i += 1;
            continue;
        }
        // A separator, an `@` (with `after_at`) or a non-ASCII character: of these only white
        // space separates, and no other is part of a host name.
        let (width, separates) = if class & NON_ASCII != 0 {
            let c = text[i..].chars().next().expect("i is at a char boundary");
            (c.len_utf8(), c.is_whitespace())
        } else {
            (1, class & AT == 0)
        };
        if separates {
            let host = all & HOST != 0 && any & LETTER != 0 && inner_dot && (at || !after_at);
            add_host(&mut hosts, text, start..end, host);
        }
        if separates || class & AT != 0 {
            // After an `@`, the piece starts again: what came before it is no host name.
            (start, end, all, any) = (i + width, i + width, HOST, 0);
            (dots, inner_dot, at) = (false, false, !separates);
        } else {
            all = 0;
            inner_dot |= dots;
            dots = false;
            end = i + width;
        }
        i += width;
    }
    let host = all & HOST != 0 && any & LETTER != 0 && inner_dot && (at || !after_at);
    add_host(&mut hosts, text, start..end, host);
    hosts
}

/// Adds `text[piece]` to the space-separated `hosts` when it is a `host` and does not start
/// with a dot.
#[inline(always)]
fn add_host(hosts: &mut String, text: &str, piece: std::ops::Range<usize>, host: bool) {
    if host && text.as_bytes().get(piece.start) != Some(&b'.') {
        if !hosts.is_empty() {
            hosts.push(' ');
        }
        hosts.push_str(&text[piece]);
    }
}

/// [`HOST_CLASS`] bits.
const LETTER: u8 = 1;
/// Letters, digits, `.`, `-` and `_`.
const HOST: u8 = 2;
/// ASCII white space as `char::is_whitespace` has it (with U+000B, unlike `u8::is_ascii_whitespace`).
const SPACE: u8 = 4;
/// What separates the pieces of a Received field.
const RELAY_SEPARATOR: u8 = 8;
/// What separates the ids or addresses of an id field.
const ID_SEPARATOR: u8 = 16;
/// The bytes of non-ASCII characters.
const NON_ASCII: u8 = 32;
const AT: u8 = 64;

/// The class of each byte.
static HOST_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if !c.is_ascii() {
            t[b] |= NON_ASCII;
        }
        if c == b'@' {
            t[b] |= AT;
        }
        if c.is_ascii_alphabetic() {
            t[b] |= LETTER;
        }
        if c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_') {
            t[b] |= HOST;
        }
        if matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r') {
            t[b] |= SPACE;
        }
        if matches!(c, b'(' | b')' | b'[' | b']' | b'<' | b'>' | b',' | b'=') {
            t[b] |= RELAY_SEPARATOR;
        }
        if matches!(c, b'<' | b'>' | b',') {
            t[b] |= ID_SEPARATOR;
        }
        b += 1;
    }
    t
};

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

    /// [`relay_hosts`] and [`id_domains`] as first written: `str::split` on a char predicate,
    /// then each piece trimmed and checked on its own. [`host_names`] must give what these give.
    fn relay_hosts_by_definition(value: &str) -> String {
        let hops = value.rsplit_once(';').map_or(value, |(hops, _date)| hops);
        hosts_by_definition(hops.split(|c: char| {
            c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | '<' | '>' | ',' | '=')
        }))
    }

    fn id_domains_by_definition(value: &str) -> String {
        hosts_by_definition(
            value
                .split(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | ','))
                .filter_map(|id| id.rsplit_once('@').map(|(_, domain)| domain)),
        )
    }

    fn hosts_by_definition<'a>(pieces: impl Iterator<Item = &'a str>) -> String {
        let is_host_name = |s: &str| {
            s.contains('.')
                && !s.starts_with('.')
                && s.bytes().any(|b| b.is_ascii_alphabetic())
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_')
        };
        let hosts: Vec<&str> = pieces
            .map(|piece| piece.trim_end_matches('.'))
            .filter(|piece| is_host_name(piece))
            .collect();
        hosts.join(" ")
    }

    /// The one pass gives what the definition gives, on real fields and on pieces made to
    /// test its edges: final and leading dots, dots alone, `@` in a relay piece and several in
    /// an id, non-ASCII letters, Unicode white space (which separates) and U+000B.
    #[test]
    fn host_names_are_the_definition_s() {
        let values = [
            "",
            ".",
            "a.b",
            "a.b.",
            "a.b..",
            ".a.b",
            "a..b",
            "1.2.3.4",
            "a.",
            "ab",
            "x@a.b",
            "x@y@a.b",
            "@a.b",
            "a.b@",
            "from mail.example.net (mail.example.net [192.0.2.7]) by mx1.owner.org \
             (Postfix) with ESMTP id 8A1B2C3D4E for <me@owner.org>; Mon, 12 Aug 2002",
            "<20020812.ab1C@mail.example.net> <x@localhost>,<1@a.example.org>",
            "caf\u{e9}.example.org\u{a0}host.example.org\u{3000}x.y\u{2028}z.w\u{85}q.r",
            "a.b\u{b}c.d\u{c}e.f\rg.h\ni.j\tk.l",
            "\u{e9}@a.example.org a@\u{e9}.example.org a.example.org\u{e9}",
        ];
        for value in values {
            assert_eq!(
                relay_hosts(value),
                relay_hosts_by_definition(value),
                "{value:?}"
            );
            assert_eq!(
                id_domains(value),
                id_domains_by_definition(value),
                "{value:?}"
            );
        }
    }

    proptest::proptest! {
        /// The same on any mix of letters, digits, dots, `@`, separators, white space and
        /// non-ASCII characters, white space or not.
        #[test]
        fn host_names_are_the_definition_s_on_any_text(
            chars in proptest::collection::vec(proptest::sample::select(vec![
                'a', 'Z', '1', '.', '.', '-', '_', '@', ';', '(', ']', '<', ',', '=', '/', ' ',
                '\t', '\u{b}', '\r', '\u{85}', '\u{a0}', '\u{e9}', '\u{2009}', '\u{3000}',
                '\u{1f600}',
            ]), 0..40),
        ) {
            let value: String = chars.into_iter().collect();
            proptest::prop_assert_eq!(relay_hosts(&value), relay_hosts_by_definition(&value));
            proptest::prop_assert_eq!(id_domains(&value), id_domains_by_definition(&value));
        }
    }

    /// A name in two lists would take the first list's use; none is.
    #[test]
    fn the_lists_share_no_name() {
        let all: Vec<&str> = [SKIPPED, PRESENCE_ONLY, RELAY_FIELDS, ID_FIELDS].concat();
        let unique: std::collections::HashSet<&str> = all.iter().copied().collect();
        assert_eq!(unique.len(), all.len());
        for name in all {
            assert!(listed(name).is_some(), "{name}");
        }
        assert_eq!(listed("x-mailer"), None);
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
    fn the_owners_filing_is_never_a_feature() {
        // Gmail's export holds each message's label in its header: under every rule it is
        // left out, or each training message would carry its answer.
        for rule in [FieldRule::Stable, FieldRule::EveryFieldWhole] {
            assert_eq!(
                field_use(rule, "x-gmail-labels", "Archived,Work,Opened"),
                FieldUse::Skip,
                "{rule:?}"
            );
        }
        for rule in [FieldRule::Stable, FieldRule::EveryFieldWhole] {
            for (name, value) in [
                ("x-mozilla-keys", "junk                "),
                ("status", "RO"),
                ("x-status", "A"),
                ("x-keywords", "$Junk"),
                ("x-mozilla-status", "0001"),
                ("x-mozilla-status2", "00000000"),
                ("x-evolution", "0000002a-0010"),
            ] {
                assert_eq!(
                    field_use(rule, name, value),
                    FieldUse::Skip,
                    "{rule:?} {name}"
                );
            }
        }
        assert_eq!(
            field_use(FieldRule::Stable, "x-gm-thrid", "1"),
            FieldUse::Skip
        );
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
