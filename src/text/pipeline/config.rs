//! The stored form of the configurable stages and the factories that build them: a model
//! keeps a [`TokenizerConfig`] and a list of [`FilterConfig`]s (serde values), and
//! [`super::Pipeline`] builds the stages from them. The factories live here, above the stage
//! files, so that no stage's file needs another's: a stage implements its trait
//! ([`Tokenizer`] or [`TokenFilter`]) and knows nothing of the configuration.

use serde::{Deserialize, Serialize};

use super::filter::{Lowercase, MaxLength, TokenFilter};
use super::stem::{Stem, StemLanguage};
use super::stopwords::StopWords;
use super::subword::{Bpe, WordPiece};
use super::tokenizer::{Tokenizer, UnicodeWords};
use crate::error::{Error, Result};

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

/// The configured tokeniser, as stored in the model. The subword variants carry their trained
/// vocabulary, so a model never depends on anything outside its file.
///
/// Adjacently tagged (`{"type":"bpe","vocabulary":{…}}`; a unit variant is `{"type":"unicode_words"}`
/// as before): serde buffers an internally tagged value whole before reading it, which for a
/// vocabulary of 30,000 pieces made loading a model several times slower; with the tag first
/// and the content beside it, the vocabulary is read once, in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "vocabulary", rename_all = "snake_case")]
pub enum TokenizerConfig {
    /// UAX #29 words: runs of letters, digits and word-internal punctuation.
    UnicodeWords,
    /// Byte-pair-encoding pieces of the (NFKC, lowercased) UAX #29 words.
    Bpe(Bpe),
    /// WordPiece pieces of the (NFKC, lowercased) UAX #29 words; pieces inside a word start
    /// with `##`.
    #[serde(rename = "wordpiece")]
    WordPiece(WordPiece),
}

impl TokenizerConfig {
    /// The tokeniser; an error when a stored vocabulary is inconsistent, or when this cwtext was
    /// built without the `subword` feature that a subword vocabulary needs.
    /// `symbols`: also yield the punctuation, symbol and emoji segments between the words.
    pub fn build(&self, symbols: bool) -> Result<Box<dyn Tokenizer>> {
        match self {
            TokenizerConfig::UnicodeWords => Ok(Box::new(UnicodeWords { symbols })),
            TokenizerConfig::Bpe(vocabulary) => vocabulary.build(symbols),
            TokenizerConfig::WordPiece(vocabulary) => vocabulary.build(symbols),
        }
    }

    /// A short name for messages: `words`, `bpe` or `wordpiece`.
    pub fn name(&self) -> &'static str {
        match self {
            TokenizerConfig::UnicodeWords => "words",
            TokenizerConfig::Bpe(_) => "bpe",
            TokenizerConfig::WordPiece(_) => "wordpiece",
        }
    }
}
