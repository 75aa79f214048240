//! The ASCII fast path of the pipeline: most text is ASCII, and on ASCII the general path's
//! work (UAX #29 tables, `Cow` tokens, a `String` per lowercased word, hashing through a hasher)
//! can be done on bytes and 8-byte words instead. Everything here must give exactly what the
//! general path gives: [`ascii_words`] and [`ascii_spans`] what `unicode-segmentation` gives
//! (property tests in [`super::tokenizer`]), [`AsciiChain`] what the filters of
//! [`super::filter`], [`super::stopwords`] give, and [`AsciiToken::hash`] what
//! [`super::hash::token_hash_bytes`] gives (tests below and in [`super`]).

use std::collections::HashSet;

use super::hash::{step, FrozenBuildHasher};

/// The byte-level form of a filter, for ASCII tokens.
#[derive(Clone)]
pub enum AsciiFilter {
    Lowercase,
    MaxLength(usize),
    StopWords(AsciiStopWords),
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
    stop_as_is: Vec<AsciiStopWords>,
    lowercase: bool,
    stop_lowercased: Vec<AsciiStopWords>,
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
        if token.len() > self.max_len || self.stop_as_is.iter().any(|s| s.contains(token)) {
            return false;
        }
        if self.lowercase && !lowercased {
            token.lowercase();
        }
        !self.stop_lowercased.iter().any(|s| s.contains(token))
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
    /// It repeats [`FrozenHasher`](super::hash::FrozenHasher)'s steps (one `rotate, xor,
    /// multiply` per 8-, 4- or 1-byte piece, as its `write` takes a byte slice); a test pins it
    /// to the hasher for every length. Measured against hashing `as_bytes()` (with the `fxhash`
    /// crate, the same steps): a few more instructions, but the whole pipeline ran at 0.62
    /// instead of 0.58 of the bare split + hash (alternating runs): the hasher re-reads, in 4-
    /// and 1-byte pieces, the words just stored.
    #[inline]
    pub fn hash(&self, namespace: u8) -> u64 {
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

/// A stop-word list for ASCII tokens: the words of at most 15 bytes packed into integers
/// ([`AsciiToken::packed`]), one multiply and an integer comparison or two instead of hashing a
/// string and `memcmp`; longer words (a user's list may have one) in a hash set.
#[derive(Clone)]
pub struct AsciiStopWords {
    packed: PackedSet,
    long: HashSet<String, FrozenBuildHasher>,
    /// The longest word in bytes: longer tokens cannot be stop words.
    longest: usize,
}

impl AsciiStopWords {
    pub fn new(words: &[String]) -> Self {
        AsciiStopWords {
            packed: PackedSet::new(words.iter().filter_map(|w| AsciiToken::new(w)?.packed())),
            long: words.iter().filter(|w| w.len() >= 16).cloned().collect(),
            longest: words.iter().map(String::len).max().unwrap_or(0),
        }
    }
}

/// A set of non-zero u128 keys: open addressing with linear probing in a table at most a
/// quarter full, so a lookup is one multiply and usually one comparison. Hand-written because
/// a general hash set hashes the 16 bytes and probes in groups, which made stop words the most
/// expensive stage of the ASCII pipeline.
#[derive(Clone)]
struct PackedSet {
    slots: Vec<u128>,
    shift: u32,
}

impl PackedSet {
    fn new(keys: impl Iterator<Item = u128>) -> Self {
        let keys: Vec<u128> = keys.collect();
        let bits = (keys.len().max(1) * 4)
            .next_power_of_two()
            .trailing_zeros()
            .max(4);
        let mut set = PackedSet {
            slots: vec![0; 1 << bits],
            shift: 64 - bits,
        };
        for key in keys {
            let mut i = set.slot(key);
            while set.slots[i] != 0 && set.slots[i] != key {
                i = (i + 1) & (set.slots.len() - 1);
            }
            set.slots[i] = key;
        }
        set
    }

    #[inline]
    fn slot(&self, key: u128) -> usize {
        let mixed = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
        (mixed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    #[inline]
    fn contains(&self, key: u128) -> bool {
        let mut i = self.slot(key);
        loop {
            match self.slots[i] {
                0 => return false,
                k if k == key => return true,
                _ => i = (i + 1) & (self.slots.len() - 1),
            }
        }
    }
}

impl AsciiStopWords {
    /// Whether the ASCII `token` is a stop word.
    #[inline(always)]
    pub fn contains(&self, token: &AsciiToken) -> bool {
        if token.len() > self.longest {
            return false;
        }
        match token.packed() {
            Some(key) => self.packed.contains(key),
            None => self.contains_long(token),
        }
    }

    /// A stop word of 16 bytes or more (a user's list may have one).
    #[cold]
    #[inline(never)]
    fn contains_long(&self, token: &AsciiToken) -> bool {
        self.long.contains(token.as_str())
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
    use crate::text::pipeline::hash::token_hash_bytes;

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
    fn hash_from_words_equals_the_hash_at_every_length() {
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
}
