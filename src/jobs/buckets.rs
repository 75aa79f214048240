//! How many buckets `train` hashes features into when the user does not say (`--hash-bits`):
//! more than the base 2^18 for corpora of many words and few labels, never for mail.
//!
//! Every word, bigram and character n-gram is hashed into one of 2^bits buckets, and the
//! features that share a bucket share its weight. At the base 2^18 (262,144 buckets) a corpus of
//! sentences with character n-grams already has 60,000 to 170,000 distinct features, and 20
//! Newsgroups a million, so many features carry another one's weight. More buckets cost memory
//! and disk, a mean and a variance (f32 each) per label and bucket, so the table is labels ×
//! 2^bits × 8 bytes: the rule grows it only where labels are few, up to [`TABLE_BYTES`] (the
//! size of a 16-label model at 2^18), and only as far as the corpus has words to fill it
//! ([`BUCKETS_PER_WORD`]).
//!
//! Measured (`benches/results/hash-bits-2026-11-28.md`), the rule's bits against 2^18: on the
//! comparison's splits, three seeds, movie-review sentences +0.83 points (2^21), tweets +0.79,
//! amazon sentences +0.74, questions +0.39, election tweets +0.20, Reuters R8 +0.12 and New York
//! Times sentences −0.77 (2^19 or 2^20); on five random splits of nine short-text corpora +0.16
//! on average (NYT +0.90 there); on pairs of close newsgroups (long texts, 2^21) +0.35. Mail
//! gained nothing (SpamAssassin 0.00 at 2^21 on two seeds, its five folders +0.04 at 2^20) and
//! is relearned a message at a time in delivery, where a larger model is rewritten on every
//! refile (12 ms became 112 ms at 2^22): mail keeps 2^18.

use crate::text::length::{thousands, TextLength};
use crate::text::pipeline::config::PipelineConfig;

/// The largest weight table the rule grows to, in bytes (f32 means and variances): 32 MiB, what
/// a 16-label model takes at 2^18 buckets. From 9 labels on (9 × 2^19 × 8 bytes pass it) a model
/// keeps 2^18.
pub const TABLE_BYTES: usize = 32 << 20;

/// Buckets wanted per word of the corpus (estimated as the median document's words times the
/// documents): a corpus of fewer than 2^18 / 8 = 32,768 words keeps 2^18.
pub const BUCKETS_PER_WORD: usize = 8;

/// Bytes per label and bucket in an f32 table: a mean and a variance.
const CELL_BYTES: usize = 8;

/// The hash bits the rule gives a corpus of `length` with `labels` labels trained in `shards`
/// shards, and why, for people. The base ([`PipelineConfig::default`]'s 18) for mail, for a
/// corpus of few words, and for one of many labels; otherwise the fewest bits that give
/// [`BUCKETS_PER_WORD`] buckets a word, at most as many as keep the tables trained at once (one
/// per shard, each labels × 2^bits × 8 bytes) within [`TABLE_BYTES`] together. A cluster's
/// processes pass its process count, so that the cluster hashes as `train --shards N --mix`.
pub fn chosen_hash_bits(length: &TextLength, labels: usize, shards: usize) -> (u8, String) {
    let base = PipelineConfig::default().hash_bits;
    if length.is_mail() {
        return (
            base,
            format!("mail keeps the base 2^{base} buckets: more gained it nothing, and its model is rewritten on every refile"),
        );
    }
    let words = length.estimated_words();
    let wanted = words.saturating_mul(BUCKETS_PER_WORD);
    let table = |bits: u8| {
        labels
            .max(1)
            .saturating_mul(CELL_BYTES)
            .saturating_mul(1usize << bits)
    };
    let tables = |bits: u8| table(bits).saturating_mul(shards.max(1));
    let mut bits = base;
    while (1usize << bits) < wanted && tables(bits + 1) <= TABLE_BYTES {
        bits += 1;
    }
    let held = if shards > 1 {
        format!(" ({shards} shards' tables together)")
    } else {
        String::new()
    };
    let capped = (1usize << bits) < wanted;
    let why = if bits > base && !capped {
        format!(
            "hash bits {bits} ({} buckets, a weight table of {:.1} MB): about {} words, {BUCKETS_PER_WORD} buckets a word for {labels} label{} within {} MiB{held}, so that fewer features share a weight",
            thousands(1usize << bits),
            table(bits) as f64 / 1e6,
            thousands(words),
            if labels == 1 { "" } else { "s" },
            TABLE_BYTES >> 20
        )
    } else if bits > base {
        format!(
            "hash bits {bits} ({} buckets, a weight table of {:.1} MB), so that fewer features share a weight: about {} words would want {BUCKETS_PER_WORD} buckets a word, but {labels} labels at 2^{} would pass {} MiB{held}",
            thousands(1usize << bits),
            table(bits) as f64 / 1e6,
            thousands(words),
            bits + 1,
            TABLE_BYTES >> 20
        )
    } else if !capped {
        format!(
            "hash bits {base}: about {} words fill 2^{base} buckets at {BUCKETS_PER_WORD} a word",
            thousands(words)
        )
    } else {
        format!(
            "hash bits {base}: {labels} labels at 2^{} buckets would pass a weight table of {} MiB{held}",
            base + 1,
            TABLE_BYTES >> 20
        )
    };
    (bits, why)
}

/// A weight table past this many bytes gets [`large_table_advice`]: 256 MiB, eight times the
/// most the hash-bits rule grows to ([`TABLE_BYTES`]).
pub const LARGE_TABLE_BYTES: u64 = 256 << 20;

/// What to say of a model whose weight table, `labels` × 2^`bits` buckets at `bytes_per_value`
/// (4 for f32, 2 for f16) per mean and variance, passes [`LARGE_TABLE_BYTES`]; `None` below.
/// The table grows with the labels at a fixed number of buckets (mail keeps 2^18 whatever its
/// folders: 300 folders make 630 MB), every `classify` maps it, and every `learn` rewrites it
/// (one refile into a 643 MB model of 300 labels took 2.1 s and 1.27 GB of memory on this
/// project's two-core machine), so a user with many folders is told how to make it smaller.
pub fn large_table_advice(labels: usize, bits: u8, bytes_per_value: u64) -> Option<String> {
    let bytes = |bits: u8| labels as u64 * (1u64 << bits) * 2 * bytes_per_value;
    let table = bytes(bits);
    if table <= LARGE_TABLE_BYTES {
        return None;
    }
    let fewer = bits.saturating_sub(2).max(16);
    let mut ways = Vec::new();
    if fewer < bits {
        ways.push(format!(
            "--hash-bits {fewer} makes it {:.0} MB (more features share a bucket)",
            bytes(fewer) as f64 / 1e6
        ));
    }
    if bytes_per_value > 2 {
        ways.push("--encoding f16 halves it (weights to about three significant digits)".into());
    }
    Some(format!(
        "a large model: {labels} labels × 2^{bits} buckets make a weight table of {:.0} MB, which every classify maps and every learn rewrites{}",
        table as f64 / 1e6,
        if ways.is_empty() {
            String::new()
        } else {
            format!("; {}", ways.join(", "))
        }
    ))
}

#[cfg(test)]
mod tests {

    /// Hand-computed: 300 labels × 2^18 buckets × 2 values × 4 bytes = 629,145,600 bytes; at
    /// 2^16 a quarter, 157,286,400. 128 labels at 2^18 in f32 are exactly 256 MiB: no advice.
    #[test]
    fn a_large_table_is_named_with_the_ways_to_shrink_it() {
        assert_eq!(
            large_table_advice(300, 18, 4).unwrap(),
            "a large model: 300 labels × 2^18 buckets make a weight table of 629 MB, which every classify maps and every learn rewrites; --hash-bits 16 makes it 157 MB (more features share a bucket), --encoding f16 halves it (weights to about three significant digits)"
        );
        assert_eq!(large_table_advice(128, 18, 4), None);
        assert_eq!(
            large_table_advice(2000, 16, 2).unwrap(),
            "a large model: 2000 labels × 2^16 buckets make a weight table of 524 MB, which every classify maps and every learn rewrites"
        );
    }

    use super::*;

    fn length(median_words: usize, documents: usize, mail: bool) -> TextLength {
        TextLength {
            sampled: 200,
            median_words,
            documents,
            mail: if mail { 200 } else { 0 },
            unspaced: 0,
        }
    }

    /// The rule's figures, by hand: buckets wanted = 8 × words, grown from 2^18 while the
    /// table (labels × 2^bits × 8 bytes) stays within 32 MiB = 33,554,432 bytes.
    #[test]
    fn bits_by_hand() {
        // 177,450 words (the movie sentences): 1,419,600 buckets wanted, 2^21 = 2,097,152 is
        // the first power at least that; 2 labels × 2^21 × 8 = 33,554,432 bytes, exactly the cap.
        assert_eq!(chosen_hash_bits(&length(21, 8450, false), 2, 1).0, 21);
        // 34,208 words (the questions, 6 labels): 273,664 wanted > 2^18 = 262,144, so 2^19;
        // 6 × 2^19 × 8 = 25,165,824 bytes fits.
        assert_eq!(chosen_hash_bits(&length(8, 4276, false), 6, 1).0, 19);
        // 367,495 words and 8 labels (Reuters R8): 2^22 wanted, but 8 × 2^20 × 8 = 64 MiB
        // passes the cap, so 2^19 (8 × 2^19 × 8 = 32 MiB, the cap exactly).
        assert_eq!(chosen_hash_bits(&length(67, 5485, false), 8, 1).0, 19);
        // 20 labels: 20 × 2^19 × 8 = 80 MiB; the base stays.
        assert_eq!(chosen_hash_bits(&length(168, 11293, false), 20, 1).0, 18);
        // 32,768 words fill 2^18 at 8 a word; one more document's words want 2^19.
        assert_eq!(chosen_hash_bits(&length(8, 4096, false), 2, 1).0, 18);
        assert_eq!(chosen_hash_bits(&length(8, 4097, false), 2, 1).0, 19);
        // Mail keeps the base however many words and few labels.
        let (bits, why) = chosen_hash_bits(&length(144, 4797, true), 2, 1);
        assert_eq!(bits, 18);
        assert!(why.contains("mail keeps the base"), "{why}");
        // One label is treated as one table.
        assert_eq!(chosen_hash_bits(&length(20, 100_000, false), 1, 1).0, 22);
        // Shards hold a table each: 2 labels in 4 shards, 4 × 2 × 2^19 × 8 = 32 MiB, so 2^19
        // where one shard reached 2^21; 2 labels in 8 shards keep 2^18.
        assert_eq!(chosen_hash_bits(&length(21, 8450, false), 2, 4).0, 19);
        assert_eq!(chosen_hash_bits(&length(21, 8450, false), 2, 8).0, 18);
    }

    #[test]
    fn the_reason_names_the_table_and_the_words() {
        let (_, why) = chosen_hash_bits(&length(21, 8450, false), 2, 1);
        assert!(
            why.starts_with("hash bits 21 (2,097,152 buckets, a weight table of 33.6 MB)"),
            "{why}"
        );
        let (_, small) = chosen_hash_bits(&length(10, 100, false), 2, 1);
        assert!(
            small.contains("about 1,000 words fill 2^18 buckets"),
            "{small}"
        );
        // The cap, not the words, stopped Reuters R8 at 2^19 (2^22 wanted).
        let (_, capped) = chosen_hash_bits(&length(67, 5485, false), 8, 1);
        assert!(
            capped.contains("about 367,495 words would want 8 buckets a word, but 8 labels at 2^20 would pass 32 MiB"),
            "{capped}"
        );
        let (_, shards) = chosen_hash_bits(&length(21, 8450, false), 2, 8);
        assert!(
            shards.contains("2 labels at 2^19 buckets would pass a weight table of 32 MiB (8 shards' tables together)"),
            "{shards}"
        );
        let (_, many) = chosen_hash_bits(&length(168, 11293, false), 20, 1);
        assert!(
            many.contains("20 labels at 2^19 buckets would pass"),
            "{many}"
        );
    }

    /// Every chosen value is one `--hash-bits` accepts.
    #[test]
    fn chosen_bits_are_valid_settings() {
        use crate::text::pipeline::config::HASH_BITS_RANGE;
        for labels in [1, 2, 3, 7, 16, 17, 500] {
            for documents in [1, 1000, 1_000_000, usize::MAX / 1000] {
                let bits = chosen_hash_bits(&length(1000, documents, false), labels, 1).0;
                assert!(
                    HASH_BITS_RANGE.contains(&bits),
                    "{labels} {documents}: {bits}"
                );
            }
        }
    }
}
