//! Rehearsal: a small, deterministic reservoir of past documents per label, kept with the model,
//! so that a stream of corrections from a few labels cannot quietly take the other labels'
//! documents.
//!
//! Why: a CW update raises the corrected label's weights on every feature of the document and
//! lowers one competitor's. In training, every label's documents take turns, so each label's
//! weights on general words are pulled back by the other labels' documents. A stream of
//! corrections from one or two labels (a new folder, the folders a user is busy with) has no such
//! counter-weight, and measured on 20 Newsgroups its labels end up taking documents of all the
//! others. Keeping a few documents of every label is the episodic memory of continual learning
//! (Ratcliff, *Psychological Review* 97, 1990; Robins, *Connection Science* 7, 1995; a tiny
//! per-class memory: Chaudhry et al., *On Tiny Episodic Memories in Continual Learning*, 2019).
//!
//! What `learn` does with it ([`Rehearsal::protect`]) is the constraint of Gradient Episodic
//! Memory (Lopez-Paz & Ranzato, NeurIPS 2017): an update may not make the model worse on the
//! memory. Here the constraints are on scores (the raised label not above, a lowered label not
//! below, its score when the document was kept), and each violated one is met by the smallest
//! move of that label's Gaussian mean, the projection CW itself makes. Replaying the documents
//! as CW steps (plain or "their label beats the corrected one", all or the most interfered ones)
//! was measured too and is kept for `cwtext experiment corrections`: it either did not hold the
//! old labels (plain replay) or held them no better while costing the mixed case calibration.
//!
//! The reservoir of each label is a uniform sample of the documents it was shown, by reservoir
//! sampling (Vitter, *Random Sampling with a Reservoir*, ACM TOMS 11, 1985, Algorithm R) with the
//! random numbers taken from a hash of (label, position), so the same documents in the same order
//! always keep the same sample, and no generator state needs storing.

use crate::features::FeatureVector;
use crate::learn::learner::{DiagonalLearner, Learner};

/// Score differences below this are rounding (the weights are f32), not a broken bound.
const TOLERANCE: f64 = 1e-5;

/// Documents kept per label at least.
pub const MIN_CAPACITY: usize = 32;

/// Feature entries of kept documents outside each label that [`chosen_capacity`] aims at.
pub const OUTSIDE_ENTRIES: usize = 1 << 17;

/// Documents kept per label for a model of `labels` labels whose training documents have
/// `mean_entries` feature entries on average: enough that the documents kept outside any one
/// label hold [`OUTSIDE_ENTRIES`] entries, and at least [`MIN_CAPACITY`].
///
/// Why: after a correction, [`Rehearsal::protect`] restores the scores of the other labels'
/// kept documents, so it guards the directions those documents span. 32 documents a label were
/// chosen on 20 Newsgroups, where the 19 other labels keep about 150,000 entries (246 a post).
/// A model of two labels of short texts kept 32 sentences of about 236 entries on the other
/// side, 7,500, and one-sided refiles cost it what a retraining on the same documents did not
/// (movie sentences, 106 refiles into pos: −4.3 points, a retraining ±0). 2^17 entries is the
/// most that leaves 20 Newsgroups at 32 (2^18 kept 56 a label there and found fewer of a new
/// folder's posts after 200 refiles, 0.31 and 0.35 against 0.41 and 0.37); it keeps about
/// 550 sentences a label for two labels of sentences, and the section stays within about
/// 2 × 2^17 × 8 bytes (2 MiB) beyond the minimum. Measured in
/// `benches/results/rehearsal-2026-11-28.md`.
pub fn chosen_capacity(labels: usize, mean_entries: f64) -> usize {
    let outside = labels.saturating_sub(1).max(1) as f64;
    let wanted = (OUTSIDE_ENTRIES as f64 / (outside * mean_entries.max(1.0))).ceil();
    if wanted.is_finite() && wanted < usize::MAX as f64 {
        (wanted as usize).max(MIN_CAPACITY)
    } else {
        MIN_CAPACITY
    }
}

/// Per label, a reservoir of feature vectors and how many documents were offered to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Rehearsal {
    capacity: usize,
    labels: Vec<Reservoir>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Reservoir {
    /// Documents offered so far (Algorithm R's n).
    offered: u64,
    documents: Vec<Stored>,
}

/// A kept document and every label's score on it when it was kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    pub x: FeatureVector,
    pub reference: Vec<f32>,
}

/// SplitMix64's finaliser (Steele, Lea, Flood, OOPSLA 2014): a well-mixed 64-bit hash.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn scores(learner: &DiagonalLearner, x: &FeatureVector) -> Vec<f32> {
    learner.scores(x).into_iter().map(|s| s as f32).collect()
}

impl Rehearsal {
    /// An empty memory for `labels` labels of up to `capacity` documents each.
    pub fn new(capacity: usize, labels: usize) -> Self {
        Rehearsal {
            capacity,
            labels: vec![Reservoir::default(); labels],
        }
    }

    /// A memory filled with `examples` (label, document), offered in order, with the scores of
    /// `learner` as references.
    pub fn from_examples<'a>(
        capacity: usize,
        learner: &DiagonalLearner,
        examples: impl IntoIterator<Item = (usize, &'a FeatureVector)>,
    ) -> Self {
        let mut memory = Rehearsal::new(capacity, learner.num_labels());
        for (label, x) in examples {
            memory.offer(label, x, learner);
        }
        memory
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many documents a label `train` would now keep for a model of `labels` labels with
    /// documents like the kept ones, when that is at least twice this memory's capacity: the
    /// capacity [`chosen_capacity`] gives, but no more than the most documents a label was
    /// shown (training and refiles), since a retraining keeps no more than it is given. A model
    /// trained before the rule (2026-11-28) keeps 32 a label however short its documents, and
    /// one-sided refiles into it can take the other labels' documents; one of 30 documents a
    /// label keeps them all either way, and is not told to retrain.
    pub fn outgrown(&self, labels: usize) -> Option<usize> {
        let (entries, kept) = self
            .labels
            .iter()
            .flat_map(|r| &r.documents)
            .fold((0usize, 0usize), |(e, n), d| (e + d.x.nnz(), n + 1));
        if kept == 0 {
            return None;
        }
        let shown = self.labels.iter().map(|r| r.offered).max().unwrap_or(0);
        let chosen = chosen_capacity(labels, entries as f64 / kept as f64);
        let would_keep = chosen.min(usize::try_from(shown).unwrap_or(usize::MAX));
        (would_keep >= 2 * self.capacity).then_some(would_keep)
    }

    /// The number of labels it keeps documents for.
    pub fn labels(&self) -> usize {
        self.labels.len()
    }

    /// The documents kept for `label`.
    pub fn documents(&self, label: usize) -> &[Stored] {
        self.labels.get(label).map_or(&[], |r| &r.documents)
    }

    /// Offers a document of `label` (a label beyond the known ones is added): Algorithm R keeps
    /// the n-th document offered (from 0) with probability capacity/(n + 1), in a uniformly
    /// chosen slot, with `learner`'s scores on it as its reference.
    pub fn offer(&mut self, label: usize, x: &FeatureVector, learner: &DiagonalLearner) {
        if self.labels.len() <= label {
            self.labels.resize(label + 1, Reservoir::default());
        }
        let capacity = self.capacity;
        let r = &mut self.labels[label];
        let n = r.offered;
        r.offered += 1;
        let stored = || Stored {
            x: x.clone(),
            reference: scores(learner, x),
        };
        if r.documents.len() < capacity {
            r.documents.push(stored());
            return;
        }
        let slot = mix(mix(label as u64) ^ n) % (n + 1);
        if (slot as usize) < capacity {
            r.documents[slot as usize] = stored();
        }
    }

    /// Gives every kept document a reference for labels added since it was kept: their score
    /// on it now (a new label's starting score).
    pub fn add_labels(&mut self, learner: &DiagonalLearner) {
        let k = learner.num_labels();
        if self.labels.len() < k {
            self.labels.resize(k, Reservoir::default());
        }
        for r in &mut self.labels {
            for d in &mut r.documents {
                if d.reference.len() < k {
                    let now = scores(learner, &d.x);
                    d.reference.extend_from_slice(&now[d.reference.len()..]);
                }
            }
        }
    }

    /// Replays the kept documents of every label but `except` (the label just corrected, whose
    /// own correction should stand) through `learner`; returns how many were updated.
    pub fn replay(&self, learner: &mut DiagonalLearner, except: usize) -> usize {
        let mut updates = 0;
        for (label, r) in self.labels.iter().enumerate() {
            if label == except || label >= learner.num_labels() {
                continue;
            }
            for d in &r.documents {
                updates += usize::from(learner.learn(&d.x, label));
            }
        }
        updates
    }

    /// Replays the kept documents of every label z but `corrected` with the constraint "z beats
    /// `corrected`"; returns how many were updated.
    pub fn replay_against(&self, learner: &mut DiagonalLearner, corrected: usize) -> usize {
        use crate::learn::learner::constraints::ConstraintModel;
        let mut updates = 0;
        for (label, r) in self.labels.iter().enumerate() {
            if label == corrected || label >= learner.num_labels() {
                continue;
            }
            for d in &r.documents {
                let step = learner.solve(&d.x, label, corrected);
                if step.is_update() && learner.apply(&d.x, label, corrected, &step) {
                    updates += 1;
                }
            }
        }
        updates
    }

    /// Like [`Rehearsal::replay_against`], but replays at most `budget` kept documents: those
    /// whose margin over `corrected` fell the most below the margin they had when kept (the
    /// memory samples a correction interfered with most, as Maximally Interfered Retrieval picks
    /// them: Aljundi et al., NeurIPS 2019). `budget` 0 replays all.
    pub fn replay_interfered(
        &self,
        learner: &mut DiagonalLearner,
        corrected: usize,
        budget: usize,
    ) -> usize {
        use crate::learn::learner::constraints::ConstraintModel;
        if budget == 0 {
            return self.replay_against(learner, corrected);
        }
        let mut candidates: Vec<(f64, usize, usize)> = Vec::new();
        for (label, r) in self.labels.iter().enumerate() {
            if label == corrected || label >= learner.num_labels() {
                continue;
            }
            for (i, d) in r.documents.iter().enumerate() {
                let then = f64::from(d.reference[label]) - f64::from(d.reference[corrected]);
                let now = learner.label_score(&d.x, label) - learner.label_score(&d.x, corrected);
                let eroded = then - now;
                if eroded > 0.0 {
                    candidates.push((eroded, label, i));
                }
            }
        }
        candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut updates = 0;
        for &(_, label, i) in candidates.iter().take(budget) {
            let d = &self.labels[label].documents[i];
            let step = learner.solve(&d.x, label, corrected);
            if step.is_update() && learner.apply(&d.x, label, corrected, &step) {
                updates += 1;
            }
        }
        updates
    }

    /// How many kept documents of each label hold a correction that raises `raised`: as many as
    /// `raised` has been shown documents (training and refiles), at least [`MIN_CAPACITY`].
    ///
    /// Why: a label shown n documents is what a retraining would give n documents' say; held by
    /// hundreds of kept documents a label, a new folder of 10 refiles learned only its rarest
    /// words (questions by answer type, 246 kept a label: 0.00 of a new label's questions
    /// found after 10 refiles, 0.72 with this limit, 0.78 after a retraining), while a label
    /// of thousands of sentences is held by all of them. The first k slots of an Algorithm R
    /// reservoir are themselves a uniform sample of k (a document enters them with probability
    /// capacity/(n + 1) × k/capacity), so the limit takes a fair sample.
    pub fn protecting(&self, raised: usize) -> usize {
        let shown = self.labels.get(raised).map_or(0, |r| r.offered);
        usize::try_from(shown)
            .unwrap_or(usize::MAX)
            .max(MIN_CAPACITY)
    }

    /// After a correction that raised `raised` and lowered `lowered`: on every kept document of
    /// another label, `raised` may not score above its reference (with `slack` > 0, up to a
    /// point between it and the best wrong label's, or with `slack` 2 the document's own
    /// label's reference), and on every kept document of `lowered`, `lowered` may not score
    /// below it (GEM's constraint, Lopez-Paz & Ranzato 2017, eq. 6, on scores). Only the first
    /// [`Rehearsal::protecting`] documents of each label are held. Each bound is restored by
    /// the smallest mean move ([`DiagonalLearner::shift_score`]), one pass in memory order;
    /// returns how many moves were made.
    pub fn protect(
        &self,
        learner: &mut DiagonalLearner,
        raised: usize,
        lowered: &[usize],
        slack: f64,
    ) -> usize {
        let mut moves = 0;
        let limit = self.protecting(raised);
        for (label, r) in self.labels.iter().enumerate() {
            for d in r.documents.iter().take(limit) {
                if label != raised {
                    let own = f64::from(d.reference[raised]);
                    let runner_up = d
                        .reference
                        .iter()
                        .enumerate()
                        .filter(|&(w, _)| w != label)
                        .map(|(_, &s)| f64::from(s))
                        .fold(f64::NEG_INFINITY, f64::max);
                    let truth = f64::from(d.reference[label]);
                    let ceiling = if slack <= 1.0 {
                        own + slack * (runner_up - own).max(0.0)
                    } else {
                        runner_up.max(own)
                            + (slack - 1.0).min(1.0) * (truth - runner_up.max(own)).max(0.0)
                    };
                    let excess = learner.label_score(&d.x, raised) - ceiling;
                    if excess > TOLERANCE {
                        learner.shift_score(&d.x, raised, -excess);
                        moves += 1;
                    }
                }
                if lowered.contains(&label) {
                    let deficit = f64::from(d.reference[label]) - learner.label_score(&d.x, label);
                    if deficit > TOLERANCE {
                        learner.shift_score(&d.x, label, deficit);
                        moves += 1;
                    }
                }
            }
        }
        moves
    }
}

/// The rehearsal section of a model file (format version 3), little-endian:
/// `capacity u32, labels u32`, then per label `offered u64, documents u32`, then per document
/// `entries u32, references u32, indices [u32; entries], values [f32; entries],
/// references [f32; references]`.
impl Rehearsal {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let u32_ = |out: &mut Vec<u8>, n: usize| out.extend_from_slice(&(n as u32).to_le_bytes());
        u32_(&mut out, self.capacity);
        u32_(&mut out, self.labels.len());
        for r in &self.labels {
            out.extend_from_slice(&r.offered.to_le_bytes());
            u32_(&mut out, r.documents.len());
            for d in &r.documents {
                u32_(&mut out, d.x.nnz());
                u32_(&mut out, d.reference.len());
                d.x.indices()
                    .iter()
                    .for_each(|i| out.extend_from_slice(&i.to_le_bytes()));
                d.x.data()
                    .iter()
                    .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
                d.reference
                    .iter()
                    .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            }
        }
        out
    }

    /// Parses the section written by [`Rehearsal::to_bytes`] for a model of `labels` labels
    /// whose feature vectors have `dimension` entries; the error says what is wrong.
    pub fn from_bytes(
        bytes: &[u8],
        dimension: usize,
        labels: usize,
    ) -> std::result::Result<Rehearsal, String> {
        let mut r = Reader { bytes, at: 0 };
        let capacity = r.u32()?;
        let count = r.u32()?;
        if count > labels {
            return Err(format!(
                "rehearsal section for {count} labels in a model of {labels}"
            ));
        }
        let mut memory = Rehearsal::new(capacity, count);
        for reservoir in &mut memory.labels {
            reservoir.offered = u64::from_le_bytes(r.take(8)?.try_into().unwrap());
            let documents = r.u32()?;
            if documents > capacity {
                return Err("rehearsal reservoir over its capacity".into());
            }
            for _ in 0..documents {
                let entries = r.u32()?;
                let references = r.u32()?;
                if references > labels {
                    return Err("rehearsal document with more scores than labels".into());
                }
                let indices: Vec<u32> = r.words(entries)?.map(u32::from_le_bytes).collect();
                let values: Vec<f32> = r.words(entries)?.map(f32::from_le_bytes).collect();
                let reference: Vec<f32> = r.words(references)?.map(f32::from_le_bytes).collect();
                let x = FeatureVector::try_new(dimension, indices, values)
                    .map_err(|e| format!("rehearsal document: {}", e.2))?;
                reservoir.documents.push(Stored { x, reference });
            }
        }
        if r.at != bytes.len() {
            return Err(format!(
                "{} unexpected bytes in the rehearsal section",
                bytes.len() - r.at
            ));
        }
        Ok(memory)
    }
}

/// Reads the rehearsal section front to back.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| "rehearsal section truncated".to_string())?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self) -> std::result::Result<usize, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()) as usize)
    }

    fn words(
        &mut self,
        n: usize,
    ) -> std::result::Result<impl Iterator<Item = [u8; 4]> + 'a, String> {
        let n = n.checked_mul(4).ok_or("rehearsal section truncated")?;
        Ok(self.take(n)?.chunks_exact(4).map(|c| c.try_into().unwrap()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::learner::CwConfig;

    fn learner(labels: usize) -> DiagonalLearner {
        DiagonalLearner::new(CwConfig::default().validate().unwrap(), 8, labels)
    }

    fn doc(i: u32) -> FeatureVector {
        FeatureVector::new(8, vec![i % 7, 7], vec![1.0 + i as f32, 1.0])
    }

    #[test]
    fn reservoirs_keep_capacity_documents_the_same_ones_every_time() {
        let l = learner(2);
        let stream: Vec<(usize, FeatureVector)> =
            (0..100).map(|i| ((i % 2) as usize, doc(i))).collect();
        let fill = || Rehearsal::from_examples(4, &l, stream.iter().map(|(z, x)| (*z, x)));
        let (a, b) = (fill(), fill());
        assert_eq!(a, b);
        assert_eq!(a.documents(0).len(), 4);
        assert_eq!(a.documents(1).len(), 4);
        assert_eq!(a.labels[0].offered, 50);
        // Algorithm R replaced some of the first four (the chance that all 46 later documents
        // were rejected is Π (1 − 4/n) for n = 5..50, below 10⁻⁵).
        let first: Vec<FeatureVector> = (0..8).step_by(2).map(doc).collect();
        assert!(a.documents(0).iter().any(|d| !first.contains(&d.x)));
    }

    #[test]
    fn the_section_round_trips_and_damage_is_named() {
        let l = learner(3);
        let m = Rehearsal::from_examples(
            2,
            &l,
            (0..9)
                .map(|i| (i % 3, doc(i as u32)))
                .collect::<Vec<_>>()
                .iter()
                .map(|(z, x)| (*z, x)),
        );
        let bytes = m.to_bytes();
        assert_eq!(Rehearsal::from_bytes(&bytes, 8, 3).unwrap(), m);
        let err = Rehearsal::from_bytes(&bytes[..bytes.len() - 1], 8, 3).unwrap_err();
        assert!(err.contains("truncated"), "{err}");
        let err = Rehearsal::from_bytes(&bytes, 8, 2).unwrap_err();
        assert!(err.contains("3 labels in a model of 2"), "{err}");
        let mut longer = bytes.clone();
        longer.push(0);
        let err = Rehearsal::from_bytes(&longer, 8, 3).unwrap_err();
        assert!(err.contains("1 unexpected bytes"), "{err}");
        // An index beyond the dimension is refused, not a panic.
        let err = Rehearsal::from_bytes(&bytes, 4, 3).unwrap_err();
        assert!(err.contains("rehearsal document"), "{err}");
    }

    #[test]
    fn the_capacity_keeps_two_to_the_17_entries_outside_each_label() {
        // Two labels of sentences of 236 entries: ⌈131072 / 236⌉ = 556 a label.
        assert_eq!(chosen_capacity(2, 236.0), 556);
        // Six labels of 100 entries: the five others keep ⌈131072 / 500⌉ = 263 each.
        assert_eq!(chosen_capacity(6, 100.0), 263);
        // 20 Newsgroups: 19 × 32 × 246 = 149,568 entries outside a label already.
        assert_eq!(chosen_capacity(20, 246.0), MIN_CAPACITY);
        // Degenerate means keep the minimum or a finite number, never panic.
        assert_eq!(chosen_capacity(2, 0.0), 131_072);
        assert_eq!(chosen_capacity(1, f64::NAN), 131_072);
        assert_eq!(chosen_capacity(2, f64::INFINITY), MIN_CAPACITY);
    }

    #[test]
    fn a_memory_of_32_short_documents_a_label_is_outgrown() {
        // Two labels of documents of 3 entries: the rule wants ⌈131072 / 3⌉ = 43,691 a label,
        // but each label was shown 200, so a retraining keeps 200 a label.
        let l = learner(2);
        let docs: Vec<(usize, FeatureVector)> = (0..400)
            .map(|i| (i % 2, FeatureVector::new(8, vec![0, 1, 2], vec![1.0; 3])))
            .collect();
        let old = Rehearsal::from_examples(MIN_CAPACITY, &l, docs.iter().map(|(z, x)| (*z, x)));
        assert_eq!(old.outgrown(2), Some(200));
        // Shown 30 a label, all kept at 32: a retraining keeps no more, so no.
        let few =
            Rehearsal::from_examples(MIN_CAPACITY, &l, docs[..60].iter().map(|(z, x)| (*z, x)));
        assert_eq!(few.outgrown(2), None);
        // Kept at the chosen capacity, or nearly (a sample's mean), it is not.
        let new = Rehearsal::from_examples(30_000, &l, docs.iter().map(|(z, x)| (*z, x)));
        assert_eq!(new.outgrown(2), None);
        assert_eq!(Rehearsal::new(32, 2).outgrown(2), None);
    }

    #[test]
    fn a_label_shown_few_documents_is_held_by_as_few_of_each_other_label() {
        // Label 0 keeps 40 documents; the raised label 1 was shown 3, so only label 0's first
        // 32 hold it; once label 1 has been shown 40, all 40 do.
        let l = learner(2);
        let kept: Vec<FeatureVector> = (0..40)
            .map(|i| FeatureVector::new(8, vec![i % 6], vec![1.0]))
            .collect();
        let mut memory = Rehearsal::from_examples(64, &l, kept.iter().map(|x| (0, x)));
        let shown = FeatureVector::new(8, vec![6], vec![1.0]);
        for _ in 0..3 {
            memory.offer(1, &shown, &l);
        }
        assert_eq!(memory.protecting(1), MIN_CAPACITY);
        // A correction of label 1 on feature 7 alone, and one kept document (the 36th) that
        // has feature 7 too.
        let mut memory_doc = memory.clone();
        memory_doc.labels[0].documents[35].x = FeatureVector::new(8, vec![7], vec![1.0]);
        let correction = FeatureVector::new(8, vec![7], vec![1.0]);
        let mut a = l.clone();
        a.learn(&correction, 1);
        let raised = a.label_score(&correction, 1);
        assert!(raised > 0.1, "{raised}");
        assert_eq!(memory_doc.protect(&mut a, 1, &[0], 0.0), 0);
        assert_eq!(a.label_score(&correction, 1), raised);
        for _ in 3..40 {
            memory_doc.offer(1, &shown, &l);
        }
        assert_eq!(memory_doc.protecting(1), 40);
        assert!(memory_doc.protect(&mut a, 1, &[0], 0.0) > 0);
        assert!(a.label_score(&correction, 1) < raised - 0.1);
    }

    #[test]
    fn protection_restores_the_bounds_exactly() {
        // Two labels; label 1 is raised by a correction on a document that shares feature 0
        // with a kept document of label 0.
        let mut l = learner(2);
        let kept = FeatureVector::new(8, vec![0, 7], vec![1.0, 1.0]);
        l.learn(&kept, 0);
        let memory = Rehearsal::from_examples(4, &l, [(0, &kept)]);
        let reference = memory.documents(0)[0].reference.clone();
        let correction = FeatureVector::new(8, vec![0, 3], vec![2.0, 1.0]);
        l.learn(&correction, 1);
        assert!(l.label_score(&kept, 1) > f64::from(reference[1]) + 0.1);
        assert!(l.label_score(&kept, 0) < f64::from(reference[0]) - 0.1);
        let moves = memory.protect(&mut l, 1, &[0], 0.0);
        assert_eq!(moves, 2);
        assert!((l.label_score(&kept, 1) - f64::from(reference[1])).abs() < 1e-5);
        assert!((l.label_score(&kept, 0) - f64::from(reference[0])).abs() < 1e-5);
        // The correction itself still stands.
        let s = l.scores(&correction);
        assert!(s[1] > s[0], "{s:?}");
        // Satisfied bounds move nothing.
        assert_eq!(memory.protect(&mut l, 1, &[0], 0.0), 0);
    }
}
