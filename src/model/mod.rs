//! Layer 3, model: the [`Model`] (pipeline, labels, learner, calibration) and its versioned file.
//!
//! **May use:** the foundation, [`crate::text`] (the stored pipeline and vocabulary) and
//! [`crate::learn`] (the learner, and the probabilities [`Model::predict`] computes with the
//! calibrated scale). Not [`crate::integrations`], [`crate::jobs`] or [`crate::experiment`].
//!
//! [`format`](mod@format) is the file: its layout, the JSON header's types, reading (checked, or
//! memory-mapped) and writing; the [`Model`] itself and its predictions are here. [`merge`]
//! combines models trained on different data into one.

pub mod format;
pub mod merge;

pub use format::{
    index_or_push, link_target, CalibrationInfo, Checksum, KeptDocuments, KeptVocabulary,
    LabelShift, LearnerConfig, ModelHeader, NgramWeightTrial, Selection, SelectionTrial,
    SoftRuleTrial, TrainingStats, WeightEncoding, FORMAT_VERSION, MAGIC, OLDEST_FORMAT_VERSION,
    VERIFY_LIMIT,
};

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ModelError, Result};
use crate::features::FeatureVector;
use crate::learn::learner::weights::{SharedBytes, WeightTable};
use crate::learn::learner::{CwConfig, DiagonalLearner, Learner, ScoreGaussian};
use crate::text::pipeline::PipelineConfig;
use crate::text::vocabulary::Vocabulary;

/// The longest label name a model takes, in bytes: a folder name (255 bytes a level on most
/// file systems) with room for several levels, and short enough for a mail header.
pub const MAX_LABEL_BYTES: usize = 1024;

/// Why `name` cannot be a label, or `None` when it can. A label is printed one per line (and
/// per TSV field), becomes a folder and a header field: it must not be empty, hold a line
/// break, a tab or another control character (Unicode's Cc), or be longer than
/// [`MAX_LABEL_BYTES`].
pub fn label_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".into());
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Some(format!("has a control character (U+{:04X})", u32::from(c)));
    }
    (name.len() > MAX_LABEL_BYTES)
        .then(|| format!("is {} bytes long, more than {MAX_LABEL_BYTES}", name.len()))
}

/// [`label_problem`] as a sentence for an error message (`label "a\nb" has a control
/// character (U+000A): a label is a name …`), or `None` when `name` can be a label; each
/// caller adds what it left as it was.
pub fn label_refusal(name: &str) -> Option<String> {
    label_problem(name).map(|why| {
        format!(
            "label {name:?} {why}: a label is a name (no line break, tab or other control character, at most {MAX_LABEL_BYTES} bytes)"
        )
    })
}

/// The label among `labels` that `label` looks like without being it: the same but for case,
/// or either of the two the other's ending after a `.`, `/`, `-` or `_` (`Spam` and `spam`,
/// `hockey` and `rec.sport.hockey`, `rt-polarity.pos` and `pos`); the first such, or `None`. A
/// test folder or a refile named so is more often a slip than a label of its own.
pub fn label_like<'a>(labels: &'a [String], label: &str) -> Option<&'a String> {
    let lower = label.to_lowercase();
    let ends_with = |long: &str, short: &str| {
        long.len() > short.len()
            && long.ends_with(short)
            && long[..long.len() - short.len()].ends_with(['.', '/', '-', '_'])
    };
    labels.iter().find(|m| {
        let m_lower = m.to_lowercase();
        m.as_str() != label
            && (m_lower == lower || ends_with(&lower, &m_lower) || ends_with(&m_lower, &lower))
    })
}

/// What the model says about one document.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// Index of the best label.
    pub label: usize,
    pub distribution: crate::learn::probability::LabelDistribution,
    /// The document had no feature but the bias (no word at all, as a mail of headers and
    /// attachments only): the prediction is the model's prior, and says nothing about the text.
    pub prior_only: bool,
}

impl Prediction {
    /// The probability of the best label.
    pub fn probability(&self) -> f64 {
        self.distribution.probabilities[self.label]
    }

    /// Whether the best label is less probable than `min_prob`: the unsure band of `classify`,
    /// `filter` and `label` (`--min-prob`).
    pub fn is_unsure(&self, min_prob: Option<f64>) -> bool {
        min_prob.is_some_and(|p| self.probability() < p)
    }
}

/// A trained model: header, learner and, optionally, the vocabulary.
#[derive(Debug, Clone)]
pub struct Model {
    pub header: ModelHeader,
    pub learner: DiagonalLearner,
    /// Set it with [`Model::set_vocabulary`], which keeps the header's length right.
    pub vocabulary: Option<KeptVocabulary>,
    /// The CRC-32 stored in the file the model was read from (see [`Model::fingerprint`]).
    pub file_crc: Option<u32>,
    /// Documents kept per label for rehearsal while learning corrections; read them with
    /// [`Model::rehearsal`], change them through [`Model::rehearsal_mut`].
    pub rehearsal: Option<KeptDocuments>,
}

/// Two models are equal when their header, weights and vocabulary are; where they were read
/// from is not part of it (the CRC follows from the bytes, which follow from the rest).
impl PartialEq for Model {
    fn eq(&self, other: &Self) -> bool {
        self.header == other.header
            && self.learner == other.learner
            && self.vocabulary == other.vocabulary
            && self.rehearsal == other.rehearsal
    }
}

impl Model {
    pub fn labels(&self) -> &[String] {
        &self.header.labels
    }

    pub fn pipeline(&self) -> &PipelineConfig {
        &self.header.pipeline
    }

    /// The words and n-grams behind the hash buckets, when the model keeps them (parsed on
    /// every call: call once).
    pub fn vocabulary(&self) -> std::result::Result<Option<Arc<Vocabulary>>, ModelError> {
        match &self.vocabulary {
            None => Ok(None),
            Some(KeptVocabulary::Parsed(v)) => Ok(Some(v.clone())),
            Some(stored) => serde_json::from_slice(&stored.to_json())
                .map(|v| Some(Arc::new(v)))
                .map_err(|e| ModelError::Corrupted(format!("unreadable vocabulary: {e}"))),
        }
    }

    /// The documents `learn` protects, when the model keeps them (parsed on every call for a
    /// model read from a file: call once, or [`Model::rehearsal_mut`]).
    pub fn rehearsal(
        &self,
    ) -> Result<Option<std::borrow::Cow<'_, crate::learn::rehearsal::Rehearsal>>> {
        self.rehearsal
            .as_ref()
            .map(KeptDocuments::parse)
            .transpose()
    }

    /// The documents `learn` protects, parsed once and kept parsed, to change.
    pub fn rehearsal_mut(&mut self) -> Result<Option<&mut crate::learn::rehearsal::Rehearsal>> {
        if let Some(stored @ KeptDocuments::Stored { .. }) = &self.rehearsal {
            let parsed = stored.parse()?.into_owned();
            self.rehearsal = Some(KeptDocuments::Parsed(parsed));
        }
        Ok(match &mut self.rehearsal {
            Some(KeptDocuments::Parsed(r)) => Some(r),
            _ => None,
        })
    }

    /// Keeps (or drops) a vocabulary.
    pub fn set_vocabulary(&mut self, vocabulary: Option<Vocabulary>) {
        self.vocabulary = vocabulary.map(|v| KeptVocabulary::Parsed(Arc::new(v)));
        self.header.vocabulary_bytes = 0;
    }

    /// The model's identity: the CRC-32 its file stores in its last 4 bytes, read when it was
    /// parsed (free even for a memory-mapped model whose checksum is not verified). None for a
    /// model built in memory; a parsed model changed in memory keeps the CRC of its file.
    pub fn fingerprint(&self) -> Option<u32> {
        self.file_crc
    }

    /// The vector of a document without a single word: only the bias feature, whose weights
    /// are the labels' prior (nothing when the pipeline has no bias: every label scores 0).
    pub fn prior_features(&self) -> FeatureVector {
        let config = self.pipeline();
        let (indices, values) = if config.bias {
            (vec![config.buckets() as u32], vec![1.0])
        } else {
            (Vec::new(), Vec::new())
        };
        FeatureVector::new(config.dimension(), indices, values)
    }

    /// Whether `x` holds nothing but the bias feature: a document without a word, whose
    /// prediction is the prior ([`Model::prior_features`]).
    pub fn is_prior_only(&self, x: &FeatureVector) -> bool {
        let config = self.pipeline();
        let bias = config.bias.then(|| config.buckets() as u32);
        x.indices().iter().all(|&i| Some(i) == bias)
    }

    /// What the model knows about a document without a word: how often each label was
    /// trained on, (n_k + 1) / (N + K) (add-one, so that a label with no documents is not
    /// impossible). The bias weights alone are no such prior: trained to separate documents
    /// *with* words, they gave the built-in spam model's empty mail ham at 1.0000, which no
    /// `--min-prob` could catch; the base rates give it 0.69.
    pub fn label_base_rates(&self) -> crate::learn::probability::LabelDistribution {
        let counts = &self.header.training.label_documents;
        let k = self.labels().len();
        let total: usize = counts.iter().sum();
        let probabilities: Vec<f64> = (0..k)
            .map(|i| (counts.get(i).copied().unwrap_or(0) as f64 + 1.0) / (total + k) as f64)
            .collect();
        crate::learn::probability::LabelDistribution {
            entropy: crate::learn::probability::normalised_entropy(&probabilities),
            probabilities,
        }
    }

    /// Mean scores of every label.
    pub fn scores(&self, x: &FeatureVector) -> Vec<f64> {
        self.learner.scores(x)
    }

    pub fn score_gaussians(&self, x: &FeatureVector) -> Vec<ScoreGaussian> {
        self.learner.score_gaussians(x)
    }

    /// The best label (argmax of the mean scores, the classifier the paper evaluates) and the
    /// label distribution by `method` (Gibbs sampling or quadrature).
    pub fn predict(
        &self,
        x: &FeatureVector,
        method: crate::learn::probability::Method,
    ) -> Prediction {
        if self.is_prior_only(x) {
            let distribution = self.label_base_rates();
            return Prediction {
                label: crate::learn::learner::argmax(&distribution.probabilities),
                distribution,
                prior_only: true,
            };
        }
        let gaussians = self.score_gaussians(x);
        let scores: Vec<f64> = gaussians.iter().map(|g| g.mean).collect();
        let gaussians =
            crate::learn::calibration::scaled(&gaussians, self.header.probability_scale);
        Prediction {
            label: crate::learn::learner::argmax(&scores),
            distribution: method.distribution(&gaussians),
            prior_only: self.is_prior_only(x),
        }
    }
}

#[cfg(test)]
mod label_tests {
    use super::*;

    #[test]
    fn a_label_is_a_name_of_printable_characters_up_to_the_bound() {
        for name in ["ham", "Work/Projects", "café", "_unsure", "a b", "\u{FFFD}"] {
            assert_eq!(label_problem(name), None, "{name:?}");
        }
        assert_eq!(label_problem("").as_deref(), Some("is empty"));
        for (name, code) in [
            ("a\nb", "000A"),
            ("\tx", "0009"),
            ("x\u{7f}", "007F"),
            ("next\u{85}line", "0085"),
        ] {
            let why = label_problem(name).unwrap();
            assert!(why.contains(&format!("U+{code}")), "{name:?}: {why}");
        }
        // The bound counts bytes: 512 two-byte characters are at it, one more is over.
        assert_eq!(label_problem(&"é".repeat(512)), None);
        assert_eq!(
            label_problem(&format!("{}x", "é".repeat(512))).as_deref(),
            Some("is 1025 bytes long, more than 1024")
        );
    }
}
