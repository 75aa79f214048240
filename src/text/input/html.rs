//! HTML as text: a web page saved to a file (or a mail's HTML part) becomes the words a reader
//! sees, not its markup.
//!
//! A page read as it is gives its tags, attribute values, style sheets and scripts as words: on
//! 20 Newsgroups posts wrapped in one page template (a style sheet, a script, a menu), that cost
//! 1.6 points of accuracy (`benches/results/html-2026-11-27.md`). The conversion is mail-parser's
//! `html_to_text` (the one its `body_text` uses for mail), which drops the head, styles,
//! scripts and comments and decodes entities, with two additions written here:
//!
//! - **Words stay apart at block boundaries.** mail-parser joins the text on both sides of a tag,
//!   so `<li>Home</li><li>World</li>` reads `HomeWorld` and a table's cells run together. A
//!   space after every block-level tag (the list below: paragraphs, list items, table cells,
//!   headings, …) keeps them apart, while inline tags (`b`, `i`, `span`, `font`, `a`) still join:
//!   `V<b></b>iagra` stays one word, as spam filters read it (SpamAssassin's HTML parser breaks
//!   words at block elements only).
//! - **The title is kept.** It is in the head, which mail-parser drops whole; for a page it is
//!   often the best summary there is.
//!
//! Hand-written because the crates that parse HTML properly (html5ever and what builds on it)
//! are far heavier than a text classifier needs from a page: its words, in order, apart.

use memchr::memmem;

/// Whether decoded text is an HTML page: the WHATWG MIME sniffing rule for HTML (a tag such as
/// `<!DOCTYPE HTML`, `<html`, `<head`, `<body`, `<div`, `<p`, `<table` or a comment first, after
/// white space; `infer`'s implementation), or an XML prologue followed by an HTML doctype or
/// root (XHTML).
pub fn is_html(text: &str) -> bool {
    let bytes = text.as_bytes();
    if infer::text::is_html(bytes) {
        return true;
    }
    if infer::text::is_xml(bytes) {
        let head = &bytes[..bytes.len().min(1024)].to_ascii_lowercase();
        return memmem::find(head, b"<!doctype html").is_some()
            || memmem::find(head, b"<html").is_some();
    }
    false
}

/// The text of an HTML page or part: its title (when it has one) on a line of its own, then
/// its body as mail-parser's `html_to_text` reads it, with words kept apart at block-level tags.
pub fn to_text(html: &str) -> String {
    let spaced = space_after_blocks(html);
    let body = mail_parser::decoders::html::html_to_text(&spaced);
    match title(html) {
        Some(title) if !title.is_empty() => format!("{title}\n{body}"),
        _ => body,
    }
}

/// Elements that start a new block of text (HTML's flow elements that a browser lays out on a
/// line of their own, table cells and list items included).
const BLOCKS: &[&[u8]] = &[
    b"address",
    b"article",
    b"aside",
    b"blockquote",
    b"br",
    b"caption",
    b"center",
    b"dd",
    b"details",
    b"dialog",
    b"div",
    b"dl",
    b"dt",
    b"fieldset",
    b"figcaption",
    b"figure",
    b"footer",
    b"form",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"header",
    b"hr",
    b"li",
    b"main",
    b"nav",
    b"ol",
    b"option",
    b"p",
    b"pre",
    b"section",
    b"summary",
    b"table",
    b"tbody",
    b"td",
    b"tfoot",
    b"th",
    b"thead",
    b"title",
    b"tr",
    b"ul",
];

/// `html` with a space after every opening or closing block-level tag.
fn space_after_blocks(html: &str) -> String {
    let bytes = html.as_bytes();
    let mut out = String::with_capacity(html.len() + html.len() / 16);
    let mut copied = 0;
    let mut i = 0;
    while let Some(offset) = memchr::memchr(b'<', &bytes[i..]) {
        let start = i + offset;
        let mut name = start + 1;
        if bytes.get(name) == Some(&b'/') {
            name += 1;
        }
        let end_of_name = bytes[name..]
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .map_or(bytes.len(), |n| name + n);
        let is_block = BLOCKS
            .iter()
            .any(|block| bytes[name..end_of_name].eq_ignore_ascii_case(block));
        match memchr::memchr(b'>', &bytes[end_of_name..]) {
            Some(n) if is_block => {
                let close = end_of_name + n + 1;
                // '>' is ASCII, so `close` is a character boundary.
                out.push_str(&html[copied..close]);
                out.push(' ');
                copied = close;
                i = close;
            }
            _ => i = start + 1,
        }
    }
    out.push_str(&html[copied..]);
    out
}

/// The text of the page's first `<title>` element in its first 64 KiB, entities decoded and
/// white space folded; `None` when it has none.
fn title(html: &str) -> Option<String> {
    let bytes = html.as_bytes();
    let head = bytes[..bytes.len().min(64 << 10)].to_ascii_lowercase();
    let open = memmem::find(&head, b"<title")?;
    let start = open + memchr::memchr(b'>', &head[open..])? + 1;
    let end = start + memmem::find(&head[start..], b"</title")?;
    // Both ends are at ASCII bytes ('>' and '<'), so they are character boundaries.
    let inner = mail_parser::decoders::html::html_to_text(&html[start..end]);
    Some(inner.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_told_from_text() {
        assert!(is_html("<!DOCTYPE html>\n<html><body>x</body></html>"));
        assert!(is_html("  \n<HTML lang=\"en\">"));
        assert!(is_html("<p>A paragraph</p>"));
        assert!(is_html("<!-- saved page -->\n<html>"));
        assert!(is_html(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Strict//EN\">\n<html xmlns=\"http://www.w3.org/1999/xhtml\">"
        ));
        // Text that mentions a tag, XML that is not a page, and a tag that is not first.
        assert!(!is_html("Use <p> for paragraphs."));
        assert!(!is_html("<?xml version=\"1.0\"?><feed><entry/></feed>"));
        assert!(!is_html("Dear all,\n<html> is the root element."));
        assert!(!is_html("<3 you"));
    }

    #[test]
    fn block_tags_keep_words_apart_and_inline_tags_join() {
        let page = "<html><head><title>Launch &amp; orbit</title><style>.a{color:red}</style>\
            <script>var x = 1;</script></head><body><ul><li>Home</li><li>World</li></ul>\
            <table><tr><td>cell1</td><td>cell2</td></tr></table><div>One</div><div>Two</div>\
            <p>V<b></b>iagra <span>now</span>&nbsp;&eacute;t&eacute;<br>next</p>\
            <!-- a <div>comment</div> --></body></html>";
        let text = to_text(page);
        let words: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(
            words,
            [
                "Launch", "&", "orbit", "Home", "World", "cell1", "cell2", "One", "Two", "Viagra",
                "now", "été", "next"
            ],
            "{text:?}"
        );
        assert!(text.starts_with("Launch & orbit\n"), "{text:?}");
    }

    #[test]
    fn odd_markup_is_survived() {
        // Unclosed tags, a '<' at the end, a title without its end, multibyte text.
        for page in [
            "<html><body><div",
            "<p>naïve café <",
            "<html><head><title>never closed",
            "<p>日本語<br/>テキスト</p>",
            "<p></p>",
            "",
        ] {
            let _ = to_text(page);
        }
        assert_eq!(
            to_text("<p>日本語<br/>テキスト</p>")
                .split_whitespace()
                .collect::<Vec<_>>(),
            ["日本語", "テキスト"]
        );
        // Random markup from the characters that matter, multibyte ones included: no panic,
        // and no tag survives.
        let pieces = [
            "<",
            ">",
            "/",
            "<title>",
            "</title>",
            "<td>",
            "</li>",
            "<b>",
            "<!--",
            "-->",
            "é",
            "日",
            " ",
            "&amp;",
            "&",
            ";",
            "p",
            "x",
            "<script>",
            "</script>",
            "<head>",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            let mut page = String::new();
            for _ in 0..(state % 40) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                page.push_str(pieces[(state % pieces.len() as u64) as usize]);
            }
            let text = to_text(&page);
            assert!(
                !text.contains("<td>") && !text.contains("<title>"),
                "{page:?} → {text:?}"
            );
        }
        assert_eq!(title("<title>  a\n  b </title>").as_deref(), Some("a b"));
        assert_eq!(title("<html><head><title>never closed"), None);
    }
}
