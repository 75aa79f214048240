//! Tokenisers: text → tokens. Unicode word boundaries (UAX #29) via `unicode-segmentation`,
//! so that "naïve", "don't", "3.14" and CJK text split the way a reader would; or subword pieces
//! of those words from a vocabulary trained on the corpus ([`super::subword`]). The ASCII fast
//! path ([`super::ascii`]) must give exactly what the general path here gives; the tests below
//! compare the two.
//!
//! With *symbols* the segments between the words that are neither white space nor control
//! characters are tokens too: punctuation (`!`, `?`, `-`, `"`), symbols (`$`, `%`) and emoji,
//! one UAX #29 segment each. They carry much of what short texts say: the `--` before a quote's
//! author, the `?` of a question, the `!` and `:)` of a review (measured in
//! `benches/results/`: fortune categories +8 points).

use unicode_segmentation::UnicodeSegmentation;

use super::ascii::{ascii_spans, ascii_words};

/// A tokeniser hands every token of a text to a sink, in order. A token need not be a slice of
/// the text (a subword piece is lowercased and may carry a `##` prefix), so the sink borrows it
/// only for the call. `&mut self` lets a tokeniser keep a cache.
pub trait Tokenizer: Send {
    fn tokenize(&mut self, text: &str, sink: &mut dyn FnMut(&str));
}

/// UAX #29 word segmentation, with or without the symbol segments.
pub struct UnicodeWords {
    pub symbols: bool,
}

impl Tokenizer for UnicodeWords {
    fn tokenize(&mut self, text: &str, sink: &mut dyn FnMut(&str)) {
        if self.symbols {
            words_and_symbols(text, sink);
        } else {
            words(text, sink);
        }
    }
}

/// The UAX #29 words and symbol segments of `text`, in order, through the ASCII fast path when
/// it applies.
#[inline]
pub fn words_and_symbols(text: &str, sink: &mut dyn FnMut(&str)) {
    if text.is_ascii() {
        ascii_spans::<true>(text.as_bytes(), |start, end| sink(&text[start..end]));
    } else {
        text.split_word_bounds()
            .filter(|segment| is_token(segment))
            .for_each(sink);
    }
}

/// Whether a UAX #29 segment is a token with symbols on: a word (it has a letter or digit, as
/// `unicode_words` decides) or a symbol (a character that is neither white space nor a control
/// character). Runs of white space and stray control characters are not.
#[inline]
pub fn is_token(segment: &str) -> bool {
    segment
        .chars()
        .any(|c| !c.is_whitespace() && !c.is_control())
}

/// Whether a token is a word (it has a letter or digit), not a symbol segment.
#[inline]
pub fn is_word(token: &str) -> bool {
    token.chars().any(char::is_alphanumeric)
}

/// The UAX #29 words of `text`, through the ASCII fast path when it applies.
#[inline]
pub fn words(text: &str, sink: &mut dyn FnMut(&str)) {
    if text.is_ascii() {
        ascii_words(text, &mut *sink);
    } else {
        text.unicode_words().for_each(sink);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::pipeline::ascii::ascii_spans;

    fn ascii(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        ascii_words(text, |t| out.push(t));
        out
    }

    #[test]
    fn ascii_words_follow_uax29() {
        assert_eq!(
            ascii("e.g. don't pay $3.14, 1,000;2 a:b a..b __ _x x_ a.1 1.a it's."),
            [
                "e.g", "don't", "pay", "3.14", "1,000;2", "a:b", "a", "b", "_x", "x_", "a", "1",
                "1", "a", "it's"
            ]
        );
    }

    proptest::proptest! {
        /// The fast path gives exactly the words of unicode-segmentation on any ASCII text made
        /// of the bytes that matter to the rules.
        #[test]
        fn ascii_words_equal_unicode_words(
            text in proptest::collection::vec(
                proptest::sample::select(b"aZ09_.:',;\" -\n\r\t/@".to_vec()), 0..60)
        ) {
            let text = String::from_utf8(text).unwrap();
            let want: Vec<&str> = text.unicode_words().collect();
            proptest::prop_assert_eq!(ascii(&text), want);
        }

        /// The same for long words and the bytes next to the letter and digit ranges.
        #[test]
        fn long_ascii_words_equal_unicode_words(
            text in proptest::collection::vec(
                proptest::prop_oneof![
                    8 => proptest::sample::select(b"azAZ09_".to_vec()),
                    1 => proptest::sample::select(b"@[`{/:.',; \n".to_vec()),
                ],
                0..200,
            )
        ) {
            let text = String::from_utf8(text).unwrap();
            let want: Vec<&str> = text.unicode_words().collect();
            proptest::prop_assert_eq!(ascii(&text), want);
        }
    }

    fn ascii_with_symbols(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        ascii_spans::<true>(text.as_bytes(), |a, b| out.push(&text[a..b]));
        out
    }

    /// What `split_word_bounds` gives without white space and control characters.
    fn segments(text: &str) -> Vec<&str> {
        text.split_word_bounds().filter(|s| is_token(s)).collect()
    }

    #[test]
    fn symbols_are_the_segments_between_words() {
        assert_eq!(
            ascii_with_symbols("-- Mark Twain, \"don't!\" __ a.b. $3.14 :-)\r\n\x01"),
            [
                "-", "-", "Mark", "Twain", ",", "\"", "don't", "!", "\"", "__", "a.b", ".", "$",
                "3.14", ":", "-", ")"
            ]
        );
        let mut out = Vec::new();
        UnicodeWords { symbols: true }.tokenize("Très bien 👍🏽 — «oui» !", &mut |t| {
            out.push(t.to_string())
        });
        assert_eq!(out, ["Très", "bien", "👍🏽", "—", "«", "oui", "»", "!"]);
        assert!(is_word("don't") && is_word("3") && !is_word("👍🏽") && !is_word("__"));
    }

    proptest::proptest! {
        /// With symbols, the fast path gives exactly the non-blank UAX #29 segments.
        #[test]
        fn ascii_symbols_equal_word_bounds(
            text in proptest::collection::vec(
                proptest::sample::select(b"aZ09_.:',;\" -\n\r\t/@!?$()\x01\x7f".to_vec()), 0..60)
        ) {
            let text = String::from_utf8(text).unwrap();
            proptest::prop_assert_eq!(ascii_with_symbols(&text), segments(&text));
        }
    }

    #[test]
    fn unicode_words() {
        let mut out = Vec::new();
        UnicodeWords { symbols: false }
            .tokenize("Naïve users don't pay $3.14, 東京!", &mut |t| {
                out.push(t.to_string())
            });
        assert_eq!(out, ["Naïve", "users", "don't", "pay", "3.14", "東", "京"]);
    }
}
