//! Feature hashing: the one function that maps a token or n-gram to a bucket, and the one
//! definition of the hash in the crate.
//!
//! **Never change anything in this file.** Every model file stores weights by bucket; a model
//! trained with one hash and applied with another silently predicts garbage. The golden values in
//! the tests below pin it: if they fail, the change is a model-format break, not a refactor. The
//! held-out fifth, the shards and `experiment corrections`' pool hash file paths with it too.
//!
//! The hash is FxHash, 64-bit, as the `fxhash` 0.2 crate defined it (the crate, unmaintained, is
//! no longer a dependency; [`FrozenHasher`] is its `FxHasher64` written out, and the golden
//! values were taken from the crate). FxHash ends with one multiplication, so its *low* bits are
//! poorly mixed for short keys (a one-byte key changes only the low bits of the product in a
//! regular pattern); the *high* bits collect the carries of every input bit. The bucket is
//! therefore taken from the top `bits` bits (Fibonacci hashing), never with `% n` or a low mask.
//! The test `collisions_match_a_random_function` checks this on a real vocabulary.
//!
//! The same hasher serves the crate's in-memory hash maps ([`FrozenBuildHasher`]): fast on
//! short keys, and no second definition to keep.

use std::hash::{BuildHasherDefault, Hasher};

// The hash reads 8-byte chunks in little-endian order; pinning the hash means pinning that.
#[cfg(target_endian = "big")]
compile_error!("cwtext's feature hash is defined on little-endian byte order");

/// FxHash's multiplier.
const SEED: u64 = 0x517c_c1b7_2722_0a95;

/// One step of the hash: one 8-, 4- or 1-byte piece (zero-extended) into the state.
#[inline(always)]
pub fn step(hash: u64, piece: u64) -> u64 {
    (hash.rotate_left(5) ^ piece).wrapping_mul(SEED)
}

/// FxHash64: a byte slice in 8-byte little-endian words, then one 4-byte piece if 4 or more
/// bytes are left, then the remaining bytes one by one; every integer write is one step.
#[derive(Debug, Clone, Copy, Default)]
pub struct FrozenHasher {
    hash: u64,
}

impl Hasher for FrozenHasher {
    #[inline]
    fn write(&mut self, mut bytes: &[u8]) {
        let mut hash = self.hash;
        while let Some((word, rest)) = bytes.split_first_chunk::<8>() {
            hash = step(hash, u64::from_le_bytes(*word));
            bytes = rest;
        }
        if let Some((word, rest)) = bytes.split_first_chunk::<4>() {
            hash = step(hash, u64::from(u32::from_le_bytes(*word)));
            bytes = rest;
        }
        for &byte in bytes {
            hash = step(hash, u64::from(byte));
        }
        self.hash = hash;
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.hash = step(self.hash, u64::from(i));
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.hash = step(self.hash, u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.hash = step(self.hash, u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.hash = step(self.hash, i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.hash = step(self.hash, i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// [`FrozenHasher`] for `HashMap` and `HashSet`.
pub type FrozenBuildHasher = BuildHasherDefault<FrozenHasher>;

/// A `HashMap` with [`FrozenHasher`].
pub type HashMap<K, V> = std::collections::HashMap<K, V, FrozenBuildHasher>;

/// A `HashSet` with [`FrozenHasher`].
pub type HashSet<T> = std::collections::HashSet<T, FrozenBuildHasher>;

/// The hash of a sequence of byte strings, each written whole: what the corpus splits (the
/// held-out fifth, the shards) take of a path and its salt.
#[inline]
pub fn bytes_hash(parts: &[&[u8]]) -> u64 {
    let mut h = FrozenHasher::default();
    for part in parts {
        h.write(part);
    }
    h.finish()
}

/// Namespaces keep the same word in different fields apart (body "free" ≠ subject "free").
pub const NS_BODY: u8 = 0;
pub const NS_SUBJECT: u8 = 1;
pub const NS_FROM: u8 = 2;
pub const NS_TO: u8 = 3;
/// A header field's name: its presence, and the prefix its words are hashed under.
pub const NS_FIELD: u8 = 4;
/// The words of a header field's value, before they are joined to the field's name.
pub const NS_FIELD_WORD: u8 = 5;
/// A character n-gram of a body word ([`super::chargrams`]; added with them, 2026-11-27: no
/// earlier model hashed anything in it).
pub const NS_CHAR: u8 = 6;

/// The prefix of the first-word feature (`first:WORD`, [`super::config::PipelineConfig::first_word`]):
/// the hash of a body token no tokenizer gives (a control character), so no bigram of the
/// text's own words has it.
pub fn first_word_mark() -> u64 {
    token_hash(NS_BODY, "\u{2}first")
}

/// The 64-bit hash of a token in a namespace.
#[inline]
pub fn token_hash(namespace: u8, token: &str) -> u64 {
    token_hash_bytes(namespace, token.as_bytes())
}

/// [`token_hash`] of a token's UTF-8 bytes.
#[inline]
pub fn token_hash_bytes(namespace: u8, token: &[u8]) -> u64 {
    let mut h = FrozenHasher::default();
    h.write_u8(namespace);
    h.write(token);
    h.finish()
}

/// The 64-bit hash of an n-gram, from the hash of its prefix and the hash of its next token.
/// Order matters: "new york" and "york new" differ.
#[inline]
pub fn ngram_hash(prefix: u64, next: u64) -> u64 {
    let mut h = FrozenHasher::default();
    h.write_u64(prefix);
    h.write_u64(next);
    h.finish()
}

/// The bucket in `[0, 2^bits)` of a hash: its top `bits` bits (see the module comment).
#[inline]
pub fn bucket(hash: u64, bits: u8) -> u32 {
    debug_assert!((1..=32).contains(&bits));
    (hash >> (64 - u32::from(bits))) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Golden values: these pin the model format. Do not update them to make a change pass.
    #[test]
    fn golden_token_hashes() {
        let golden: &[(u8, &str, u64)] = &[
            (NS_BODY, "the", 0x4b02_d5fa_4a07_e929),
            (NS_BODY, "space", 0x7374_ed7c_1ebe_8028),
            (NS_BODY, "confidence-weighted", 0x3716_22e0_6171_5bf2),
            (NS_SUBJECT, "the", 0xecb8_46e8_ca04_a9f6),
            (NS_FROM, "example.com", 0x881f_b6e9_0c33_faaf),
            (NS_BODY, "naïve", 0xf8bd_9658_1de1_d991),
            (NS_BODY, "", 0x0000_0000_0000_0000),
        ];
        for &(ns, token, want) in golden {
            assert_eq!(token_hash(ns, token), want, "token_hash({ns}, {token:?})");
        }
    }

    #[test]
    fn golden_ngrams_and_buckets() {
        let a = token_hash(NS_BODY, "new");
        let b = token_hash(NS_BODY, "york");
        assert_eq!(ngram_hash(a, b), 0x1c65_eb35_68d2_7721);
        assert_ne!(ngram_hash(a, b), ngram_hash(b, a));
        assert_eq!(bucket(0xffff_ffff_ffff_ffff, 18), (1 << 18) - 1);
        assert_eq!(bucket(0x8000_0000_0000_0000, 16), 1 << 15);
        assert_eq!(bucket(token_hash(NS_BODY, "space"), 20), 0x7374e);
    }

    /// Every length from 0 to 70 bytes (each of the 8-, 4- and 1-byte pieces, alone and
    /// together) and every integer write, folded into one value taken from the `fxhash` 0.2
    /// crate's `FxHasher64` before it was dropped.
    #[test]
    fn golden_every_length_and_integer_write() {
        let text: Vec<u8> = (0..70u8).map(|i| i.wrapping_mul(37) ^ 0xa5).collect();
        let mut folded = 0u64;
        for len in 0..=text.len() {
            let mut h = FrozenHasher::default();
            h.write(&text[..len]);
            folded = folded.rotate_left(7) ^ h.finish();
        }
        let mut h = FrozenHasher::default();
        h.write_u8(0xfe);
        h.write_u16(0xbeef);
        h.write_u32(0xdead_beef);
        h.write_u64(0x0123_4567_89ab_cdef);
        h.write_usize(42);
        folded = folded.rotate_left(7) ^ h.finish();
        assert_eq!(folded, GOLDEN_FOLD, "{folded:#018x}");
    }

    const GOLDEN_FOLD: u64 = 0x65d1_4307_9816_2d0b;
}
