//! N-grams: unigram hashes plus the hashes of every run of 2..=n adjacent tokens (adjacent after
//! filtering, so a bigram may bridge a dropped stop word).

use super::hash::ngram_hash;

/// Generates unigram and n-gram hashes from a document's token hashes.
#[derive(Debug, Clone, Copy)]
pub struct Ngrams {
    pub max_n: usize,
}

impl Ngrams {
    pub fn generate(&self, tokens: &[u64], out: &mut Vec<u64>) {
        out.extend_from_slice(tokens);
        for n in 2..=self.max_n {
            out.extend(
                tokens
                    .windows(n)
                    .map(|w| w[1..].iter().fold(w[0], |h, &t| ngram_hash(h, t))),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unigrams_then_bigrams_then_trigrams() {
        let mut out = Vec::new();
        Ngrams { max_n: 3 }.generate(&[1, 2, 3], &mut out);
        assert_eq!(&out[..3], &[1, 2, 3]);
        assert_eq!(out[3], ngram_hash(1, 2));
        assert_eq!(out[4], ngram_hash(2, 3));
        assert_eq!(out[5], ngram_hash(ngram_hash(1, 2), 3));
        assert_eq!(out.len(), 6);
    }
}
