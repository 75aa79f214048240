//! Training a subword vocabulary (BPE or WordPiece) on a corpus, with huggingface tokenizers'
//! trainers. The pipeline only stores and applies vocabularies ([`super::pipeline::subword`]);
//! training one is a step of `train` (a second pass over the corpus), so it sits beside the
//! pipeline, not in it.

#[cfg(not(feature = "subword"))]
use crate::error::Error;
use crate::error::Result;
use crate::text::pipeline::config::TokenizerConfig;
use crate::text::pipeline::subword::SubwordSpec;

/// A trained vocabulary and what it was trained on.
#[derive(Debug, Clone)]
pub struct TrainedVocabulary {
    pub tokenizer: TokenizerConfig,
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
            spec.kind().display_name()
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

    use tokenizers::models::bpe::{BpeTrainerBuilder, BPE};
    use tokenizers::models::wordpiece::{WordPiece as WordPieceModel, WordPieceTrainerBuilder};
    use tokenizers::{AddedToken, Model, Trainer};

    use super::*;
    use crate::error::Error;
    use crate::text::pipeline::subword::{
        normalize, Bpe, SubwordKind, WordPiece, CONTINUATION, MIN_PAIR_COUNT, UNKNOWN,
    };
    use crate::text::pipeline::tokenizer::words;

    fn crate_error(what: &str, e: impl std::fmt::Display) -> Error {
        Error::InvalidSetting(format!("{what}: {e}"))
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

    pub fn train<I>(spec: &SubwordSpec, documents: I) -> Result<TrainedVocabulary>
    where
        I: Iterator<Item = String> + Send,
    {
        let count = AtomicUsize::new(0);
        let documents = documents.inspect(|_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        let tokenizer = match spec.kind() {
            SubwordKind::Bpe => {
                let mut trainer = BpeTrainerBuilder::new()
                    .vocab_size(spec.vocab_size())
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
                    .vocab_size(spec.vocab_size())
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

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::text::pipeline::tokenizer::is_word;

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
