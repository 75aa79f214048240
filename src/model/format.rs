//! The model file: it holds everything `classify` needs to run exactly what was trained.
//!
//! Layout (all integers little-endian):
//!
//! | bytes | content |
//! |---|---|
//! | 0..8 | magic `\x89CWTEXT\n` (the high byte and newline catch text-mode mangling) |
//! | 8..12 | format version (u32) |
//! | 12..16 | header length H (u32) |
//! | 16..16+H | header: JSON ([`ModelHeader`]: pipeline, labels, learner settings, statistics, weight layout) |
//! | … | zero padding to a multiple of 64 bytes, so that the weights can be memory-mapped aligned |
//! | … | weights, `[feature][label][μ, σ]`, f32 or f16 |
//! | … | version 2 and later: the vocabulary, if kept (JSON, `vocabulary_bytes` long, see [`Vocabulary`]) |
//! | … | version 3 and later: the rehearsal documents (`rehearsal_bytes` long, see [`crate::learn::rehearsal`]) |
//! | last 4 | CRC-32 of every byte before it |
//!
//! Version 2 added the optional vocabulary section (`train --keep-vocabulary`), version 3 the
//! optional rehearsal section (the documents `learn` replays after corrections), version 4 no
//! section but a pipeline with character n-grams ([`crate::text::pipeline::chargrams`]): a
//! cwtext from before them would read such a header, ignore the field it does not know and
//! predict without the n-grams, so the version makes it refuse the file instead; version 5 the
//! same for the first-word feature ([`crate::text::pipeline::PipelineConfig::first_word`]), version 6
//! for n-grams with a weight of their own
//! ([`crate::text::pipeline::PipelineConfig::ngram_weight_per_mille`]), version 7 for a filter
//! that takes elided articles off words ([`crate::text::pipeline::elisions`]; a cwtext from
//! before it could not read the filter at all, and now says the file is newer). A file is
//! written with the lowest version that holds it, so a model with none of these is a version 1
//! file, byte for byte what earlier cwtext wrote and still readable by it.
//!
//! Files are written to a temporary file in the target's directory and renamed over it, so a
//! reader or a crash never sees half a model.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use crate::learn::rehearsal::Rehearsal;

use super::*;

pub const MAGIC: [u8; 8] = *b"\x89CWTEXT\n";
/// The newest format this cwtext reads and writes.
pub const FORMAT_VERSION: u32 = 7;
/// The oldest format it still reads.
pub const OLDEST_FORMAT_VERSION: u32 = 1;
const ALIGN: usize = 64;

/// Model files up to this size have their checksum verified on every load, which costs about a
/// millisecond; larger ones only when asked ([`Checksum::Verify`]).
pub const VERIFY_LIMIT: usize = 64 << 20;

/// When to verify a model file's CRC-32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checksum {
    /// Always (every command that rewrites or combines models; `--verify`).
    Verify,
    /// For files up to [`VERIFY_LIMIT`] bytes: reading every byte of a large memory-mapped model
    /// would make each `classify` cost time in proportion to the model's size.
    IfSmall,
    /// Never: for the models embedded in the binary, which are as intact as the binary itself
    /// (a test verifies their checksums). Verifying the 7 MB default model read every page of
    /// it and was about a quarter of a `classify`.
    Embedded,
}

impl Checksum {
    fn applies_to(self, len: usize) -> bool {
        match self {
            Checksum::Verify => true,
            Checksum::IfSmall => len <= VERIFY_LIMIT,
            Checksum::Embedded => false,
        }
    }
}
const PREFIX: usize = 16;

/// How the weights are stored on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum WeightEncoding {
    /// 4 bytes a value: exactly what was trained.
    F32,
    /// 2 bytes a value (IEEE half precision): half the size, about three significant digits.
    F16,
}

impl WeightEncoding {
    pub fn width(self) -> usize {
        match self {
            WeightEncoding::F32 => 4,
            WeightEncoding::F16 => 2,
        }
    }
}

/// The learner's settings, tagged by algorithm so that later learners can join.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "algorithm", rename_all = "snake_case")]
pub enum LearnerConfig {
    /// Multi-class confidence-weighted learning (EMNLP 2009).
    Cw(CwConfig),
}

/// What training saw. Nothing time-dependent is stored, so the same data and seed give the same
/// bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainingStats {
    pub documents: usize,
    /// Documents per label, indexed like the labels.
    pub label_documents: Vec<usize>,
    /// Hash buckets that some training document used.
    pub distinct_features: usize,
    pub epochs: usize,
    /// Online (progressive) accuracy of each epoch: predictions made before each update.
    pub epoch_accuracy: Vec<f64>,
    pub seed: u64,
    /// Files skipped (binary, unreadable or without words).
    pub skipped: usize,
    /// Examples on which the exact k-best strategy stopped at its iteration cap.
    #[serde(default)]
    pub exact_cap_hits: usize,
}

/// The JSON header of a model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelHeader {
    /// The cwtext version that wrote the file (for messages only).
    pub cwtext_version: String,
    pub pipeline: PipelineConfig,
    pub labels: Vec<String>,
    pub learner: LearnerConfig,
    pub training: TrainingStats,
    pub encoding: WeightEncoding,
    /// Rows of the weight table (the feature dimension, bias included).
    pub features: usize,
    /// Probabilities are computed from N(m_z, c·v_z) with this c, fitted on held-out documents
    /// (`crate::learn::calibration::fit_scale`); 1 when not calibrated.
    #[serde(default = "one")]
    pub probability_scale: f64,
    /// How the probability scale was fitted; absent in models written before it was recorded
    /// and in uncalibrated ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<CalibrationInfo>,
    /// What `train` chose on the held-out fifth; absent when it chose nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<Selection>,
    /// The label-frequency correction of the scores that `train` chose on the held-out fifth and
    /// added to the bias weights ([`crate::learn::label_shift`]); absent when it chose none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_shift: Option<LabelShift>,
    /// The chosen settings again with the n-grams at a weight of their own, compared on the
    /// held-out fifth after the run's epochs ([`crate::jobs::train::LIGHTER_NGRAMS`]); absent
    /// when not tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ngram_weight: Option<NgramWeightTrial>,
    /// The chosen settings again with the soft rule, compared on the held-out fifth after the
    /// run's epochs ([`SoftRuleTrial`]); absent when not tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soft_rule: Option<SoftRuleTrial>,
    /// How long the training documents were, when `train` looked to decide on character
    /// n-grams ([`crate::text::length`]); absent when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_length: Option<crate::text::length::TextLength>,
    /// Length of the vocabulary section after the weights (format version 2); 0, and then not
    /// written, without one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub vocabulary_bytes: u64,
    /// Length of the rehearsal section after the vocabulary (format version 3); 0, and then not
    /// written, without one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rehearsal_bytes: u64,
}

/// How and on what the probability scale was fitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationInfo {
    /// The command that fitted it (`train`).
    pub fitted_by: String,
    /// The held-out documents it was fitted on.
    pub held_out: usize,
    /// The folds when each of those documents was held out by cross-validation (a corpus too
    /// small to hold out a fifth to fit on, [`crate::jobs::calibrate::fit_by_folds`]); 0 for
    /// the held-out fifth.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub folds: usize,
    /// The Brier score of those documents at scale 1 and at the fitted scale.
    pub brier_before: f64,
    pub brier_after: f64,
    /// The fitted scale was divided by this ratio of the shipped model's score variances to
    /// those of the model it was fitted with ([`crate::learn::calibration::variance_shrinkage`]).
    #[serde(default = "one")]
    pub variance_shrinkage: f64,
    /// Documents `learn` applied since the scale was fitted: each makes the variances smaller
    /// while the scale stays, so the probabilities drift towards over-confidence (`eval` on
    /// labelled files measures how far).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub corrections_since: usize,
    /// The labels the scale was fitted on: the model's first `fitted_labels`; a label `learn`
    /// added after them had no documents in the fit
    /// ([`crate::jobs::online::learned_on_raw_variance`]). 0 when not recorded (scales not
    /// fitted on documents, and models written before 2026-12-07 until their first correction,
    /// [`CalibrationInfo::record_fitted_labels`]): every label counts as fitted.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub fitted_labels: usize,
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

/// What the automatic choice tried and chose, as stored in the model and printed by `train`
/// and `inspect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// The held-out documents the candidates were scored on.
    pub held_out: usize,
    /// The epochs each candidate was trained for on the four fifths before it was scored (0 in
    /// models from before this was recorded, whose candidates trained every epoch).
    #[serde(default)]
    pub epochs: usize,
    pub trials: Vec<SelectionTrial>,
    /// The index of the chosen trial.
    pub chosen: usize,
    /// 0 when the candidates were scored on the held-out fifth; otherwise the folds of the
    /// cross-validation that scored them on every document (a corpus too small to hold out
    /// a fifth of [`MIN_SELECTION_DOCUMENTS`](crate::jobs::train::MIN_SELECTION_DOCUMENTS)).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub folds: usize,
    /// The sub-folders below the labels whose documents were held out together
    /// ([`Groups`](crate::jobs::corpus::Groups)); 0 when the fifth was drawn file by file.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub groups: usize,
}

/// The chosen settings with the soft rule (SCW-I, `train`'s `jobs::train::soft_rule`) against
/// them as chosen, on the held-out fifth after the run's epochs on the four fifths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoftRuleTrial {
    /// SCW-I's aggressiveness C and confidence η.
    pub c: f64,
    pub eta: f64,
    /// The epochs both were trained for on the four fifths before they were scored.
    pub epochs: usize,
    /// Held-out accuracy with the soft rule, and as chosen.
    pub accuracy: f64,
    pub accuracy_before: f64,
    /// Held-out documents the soft rule got right and the chosen settings missed, and the
    /// reverse.
    pub wins: usize,
    pub losses: usize,
    /// Its lead in standard errors of the paired difference.
    pub standard_errors: f64,
    /// The standard errors it had to be ahead by, and whether it was (and was taken).
    pub margin: f64,
    pub taken: bool,
    /// The labels of the training files it was chosen for (the first this many of the
    /// model's); `learn` corrects labels added since with CW's uncapped step. 0: not recorded.
    #[serde(default)]
    pub labels: usize,
}

impl SoftRuleTrial {
    /// The labels trained from files when the record says (the first this many of the model's);
    /// `None` in a record written before it did.
    pub fn trained_labels(&self) -> Option<usize> {
        (self.labels > 0).then_some(self.labels)
    }

    /// One clause for people.
    pub fn describe(&self) -> String {
        format!(
            "{} the soft rule SCW-I (C {}, η {}, prior flat): held-out accuracy after {} epochs {:.4} against {:.4} with CW (right on {} it missed, wrong on {} it got, {:+.2} standard errors; taken when ahead by more than {})",
            if self.taken { "took" } else { "kept CW, not" },
            self.c,
            self.eta,
            self.epochs,
            self.accuracy,
            self.accuracy_before,
            self.wins,
            self.losses,
            self.standard_errors,
            self.margin
        )
    }
}

/// The chosen settings with lighter n-grams against them as chosen, on the held-out fifth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NgramWeightTrial {
    /// The n-grams' weight tried, in thousandths.
    pub weight_per_mille: u16,
    /// The epochs both were trained for on the four fifths before they were scored.
    pub epochs: usize,
    /// Held-out accuracy with the n-grams at that weight, and as chosen.
    pub accuracy: f64,
    pub accuracy_before: f64,
    /// Whether the lighter n-grams were taken (more accurate).
    pub taken: bool,
}

impl NgramWeightTrial {
    /// One clause for people.
    pub fn describe(&self) -> String {
        format!(
            "{} bigrams at weight {}: held-out accuracy after {} epochs {:.4} against {:.4} at full weight",
            if self.taken { "took" } else { "kept full-weight bigrams, not" },
            f32::from(self.weight_per_mille) / 1000.0,
            self.epochs,
            self.accuracy,
            self.accuracy_before
        )
    }
}

/// The record of the label-frequency correction `train` chose ([`crate::learn::label_shift`]):
/// the offsets were added to the bias weights' means, so every prediction (label and
/// probabilities) and every later correction includes them; this says what they were and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelShift {
    /// Per label (indexed like the labels), γ·ln(π_max/π_l); labels added later have none.
    pub offsets: Vec<f64>,
    /// The strength γ and the held-out figures it was chosen on.
    #[serde(flatten)]
    pub choice: crate::learn::label_shift::StrengthChoice,
}

impl LabelShift {
    /// One line for people ([`crate::learn::label_shift::StrengthChoice::describe`]).
    pub fn describe(&self) -> String {
        self.choice.describe()
    }
}

/// How the name of a candidate with every header field whole ends
/// (`crate::jobs::train::Choose::every_field`).
pub const EVERY_FIELD_WHOLE: &str = ", every header field whole";

/// One candidate's score on the held-out fifth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionTrial {
    pub setting: String,
    pub accuracy: f64,
    pub macro_f1: f64,
}

impl Selection {
    /// One line for people: what was chosen, on what, against what.
    pub fn describe(&self) -> String {
        let chosen = &self.trials[self.chosen];
        let others: Vec<String> = self
            .trials
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != self.chosen)
            .map(|(_, t)| format!("{:.4} with {}", t.accuracy, t.setting))
            .collect();
        let kept = if self.trials.iter().any(|t| t.accuracy > chosen.accuracy) {
            if self.chosen == 0 {
                " (the base settings: no other was better by more than a standard error)"
            } else {
                // Passed over a more accurate trial: only
                // crate::jobs::train::only_if_clearly_better does, for every header field
                // whole (and, in models written before 2026-11-29, for the soft rule, then a
                // candidate of this choice).
                let best = self
                    .trials
                    .iter()
                    .max_by(|a, b| a.accuracy.total_cmp(&b.accuracy))
                    .expect("a more accurate trial");
                if best.setting.ends_with(EVERY_FIELD_WHOLE) {
                    " (every header field whole was more accurate, but not by three standard errors)"
                } else {
                    " (the soft rule was more accurate, but not by a standard error)"
                }
            }
        } else if self.trials[..self.chosen]
            .iter()
            .any(|t| t.accuracy == chosen.accuracy)
        {
            // Passed over an earlier equal: only crate::jobs::train::every_word_on_a_tie does.
            " (a tie with the stop-word list: every word is kept on a tie)"
        } else {
            ""
        };
        let after = match self.epochs {
            0 => String::new(),
            1 => " after 1 epoch".to_string(),
            n => format!(" after {n} epochs"),
        };
        let on = match self.folds {
            0 => "held-out accuracy".to_string(),
            k => format!(
                "accuracy over {k} cross-validation folds (too few documents to hold out a fifth)"
            ),
        };
        let groups = match self.groups {
            0 => String::new(),
            n => format!(" (the files of {n} sub-folders held out together)"),
        };
        format!(
            "chose {}{kept}: {on}{after} {:.4} (macro-F1 {:.4}) on {} documents{groups}, against {}",
            chosen.setting,
            chosen.accuracy,
            chosen.macro_f1,
            self.held_out,
            others.join(", ")
        )
    }
}

impl CalibrationInfo {
    /// Records, in a record written before `fitted_labels` was (2026-12-07), that the scale was
    /// fitted on the model's `labels` labels, when nothing can have changed them since: fitted
    /// by `train` on held-out documents, and no document learned since (`learn` adds labels and
    /// counts what it learns). So the ready models, and models trained before, get the rule for
    /// labels `learn` adds ([`crate::jobs::online::learned_on_raw_variance`]) from their first
    /// correction on.
    pub fn record_fitted_labels(&mut self, labels: usize) {
        if self.fitted_labels == 0
            && self.corrections_since == 0
            && self.fitted_by == "train"
            && self.held_out > 0
        {
            self.fitted_labels = labels;
        }
    }

    /// One line for people: who fitted the scale, on what, and what it did.
    pub fn describe(&self) -> String {
        let since = match self.corrections_since {
            0 => String::new(),
            n => format!(
                "; {n} document{} learned since, not refitted: `cwtext eval` on labelled files measures the drift",
                if n == 1 { "" } else { "s" }
            ),
        };
        if self.held_out == 0 {
            return format!(
                "set by {}, not fitted on documents: `cwtext eval` on labelled files shows how well it holds{since}",
                self.fitted_by
            );
        }
        let held_out = match self.folds {
            0 => format!("{} held-out documents", self.held_out),
            k => format!(
                "{} documents, each held out once by {k}-fold cross-validation",
                self.held_out
            ),
        };
        format!(
            "fitted by {} on {held_out} (Brier {:.4} → {:.4}), divided by the variance shrinkage {:.3} of the final model{since}",
            self.fitted_by, self.brier_before, self.brier_after, self.variance_shrinkage
        )
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A model's vocabulary: built in memory by training, or the JSON section of a loaded file,
/// parsed only when asked for (explain, inspect, merge, resume), so that `classify` never pays
/// for it.
#[derive(Clone)]
pub enum KeptVocabulary {
    Parsed(Arc<Vocabulary>),
    Stored {
        bytes: SharedBytes,
        start: usize,
        len: usize,
    },
}

impl KeptVocabulary {
    /// The section's bytes as written in a model file.
    pub(super) fn to_json(&self) -> std::borrow::Cow<'_, [u8]> {
        match self {
            KeptVocabulary::Parsed(v) => serde_json::to_vec(&**v)
                .expect("the vocabulary serialises")
                .into(),
            KeptVocabulary::Stored { bytes, start, len } => {
                (*(**bytes).as_ref())[*start..*start + *len].into()
            }
        }
    }
}

impl PartialEq for KeptVocabulary {
    fn eq(&self, other: &Self) -> bool {
        self.to_json() == other.to_json()
    }
}

impl std::fmt::Debug for KeptVocabulary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeptVocabulary({} bytes)", self.to_json().len())
    }
}

/// A model's rehearsal documents (the ones `learn` protects): built in memory by training, or
/// the section of a loaded file, parsed only when asked for (`learn`, `inspect`), so that
/// `classify` and `filter` never pay for it (parsing the 1.8 MB section of a model of two labels
/// of mail took about 1 ms of a 4 ms `classify`).
#[derive(Clone)]
pub enum KeptDocuments {
    Parsed(Rehearsal),
    Stored {
        bytes: SharedBytes,
        start: usize,
        len: usize,
        /// The weight table's feature count and the model's labels, to check the section by.
        features: usize,
        labels: usize,
        /// The file it was read from, which a parse error names.
        origin: std::path::PathBuf,
    },
}

impl KeptDocuments {
    /// The section's bytes as written in a model file.
    pub(super) fn to_bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        match self {
            KeptDocuments::Parsed(r) => r.to_bytes().into(),
            KeptDocuments::Stored {
                bytes, start, len, ..
            } => (*(**bytes).as_ref())[*start..*start + *len].into(),
        }
    }

    /// The documents, parsed when stored; the error names the file and what is wrong with the
    /// section.
    pub fn parse(&self) -> Result<std::borrow::Cow<'_, Rehearsal>> {
        match self {
            KeptDocuments::Parsed(r) => Ok(std::borrow::Cow::Borrowed(r)),
            KeptDocuments::Stored {
                features,
                labels,
                origin,
                ..
            } => Rehearsal::from_bytes(&self.to_bytes(), *features, *labels)
                .map(std::borrow::Cow::Owned)
                .map_err(|e| Error::Model {
                    path: origin.clone(),
                    kind: ModelError::Corrupted(e),
                }),
        }
    }
}

impl PartialEq for KeptDocuments {
    fn eq(&self, other: &Self) -> bool {
        self.to_bytes() == other.to_bytes()
    }
}

impl std::fmt::Debug for KeptDocuments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeptDocuments({} bytes)", self.to_bytes().len())
    }
}

fn one() -> f64 {
    1.0
}

/// The index of `label` in `labels`, appending it when it is not there (uniting label sets).
pub fn index_or_push(labels: &mut Vec<String>, label: &str) -> usize {
    match labels.iter().position(|l| l == label) {
        Some(i) => i,
        None => {
            labels.push(label.to_string());
            labels.len() - 1
        }
    }
}

impl Model {
    /// Serialises the model into bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out)
            .expect("writing to memory cannot fail");
        out
    }

    /// Writes the model's bytes to `out`, computing the checksum on the way, so that saving
    /// never holds a second copy of the weights in memory. Returns the checksum written (the
    /// file's [`Model::fingerprint`] once read back).
    pub fn write_to(&self, out: &mut impl Write) -> std::io::Result<u32> {
        let vocabulary = self.vocabulary.as_ref().map(KeptVocabulary::to_json);
        let mut header = self.header.clone();
        header.vocabulary_bytes = vocabulary.as_ref().map_or(0, |v| v.len() as u64);
        let rehearsal = self.rehearsal.as_ref().map(KeptDocuments::to_bytes);
        header.rehearsal_bytes = rehearsal.as_ref().map_or(0, |r| r.len() as u64);
        let version = if header.pipeline.elisions_name().is_some() {
            7
        } else if header.pipeline.ngram_weight_per_mille.is_some() {
            6
        } else if header.pipeline.first_word {
            5
        } else if header.pipeline.char_ngrams.is_some() {
            4
        } else if rehearsal.is_some() {
            3
        } else if vocabulary.is_some() {
            2
        } else {
            1
        };
        let header = serde_json::to_vec(&header).expect("the header serialises");
        let weights = self.learner.weights().raw();
        let mut out = Checksummed {
            inner: out,
            crc: crc32fast::Hasher::new(),
        };
        out.write_all(&MAGIC)?;
        out.write_all(&u32::to_le_bytes(version))?;
        out.write_all(&(header.len() as u32).to_le_bytes())?;
        out.write_all(&header)?;
        out.write_all(&[0; ALIGN][..padded(PREFIX + header.len()) - PREFIX - header.len()])?;
        let width = self.header.encoding.width();
        let mut chunk = Vec::with_capacity(64 * 1024);
        for values in weights.chunks(64 * 1024 / width) {
            chunk.clear();
            match self.header.encoding {
                WeightEncoding::F32 => values
                    .iter()
                    .for_each(|w| chunk.extend_from_slice(&w.to_le_bytes())),
                // (μ, σ) pairs (a chunk holds whole pairs). A variance below half of f16's
                // smallest subnormal, 6·10⁻⁸, would round to 0, which the learner and the KL
                // merge cannot take (σ > 0): it is written as that subnormal instead.
                WeightEncoding::F16 => values.chunks(2).for_each(|pair| {
                    let variance = match half::f16::from_f32(pair[1]) {
                        v if v.to_f32() == 0.0 && pair[1] > 0.0 => half::f16::from_bits(1),
                        v => v,
                    };
                    chunk.extend_from_slice(&half::f16::from_f32(pair[0]).to_le_bytes());
                    chunk.extend_from_slice(&variance.to_le_bytes());
                }),
            }
            out.write_all(&chunk)?;
        }
        if let Some(v) = &vocabulary {
            out.write_all(v)?;
        }
        if let Some(r) = &rehearsal {
            out.write_all(r)?;
        }
        let crc = out.crc.clone().finalize();
        out.inner.write_all(&crc.to_le_bytes())?;
        Ok(crc)
    }

    /// Parses a model from bytes (a copy is kept); `origin` names the source in errors. The
    /// checksum is always verified.
    pub fn from_bytes(bytes: &[u8], origin: &Path) -> Result<Model> {
        Model::from_shared(Arc::new(bytes.to_vec()), origin, Checksum::Verify)
    }

    /// A model embedded in the binary: nothing is copied or decoded up front, and with
    /// [`Checksum::Embedded`] nothing is checksummed either.
    pub fn from_static(bytes: &'static [u8], origin: &Path, checksum: Checksum) -> Result<Model> {
        Model::from_shared(Arc::new(bytes), origin, checksum)
    }

    /// Parses a model whose weights stay in `bytes` (a memory map, the embedded model, a
    /// copy) and are read in place: opening costs the header, not the size of the table.
    pub fn from_shared(bytes: SharedBytes, origin: &Path, checksum: Checksum) -> Result<Model> {
        let fail = |kind: ModelError| Error::Model {
            path: origin.to_path_buf(),
            kind,
        };
        let all: &[u8] = (*bytes).as_ref();
        if all.len() < PREFIX || all[..8] != MAGIC {
            // A prefix of the magic is a truncated model, anything else is not a model.
            let n = all.len().min(8);
            return Err(fail(if all[..n] == MAGIC[..n] && n > 0 {
                ModelError::Truncated {
                    expected: PREFIX as u64,
                    found: all.len() as u64,
                }
            } else {
                ModelError::NotAModel
            }));
        }
        let version = u32::from_le_bytes(all[8..12].try_into().unwrap());
        if version > FORMAT_VERSION {
            return Err(fail(ModelError::NewerVersion {
                found: version,
                supported: FORMAT_VERSION,
            }));
        }
        if version < OLDEST_FORMAT_VERSION {
            return Err(fail(ModelError::OlderVersion {
                found: version,
                supported: OLDEST_FORMAT_VERSION,
            }));
        }
        let header_len = u32::from_le_bytes(all[12..16].try_into().unwrap()) as usize;
        let truncated = |expected: usize| {
            fail(ModelError::Truncated {
                expected: expected as u64,
                found: all.len() as u64,
            })
        };
        if all.len() < PREFIX + header_len + 4 {
            return Err(truncated(PREFIX + header_len + 4));
        }
        let header: ModelHeader = serde_json::from_slice(&all[PREFIX..PREFIX + header_len])
            .map_err(|e| fail(ModelError::Corrupted(format!("unreadable header: {e}"))))?;
        let labels = header.labels.len();
        let LearnerConfig::Cw(config) = header.learner.clone();
        let params = config
            .validate()
            .map_err(|e| fail(ModelError::Corrupted(e.to_string())))?;
        let blocks = DiagonalLearner::blocks_for(&params, labels);
        let values = header
            .features
            .checked_mul(blocks)
            .and_then(|n| n.checked_mul(2))
            .ok_or_else(|| fail(ModelError::Corrupted("impossible weight table size".into())))?;
        let start = padded(PREFIX + header_len);
        if version < 2 && header.vocabulary_bytes != 0 {
            return Err(fail(ModelError::Corrupted(
                "a vocabulary in a version 1 file".into(),
            )));
        }
        if version < 7 && header.pipeline.elisions_name().is_some() {
            return Err(fail(ModelError::Corrupted(format!(
                "elided articles in a version {version} file"
            ))));
        }
        if version < 6 && header.pipeline.ngram_weight_per_mille.is_some() {
            return Err(fail(ModelError::Corrupted(format!(
                "an n-gram weight in a version {version} file"
            ))));
        }
        if version < 5 && header.pipeline.first_word {
            return Err(fail(ModelError::Corrupted(format!(
                "a first-word feature in a version {version} file"
            ))));
        }
        if version < 4 && header.pipeline.char_ngrams.is_some() {
            return Err(fail(ModelError::Corrupted(format!(
                "character n-grams in a version {version} file"
            ))));
        }
        if version < 3 && header.rehearsal_bytes != 0 {
            return Err(fail(ModelError::Corrupted(format!(
                "a rehearsal section in a version {version} file"
            ))));
        }
        let vocabulary_len = usize::try_from(header.vocabulary_bytes)
            .map_err(|_| fail(ModelError::Corrupted("impossible vocabulary size".into())))?;
        let rehearsal_len = usize::try_from(header.rehearsal_bytes)
            .map_err(|_| fail(ModelError::Corrupted("impossible rehearsal size".into())))?;
        let weights_end = values
            .checked_mul(header.encoding.width())
            .and_then(|n| n.checked_add(start))
            .ok_or_else(|| fail(ModelError::Corrupted("impossible weight table size".into())))?;
        let expected = weights_end
            .checked_add(vocabulary_len)
            .and_then(|n| n.checked_add(rehearsal_len))
            .and_then(|n| n.checked_add(4))
            .ok_or_else(|| fail(ModelError::Corrupted("impossible vocabulary size".into())))?;
        if all.len() < expected {
            return Err(truncated(expected));
        }
        if all.len() > expected {
            return Err(fail(ModelError::Corrupted(format!(
                "{} unexpected bytes after the end of the model",
                all.len() - expected
            ))));
        }
        if checksum.applies_to(all.len()) {
            let (body, crc) = all.split_at(expected - 4);
            let stored = u32::from_le_bytes(crc.try_into().unwrap());
            let actual = crc32fast::hash(body);
            if stored != actual {
                return Err(fail(ModelError::Corrupted(format!(
                    "checksum mismatch (stored {stored:08x}, computed {actual:08x})"
                ))));
            }
        }
        header
            .pipeline
            .validate()
            .map_err(|e| fail(ModelError::Corrupted(e.to_string())))?;
        if !(header.probability_scale.is_finite() && header.probability_scale > 0.0) {
            return Err(fail(ModelError::Corrupted(format!(
                "probability scale must be positive, but is {}",
                header.probability_scale
            ))));
        }
        if let Some(shift) = &header.label_shift {
            if shift.offsets.len() > labels || !shift.offsets.iter().all(|b| b.is_finite()) {
                return Err(fail(ModelError::Corrupted(format!(
                    "the label shift has {} offsets for {labels} labels, or one is not finite",
                    shift.offsets.len()
                ))));
            }
        }
        if header.features != header.pipeline.dimension() || labels == 0 {
            return Err(fail(ModelError::Corrupted(
                "weight table does not match the pipeline".into(),
            )));
        }
        params
            .check_labels(labels)
            .map_err(|e| fail(ModelError::Corrupted(e.to_string())))?;
        let file_crc = Some(u32::from_le_bytes(all[expected - 4..].try_into().unwrap()));
        let half = header.encoding == WeightEncoding::F16;
        let vocabulary = (vocabulary_len > 0).then(|| KeptVocabulary::Stored {
            bytes: bytes.clone(),
            start: weights_end,
            len: vocabulary_len,
        });
        // Checked when parsed: `learn` and `inspect` parse it, `classify` never needs it.
        let rehearsal = (rehearsal_len > 0).then(|| KeptDocuments::Stored {
            bytes: bytes.clone(),
            start: weights_end + vocabulary_len,
            len: rehearsal_len,
            features: header.features,
            labels,
            origin: origin.to_path_buf(),
        });
        let table = WeightTable::view(header.features, blocks, bytes, start, half)
            .expect("size checked above");
        let learner = DiagonalLearner::from_weights(params, labels, table)
            .expect("blocks computed from the same settings");
        Ok(Model {
            learner,
            header,
            vocabulary,
            file_crc,
            rehearsal,
        })
    }

    /// Reads a model file to change or combine it (learn, merge, resume): the checksum is
    /// always verified.
    pub fn load(path: &Path) -> Result<Model> {
        Model::open(path, Checksum::Verify)
    }

    /// Reads a model file into memory, checksum verified, never mapping it: for a process that
    /// holds a model for long (`serve`). cwtext replaces a model by renaming a new file over
    /// it, but `cp NEW MODEL` writes the file in place, cutting it to nothing first, and a
    /// mapped page past the cut kills the process that reads it (SIGBUS).
    pub fn read(path: &Path) -> Result<Model> {
        Model::open_with(path, Checksum::Verify, false)
    }

    /// Opens a model file by memory-mapping it (files under 1 MiB and non-regular files are
    /// read instead). cwtext never writes a model in place (it renames a new file over it), so
    /// the mapped bytes do not change while they are in use; a process that holds the model
    /// for long reads it instead ([`Model::read`]).
    pub fn open(path: &Path, checksum: Checksum) -> Result<Model> {
        Model::open_with(path, checksum, true)
    }

    fn open_with(path: &Path, checksum: Checksum, map: bool) -> Result<Model> {
        let io = |e| Error::io(path, e);
        let file = std::fs::File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        let bytes: SharedBytes = if map && meta.is_file() && meta.len() >= 1 << 20 {
            // SAFETY: the map is read-only, and model files are replaced by rename, never
            // modified in place (see above); only an outside program truncating the file while
            // it is mapped could invalidate it.
            Arc::new(unsafe { memmap2::Mmap::map(&file) }.map_err(io)?)
        } else {
            use std::io::Read;
            let mut bytes = Vec::new();
            (&file).read_to_end(&mut bytes).map_err(io)?;
            Arc::new(bytes)
        };
        Model::from_shared(bytes, path, checksum)
    }

    /// Writes the model atomically: a temporary file beside `path`, flushed, then renamed.
    /// Returns the file's checksum (its [`Model::fingerprint`] once loaded).
    pub fn save(&self, path: &Path) -> Result<u32> {
        self.save_then(path, |_| Ok(()))
    }

    /// [`Model::save`], calling `before_rename` with the new file's checksum once it is written
    /// and synced but before it replaces `path` (a journal records which file a snapshot made,
    /// so that a crash between the two is told apart from a model replaced by another program).
    /// An error from it leaves `path` as it was.
    ///
    /// A `path` that is a symbolic link stays one: the file it names is the one replaced (see
    /// [`link_target`]). A file that is replaced keeps its permissions (a model kept private
    /// with mode 0600 stays so); a new one gets 0644, less the umask.
    pub fn save_then(
        &self,
        path: &Path,
        before_rename: impl FnOnce(u32) -> Result<()>,
    ) -> Result<u32> {
        let io = |e| Error::io(path, e);
        let target = link_target(path).map_err(io)?;
        let mut tmp = model_tempfile_beside(&target).map_err(io)?;
        if let Ok(old) = std::fs::metadata(&target) {
            tmp.as_file()
                .set_permissions(old.permissions())
                .map_err(io)?;
        }
        // Through the file itself: tempfile's own writer wraps errors so that the OS error
        // (e.g. "No space left on device") no longer shows.
        let mut writer = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        let crc = self.write_to(&mut writer).map_err(io)?;
        writer.flush().map_err(io)?;
        drop(writer);
        tmp.as_file().sync_all().map_err(io)?;
        before_rename(crc)?;
        tmp.persist(&target).map_err(|e| io(e.error))?;
        Ok(crc)
    }
}

/// A new temporary file in the folder of `target`, to be renamed over it once written: named
/// `.cwtext-model-*`, and readable like any other model (tempfile's default is 0600; a new
/// model gets 0644, less the umask).
pub(crate) fn model_tempfile_beside(target: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".cwtext-model-");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    builder.tempfile_in(dir)
}

/// The file `path` names once symbolic links are followed: a chain of links is followed to
/// its end, a relative target read from its link's folder. A path that is no link, or names
/// nothing, is itself; so is a link whose target does not exist yet (its target is then the
/// file to create). A model is replaced by a rename (see [`Model::save`]), and renaming over a
/// link would replace the link, leaving the model it names untouched: writers replace this
/// file instead, and the files kept beside a model (its lock, a server's journal) live beside
/// it, so that every way of naming one model shares them.
pub fn link_target(path: &Path) -> std::io::Result<std::path::PathBuf> {
    // As Linux's own limit on links followed in one path lookup (ELOOP past it).
    const MAX_LINKS: usize = 40;
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(std::io::Error::other(
        "too many levels of symbolic links (a loop?)",
    ))
}

/// A writer that feeds everything it passes on into a CRC-32.
struct Checksummed<'w, W: Write> {
    inner: &'w mut W,
    crc: crc32fast::Hasher,
}

impl<W: Write> Write for Checksummed<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn padded(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::learner::CwConfig;

    /// What `train` and `inspect` say when a more accurate trial was passed over: the base kept
    /// by a cross-validation's standard error, or (Russian fortunes) the soft rule passed over
    /// for the best CW candidate, which is not the base.
    #[test]
    fn a_passed_over_trial_is_named_for_what_it_was() {
        let trial = |setting: &str, accuracy| SelectionTrial {
            setting: setting.into(),
            accuracy,
            macro_f1: accuracy,
        };
        let mut selection = Selection {
            held_out: 2904,
            epochs: 1,
            trials: vec![
                trial("stop words none, prior idf", 0.3671),
                trial("stop words none, prior flat", 0.3722),
                trial(
                    "stop words none, soft rule SCW-I (C 0.3, η 0.99, prior flat)",
                    0.3743,
                ),
            ],
            chosen: 1,
            folds: 0,
            groups: 0,
        };
        assert!(
            selection.describe().starts_with(
                "chose stop words none, prior flat (the soft rule was more accurate, but not by a standard error): held-out accuracy after 1 epoch 0.3722"
            ),
            "{}",
            selection.describe()
        );
        selection.chosen = 0;
        assert!(selection
            .describe()
            .starts_with("chose stop words none, prior idf (the base settings: no other was better by more than a standard error)"));
        selection.chosen = 2;
        assert!(selection
            .describe()
            .starts_with("chose stop words none, soft rule SCW-I (C 0.3, η 0.99, prior flat): "));
        // Mail: every header field whole passed over for the best stable candidate.
        selection.trials[2] = trial(
            "stop words none, prior idf, every header field whole",
            0.3743,
        );
        selection.chosen = 1;
        assert!(
            selection.describe().starts_with(
                "chose stop words none, prior flat (every header field whole was more accurate, but not by three standard errors): "
            ),
            "{}",
            selection.describe()
        );
    }

    /// Links followed to the file they name: relative to their own folder, through a chain; a
    /// path that is no link, or a link to nothing yet, is where a writer creates the file; a
    /// loop is an error, not a hang.
    #[cfg(unix)]
    #[test]
    fn link_target_follows_chains_relative_to_each_link() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("models")).unwrap();
        std::fs::create_dir(d.join("links")).unwrap();
        std::fs::write(d.join("models/v3.cwm"), b"m").unwrap();
        symlink("../models/v3.cwm", d.join("links/current.cwm")).unwrap();
        symlink(d.join("links/current.cwm"), d.join("mail.cwm")).unwrap();
        let real = link_target(&d.join("mail.cwm")).unwrap();
        assert_eq!(real, d.join("links/../models/v3.cwm"));
        assert_eq!(std::fs::read(&real).unwrap(), b"m");
        let plain = d.join("models/v3.cwm");
        assert_eq!(link_target(&plain).unwrap(), plain);
        let absent = d.join("new.cwm");
        assert_eq!(link_target(&absent).unwrap(), absent);
        symlink("models/v4.cwm", d.join("next.cwm")).unwrap();
        assert_eq!(
            link_target(&d.join("next.cwm")).unwrap(),
            d.join("models/v4.cwm")
        );
        symlink("b.cwm", d.join("a.cwm")).unwrap();
        symlink("a.cwm", d.join("b.cwm")).unwrap();
        let e = link_target(&d.join("a.cwm")).unwrap_err();
        assert!(
            e.to_string().contains("too many levels of symbolic links"),
            "{e}"
        );
    }

    /// Saving through a link replaces the file it names and keeps that file's permissions.
    #[cfg(unix)]
    #[test]
    fn save_through_a_link_replaces_its_target_with_the_same_mode() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("v1.cwm");
        let link = dir.path().join("current.cwm");
        std::fs::write(&target, b"old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        symlink("v1.cwm", &link).unwrap();
        let m = model(WeightEncoding::F32);
        m.save(&link).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let meta = std::fs::metadata(&target).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o640);
        let back = Model::open(&link, Checksum::Verify).unwrap();
        assert_eq!(back.labels(), m.labels());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    fn model(encoding: WeightEncoding) -> Model {
        let pipeline = PipelineConfig {
            hash_bits: 16,
            ..PipelineConfig::default()
        };
        let params = CwConfig::default().validate().unwrap();
        let mut learner = DiagonalLearner::new(params, pipeline.dimension(), 2);
        let x = FeatureVector::new(pipeline.dimension(), vec![3, 65536], vec![0.5, 1.0]);
        learner.learn(&x, 1);
        Model {
            header: ModelHeader {
                cwtext_version: "test".into(),
                features: pipeline.dimension(),
                pipeline,
                labels: vec!["a".into(), "b".into()],
                learner: LearnerConfig::Cw(CwConfig::default()),
                training: TrainingStats::default(),
                encoding,
                probability_scale: 1.0,
                calibration: None,
                selection: None,
                label_shift: None,
                text_length: None,
                ngram_weight: None,
                soft_rule: None,
                vocabulary_bytes: 0,
                rehearsal_bytes: 0,
            },
            learner,
            vocabulary: None,
            file_crc: None,
            rehearsal: None,
        }
    }

    #[test]
    fn round_trip_f32_is_exact() {
        let m = model(WeightEncoding::F32);
        let bytes = m.to_bytes();
        assert_eq!(Model::from_bytes(&bytes, Path::new("m")).unwrap(), m);
        assert_eq!(bytes.len() % 4, 0);
    }

    #[test]
    fn fingerprint_is_the_crc_in_the_last_four_bytes() {
        let m = model(WeightEncoding::F32);
        assert_eq!(m.fingerprint(), None);
        let bytes = m.to_bytes();
        let (body, tail) = bytes.split_at(bytes.len() - 4);
        let parsed = Model::from_bytes(&bytes, Path::new("m")).unwrap();
        assert_eq!(parsed.fingerprint(), Some(crc32fast::hash(body)));
        assert_eq!(
            parsed.fingerprint(),
            Some(u32::from_le_bytes(tail.try_into().unwrap()))
        );
        let other = Model::from_bytes(&model(WeightEncoding::F16).to_bytes(), Path::new("m"));
        assert_ne!(other.unwrap().fingerprint(), parsed.fingerprint());
    }

    #[test]
    fn save_returns_the_fingerprint_the_file_loads_with() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.cwm");
        let crc = model(WeightEncoding::F16).save(&path).unwrap();
        assert_eq!(Model::load(&path).unwrap().fingerprint(), Some(crc));
    }

    #[test]
    fn round_trip_f16_is_close() {
        let m = model(WeightEncoding::F16);
        let back = Model::from_bytes(&m.to_bytes(), Path::new("m")).unwrap();
        for (a, b) in m
            .learner
            .weights()
            .raw()
            .iter()
            .zip(back.learner.weights().raw())
        {
            assert!((a - b).abs() <= a.abs() * 1e-3, "{a} {b}");
        }
    }

    /// Small variances through f16: the shipped sentiment model holds σ ≈ 2·10⁻⁵ (in f16's
    /// subnormal range, below 6.1·10⁻⁵, where the spacing is 6·10⁻⁸), AROW with r = 0.01 reaches
    /// 2·10⁻⁷ on the same corpus. Normal values keep f16's relative precision 2⁻¹¹; subnormal ones
    /// are within half a spacing, 3·10⁻⁸ (0.15% at 2·10⁻⁵, 15% at 2·10⁻⁷); none becomes 0 (it
    /// did below 3·10⁻⁸).
    #[test]
    fn round_trip_f16_keeps_small_variances_positive() {
        let mut m = model(WeightEncoding::F16);
        let small = [
            1e-2, 1e-4, 6.2e-5, 6e-5, 2.05e-5, 1e-6, 2e-7, 5e-8, 2e-8, 1e-10, 1e-30,
        ];
        let mut table = m.learner.weights().clone();
        for (i, v) in small.iter().enumerate() {
            table.raw_mut()[2 * i + 1] = *v;
        }
        m.learner.set_weights(table);
        let back = Model::from_bytes(&m.to_bytes(), Path::new("m")).unwrap();
        let back = back.learner.weights().raw();
        for (i, &v) in small.iter().enumerate() {
            let got = back[2 * i + 1];
            let tolerance = if v >= 6.1e-5 {
                v * 2f32.powi(-11)
            } else {
                2.99e-8
            };
            assert!(got > 0.0, "{v} became {got}");
            if v >= 5.97e-8 {
                assert!((got - v).abs() <= tolerance, "{v} became {got}");
            } else {
                assert_eq!(got, 5.960_464_5e-8, "{v}: the smallest subnormal");
            }
        }
    }

    #[test]
    fn saved_files_open_as_views_of_the_same_model() {
        let dir = tempfile::tempdir().unwrap();
        for encoding in [WeightEncoding::F32, WeightEncoding::F16] {
            let m = model(encoding);
            let path = dir.path().join("m.cwm");
            m.save(&path).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), m.to_bytes());
            let opened = Model::open(&path, Checksum::IfSmall).unwrap();
            assert!(opened.learner.weights().is_view());
            let back = Model::from_bytes(&m.to_bytes(), Path::new("m")).unwrap();
            assert_eq!(opened, back);
            let x = FeatureVector::new(m.header.features, vec![3, 65536], vec![0.5, 1.0]);
            assert_eq!(opened.score_gaussians(&x), back.score_gaussians(&x));
        }
    }

    #[test]
    fn large_files_skip_the_checksum_unless_asked() {
        assert!(Checksum::IfSmall.applies_to(VERIFY_LIMIT));
        assert!(!Checksum::IfSmall.applies_to(VERIFY_LIMIT + 1));
        assert!(Checksum::Verify.applies_to(usize::MAX));
        assert!(!Checksum::Embedded.applies_to(1));
    }

    #[test]
    fn kept_documents_are_parsed_only_when_asked_for() {
        let mut m = model(WeightEncoding::F32);
        let kept = FeatureVector::new(m.header.features, vec![3, 7, 65536], vec![0.5, 0.5, 1.0]);
        let memory = Rehearsal::from_examples(4, &m.learner, [(0, &kept), (1, &kept)]);
        m.rehearsal = Some(KeptDocuments::Parsed(memory.clone()));
        let bytes = m.to_bytes();
        // Read back, the section is stored as bytes, equal to the parsed one, and written
        // again byte for byte.
        let read = Model::from_bytes(&bytes, Path::new("m.cwm")).unwrap();
        assert!(matches!(read.rehearsal, Some(KeptDocuments::Stored { .. })));
        // (The header records the section's length when written.)
        m.header.rehearsal_bytes = read.header.rehearsal_bytes;
        assert_eq!(read, m);
        assert_eq!(read.to_bytes(), bytes);
        assert_eq!(read.rehearsal().unwrap().unwrap().as_ref(), &memory);
        let mut changed = read.clone();
        changed
            .rehearsal_mut()
            .unwrap()
            .unwrap()
            .offer(1, &kept, &m.learner);
        assert!(matches!(changed.rehearsal, Some(KeptDocuments::Parsed(_))));
        assert_ne!(changed, read);

        // A damaged section under a valid checksum (a file written wrongly, not a flipped
        // bit) still classifies; reading the documents names the file and the section.
        let section = bytes.len() - 4 - read.header.rehearsal_bytes as usize;
        let mut damaged = bytes.clone();
        // The first document's entry count (after capacity, labels, offered, documents).
        damaged[section + 8 + 12..section + 8 + 16].copy_from_slice(&u32::MAX.to_le_bytes());
        let body = damaged.len() - 4;
        let crc = crc32fast::hash(&damaged[..body]);
        damaged[body..].copy_from_slice(&crc.to_le_bytes());
        let mut read = Model::from_bytes(&damaged, Path::new("m.cwm")).unwrap();
        assert_eq!(read.scores(&kept), m.scores(&kept));
        let err = read.rehearsal_mut().unwrap_err().to_string();
        assert!(
            err.starts_with("m.cwm: ") && err.contains("rehearsal section truncated"),
            "{err}"
        );
    }

    #[test]
    fn damaged_files_are_refused_with_the_reason() {
        let bytes = model(WeightEncoding::F32).to_bytes();
        let err = |b: &[u8]| {
            Model::from_bytes(b, Path::new("m.cwm"))
                .unwrap_err()
                .to_string()
        };
        assert!(err(&bytes[..bytes.len() - 10]).contains("truncated model file"));
        assert!(err(&bytes[..5]).contains("truncated"));
        let mut flipped = bytes.clone();
        flipped[bytes.len() / 2] ^= 0x10;
        assert!(
            err(&flipped).contains("checksum mismatch"),
            "{}",
            err(&flipped)
        );
        let mut newer = bytes.clone();
        newer[8] = 9;
        assert!(err(&newer).contains("version 9 is newer"));
        assert!(err(b"hello world, this is not a model").contains("not a cwtext model"));
        assert!(err(b"").starts_with("m.cwm: "));
    }
}
