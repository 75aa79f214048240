//! Token filters: each one rewrites or drops one token. The simple ones live here; stop words
//! and stemming have files of their own.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::stem::{Stem, StemLanguage};
pub use super::stopwords::StopWords;
use crate::error::{Error, Result};

/// A filter maps a token to its replacement, or drops it with `None`.
/// `&mut self` lets a filter keep a cache (stemming does).
pub trait TokenFilter: Send {
    fn filter<'a>(&mut self, token: Cow<'a, str>) -> Option<Cow<'a, str>>;

    /// The same filter on ASCII tokens held in [`AsciiToken`]s, if it has one. When every
    /// filter of a pipeline has, ASCII tokens skip the general path (no allocation, no cache).
    fn ascii_form(&self) -> Option<AsciiFilter> {
        None
    }
}

/// The byte-level form of a filter, for ASCII tokens. An enum rather than a trait object: the
/// token loop matches on it and each arm is inlined, where a virtual call per token and filter
/// cost more than the filters' work.
#[derive(Clone)]
pub enum AsciiFilter {
    Lowercase,
    MaxLength(usize),
    StopWords(StopWords),
}

impl AsciiFilter {
    /// Applies the filter to `token` in place; false drops the token.
    #[inline]
    pub fn apply(&self, token: &mut AsciiToken) -> bool {
        match self {
            AsciiFilter::Lowercase => {
                token.lowercase();
                true
            }
            AsciiFilter::MaxLength(chars) => token.len() <= *chars,
            AsciiFilter::StopWords(words) => !words.contains_ascii(token),
        }
    }
}

/// An ASCII token of at most [`AsciiToken::CAPACITY`] bytes, held on the stack in 8-byte
/// words, zero past its end. Filters work on whole words (e.g. lowercasing eight bytes at a
/// time), so that the next stage's 8-byte reads are served from the previous one's 8-byte
/// writes (byte-wise writes followed by wide reads stall the CPU's store forwarding).
pub struct AsciiToken {
    words: [u64; AsciiToken::CAPACITY / 8],
    len: usize,
}

impl AsciiToken {
    pub const CAPACITY: usize = 64;

    /// `None` when the token is longer than the capacity or not ASCII.
    pub fn new(token: &str) -> Option<Self> {
        let mut t = AsciiToken::empty();
        t.set(token).then_some(t)
    }

    /// An empty token, to be [`AsciiToken::set`] again and again (reusing one buffer keeps
    /// the 64 bytes from being copied around).
    pub fn empty() -> Self {
        AsciiToken {
            words: [0; Self::CAPACITY / 8],
            len: 0,
        }
    }

    /// Holds `token` instead; false when it is too long (the token is then unchanged) or not
    /// ASCII (the token is then empty).
    #[inline(always)]
    pub fn set(&mut self, token: &str) -> bool {
        let bytes = token.as_bytes();
        let len = bytes.len();
        if len > Self::CAPACITY {
            return false;
        }
        // Whole words by unaligned 8-byte loads, the tail by (overlapping) narrower ones: no
        // byte loop and no memcpy call. Each word is stored once, as a word, and the ASCII
        // check stays in a register: reading the fresh words back wider (16-byte vector loads)
        // would stall on store forwarding.
        let (n, previous) = (len.div_ceil(8), self.len.div_ceil(8));
        let mut any = 0;
        for (w, chunk) in self.words.iter_mut().zip(bytes.chunks_exact(8)) {
            *w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            any |= *w;
        }
        let full = len / 8;
        if full < n {
            let w = load_short(&bytes[full * 8..]);
            self.words[full] = w;
            any |= w;
        }
        // Zero past the end: only the words the previous token used can be non-zero.
        for w in self.words.iter_mut().take(previous).skip(n) {
            *w = 0;
        }
        self.len = len;
        if any & 0x8080_8080_8080_8080 != 0 {
            self.words[..n].iter_mut().for_each(|w| *w = 0);
            self.len = 0;
            return false;
        }
        true
    }

    /// Lowercases the token's ASCII letters, eight bytes at a time.
    #[inline]
    pub fn lowercase(&mut self) {
        self.words_mut()
            .iter_mut()
            .for_each(|w| *w = lowercase_word(*w));
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &bytemuck::bytes_of(&self.words)[..self.len]
    }

    /// The 8-byte words that hold the token (little-endian), mutable.
    #[inline]
    pub fn words_mut(&mut self) -> &mut [u64] {
        let n = self.len.div_ceil(8);
        &mut self.words[..n]
    }

    /// The first 16 bytes with the length in the last one: the whole token, zero-padded, when
    /// it has at most 15 bytes (`None` otherwise).
    #[inline]
    pub fn packed(&self) -> Option<u128> {
        (self.len < 16).then(|| {
            u128::from(self.words[0]) | u128::from(self.words[1]) << 64 | (self.len as u128) << 120
        })
    }

    /// The token as text (ASCII is UTF-8).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).expect("ASCII")
    }
}

/// 1 to 7 bytes as a little-endian word, zero above them: two loads of 4, 2 or 1 bytes that
/// overlap in the middle (an overlapping byte is the same in both, so OR keeps it).
#[inline]
fn load_short(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!((1..8).contains(&n));
    let (lo, hi, width) = if n >= 4 {
        (
            u32::from_le_bytes(b[..4].try_into().unwrap()) as u64,
            u32::from_le_bytes(b[n - 4..].try_into().unwrap()) as u64,
            4,
        )
    } else if n >= 2 {
        (
            u16::from_le_bytes(b[..2].try_into().unwrap()) as u64,
            u16::from_le_bytes(b[n - 2..].try_into().unwrap()) as u64,
            2,
        )
    } else {
        (b[0] as u64, b[0] as u64, 1)
    };
    lo | hi << (8 * (n - width))
}

/// Lowercases the ASCII letters of eight bytes at once (SWAR): a byte gets 0x20 added when it
/// is in `A..=Z`. Every byte is below 0x80, so the per-byte sums never carry into a neighbour.
#[inline]
fn lowercase_word(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let above_at = w.wrapping_add((0x80 - b'A' as u64) * ONES); // bit 7 set where byte ≥ 'A'
    let above_z = w.wrapping_add((0x80 - b'Z' as u64 - 1) * ONES); // bit 7 set where byte > 'Z'
    let upper = (above_at & !above_z) & (0x80 * ONES);
    w | (upper >> 2)
}

/// The configured filters, as stored in the model (applied in order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FilterConfig {
    /// Unicode lowercasing.
    Lowercase,
    /// Drops tokens longer than `chars` characters (base64 runs, URLs glued together).
    MaxLength { chars: usize },
    /// Drops the listed words. The words themselves are stored, so a model never depends on
    /// the resource files of the cwtext that loads it.
    StopWords { name: String, words: Vec<String> },
    /// Snowball stemming.
    Stem { language: StemLanguage },
}

impl FilterConfig {
    pub fn validate(&self) -> Result<()> {
        match self {
            FilterConfig::MaxLength { chars: 0 } => Err(Error::InvalidSetting(
                "max token length must be at least 1, but is 0".into(),
            )),
            _ => Ok(()),
        }
    }

    pub fn build(&self) -> Box<dyn TokenFilter> {
        match self {
            FilterConfig::Lowercase => Box::new(Lowercase),
            FilterConfig::MaxLength { chars } => Box::new(MaxLength(*chars)),
            FilterConfig::StopWords { words, .. } => Box::new(StopWords::new(words)),
            FilterConfig::Stem { language } => Box::new(Stem::new(*language)),
        }
    }
}

/// Unicode lowercasing that borrows when the token is already lowercase.
pub struct Lowercase;

impl TokenFilter for Lowercase {
    fn ascii_form(&self) -> Option<AsciiFilter> {
        Some(AsciiFilter::Lowercase)
    }

    fn filter<'a>(&mut self, token: Cow<'a, str>) -> Option<Cow<'a, str>> {
        let lower = if token.is_ascii() {
            !token.bytes().any(|b| b.is_ascii_uppercase())
        } else {
            !token.chars().any(char::is_uppercase)
        };
        Some(if lower {
            token
        } else {
            Cow::Owned(token.to_lowercase())
        })
    }
}

/// Drops over-long tokens.
pub struct MaxLength(pub usize);

impl TokenFilter for MaxLength {
    fn ascii_form(&self) -> Option<AsciiFilter> {
        Some(AsciiFilter::MaxLength(self.0))
    }

    fn filter<'a>(&mut self, token: Cow<'a, str>) -> Option<Cow<'a, str>> {
        // Byte length bounds char count from above: only long tokens pay for counting.
        (token.len() <= self.0 || token.chars().count() <= self.0).then_some(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercase_borrows_when_it_can() {
        let mut f = Lowercase;
        assert!(matches!(
            f.filter(Cow::Borrowed("space")),
            Some(Cow::Borrowed("space"))
        ));
        assert_eq!(f.filter(Cow::Borrowed("ÉCOLE")).unwrap(), "école");
        assert_eq!(f.filter(Cow::Borrowed("NASA")).unwrap(), "nasa");
    }

    #[test]
    fn ascii_lowercasing_eight_bytes_at_a_time_equals_the_byte_rule() {
        let all: Vec<u8> = (0u8..128).collect();
        for chunk in all.chunks(8).chain([&b"@AZ[`az{"[..], b"Hello, W"]) {
            let text = std::str::from_utf8(chunk).unwrap();
            let mut token = AsciiToken::new(text).unwrap();
            token.lowercase();
            assert_eq!(token.as_bytes(), text.to_ascii_lowercase().as_bytes());
        }
    }

    #[test]
    fn tokens_of_every_length_load_exactly() {
        let text = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:'";
        let mut token = AsciiToken::empty();
        // Long then short: nothing of the previous token may remain.
        for len in (0..=AsciiToken::CAPACITY)
            .rev()
            .chain(0..=AsciiToken::CAPACITY)
        {
            let word = &text[..len];
            assert!(token.set(word));
            assert_eq!(token.as_bytes(), word.as_bytes(), "{len}");
            let padded = bytemuck::bytes_of(&token.words);
            assert!(padded[len..].iter().all(|&b| b == 0), "{len}");
        }
        assert!(!token.set(&"x".repeat(AsciiToken::CAPACITY + 1)));
        assert_eq!(token.as_bytes(), &text.as_bytes()[..AsciiToken::CAPACITY]);
        assert!(!token.set("naïve"));
        assert!(token.is_empty() && token.words.iter().all(|&w| w == 0));
        assert!(token.set("ok") && token.as_bytes() == b"ok");
    }

    #[test]
    fn max_length_counts_characters() {
        let mut f = MaxLength(5);
        assert!(f.filter(Cow::Borrowed("ééééé")).is_some());
        assert!(f.filter(Cow::Borrowed("abcdef")).is_none());
    }
}
