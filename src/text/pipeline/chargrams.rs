//! Character n-grams beside the words: each word of the body, lowercased and bracketed
//! (`<what>`), gives its runs of `min..=max` characters (`<wh`, `wha`, `hat`, `at>`, `<wha`, …),
//! hashed in a namespace of their own. fastText's subword features (Bojanowski et al., TACL 2017,
//! §3.2: a word is `<` + word + `>`, its n-grams for 3 ≤ n ≤ 6, the bracketed word itself kept
//! apart), here hashed into the same buckets as the words instead of learned as vectors.
//!
//! They are a second view of the document: the words' features and the characters' are each
//! weighted and scaled to unit length on their own, the characters' multiplied by
//! [`CharNgrams::weight`], and the two added ([`super::weighting::ValueConfig::weigh_two`]), so
//! the many character n-grams of a document do not drown its few words. On short texts
//! (questions, sentences, messages, tweets) they find what words alone miss: inflections,
//! misspellings, words never seen in training that share a stem or a suffix with ones that were
//! (`benches/results/char-ngrams-2026-11-27.md`).

use serde::{Deserialize, Serialize};

use super::hash::{token_hash, NS_CHAR};
use super::tokenizer::{Tokenizer, UnicodeWords};
use crate::error::{Error, Result};

/// The longest word (in characters, brackets not counted) that gives character n-grams: the
/// default pipeline's token length limit, so runs of base64 or glued URLs give none.
pub const MAX_WORD_CHARS: usize = 40;

/// The range of n a model may ask for.
pub const N_RANGE: std::ops::RangeInclusive<u8> = 1..=8;

/// The character n-gram stage, as stored in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CharNgrams {
    /// Shortest n-gram, in characters (the brackets count).
    pub min: u8,
    /// Longest n-gram.
    pub max: u8,
    /// The characters' share beside the words, in thousandths (500: the characters' unit
    /// vector scaled by 0.5 before the two views are added). Stored as an integer so that a
    /// pipeline compares and hashes exactly.
    pub weight_per_mille: u16,
}

impl Default for CharNgrams {
    /// What `train` adds to short texts: 3 to 5 characters (fastText's range, shortened by one:
    /// its 6-grams are mostly whole short words, which the words already give), weight 0.5.
    fn default() -> Self {
        CharNgrams {
            min: 3,
            max: 5,
            weight_per_mille: 500,
        }
    }
}

impl CharNgrams {
    /// Checks the range and the weight, naming the bad value.
    pub fn validate(&self) -> Result<()> {
        if !N_RANGE.contains(&self.min) || !N_RANGE.contains(&self.max) || self.min > self.max {
            return Err(Error::InvalidSetting(format!(
                "character n-grams must run from n to m with {} ≤ n ≤ m ≤ {}, but are {} to {}",
                N_RANGE.start(),
                N_RANGE.end(),
                self.min,
                self.max
            )));
        }
        if self.weight_per_mille == 0 || self.weight_per_mille > 10_000 {
            return Err(Error::InvalidSetting(format!(
                "the weight of character n-grams must be in (0, 10], but is {}",
                self.weight()
            )));
        }
        Ok(())
    }

    /// The characters' weight beside the words.
    pub fn weight(&self) -> f32 {
        f32::from(self.weight_per_mille) / 1000.0
    }

    /// For people: "3–5 characters, weight 0.5".
    pub fn describe(&self) -> String {
        format!(
            "{}–{} characters, weight {}",
            self.min,
            self.max,
            self.weight()
        )
    }

    /// Calls `sink` with the hash and the text of every character n-gram of `text`'s words, in
    /// order: word by word, by n, by position. `scratch` holds the bracketed word and its
    /// character offsets between calls (no allocation per word once they have grown).
    pub fn for_each(&self, text: &str, scratch: &mut CharScratch, sink: &mut dyn FnMut(u64, &str)) {
        let (min, max) = (usize::from(self.min), usize::from(self.max));
        let CharScratch { word, offsets } = scratch;
        UnicodeWords { symbols: false }.tokenize(text, &mut |w| {
            word.clear();
            offsets.clear();
            word.push('<');
            if w.is_ascii() {
                if w.len() > MAX_WORD_CHARS {
                    return;
                }
                word.extend(w.bytes().map(|b| char::from(b.to_ascii_lowercase())));
            } else {
                if w.chars().nth(MAX_WORD_CHARS).is_some() {
                    return;
                }
                word.extend(w.chars().flat_map(char::to_lowercase));
            }
            word.push('>');
            offsets.extend(word.char_indices().map(|(i, _)| i));
            offsets.push(word.len());
            let chars = offsets.len() - 1;
            for n in min..=max.min(chars) {
                // The bracketed word itself is the word's own feature.
                if n == chars {
                    break;
                }
                for start in 0..=chars - n {
                    let gram = &word[offsets[start]..offsets[start + n]];
                    sink(token_hash(NS_CHAR, gram), gram);
                }
            }
        });
    }
}

/// Room reused from word to word by [`CharNgrams::for_each`].
#[derive(Debug, Default)]
pub struct CharScratch {
    word: String,
    offsets: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grams(c: CharNgrams, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        c.for_each(text, &mut CharScratch::default(), &mut |h, g| {
            assert_eq!(h, token_hash(NS_CHAR, g));
            out.push(g.to_string())
        });
        out
    }

    #[test]
    fn a_word_gives_its_bracketed_runs_by_n_then_position_but_not_itself() {
        let c = CharNgrams {
            min: 3,
            max: 5,
            weight_per_mille: 500,
        };
        // <what> has 6 characters: 4 trigrams, 3 four-grams, 2 five-grams.
        assert_eq!(
            grams(c, "What?"),
            ["<wh", "wha", "hat", "at>", "<wha", "what", "hat>", "<what", "what>"]
        );
        // <is> has 4 characters: its 4-gram would be the word itself.
        assert_eq!(grams(c, "is"), ["<is", "is>"]);
        assert_eq!(grams(c, "a"), Vec::<String>::new()); // <a> is the word
                                                         // Words one by one, in order; punctuation is no word.
        assert_eq!(grams(c, "ox, ox").len(), 4);
    }

    #[test]
    fn other_scripts_are_cut_at_characters_and_lowercased() {
        let c = CharNgrams {
            min: 2,
            max: 3,
            weight_per_mille: 1000,
        };
        assert_eq!(
            grams(c, "Ærø"),
            ["<æ", "ær", "rø", "ø>", "<ær", "ærø", "rø>"]
        );
        // UAX #29 gives each ideograph as a word: <東> is the word itself at n = 3.
        assert_eq!(grams(c, "東京"), ["<東", "東>", "<京", "京>"]);
    }

    #[test]
    fn long_words_give_none() {
        let c = CharNgrams::default();
        assert!(grams(c, &"x".repeat(MAX_WORD_CHARS + 1)).is_empty());
        assert!(grams(c, &"é".repeat(MAX_WORD_CHARS + 1)).is_empty());
        // <x…x> has 42 characters: 40 trigrams, 39 four-grams, 38 five-grams.
        assert_eq!(grams(c, &"x".repeat(MAX_WORD_CHARS)).len(), 40 + 39 + 38);
    }

    #[test]
    fn bad_settings_are_named() {
        for (min, max, w) in [(0, 3, 500), (4, 3, 500), (3, 9, 500), (3, 5, 0)] {
            let c = CharNgrams {
                min,
                max,
                weight_per_mille: w,
            };
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains("character n-grams"), "{e}");
        }
        CharNgrams::default().validate().unwrap();
    }
}
