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

/// A trained vocabulary and what it was trained on.
#[derive(Debug, Clone)]
pub struct TrainedVocabulary {
    pub tokenizer: super::tokenizer::TokenizerConfig,
    /// The number of pieces (at most the size asked for).
    pub pieces: usize,
    /// The documents read.
    pub documents: usize,
}

/// Trains a vocabulary on the texts of `documents` (read once, as they come).
#[cfg(not(feature = "subword"))]
pub fn train<I>(spec: &SubwordSpec, _documents: I) -> Result<TrainedVocabulary>
where
    I: Iterator<Item = String> + Send,
{
    Err(Error::MissingFeature {
        feature: "subword",
        what: format!(
            "training a {} vocabulary (--tokenizer)",
            spec.kind.display_name()
        ),
    })
}

#[cfg(feature = "subword")]
pub use with_crate::train;

#[cfg(feature = "subword")]
mod with_crate {
    use std::collections::{BTreeSet, HashMap};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    use fxhash::FxHashMap;
    use tokenizers::models::bpe::{BpeTrainerBuilder, Vocab, BPE};
    use tokenizers::models::wordpiece::{WordPiece as WordPieceModel, WordPieceTrainerBuilder};
    use tokenizers::{AddedToken, Model, NormalizedString, Trainer};

    use super::*;
    use crate::text::pipeline::tokenizer::{is_word, words, words_and_symbols, TokenizerConfig};

    /// Words → pieces are cached (text repeats its words); emptied at this many words.
    const CACHE_LIMIT: usize = 1 << 16;

    fn crate_error(what: &str, e: impl std::fmt::Display) -> Error {
        Error::InvalidSetting(format!("{what}: {e}"))
    }

    /// NFKC and lowercase, into `out`.
    fn normalize(word: &str, out: &mut String) {
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

    /// The normalised words of a text, as the trainer counts them.
    fn normalized_words(text: &str) -> Vec<String> {
        let (mut out, mut buf) = (Vec::new(), String::new());
        words(text, &mut |w| {
            normalize(w, &mut buf);
            out.push(buf.clone());
        });
        out
    }

    /// The pieces in id order; an error when the ids are not 0..n.
    fn pieces_by_id(vocab: HashMap<String, u32>) -> Result<Vec<String>> {
        let mut pieces: Vec<(u32, String)> = vocab.into_iter().map(|(p, i)| (i, p)).collect();
        pieces.sort_unstable();
        if pieces
            .iter()
            .enumerate()
            .any(|(i, (id, _))| *id as usize != i)
        {
            return Err(Error::InvalidSetting(
                "the trained vocabulary has gaps in its piece ids".into(),
            ));
        }
        Ok(pieces.into_iter().map(|(_, p)| p).collect())
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

    pub fn train<I>(spec: &SubwordSpec, documents: I) -> Result<TrainedVocabulary>
    where
        I: Iterator<Item = String> + Send,
    {
        let count = AtomicUsize::new(0);
        let documents = documents.inspect(|_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        let tokenizer = match spec.kind {
            SubwordKind::Bpe => {
                let mut trainer = BpeTrainerBuilder::new()
                    .vocab_size(spec.vocab_size)
                    .min_frequency(MIN_PAIR_COUNT)
                    .show_progress(false)
                    .build();
                trainer
                    .feed(documents, |text| Ok(normalized_words(text)))
                    .map_err(|e| crate_error("BPE training", e))?;
                let mut model = BPE::default();
                trainer
                    .train(&mut model)
                    .map_err(|e| crate_error("BPE training", e))?;
                // The crate keeps the merges to itself but serialises them in rank order.
                let json = serde_json::to_value(&model).expect("a BPE model serialises");
                let merges = serde_json::from_value(json["merges"].clone())
                    .map_err(|e| crate_error("BPE merges", e))?;
                TokenizerConfig::Bpe(Bpe {
                    pieces: pieces_by_id(model.get_vocab())?,
                    merges,
                })
            }
            SubwordKind::Wordpiece => {
                let continuing = Mutex::new(BTreeSet::new());
                let mut trainer = WordPieceTrainerBuilder::new()
                    .vocab_size(spec.vocab_size)
                    .min_frequency(MIN_PAIR_COUNT)
                    .continuing_subword_prefix(CONTINUATION.into())
                    .show_progress(false)
                    .build();
                trainer
                    .feed(documents, |text| {
                        let words = normalized_words(text);
                        let inside: BTreeSet<char> =
                            words.iter().flat_map(|w| w.chars().skip(1)).collect();
                        continuing.lock().expect("not poisoned").extend(inside);
                        Ok(words)
                    })
                    .map_err(|e| crate_error("WordPiece training", e))?;
                // `[UNK]` and every `##c` first, in sorted order, so that piece ids (which
                // break ties between merges) do not depend on hash-map order.
                let special = std::iter::once(UNKNOWN.to_string())
                    .chain(
                        continuing
                            .into_inner()
                            .expect("not poisoned")
                            .into_iter()
                            .map(|c| format!("{CONTINUATION}{c}")),
                    )
                    .map(|t| AddedToken::from(t, true))
                    .collect();
                trainer.set_special_tokens(special);
                let mut model = WordPieceModel::default();
                trainer
                    .train(&mut model)
                    .map_err(|e| crate_error("WordPiece training", e))?;
                TokenizerConfig::WordPiece(WordPiece {
                    pieces: pieces_by_id(model.get_vocab())?,
                })
            }
        };
        let pieces = match &tokenizer {
            TokenizerConfig::Bpe(v) => v.len(),
            TokenizerConfig::WordPiece(v) => v.len(),
            TokenizerConfig::UnicodeWords => 0,
        };
        Ok(TrainedVocabulary {
            tokenizer,
            pieces,
            documents: count.into_inner(),
        })
    }

    enum Pieces {
        Bpe(BPE),
        WordPiece(WordPieceModel),
    }

    /// The built subword tokeniser.
    struct Subword {
        model: Pieces,
        /// Word as it came → its pieces.
        cache: FxHashMap<Box<str>, Box<[Box<str>]>>,
        normal: String,
        /// Symbol segments between the words are tokens too, as they are (no pieces).
        symbols: bool,
    }

    impl Subword {
        fn boxed(model: Pieces, symbols: bool) -> Box<dyn Tokenizer> {
            Box::new(Subword {
                model,
                cache: FxHashMap::default(),
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

    #[cfg(test)]
    mod tests {
        use super::*;

        const TEXT: &str = "Lower lowest newer newest wider widest. The newest lowest \
            widest lower LOWER low new wide Ｌｏｗｅｓｔ naïve naïvely";

        fn documents() -> impl Iterator<Item = String> + Send {
            std::iter::repeat_n(TEXT.to_string(), 3)
        }

        fn pieces(config: &TokenizerConfig, text: &str) -> Vec<String> {
            let mut tokenizer = config.build(false).unwrap();
            let mut out = Vec::new();
            // Twice: the second pass comes from the cache and must agree.
            for _ in 0..2 {
                out.clear();
                tokenizer.tokenize(text, &mut |p| out.push(p.to_string()));
            }
            out
        }

        #[test]
        fn bpe_round_trips_through_serde() {
            let spec = SubwordSpec::new(SubwordKind::Bpe, 100).unwrap();
            let trained = train(&spec, documents()).unwrap();
            assert_eq!(trained.documents, 3);
            let config = trained.tokenizer;
            let json = serde_json::to_string(&config).unwrap();
            assert!(
                json.starts_with("{\"type\":\"bpe\",\"vocabulary\":{\"pieces\":["),
                "{json}"
            );
            let back: TokenizerConfig = serde_json::from_str(&json).unwrap();
            assert_eq!(back, config);
            let text = "The LOWEST, newest and widest; naïvely Ｌｏｗｅｓｔ";
            let want = pieces(&config, text);
            assert_eq!(pieces(&back, text), want);
            // Frequent words became whole pieces, lowercased; fullwidth letters went through NFKC.
            assert!(
                want.starts_with(&["the".into(), "lowest".into()]),
                "{want:?}"
            );
            assert_eq!(want.last().unwrap(), "lowest", "{want:?}");
            // With symbols, the punctuation between the words comes through as it is, in place.
            let mut tokenizer = config.build(true).unwrap();
            let mut with = Vec::new();
            tokenizer.tokenize(text, &mut |p| with.push(p.to_string()));
            let (symbols, words): (Vec<String>, Vec<String>) =
                with.into_iter().partition(|t| !is_word(t));
            assert_eq!(symbols, [",", ";"]);
            assert_eq!(words, want);
        }

        #[test]
        fn wordpiece_marks_continuations_and_unknown_words() {
            let spec = SubwordSpec::new(SubwordKind::Wordpiece, 100).unwrap();
            let config = train(&spec, documents()).unwrap().tokenizer;
            let back: TokenizerConfig =
                serde_json::from_str(&serde_json::to_string(&config).unwrap()).unwrap();
            assert_eq!(back, config);
            let got = pieces(&back, "lowly wider 東京");
            assert_eq!(got.first().unwrap(), "low", "{got:?}");
            assert!(got[1].starts_with("##"), "{got:?}");
            assert_eq!(got.last().unwrap(), UNKNOWN, "{got:?}");
        }

        #[test]
        fn training_does_not_depend_on_document_order() {
            for kind in [SubwordKind::Bpe, SubwordKind::Wordpiece] {
                let spec = SubwordSpec::new(kind, 120).unwrap();
                let docs: Vec<String> = TEXT.split('.').map(str::to_string).collect();
                let a = train(&spec, docs.clone().into_iter()).unwrap().tokenizer;
                let b = train(&spec, docs.into_iter().rev()).unwrap().tokenizer;
                assert_eq!(a, b, "{kind:?}");
            }
        }

        #[test]
        fn damaged_vocabularies_are_refused() {
            let bpe = TokenizerConfig::Bpe(Bpe {
                pieces: vec!["a".into(), "b".into()],
                merges: vec![("a".into(), "c".into())],
            });
            assert!(bpe.build(false).is_err());
            let wordpiece = TokenizerConfig::WordPiece(WordPiece {
                pieces: vec!["a".into()],
            });
            let err = wordpiece.build(false).err().unwrap().to_string();
            assert!(err.contains("[UNK]"), "{err}");
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
        let config = super::super::tokenizer::TokenizerConfig::Bpe(Bpe {
            pieces: vec!["a".into()],
            merges: vec![],
        });
        let err = config.build(false).err().unwrap().to_string();
        assert!(err.contains("BPE pieces"), "{err}");
        assert!(err.contains("--features subword"), "{err}");
    }
}
