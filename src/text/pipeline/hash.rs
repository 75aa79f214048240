//! Feature hashing: the one function that maps a token or n-gram to a bucket.
//!
//! **Never change anything in this file.** Every model file stores weights by bucket; a model
//! trained with one hash and applied with another silently predicts garbage. The golden values in
//! the tests below pin it: if they fail, the change is a model-format break, not a refactor.
//!
//! The hash is FxHash (the `fxhash` crate, 64-bit). FxHash ends with one multiplication, so its
//! *low* bits are poorly mixed for short keys (a one-byte key changes only the low bits of the
//! product in a regular pattern); the *high* bits collect the carries of every input bit. The
//! bucket is therefore taken from the top `bits` bits (Fibonacci hashing), never with `% n` or a
//! low mask. The test `collisions_match_a_random_function` checks this on a real vocabulary.

use std::hash::Hasher;

use fxhash::FxHasher64;

// FxHasher64 reads 8-byte chunks in native byte order; pinning the hash means pinning that.
#[cfg(target_endian = "big")]
compile_error!("cwtext's feature hash is defined on little-endian byte order");

/// Namespaces keep the same word in different fields apart (body "free" ≠ subject "free").
pub const NS_BODY: u8 = 0;
pub const NS_SUBJECT: u8 = 1;
pub const NS_FROM: u8 = 2;
pub const NS_TO: u8 = 3;

/// The 64-bit hash of a token in a namespace.
#[inline]
pub fn token_hash(namespace: u8, token: &str) -> u64 {
    token_hash_bytes(namespace, token.as_bytes())
}

/// [`token_hash`] of a token's UTF-8 bytes.
#[inline]
pub fn token_hash_bytes(namespace: u8, token: &[u8]) -> u64 {
    let mut h = FxHasher64::default();
    h.write_u8(namespace);
    h.write(token);
    h.finish()
}

/// The 64-bit hash of an n-gram, from the hash of its prefix and the hash of its next token.
/// Order matters: "new york" and "york new" differ.
#[inline]
pub fn ngram_hash(prefix: u64, next: u64) -> u64 {
    let mut h = FxHasher64::default();
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
}
