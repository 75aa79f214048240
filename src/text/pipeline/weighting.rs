//! Feature values: from a document's bucket list (with repeats) to sorted (bucket, value) pairs.

use serde::{Deserialize, Serialize};

/// How a feature's count becomes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum ValueKind {
    /// 1 for a present feature.
    Binary,
    /// The count.
    Tf,
    /// 1 + ln(count).
    LogTf,
}

impl ValueKind {
    /// The name as typed on the command line (`--values`).
    pub fn name(self) -> &'static str {
        match self {
            ValueKind::Binary => "binary",
            ValueKind::Tf => "tf",
            ValueKind::LogTf => "log-tf",
        }
    }
}

/// The value stage, as stored in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueConfig {
    pub kind: ValueKind,
    /// Scale the document to unit L2 norm (before the bias feature is added).
    pub l2_normalize: bool,
}

impl ValueConfig {
    /// Sorts `buckets`, merges repeats and writes the weighted pairs into `indices`/`values`.
    pub fn weigh(&self, buckets: &mut [u32], indices: &mut Vec<u32>, values: &mut Vec<f32>) {
        self.count(buckets, indices, values);
        if self.l2_normalize {
            scale_to_unit_length(values);
        }
    }

    /// [`Self::weigh`] without the scaling: each bucket's value from its count.
    fn count(&self, buckets: &mut [u32], indices: &mut Vec<u32>, values: &mut Vec<f32>) {
        sort_buckets(buckets, indices);
        indices.clear();
        values.clear();
        for run in buckets.chunk_by(|a, b| a == b) {
            let count = run.len() as f32;
            indices.push(run[0]);
            values.push(match self.kind {
                ValueKind::Binary => 1.0,
                ValueKind::Tf => count,
                // Most features occur once; 1 + ln 1 is exactly 1.
                ValueKind::LogTf if run.len() == 1 => 1.0,
                ValueKind::LogTf => 1.0 + count.ln(),
            });
        }
    }

    /// The words' view of a document whose n-grams have a weight of their own
    /// ([`super::config::PipelineConfig::ngram_weight_per_mille`]): `words` (the unigrams and
    /// header features) and `ngrams` (the bigrams and longer, each a bucket list with repeats)
    /// valued apart by their counts, the n-grams' values multiplied by `weight`, added bucket by
    /// bucket (a bucket both hold gets the sum) and, with `l2_normalize`, the sum scaled to unit
    /// length once: so the weight is the n-grams' share against the words' within one document.
    pub fn weigh_ngrams(
        &self,
        words: &mut [u32],
        ngrams: &mut [u32],
        weight: f32,
        indices: &mut Vec<u32>,
        values: &mut Vec<f32>,
        scratch: &mut TwoViews,
    ) {
        self.add_two(words, ngrams, weight, false, indices, values, scratch);
    }

    /// Two views of a document, `words` and `chars` (each a bucket list with repeats), weighed
    /// apart as [`Self::weigh`] weighs one, the second's values multiplied by `weight`, added
    /// bucket by bucket (a bucket both hold gets the sum) and, with `l2_normalize`, the sum
    /// scaled to unit length. `scratch` holds each view's pairs between documents.
    pub fn weigh_two(
        &self,
        words: &mut [u32],
        chars: &mut [u32],
        weight: f32,
        indices: &mut Vec<u32>,
        values: &mut Vec<f32>,
        scratch: &mut TwoViews,
    ) {
        self.add_two(words, chars, weight, true, indices, values, scratch);
    }

    /// `first` and `second` valued by their counts (each scaled to unit length first when
    /// `scale_each` and `l2_normalize`), the second's values multiplied by `weight`, added, and
    /// the sum scaled to unit length with `l2_normalize`: [`Self::weigh_two`] and
    /// [`Self::weigh_ngrams`].
    #[allow(clippy::too_many_arguments)]
    fn add_two(
        &self,
        first: &mut [u32],
        second: &mut [u32],
        weight: f32,
        scale_each: bool,
        indices: &mut Vec<u32>,
        values: &mut Vec<f32>,
        scratch: &mut TwoViews,
    ) {
        let TwoViews {
            words: (first_indices, first_values),
            chars: (second_indices, second_values),
            ..
        } = scratch;
        if scale_each {
            self.weigh(first, first_indices, first_values);
            self.weigh(second, second_indices, second_values);
        } else {
            self.count(first, first_indices, first_values);
            self.count(second, second_indices, second_values);
        }
        add_weighed(
            (first_indices, first_values),
            (second_indices, second_values),
            weight,
            indices,
            values,
        );
        if self.l2_normalize {
            scale_to_unit_length(values);
        }
    }

    /// [`Self::weigh_two`] whose words' view is [`Self::weigh_ngrams`]'s (scaled to unit length
    /// with `l2_normalize` before the characters' view is added): n-grams with a weight of their
    /// own and character n-grams both.
    #[allow(clippy::too_many_arguments)]
    pub fn weigh_three(
        &self,
        words: &mut [u32],
        ngrams: &mut [u32],
        ngram_weight: f32,
        chars: &mut [u32],
        char_weight: f32,
        indices: &mut Vec<u32>,
        values: &mut Vec<f32>,
        scratch: &mut TwoViews,
    ) {
        let (mut word_indices, mut word_values) = std::mem::take(&mut scratch.word_view);
        self.weigh_ngrams(
            words,
            ngrams,
            ngram_weight,
            &mut word_indices,
            &mut word_values,
            scratch,
        );
        let (char_indices, char_values) = &mut scratch.chars;
        self.weigh(chars, char_indices, char_values);
        add_weighed(
            (&word_indices, &word_values),
            (char_indices, char_values),
            char_weight,
            indices,
            values,
        );
        if self.l2_normalize {
            scale_to_unit_length(values);
        }
        scratch.word_view = (word_indices, word_values);
    }
}

/// Adds two sorted lists of (bucket, value) pairs, the second's values multiplied by `weight`,
/// into `indices`/`values` (a bucket both hold gets the sum).
fn add_weighed(
    (a_indices, a_values): (&[u32], &[f32]),
    (b_indices, b_values): (&[u32], &[f32]),
    weight: f32,
    indices: &mut Vec<u32>,
    values: &mut Vec<f32>,
) {
    indices.clear();
    values.clear();
    let (mut i, mut j) = (0, 0);
    while i < a_indices.len() || j < b_indices.len() {
        let (a, b) = (
            a_indices.get(i).copied().unwrap_or(u32::MAX),
            b_indices.get(j).copied().unwrap_or(u32::MAX),
        );
        let bucket = a.min(b);
        let mut value = 0.0;
        if a == bucket {
            value += a_values[i];
            i += 1;
        }
        if b == bucket {
            value += weight * b_values[j];
            j += 1;
        }
        indices.push(bucket);
        values.push(value);
    }
}

/// The weighed pairs of each view of [`ValueConfig::weigh_two`], kept from document to
/// document so that weighing allocates nothing once they have grown.
#[derive(Debug, Default)]
pub struct TwoViews {
    words: (Vec<u32>, Vec<f32>),
    chars: (Vec<u32>, Vec<f32>),
    /// [`ValueConfig::weigh_three`]'s words' view, n-grams weighed in.
    word_view: (Vec<u32>, Vec<f32>),
}

/// Divides `values` by their L2 norm (none when they are all zero).
fn scale_to_unit_length(values: &mut [f32]) {
    let norm = values.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm > 0.0 {
        values.iter_mut().for_each(|v| *v /= norm);
    }
}

/// Documents with fewer buckets than this are sorted by comparison: the radix sort's tables
/// of counts cost the same whatever the document's length.
const RADIX_MIN: usize = 128;

/// The counts of a radix digit: 9 bits.
const DIGITS: usize = 512;

/// Sorts a document's buckets, with `scratch` as room. Buckets are the top `hash_bits` bits of
/// a hash, 16 to 18 for the built-in models and `train`'s default, so a least-significant-digit
/// radix sort orders them in two passes of at most 9 bits: one count of both digits, two
/// prefix sums, two scatters. Hand-written because it is this short and the radix crates sort
/// 8 bits a pass (radsort: three scatters for 18 bits, measured at 12% fewer instructions than
/// `sort_unstable` here). Wider buckets are sorted by comparison. Any sort gives the same
/// order of the same integers, so the features do not depend on which one ran.
fn sort_buckets(keys: &mut [u32], scratch: &mut Vec<u32>) {
    let bits = 32 - keys.iter().fold(0, |all, &k| all | k).leading_zeros();
    if keys.len() < RADIX_MIN || bits > 2 * DIGITS.trailing_zeros() {
        keys.sort_unstable();
        return;
    }
    let low = bits.div_ceil(2);
    let low_digit = |k: u32| k as usize & ((1 << low) - 1);
    let high_digit = |k: u32| (k >> low) as usize & (DIGITS - 1);
    let (mut lows, mut highs) = ([0u32; DIGITS], [0u32; DIGITS]);
    for &k in keys.iter() {
        lows[low_digit(k)] += 1;
        highs[high_digit(k)] += 1;
    }
    // Each digit's count becomes where its run starts.
    for counts in [&mut lows, &mut highs] {
        let mut sum = 0;
        for count in counts.iter_mut() {
            (*count, sum) = (sum, sum + *count);
        }
    }
    scratch.clear();
    scratch.resize(keys.len(), 0);
    for &k in keys.iter() {
        let at = &mut lows[low_digit(k)];
        scratch[*at as usize] = k;
        *at += 1;
    }
    for &k in scratch.iter() {
        let at = &mut highs[high_digit(k)];
        keys[*at as usize] = k;
        *at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words 7, 7, 9 (log-tf: 1 + ln 2 and 1) and characters 9, 11 (1 and 1), weight 0.5, by
    /// hand: bucket 9 is in both views and gets the sum.
    #[test]
    fn two_views_are_scaled_apart_weighed_and_added() {
        let config = ValueConfig {
            kind: ValueKind::LogTf,
            l2_normalize: true,
        };
        let (mut words, mut chars) = (vec![7, 9, 7], vec![11, 9]);
        let (mut indices, mut values, mut scratch) = (Vec::new(), Vec::new(), Default::default());
        config.weigh_two(
            &mut words,
            &mut chars,
            0.5,
            &mut indices,
            &mut values,
            &mut scratch,
        );
        let a = 1.0 + 2f32.ln();
        let n = (a * a + 1.0).sqrt();
        let c = 0.5 / 2f32.sqrt();
        let raw = [a / n, 1.0 / n + c, c];
        let total = raw.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert_eq!(indices, [7, 9, 11]);
        for (v, r) in values.iter().zip(raw) {
            assert!((v - r / total).abs() < 1e-6, "{values:?}");
        }
        // Without words (every one a stop word), the characters alone, at unit length.
        let (mut none, mut chars) = (vec![], vec![11, 9]);
        config.weigh_two(
            &mut none,
            &mut chars,
            0.5,
            &mut indices,
            &mut values,
            &mut scratch,
        );
        assert_eq!(indices, [9, 11]);
        assert!(values.iter().all(|v| (v - 0.5f32.sqrt()).abs() < 1e-6));
    }

    proptest::proptest! {
        /// The radix sort orders buckets as `sort_unstable` does, for every hash width (those
        /// over 18 bits are sorted by comparison) and for lengths on both sides of
        /// [`RADIX_MIN`], with repeats.
        #[test]
        fn buckets_sort_as_sort_unstable_sorts(
            bits in 0u32..=32,
            keys in proptest::collection::vec(proptest::num::u32::ANY, 0..600),
            repeats in 0usize..4,
        ) {
            let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            let mut keys: Vec<u32> = keys.iter().map(|k| k & mask).collect();
            let again: Vec<u32> = keys.iter().copied().step_by(3).take(repeats * 40).collect();
            keys.extend(again);
            let mut want = keys.clone();
            want.sort_unstable();
            let mut scratch = vec![7; 3];
            sort_buckets(&mut keys, &mut scratch);
            proptest::prop_assert_eq!(keys, want);
        }
    }

    fn weigh(kind: ValueKind, l2: bool) -> (Vec<u32>, Vec<f32>) {
        let (mut i, mut v) = (Vec::new(), Vec::new());
        let mut buckets = vec![7, 3, 7, 7, 1];
        ValueConfig {
            kind,
            l2_normalize: l2,
        }
        .weigh(&mut buckets, &mut i, &mut v);
        (i, v)
    }

    #[test]
    fn value_kinds() {
        assert_eq!(
            weigh(ValueKind::Binary, false),
            (vec![1, 3, 7], vec![1.0, 1.0, 1.0])
        );
        assert_eq!(weigh(ValueKind::Tf, false).1, vec![1.0, 1.0, 3.0]);
        let log = weigh(ValueKind::LogTf, false).1;
        assert!((log[2] - (1.0 + 3f32.ln())).abs() < 1e-6);
        // tf (1, 1, 3) has norm √11.
        let l2 = weigh(ValueKind::Tf, true).1;
        assert!((l2[2] - 3.0 / 11f32.sqrt()).abs() < 1e-6);
    }
}
