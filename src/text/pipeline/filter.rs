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

/// The byte-level form of a filter, for ASCII tokens.
#[derive(Clone)]
pub enum AsciiFilter {
    Lowercase,
    MaxLength(usize),
    StopWords(StopWords),
}

/// A pipeline's ASCII filters compiled into one fixed sequence: length limit, stop words on the
/// token as it came, lowercasing, stop words on the lowercased token. Any order of the filters
/// compiles to it without changing what they do, because on ASCII tokens lowercasing keeps the
/// length and is idempotent: a token is lowercased by the end when any filter lowercases it,
/// longer than the smallest limit means dropped, and each stop-word list sees the token either
/// as it came (listed before every `Lowercase`) or lowercased (after one).
///
/// One fixed sequence instead of a loop over the filters: matching on each filter per token
/// cost more instructions than the filters' own work.
#[derive(Clone)]
pub struct AsciiChain {
    max_len: usize,
    stop_as_is: Vec<StopWords>,
    lowercase: bool,
    stop_lowercased: Vec<StopWords>,
}

impl AsciiChain {
    /// The filters' chain, in their order.
    pub fn new(filters: impl IntoIterator<Item = AsciiFilter>) -> Self {
        let mut chain = AsciiChain {
            max_len: usize::MAX,
            stop_as_is: Vec::new(),
            lowercase: false,
            stop_lowercased: Vec::new(),
        };
        for filter in filters {
            match filter {
                AsciiFilter::Lowercase => chain.lowercase = true,
                AsciiFilter::MaxLength(chars) => chain.max_len = chain.max_len.min(chars),
                AsciiFilter::StopWords(words) if chain.lowercase => {
                    chain.stop_lowercased.push(words)
                }
                AsciiFilter::StopWords(words) => chain.stop_as_is.push(words),
            }
        }
        chain
    }

    /// Tokens longer than this many bytes are dropped (`usize::MAX`: no limit).
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Whether tokens may be lowercased as they are loaded ([`AsciiToken::set_span`]): when
    /// the chain lowercases and no stop-word list needs a token as it came.
    pub fn lowercase_on_load(&self) -> bool {
        self.lowercase && self.stop_as_is.is_empty()
    }

    /// Applies the filters to `token` in place (`lowercased`: it was lowercased on loading);
    /// false drops it.
    #[inline(always)]
    pub fn apply(&self, token: &mut AsciiToken, lowercased: bool) -> bool {
        if token.len() > self.max_len || self.stop_as_is.iter().any(|s| s.contains_ascii(token)) {
            return false;
        }
        if self.lowercase && !lowercased {
            token.lowercase();
        }
        !self.stop_lowercased.iter().any(|s| s.contains_ascii(token))
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
        self.set_bytes(token.as_bytes())
    }

    /// Holds the word `text[start..end]` instead, lowercased when `lowercase`; false as for
    /// [`AsciiToken::set`]. A word of at most 16 bytes with 16 bytes of text from its start
    /// (almost every word) is one 16-byte load masked to its length: no loop and no branch on
    /// the length, which varies from word to word and so defeats branch prediction.
    #[inline(always)]
    pub fn set_span(&mut self, text: &[u8], start: usize, end: usize, lowercase: bool) -> bool {
        let len = end - start;
        if let (1..=16, Some(window)) = (len, text.get(start..start + 16)) {
            let all = u128::from_le_bytes(window.try_into().expect("16 bytes"));
            let word = all & (u128::MAX >> (128 - 8 * len));
            if word & (u128::from(HIGH_BITS) * (1 + (1 << 64))) == 0 {
                let (mut lo, mut hi) = (word as u64, (word >> 64) as u64);
                if lowercase {
                    (lo, hi) = (lowercase_word(lo), lowercase_word(hi));
                }
                for w in self.words.iter_mut().take(self.len.div_ceil(8)).skip(2) {
                    *w = 0;
                }
                (self.words[0], self.words[1], self.len) = (lo, hi, len);
                return true;
            }
        }
        let ok = self.set_bytes(&text[start..end]);
        if ok && lowercase {
            self.lowercase();
        }
        ok
    }

    #[inline(always)]
    fn set_bytes(&mut self, bytes: &[u8]) -> bool {
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
        if any & HIGH_BITS != 0 {
            self.words[..n].iter_mut().for_each(|w| *w = 0);
            self.len = 0;
            return false;
        }
        true
    }

    /// Lowercases the token's ASCII letters, eight bytes at a time. The first two words
    /// always (zero stays zero): most tokens fit in them, and a fixed amount of work has no
    /// loop to set up and no branch on the length to mispredict.
    #[inline(always)]
    pub fn lowercase(&mut self) {
        self.words[0] = lowercase_word(self.words[0]);
        self.words[1] = lowercase_word(self.words[1]);
        if self.len > 16 {
            self.words_mut()[2..]
                .iter_mut()
                .for_each(|w| *w = lowercase_word(*w));
        }
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

    /// [`token_hash_bytes`](super::hash::token_hash_bytes)`(namespace, self.as_bytes())`,
    /// computed from the 8-byte words already in registers instead of re-reading the bytes.
    /// It repeats FxHash's steps (one `rotate, xor, multiply` per 8-, 4- or 1-byte piece: the
    /// `fxhash` crate's `write`, which only takes a byte slice); a test pins it to the crate
    /// for every length. Measured against calling the crate on `as_bytes()`: a few more
    /// instructions, but the whole pipeline ran at 0.62 instead of 0.58 of the bare split +
    /// hash (alternating runs): the crate re-reads, in 4- and 1-byte pieces, the words just
    /// stored.
    #[inline]
    pub fn hash(&self, namespace: u8) -> u64 {
        const SEED: u64 = 0x517c_c1b7_2722_0a95;
        #[inline(always)]
        fn step(hash: u64, piece: u64) -> u64 {
            (hash.rotate_left(5) ^ piece).wrapping_mul(SEED)
        }
        let mut hash = step(0, u64::from(namespace));
        let full = self.len / 8;
        for &w in &self.words[..full] {
            hash = step(hash, w);
        }
        let mut rest = self.len % 8;
        if rest > 0 {
            let mut tail = self.words[full];
            if rest >= 4 {
                hash = step(hash, tail & 0xffff_ffff);
                tail >>= 32;
                rest -= 4;
            }
            for _ in 0..rest {
                hash = step(hash, tail & 0xff);
                tail >>= 8;
            }
        }
        hash
    }

    /// The token as text (ASCII is UTF-8).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).expect("ASCII")
    }
}

/// The top bit of each byte of a word: set only in non-ASCII bytes.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

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
    use crate::text::pipeline::hash::token_hash_bytes;

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
    fn a_span_loads_like_the_slice_at_every_length_and_position() {
        // Spans near the end of the text take the byte-wise path, the others the 16-byte load;
        // a long token before a short one checks that nothing of it remains.
        let text =
            b"Mixed CASE words_and_digits_0123456789 of every LENGTH up to sixty-four bytes, \
            and some more text so that most spans have sixteen bytes after them .. THE END";
        let mut by_span = AsciiToken::empty();
        let mut by_slice = AsciiToken::empty();
        for lowercase in [false, true] {
            for start in 0..text.len() {
                for end in (start..=text.len().min(start + AsciiToken::CAPACITY)).rev() {
                    let word = std::str::from_utf8(&text[start..end]).unwrap();
                    assert!(by_span.set_span(text, start, end, lowercase));
                    assert!(by_slice.set(word));
                    if lowercase {
                        by_slice.lowercase();
                    }
                    assert_eq!(by_span.as_bytes(), by_slice.as_bytes(), "{word:?}");
                    assert_eq!(by_span.words, by_slice.words, "{word:?}: padding");
                }
            }
        }
        assert!(!by_span.set_span("naïve".as_bytes(), 0, 6, true));
    }

    #[test]
    fn hash_from_words_equals_the_crate_hash_at_every_length() {
        let text = "The quick brown fox jumps over the lazy dog; 0123456789 ABCDEFGHIJKLM";
        let mut token = AsciiToken::empty();
        for len in (0..=AsciiToken::CAPACITY).chain((0..=AsciiToken::CAPACITY).rev()) {
            let word = &text[text.len() - len..];
            assert!(token.set(word));
            for namespace in [0, 1, 3] {
                assert_eq!(
                    token.hash(namespace),
                    token_hash_bytes(namespace, word.as_bytes()),
                    "{word:?} in namespace {namespace}"
                );
            }
        }
    }

    #[test]
    fn max_length_counts_characters() {
        let mut f = MaxLength(5);
        assert!(f.filter(Cow::Borrowed("ééééé")).is_some());
        assert!(f.filter(Cow::Borrowed("abcdef")).is_none());
    }
}
