//! The stored form of the pipeline and of its configurable stages, and the factories that
//! build the stages: a model keeps a [`PipelineConfig`] with a [`TokenizerConfig`] and a list of
//! [`FilterConfig`]s (serde values), and [`super::Pipeline`] builds the stages from them. The factories live here, above the stage
//! files, so that no stage's file needs another's: a stage implements its trait
//! ([`Tokenizer`] or [`TokenFilter`]) and knows nothing of the configuration.

use serde::{Deserialize, Serialize};

use super::chargrams::CharNgrams;
use super::elisions::Elisions;
use super::filter::{Lowercase, MaxLength, TokenFilter};
use super::stem::{Stem, StemLanguage};
use super::stopwords;
use super::stopwords::StopWords;
use super::subword::{Bpe, WordPiece};
use super::tokenizer::{Tokenizer, UnicodeWords};
use super::weighting::{ValueConfig, ValueKind};
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
    /// Takes a language's elided articles off words (*l'homme* → *homme*,
    /// [`super::elisions`]). The articles themselves are stored, as stop words are.
    Elisions { name: String, articles: Vec<String> },
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
            FilterConfig::Elisions { articles, .. } => Box::new(Elisions::new(articles)),
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

/// The range of `hash_bits`: below 2^16 buckets bigrams collide too much to be useful; above
/// 2^26 a 20-label model would need gigabytes.
pub const HASH_BITS_RANGE: std::ops::RangeInclusive<u8> = 16..=26;

/// The whole configured pipeline, as stored in the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PipelineConfig {
    pub tokenizer: TokenizerConfig,
    pub filters: Vec<FilterConfig>,
    /// 1 = unigrams, 2 = unigrams and bigrams, 3 = up to trigrams.
    pub max_ngram: usize,
    /// Features are hashed into 2^hash_bits buckets.
    pub hash_bits: u8,
    pub values: ValueConfig,
    /// Add a constant feature so that each label learns a prior.
    pub bias: bool,
    /// Give email Subject, From and To header-prefixed features of their own.
    pub email_headers: bool,
    /// Give the other fields of a mail's header (List-Id, X-Mailer, Content-Type, the hosts of
    /// Received, ...) their presence and their words, each prefixed by the field's name; which
    /// fields and which part of each is [`super::fields::field_use`]. Absent in models written
    /// before it existed, which had none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub header_fields: bool,
    /// Which fields, and which part of each, [`Self::header_fields`] reads. Absent in models
    /// written while every field was read whole, which go on reading them so.
    #[serde(default, skip_serializing_if = "FieldRule::is_every_field_whole")]
    pub field_rule: FieldRule,
    /// An HTML page (a file or standard input that sniffs as HTML), and a mail's HTML part, is
    /// read as its text: title and words, apart at block-level tags
    /// ([`crate::text::input::html`]). Absent in models written before it existed, which read a
    /// page as it is and an HTML part by mail-parser's conversion.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub html_text: bool,
    /// Punctuation, symbols and emoji between the words are tokens too (see [`super::tokenizer`]).
    /// Absent in models written before it existed, which had none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub symbols: bool,
    /// Character n-grams of the body's words beside the words ([`super::chargrams`]). Absent
    /// in models without them; a model with them is a format version 4 file, which cwtext
    /// from before them refuses instead of predicting without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub char_ngrams: Option<CharNgrams>,
    /// The text's first word (a mail's: its Subject's) is a feature of its own too, marked as
    /// first (`first:how`): how a short text begins (a question's "how", "who", "when"; a
    /// collection's opening formula) can decide its label, and the word's other features
    /// cannot say where it stood. Off unless asked for (`train --first-word`). Absent in models
    /// without it; a model with it is a format version 5 file, which cwtext from before it
    /// refuses instead of predicting without it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub first_word: bool,
    /// The n-grams' (bigrams', trigrams') share beside the words, in thousandths: each
    /// n-gram's value is multiplied by it before the document is scaled to unit length, so
    /// that the many rare n-grams of a long document carry less of it. `None`: they count as
    /// the words do (one list, as before it existed). Absent in models without it; a model with
    /// it is a format version 6 file, which cwtext from before it refuses instead of predicting
    /// with the n-grams at full weight. Stored as an integer so that a pipeline compares and
    /// hashes exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ngram_weight_per_mille: Option<u16>,
    /// Read at most this many bytes of a document; the rest is cut off with a warning, so one
    /// huge file cannot exhaust memory or time.
    #[serde(default = "default_max_document_bytes")]
    pub max_document_bytes: usize,
    /// Use at most this many tokens of a document (body and headers); the rest are dropped with
    /// a warning.
    #[serde(default = "default_max_tokens")]
    pub max_tokens: usize,
    /// Read mail text parts at most this many multipart levels deep; deeper ones are skipped
    /// with a warning.
    #[serde(default = "default_max_mime_depth")]
    pub max_mime_depth: usize,
}

/// 16 MiB: far above any real message or article, far below what would hurt.
pub const DEFAULT_MAX_DOCUMENT_BYTES: usize = 16 << 20;
/// One million tokens per document.
pub const DEFAULT_MAX_TOKENS: usize = 1_000_000;

/// Real mail nests two or three levels (mixed → alternative → text); 32 leaves ample room.
pub const DEFAULT_MAX_MIME_DEPTH: usize = 32;

fn default_max_mime_depth() -> usize {
    DEFAULT_MAX_MIME_DEPTH
}

fn default_max_document_bytes() -> usize {
    DEFAULT_MAX_DOCUMENT_BYTES
}

fn default_max_tokens() -> usize {
    DEFAULT_MAX_TOKENS
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            tokenizer: TokenizerConfig::UnicodeWords,
            filters: vec![
                FilterConfig::Lowercase,
                FilterConfig::MaxLength { chars: 40 },
                FilterConfig::StopWords {
                    name: "english".into(),
                    words: stopwords::load("english").expect("the built-in list exists"),
                },
            ],
            max_ngram: 2,
            hash_bits: 18,
            values: ValueConfig {
                kind: ValueKind::LogTf,
                l2_normalize: true,
            },
            bias: true,
            email_headers: true,
            header_fields: true,
            field_rule: FieldRule::Stable,
            html_text: true,
            symbols: false,
            char_ngrams: None,
            first_word: false,
            ngram_weight_per_mille: None,
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            max_tokens: DEFAULT_MAX_TOKENS,
            max_mime_depth: DEFAULT_MAX_MIME_DEPTH,
        }
    }
}

/// Which header fields give features (see [`super::fields`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum FieldRule {
    /// Every field, its whole value, dates, queue ids and relays' addresses included: what
    /// models written from a23cc96 until the rule below read (the default of a model file that
    /// names no rule).
    #[default]
    #[cfg_attr(
        feature = "cli",
        value(
            name = "whole",
            help = "Every field, its whole value: dates, queue ids and relays' addresses too"
        )
    )]
    EveryFieldWhole,
    /// [`super::fields::field_use`]: the fields and parts that recur in later mail.
    #[cfg_attr(
        feature = "cli",
        value(help = "The fields and parts that recur in later mail")
    )]
    Stable,
}

impl FieldRule {
    fn is_every_field_whole(&self) -> bool {
        *self == FieldRule::EveryFieldWhole
    }

    /// Its name in a candidate's description and on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            FieldRule::EveryFieldWhole => "whole",
            FieldRule::Stable => "stable",
        }
    }
}

impl PipelineConfig {
    /// Checks every setting, naming the bad value.
    pub fn validate(&self) -> Result<()> {
        if !HASH_BITS_RANGE.contains(&self.hash_bits) {
            return Err(Error::InvalidSetting(format!(
                "hash bits must be in [{}, {}], but is {}",
                HASH_BITS_RANGE.start(),
                HASH_BITS_RANGE.end(),
                self.hash_bits
            )));
        }
        if !(1..=3).contains(&self.max_ngram) {
            return Err(Error::InvalidSetting(format!(
                "n-gram order must be 1, 2 or 3, but is {}",
                self.max_ngram
            )));
        }
        if self.max_document_bytes == 0 || self.max_tokens == 0 {
            return Err(Error::InvalidSetting(format!(
                "document limits must be at least 1, but are {} bytes and {} tokens",
                self.max_document_bytes, self.max_tokens
            )));
        }
        if let Some(chars) = &self.char_ngrams {
            chars.validate()?;
            if self.tokenizer != TokenizerConfig::UnicodeWords {
                return Err(Error::InvalidSetting(format!(
                    "character n-grams are of words, but the tokeniser gives {} pieces",
                    self.tokenizer.name()
                )));
            }
        }
        if let Some(w) = self.ngram_weight_per_mille {
            if w == 0 || w > 10_000 {
                return Err(Error::InvalidSetting(format!(
                    "the weight of n-grams must be in (0, 10], but is {}",
                    f32::from(w) / 1000.0
                )));
            }
        }
        self.filters.iter().try_for_each(FilterConfig::validate)
    }

    /// The n-grams' weight beside the words, when they have one of their own
    /// ([`Self::ngram_weight_per_mille`]).
    pub fn ngram_weight(&self) -> Option<f32> {
        self.ngram_weight_per_mille.map(|w| f32::from(w) / 1000.0)
    }

    /// Whether a stop-word list is among the filters.
    pub fn has_stop_words(&self) -> bool {
        self.filters
            .iter()
            .any(|f| matches!(f, FilterConfig::StopWords { .. }))
    }

    /// The name of the stop-word list (a built-in list, or the file it was read from), if any.
    pub fn stop_words_name(&self) -> Option<&str> {
        self.filters.iter().find_map(|f| match f {
            FilterConfig::StopWords { name, .. } => Some(name.as_str()),
            _ => None,
        })
    }

    /// The language whose elided articles are taken off words, if any ([`super::elisions`]).
    pub fn elisions_name(&self) -> Option<&str> {
        self.filters.iter().find_map(|f| match f {
            FilterConfig::Elisions { name, .. } => Some(name.as_str()),
            _ => None,
        })
    }

    /// Adds the elisions filter of `name`'s articles, before any stop words and stemming (so
    /// that a list's *l* or *qu* and the stemmer see the word without its article), after the
    /// lowercasing and the length limit; in place of any elisions filter the pipeline had.
    pub fn set_elisions(&mut self, name: &str, articles: Vec<String>) {
        self.filters
            .retain(|f| !matches!(f, FilterConfig::Elisions { .. }));
        let at = (self.filters.iter())
            .position(|f| {
                matches!(
                    f,
                    FilterConfig::StopWords { .. } | FilterConfig::Stem { .. }
                )
            })
            .unwrap_or(self.filters.len());
        self.filters.insert(
            at,
            FilterConfig::Elisions {
                name: name.to_string(),
                articles,
            },
        );
    }

    /// Takes any stop-word list out of the filters (every word kept).
    pub fn drop_stop_words(&mut self) {
        self.filters
            .retain(|f| !matches!(f, FilterConfig::StopWords { .. }));
    }

    /// The limits on reading one input document.
    pub fn input_limits(&self) -> crate::text::input::InputLimits {
        crate::text::input::InputLimits {
            max_bytes: self.max_document_bytes,
            max_mime_depth: self.max_mime_depth,
            html_text: self.html_text,
        }
    }

    /// The number of hash buckets.
    pub fn buckets(&self) -> usize {
        1 << self.hash_bits
    }

    /// The dimension of the feature space: the buckets plus the bias feature.
    pub fn dimension(&self) -> usize {
        self.buckets() + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The elisions go before the stop words and the stemmer (whose *l* and stems should see
    /// the word without its article), after the lowercasing and the length limit, and a second
    /// list replaces the first.
    #[test]
    fn elisions_go_before_the_stop_words_and_replace_earlier_ones() {
        let names = |p: &PipelineConfig| -> Vec<String> {
            (p.filters.iter())
                .map(|f| match f {
                    FilterConfig::Lowercase => "lowercase".into(),
                    FilterConfig::MaxLength { .. } => "max_length".into(),
                    FilterConfig::StopWords { name, .. } => format!("stop_words {name}"),
                    FilterConfig::Stem { language } => format!("stem {}", language.name()),
                    FilterConfig::Elisions { name, .. } => format!("elisions {name}"),
                })
                .collect()
        };
        let mut p = PipelineConfig::default();
        p.filters.push(FilterConfig::Stem {
            language: StemLanguage::French,
        });
        p.set_elisions("french", super::super::elisions::load("french").unwrap());
        assert_eq!(
            names(&p),
            [
                "lowercase",
                "max_length",
                "elisions french",
                "stop_words english",
                "stem french"
            ]
        );
        assert_eq!(p.elisions_name(), Some("french"));
        p.set_elisions("italian", super::super::elisions::load("italian").unwrap());
        p.drop_stop_words();
        assert_eq!(
            names(&p),
            ["lowercase", "max_length", "elisions italian", "stem french"]
        );
        let mut none = PipelineConfig::default();
        none.filters.clear();
        none.set_elisions("french", vec!["l".into()]);
        assert_eq!(names(&none), ["elisions french"]);
    }
}
