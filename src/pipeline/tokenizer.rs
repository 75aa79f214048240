//! Tokenisers: text → word slices. Unicode word boundaries (UAX #29) via `unicode-segmentation`,
//! so that "naïve", "don't", "3.14" and CJK text split the way a reader would.

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

/// A tokeniser hands every token of a text to a sink, in order.
pub trait Tokenizer: Send {
    fn tokenize<'a>(&self, text: &'a str, sink: &mut dyn FnMut(&'a str));
}

/// The configured tokeniser, as stored in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TokenizerConfig {
    /// UAX #29 words: runs of letters, digits and word-internal punctuation.
    UnicodeWords,
}

impl TokenizerConfig {
    pub fn build(&self) -> Box<dyn Tokenizer> {
        match self {
            TokenizerConfig::UnicodeWords => Box::new(UnicodeWords),
        }
    }
}

/// UAX #29 word segmentation.
pub struct UnicodeWords;

impl Tokenizer for UnicodeWords {
    fn tokenize<'a>(&self, text: &'a str, sink: &mut dyn FnMut(&'a str)) {
        text.unicode_words().for_each(sink);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unicode_words() {
        let mut out = Vec::new();
        UnicodeWords.tokenize("Naïve users don't pay $3.14, 東京!", &mut |t| {
            out.push(t)
        });
        assert_eq!(out, ["Naïve", "users", "don't", "pay", "3.14", "東", "京"]);
    }
}
