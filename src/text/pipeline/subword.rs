//! Subword tokenisers: the UAX #29 words of a text, normalised (NFKC, lowercase), each split into
//! pieces from a vocabulary that `train` learns from the training corpus itself with the
//! huggingface `tokenizers` crate: byte-pair encoding (Sennrich et al., ACL 2016) or WordPiece
//! (Schuster & Nakajima, ICASSP 2012; as in BERT, pieces inside a word start with `##`).
//!
//! Why: on noisy text ("FREE!!1", "txt", "gr8", misspellings) and on short documents, a word seen
//! once in training says little, but its pieces are shared with other words. The pieces (and,
//! with `--ngrams 2`, their bigrams) are hashed like words.
//!
//! The vocabulary is part of the model ([`Bpe`], [`WordPiece`] in the model header), so
//! `classify` splits words exactly as in training. The splitting around the crate's models is
//! fixed here and, like the hash, must not change: UAX #29 words ([`super::tokenizer::words`]),
//! NFKC (non-ASCII words only; ASCII is NFKC already), lowercase, then the model's pieces.
//! WordPiece marks a word with a character outside its vocabulary, or of more than
//! [`MAX_WORD_CHARS`] characters, as the one piece [`UNKNOWN`]; BPE drops characters it never saw.
//!
//! Training is deterministic: the same documents give the same vocabulary whatever their order
//! and the number of threads (word counts are sums; ties between merges are broken by piece id).
//! The crate's trainer numbers WordPiece's `##` pieces in hash-map order, which would make ties
//! and so the vocabulary vary from run to run; they are therefore given in sorted order up front,
//! as special tokens.
//!
//! The crate is behind the cargo feature `subword` (on by default). Without it the data types
//! below still load, so a cwtext built without it refuses a subword model with a clear message.

use serde::{Deserialize, Serialize};

use super::tokenizer::Tokenizer;
use crate::error::{Error, Result};

/// The vocabulary sizes `train --vocab-size` accepts: below 100 there is hardly more than the
/// alphabet; above a million the model header alone would take tens of megabytes.
pub const VOCAB_SIZE_RANGE: std::ops::RangeInclusive<usize> = 100..=1_000_000;

/// `--vocab-size` when not given.
pub const DEFAULT_VOCAB_SIZE: usize = 8000;

/// WordPiece's piece for a word it cannot split.
pub const UNKNOWN: &str = "[UNK]";

/// WordPiece's prefix of a piece that continues a word.
pub const CONTINUATION: &str = "##";

/// WordPiece gives longer words the one piece [`UNKNOWN`] (the crate's usual limit).
pub const MAX_WORD_CHARS: usize = 100;

/// Pairs seen fewer times than this are never merged: a merge that serves one word in the whole
/// corpus only memorises it, and the vocabulary may then stay below the size asked for.
pub const MIN_PAIR_COUNT: u64 = 2;

/// The kinds of subword vocabulary `train --tokenizer` can learn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubwordKind {
    /// Byte-pair encoding: merges the most frequent pair of pieces, again and again.
    Bpe,
    /// WordPiece: BPE's vocabulary, applied greedily longest-match-first, `##` inside words.
    Wordpiece,
}

impl SubwordKind {
    /// The name in messages ("BPE", "WordPiece").
    pub fn display_name(self) -> &'static str {
        match self {
            SubwordKind::Bpe => "BPE",
            SubwordKind::Wordpiece => "WordPiece",
        }
    }

    /// The value of `--tokenizer` ("bpe", "wordpiece").
    pub fn flag(self) -> &'static str {
        match self {
            SubwordKind::Bpe => "bpe",
            SubwordKind::Wordpiece => "wordpiece",
        }
    }
}

/// A validated request for a subword vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubwordSpec {
    kind: SubwordKind,
    vocab_size: usize,
}

impl SubwordSpec {
    /// Checks the vocabulary size, naming the bad value.
    pub fn new(kind: SubwordKind, vocab_size: usize) -> Result<Self> {
        if !VOCAB_SIZE_RANGE.contains(&vocab_size) {
            return Err(Error::InvalidSetting(format!(
                "vocabulary size must be in [{}, {}], but is {vocab_size}",
                VOCAB_SIZE_RANGE.start(),
                VOCAB_SIZE_RANGE.end()
            )));
        }
        Ok(SubwordSpec { kind, vocab_size })
    }

    pub fn kind(&self) -> SubwordKind {
        self.kind
    }

    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }
}

/// A trained BPE vocabulary, as stored in the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bpe {
    /// The pieces in id order: the alphabet, then one per merge.
    pub pieces: Vec<String>,
    /// The merges in the order they were learned (and are applied).
    pub merges: Vec<(String, String)>,
}

/// A trained WordPiece vocabulary, as stored in the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WordPiece {
    /// The pieces in id order; [`UNKNOWN`] among them, continuing pieces with `##`.
    pub pieces: Vec<String>,
}

impl Bpe {
    /// The number of pieces.
    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }
}

impl WordPiece {
    /// The number of pieces.
    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }
}

#[cfg(not(feature = "subword"))]
fn missing_feature(what: &str) -> Error {
    Error::MissingFeature {
        feature: "subword",
        what: format!("this model splits words into {what} pieces, which"),
    }
}

#[cfg(not(feature = "subword"))]
impl Bpe {
    pub fn build(&self, _symbols: bool) -> Result<Box<dyn Tokenizer>> {
        Err(missing_feature("BPE"))
    }
}

#[cfg(not(feature = "subword"))]
impl WordPiece {
    pub fn build(&self, _symbols: bool) -> Result<Box<dyn Tokenizer>> {
        Err(missing_feature("WordPiece"))
    }
}

#[cfg(feature = "subword")]
pub use with_crate::normalize;

#[cfg(feature = "subword")]
mod with_crate {

    use tokenizers::models::bpe::{Vocab, BPE};
    use tokenizers::models::wordpiece::WordPiece as WordPieceModel;
    use tokenizers::{Model, NormalizedString};

    use super::*;
    use crate::text::pipeline::tokenizer::{is_word, words, words_and_symbols};

    /// Words → pieces are cached (text repeats its words); emptied at this many words.
    const CACHE_LIMIT: usize = 1 << 16;

    pub(crate) fn crate_error(what: &str, e: impl std::fmt::Display) -> Error {
        Error::InvalidSetting(format!("{what}: {e}"))
    }

    /// NFKC and lowercase, into `out`.
    pub fn normalize(word: &str, out: &mut String) {
        out.clear();
        if word.is_ascii() {
            out.push_str(word);
            out.make_ascii_lowercase();
        } else {
            let mut n = NormalizedString::from(word);
            n.nfkc().lowercase();
            out.push_str(n.get());
        }
    }

    /// Piece → id, refusing duplicates (a damaged vocabulary).
    fn vocab_map(pieces: &[String], what: &str) -> Result<Vocab> {
        let vocab: Vocab = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), i as u32))
            .collect();
        if vocab.len() != pieces.len() {
            return Err(Error::InvalidSetting(format!(
                "the {what} vocabulary lists a piece twice"
            )));
        }
        Ok(vocab)
    }

    enum Pieces {
        Bpe(BPE),
        WordPiece(WordPieceModel),
    }

    /// The built subword tokeniser.
    struct Subword {
        model: Pieces,
        /// Word as it came → its pieces.
        cache: crate::text::pipeline::hash::HashMap<Box<str>, Box<[Box<str>]>>,
        normal: String,
        /// Symbol segments between the words are tokens too, as they are (no pieces).
        symbols: bool,
    }

    impl Subword {
        fn boxed(model: Pieces, symbols: bool) -> Box<dyn Tokenizer> {
            Box::new(Subword {
                model,
                cache: crate::text::pipeline::hash::HashMap::default(),
                normal: String::new(),
                symbols,
            })
        }
    }

    impl Tokenizer for Subword {
        fn tokenize(&mut self, text: &str, sink: &mut dyn FnMut(&str)) {
            let Subword {
                model,
                cache,
                normal,
                symbols,
            } = self;
            let split = if *symbols { words_and_symbols } else { words };
            split(text, &mut |word| {
                if *symbols && !is_word(word) {
                    return sink(word);
                }
                if let Some(pieces) = cache.get(word) {
                    pieces.iter().for_each(|p| sink(p));
                    return;
                }
                normalize(word, normal);
                let tokens = match model {
                    Pieces::Bpe(m) => m.tokenize(normal),
                    Pieces::WordPiece(m) => m.tokenize(normal),
                };
                // Neither model fails on a vocabulary that built (WordPiece's `[UNK]` is
                // checked then); a failure would drop the word.
                let pieces: Box<[Box<str>]> = tokens
                    .unwrap_or_default()
                    .into_iter()
                    .map(|t| t.value.into_boxed_str())
                    .collect();
                pieces.iter().for_each(|p| sink(p));
                if cache.len() >= CACHE_LIMIT {
                    cache.clear();
                }
                cache.insert(word.into(), pieces);
            });
        }
    }

    impl Bpe {
        pub fn build(&self, symbols: bool) -> Result<Box<dyn Tokenizer>> {
            let model = BPE::builder()
                .vocab_and_merges(vocab_map(&self.pieces, "BPE")?, self.merges.clone())
                // The tokeniser caches whole words itself.
                .cache_capacity(0)
                .build()
                .map_err(|e| crate_error("the BPE vocabulary is inconsistent", e))?;
            Ok(Subword::boxed(Pieces::Bpe(model), symbols))
        }
    }

    impl WordPiece {
        pub fn build(&self, symbols: bool) -> Result<Box<dyn Tokenizer>> {
            if !self.pieces.iter().any(|p| p == UNKNOWN) {
                return Err(Error::InvalidSetting(format!(
                    "the WordPiece vocabulary lacks {UNKNOWN}"
                )));
            }
            let model = WordPieceModel::builder()
                .vocab(vocab_map(&self.pieces, "WordPiece")?)
                .unk_token(UNKNOWN.into())
                .continuing_subword_prefix(CONTINUATION.into())
                .max_input_chars_per_word(MAX_WORD_CHARS)
                .build()
                .map_err(|e| crate_error("the WordPiece vocabulary is inconsistent", e))?;
            Ok(Subword::boxed(Pieces::WordPiece(model), symbols))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_size_is_checked_with_the_bad_value() {
        for bad in [0, 99, 1_000_001] {
            let err = SubwordSpec::new(SubwordKind::Bpe, bad)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(&format!("[100, 1000000], but is {bad}")),
                "{err}"
            );
        }
        assert!(SubwordSpec::new(SubwordKind::Wordpiece, 100).is_ok());
    }

    /// A cwtext without the `subword` feature still reads a subword model's header, and
    /// refuses to build its tokeniser with a message that says how to get one that can.
    #[cfg(not(feature = "subword"))]
    #[test]
    fn without_the_feature_a_subword_model_is_refused_clearly() {
        let vocabulary = Bpe {
            pieces: vec!["a".into()],
            merges: vec![],
        };
        let err = vocabulary.build(false).err().unwrap().to_string();
        assert!(err.contains("BPE pieces"), "{err}");
        assert!(err.contains("--features subword"), "{err}");
    }
}
