//! Tokenisers: text → tokens. Unicode word boundaries (UAX #29) via `unicode-segmentation`,
//! so that "naïve", "don't", "3.14" and CJK text split the way a reader would; or subword pieces
//! of those words from a vocabulary trained on the corpus ([`super::subword`]).
//!
//! With *symbols* the segments between the words that are neither white space nor control
//! characters are tokens too: punctuation (`!`, `?`, `-`, `"`), symbols (`$`, `%`) and emoji,
//! one UAX #29 segment each. They carry much of what short texts say: the `--` before a quote's
//! author, the `?` of a question, the `!` and `:)` of a review (measured in
//! `benches/results/`: fortune categories +8 points).

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use super::subword::{Bpe, WordPiece};
use crate::error::Result;

/// A tokeniser hands every token of a text to a sink, in order. A token need not be a slice of
/// the text (a subword piece is lowercased and may carry a `##` prefix), so the sink borrows it
/// only for the call. `&mut self` lets a tokeniser keep a cache.
pub trait Tokenizer: Send {
    fn tokenize(&mut self, text: &str, sink: &mut dyn FnMut(&str));
}

/// The configured tokeniser, as stored in the model. The subword variants carry their trained
/// vocabulary, so a model never depends on anything outside its file.
///
/// Adjacently tagged (`{"type":"bpe","vocabulary":{…}}`; a unit variant is `{"type":"unicode_words"}`
/// as before): serde buffers an internally tagged value whole before reading it, which for a
/// vocabulary of 30,000 pieces made loading a model several times slower; with the tag first
/// and the content beside it, the vocabulary is read once, in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "vocabulary", rename_all = "snake_case")]
pub enum TokenizerConfig {
    /// UAX #29 words: runs of letters, digits and word-internal punctuation.
    UnicodeWords,
    /// Byte-pair-encoding pieces of the (NFKC, lowercased) UAX #29 words.
    Bpe(Bpe),
    /// WordPiece pieces of the (NFKC, lowercased) UAX #29 words; pieces inside a word start
    /// with `##`.
    #[serde(rename = "wordpiece")]
    WordPiece(WordPiece),
}

impl TokenizerConfig {
    /// The tokeniser; an error when a stored vocabulary is inconsistent, or when this cwtext was
    /// built without the `subword` feature that a subword vocabulary needs.
    /// `symbols`: also yield the punctuation, symbol and emoji segments between the words.
    pub fn build(&self, symbols: bool) -> Result<Box<dyn Tokenizer>> {
        match self {
            TokenizerConfig::UnicodeWords => Ok(Box::new(UnicodeWords { symbols })),
            TokenizerConfig::Bpe(vocabulary) => vocabulary.build(symbols),
            TokenizerConfig::WordPiece(vocabulary) => vocabulary.build(symbols),
        }
    }

    /// A short name for messages: `words`, `bpe` or `wordpiece`.
    pub fn name(&self) -> &'static str {
        match self {
            TokenizerConfig::UnicodeWords => "words",
            TokenizerConfig::Bpe(_) => "bpe",
            TokenizerConfig::WordPiece(_) => "wordpiece",
        }
    }
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

/// `unicode_words` for ASCII text, with the same result (a property test compares them), at
/// about twice the speed: one pass over the bytes with a class table. unicode-segmentation has
/// an ASCII path too, but it yields every segment (spaces and punctuation included) through
/// iterator adaptors and then re-scans each for an alphanumeric byte.
#[inline]
pub fn ascii_words<'a>(text: &'a str, mut sink: impl FnMut(&'a str)) {
    ascii_word_spans(text.as_bytes(), |start, end| sink(&text[start..end]));
}

/// The words of ASCII `text` as byte ranges `start..end`, in order: what [`ascii_words`]
/// yields, for a caller that wants to read the text around a word (the pipeline loads 16 bytes
/// at a word's start at once and masks off what follows the word).
///
/// On ASCII, UAX #29 words are runs of letters, digits and `_` (WB5, WB8–WB10, WB13a/b), which
/// also continue over one `.`, `'` or `:` between two letters (WB6/WB7) and over one `.`, `'`,
/// `,` or `;` between two digits (WB11/WB12); a run of `_` alone is not a word.
#[inline(always)]
pub fn ascii_word_spans(bytes: &[u8], sink: impl FnMut(usize, usize)) {
    ascii_spans::<false>(bytes, sink)
}

/// The words of ASCII `text` as byte ranges, and with `SYMBOLS` its symbol segments too, in
/// order. On ASCII every UAX #29 segment that is not a word, white space or a control character
/// is one punctuation byte (WB999), except a run of `_` alone (WB13a), which is one segment.
#[inline(always)]
pub fn ascii_spans<const SYMBOLS: bool>(bytes: &[u8], mut sink: impl FnMut(usize, usize)) {
    let n = bytes.len();
    let mut i = 0;
    while i < n {
        if CLASS[bytes[i] as usize] & CORE == 0 {
            if SYMBOLS && bytes[i].is_ascii_punctuation() {
                sink(i, i + 1);
            }
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < n {
            let c = CLASS[bytes[i] as usize];
            if c & CORE != 0 {
                i += 1;
            } else if i + 1 < n && joins(bytes[i - 1], c, bytes[i + 1]) {
                i += 2;
            } else {
                break;
            }
        }
        // Almost every word starts with a letter or digit; only one that starts with `_` needs
        // a second look for one (a run of `_` alone is not a word).
        let alnum = |b: &u8| CLASS[*b as usize] & (LETTER | DIGIT) != 0;
        if SYMBOLS || alnum(&bytes[start]) || bytes[start..i].iter().any(alnum) {
            sink(start, i);
        }
    }
}

const LETTER: u8 = 1;
const DIGIT: u8 = 2;
const UNDERSCORE: u8 = 4;
const CORE: u8 = LETTER | DIGIT | UNDERSCORE;
/// `:` (MidLetter), `.` and `'` (MidNumLetQ): join two letters.
const MID_LETTER: u8 = 8;
/// `,` and `;` (MidNum), `.` and `'`: join two digits.
const MID_NUM: u8 = 16;

/// Whether the infix byte of class `c` joins `prev` and `next` into one word (WB6/7, WB11/12).
#[inline]
fn joins(prev: u8, c: u8, next: u8) -> bool {
    let (p, q) = (CLASS[prev as usize], CLASS[next as usize]);
    (c & MID_LETTER != 0 && p & LETTER != 0 && q & LETTER != 0)
        || (c & MID_NUM != 0 && p & DIGIT != 0 && q & DIGIT != 0)
}

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_alphabetic() {
            LETTER
        } else if c.is_ascii_digit() {
            DIGIT
        } else {
            match c {
                b'_' => UNDERSCORE,
                b':' => MID_LETTER,
                b'.' | b'\'' => MID_LETTER | MID_NUM,
                b',' | b';' => MID_NUM,
                _ => 0,
            }
        };
        b += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

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
