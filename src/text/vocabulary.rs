//! The vocabulary: which words and n-grams training saw in each hash bucket. Hashing forgets
//! them, which keeps models small; `train --keep-vocabulary` keeps the most frequent few per
//! bucket in the model so that `inspect` can name a model's strongest features and `explain`
//! can say what else shares a bucket with a document's word.

use crate::progress::Progress;
use crate::text::pipeline::hash::HashMap;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::text::pipeline::{Pipeline, PipelineConfig};

/// The texts kept per bucket by default (most frequent first); the rest are only counted.
pub const DEFAULT_TEXTS_PER_BUCKET: usize = 3;

/// Bucket → its most frequent texts, sorted by bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vocabulary {
    /// At most this many texts per bucket.
    texts_per_bucket: usize,
    /// `(bucket, distinct texts seen, the most frequent of them)`: a tuple, because a model of
    /// 2^18 buckets stores hundreds of thousands of these in its JSON header.
    entries: Vec<(u32, u32, Vec<String>)>,
}

/// What training saw in one bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketTexts<'a> {
    /// The most frequent texts, most frequent first.
    pub texts: &'a [String],
    /// How many distinct texts fell into the bucket (a hash collision when above 1).
    pub distinct: usize,
}

type Counts = HashMap<u32, HashMap<String, u64>>;

impl Vocabulary {
    /// Reads `files` through the pipeline and counts the text of every feature. Files that
    /// cannot be read are left out (training has already reported them). Counts are summed
    /// over files, so the result does not depend on the number of threads.
    /// Keeps `texts_per_bucket` (at least 1) texts per bucket.
    pub fn collect<T: Sync>(
        files: &[T],
        source_of: impl Fn(&T) -> &crate::text::source::Source + Sync,
        config: &PipelineConfig,
        texts_per_bucket: usize,
        progress: &dyn Progress,
    ) -> Result<Vocabulary> {
        if texts_per_bucket == 0 {
            return Err(crate::error::Error::InvalidSetting(
                "the vocabulary must keep at least 1 text per bucket, but is 0".into(),
            ));
        }
        Pipeline::new(config)?;
        progress.set_length(files.len() as u64);
        progress.set_message("vocabulary");
        let counts = files
            .par_iter()
            .fold(
                || {
                    (
                        Pipeline::new(config).expect("validated above"),
                        Counts::default(),
                    )
                },
                |(mut pipeline, mut counts), file| {
                    if let Ok(doc) = source_of(file).read(config.input_limits()) {
                        for f in pipeline.trace(&doc) {
                            *counts
                                .entry(f.bucket)
                                .or_default()
                                .entry(f.text)
                                .or_default() += 1;
                        }
                    }
                    progress.inc(1);
                    (pipeline, counts)
                },
            )
            .map(|(_, counts)| counts)
            .reduce(Counts::default, |mut a, b| {
                for (bucket, texts) in b {
                    let into = a.entry(bucket).or_default();
                    for (text, n) in texts {
                        *into.entry(text).or_default() += n;
                    }
                }
                a
            });
        let mut entries: Vec<(u32, u32, Vec<String>)> = counts
            .into_iter()
            .map(|(bucket, texts)| {
                let distinct = texts.len() as u32;
                let mut texts: Vec<(String, u64)> = texts.into_iter().collect();
                texts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                texts.truncate(texts_per_bucket);
                (
                    bucket,
                    distinct,
                    texts.into_iter().map(|(t, _)| t).collect(),
                )
            })
            .collect();
        entries.sort_unstable_by_key(|e| e.0);
        Ok(Vocabulary {
            texts_per_bucket,
            entries,
        })
    }

    /// What training saw in `bucket`, if anything.
    pub fn get(&self, bucket: u32) -> Option<BucketTexts<'_>> {
        let i = self.entries.binary_search_by_key(&bucket, |e| e.0).ok()?;
        let (_, distinct, texts) = &self.entries[i];
        Some(BucketTexts {
            texts,
            distinct: *distinct as usize,
        })
    }

    /// At most this many texts are kept per bucket.
    pub fn texts_per_bucket(&self) -> usize {
        self.texts_per_bucket
    }

    /// Buckets with at least one text.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The vocabulary of a model built from several (merged, or continued on more data): per
    /// bucket the texts of all, in order without repeats, up to the largest of their
    /// `texts_per_bucket`; the distinct count is the largest of theirs (a lower bound: the
    /// texts behind the counts are gone).
    pub fn union<'a>(vocabularies: impl IntoIterator<Item = &'a Vocabulary>) -> Vocabulary {
        let vocabularies: Vec<&Vocabulary> = vocabularies.into_iter().collect();
        let keep = vocabularies
            .iter()
            .map(|v| v.texts_per_bucket)
            .max()
            .unwrap_or(1);
        let mut merged: std::collections::BTreeMap<u32, (u32, Vec<String>)> = Default::default();
        for v in vocabularies {
            for (bucket, distinct, texts) in &v.entries {
                let (d, into) = merged.entry(*bucket).or_default();
                *d = (*d).max(*distinct);
                for t in texts {
                    if into.len() < keep && !into.contains(t) {
                        into.push(t.clone());
                    }
                }
                *d = (*d).max(into.len() as u32);
            }
        }
        Vocabulary {
            texts_per_bucket: keep,
            entries: merged
                .into_iter()
                .map(|(bucket, (distinct, texts))| (bucket, distinct, texts))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;
    use crate::text::pipeline::hash::{bucket, token_hash, NS_BODY};
    use crate::text::source::Source;

    #[test]
    fn collects_texts_by_frequency_and_unites() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<Source> = ["orbit orbit shuttle", "orbit launch", "Shuttle launch"]
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let path = dir.path().join(format!("{i}.txt"));
                std::fs::write(&path, text).unwrap();
                Source::file(path)
            })
            .collect();
        let config = PipelineConfig::default();
        let vocabulary = Vocabulary::collect(&files, |p| p, &config, 3, &NoProgress).unwrap();
        let at = |word: &str| bucket(token_hash(NS_BODY, word), config.hash_bits);
        let orbit = vocabulary.get(at("orbit")).unwrap();
        assert_eq!(orbit.texts, ["orbit"]);
        assert_eq!(orbit.distinct, 1);
        // Unigrams orbit, shuttle, launch; bigrams orbit orbit, orbit shuttle, orbit launch,
        // shuttle launch (no collisions among these in 2^18 buckets).
        assert_eq!(vocabulary.len(), 7);
        let by_text: Vec<&str> = vocabulary
            .entries
            .iter()
            .flat_map(|e| e.2.iter().map(String::as_str))
            .collect();
        assert!(by_text.contains(&"shuttle launch"), "{by_text:?}");
        // A union keeps both sides' texts; the same vocabulary twice is itself.
        assert_eq!(Vocabulary::union([&vocabulary, &vocabulary]), vocabulary);
        let other = Vocabulary {
            texts_per_bucket: 3,
            entries: vec![(at("orbit"), 2, vec!["orbit".into(), "0rbit".into()])],
        };
        let both = Vocabulary::union([&vocabulary, &other]);
        let orbit = both.get(at("orbit")).unwrap();
        assert_eq!(orbit.texts, ["orbit", "0rbit"]);
        assert_eq!(orbit.distinct, 2);
        assert!(both.get(at("nothing here")).is_none());
        // One text per bucket: the most frequent.
        let one = Vocabulary::collect(&files, |p| p, &config, 1, &NoProgress).unwrap();
        assert_eq!(one.get(at("orbit")).unwrap().texts, ["orbit"]);
        assert!(Vocabulary::collect(&files, |p| p, &config, 0, &NoProgress).is_err());
    }
}
