//! A label-frequency correction of the scores, for labels that an online learner under-serves.
//!
//! An online learner with a bias feature sees a label's documents as often as the label is
//! frequent, so on a skewed corpus the rare labels are updated towards less often and lose on
//! recall, not on precision (Reuters R52, 52 labels from 1 to 2,840 training documents: grain
//! 10 test documents at precision 1.00, recall 0.90). The correction adds to each label's mean
//! score an offset that grows with how rare the label was in training,
//!
//!   b_l = γ · ln(π_max / π_l),   π_l = (n_l + 1) / (N + K)
//!
//! (the add-one base rates of `Model::label_base_rates`): 0 for the most frequent label, γ·ln 10
//! for a label ten times rarer. With the score Gaussians N(m_l + b_l, c·v_l), the label and the
//! probabilities move together, so the printed label stays the most probable one. It is the
//! prior-shift correction of a generative classifier (divide P(l | x) by π_l^α, Saerens et al.,
//! *Neural Computation* 14, 2002) carried to the score scale of a linear model, where the
//! strength γ is not known in advance: it is chosen on held-out documents
//! ([`choose_strength`]).

use crate::learn::tally::{clearly_better, discordant, Score};

/// The strengths γ the choice tries beside 0 (no correction), in score units. CW's scores on
/// unit-length documents are of the order of its margin (|m| ≈ 1 for a document learned with
/// confidence), so γ = 0.1 moves a label 100 times rarer than the most frequent by 0.46.
pub const STRENGTHS: [f64; 6] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.4];

/// A strength is tried only if it raises some label by at least this much. Where the labels
/// are about equally frequent every offset is tiny (movie-review sentences, 4,260 and 4,190
/// documents: 0.007 at γ = 0.4), and a shift that small only moves the documents lying on the
/// boundary between two labels: it corrects no frequency and fits the held-out fifth's noise
/// (chosen there on 4 documents against 1, 2 fewer right on the test split).
pub const MIN_OFFSET: f64 = 0.05;

/// The offsets b_l of strength `gamma` for labels trained on `label_documents` documents each.
pub fn offsets(label_documents: &[usize], gamma: f64) -> Vec<f64> {
    let k = label_documents.len();
    if k == 0 || gamma == 0.0 {
        return vec![0.0; k];
    }
    let largest = *label_documents.iter().max().expect("k > 0") as f64;
    label_documents
        .iter()
        .map(|&n| gamma * ((largest + 1.0) / (n as f64 + 1.0)).ln())
        .collect()
}

/// Adds `offsets` to `scores` (labels past the end of `offsets`, added after training, get 0).
pub fn shift(scores: &mut [f64], offsets: &[f64]) {
    scores.iter_mut().zip(offsets).for_each(|(s, b)| *s += b);
}

/// What the choice of γ found on the held-out documents (also what a model records of it).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StrengthChoice {
    /// The chosen strength (0: no correction).
    pub gamma: f64,
    /// Held-out documents.
    pub held_out: usize,
    /// Held-out accuracy without the correction and with the chosen one.
    pub accuracy_before: f64,
    pub accuracy_after: f64,
    /// Held-out macro-F1 without and with.
    pub macro_f1_before: f64,
    pub macro_f1_after: f64,
    /// Documents the most accurate strength got right and no correction did not, and the
    /// other way round (b and c of McNemar's test; 0 and 0 when no strength beat none).
    pub gained: usize,
    pub lost: usize,
}

impl StrengthChoice {
    /// One line for people: "γ 0.05 (held-out accuracy 0.9412 → 0.9501, macro-F1 0.7100 →
    /// 0.7700 on 1310 documents; right on 11 more, 2 fewer)".
    pub fn describe(&self) -> String {
        format!(
            "γ {} (held-out accuracy {:.4} → {:.4}, macro-F1 {:.4} → {:.4} on {} documents; right on {} more, {} fewer)",
            self.gamma,
            self.accuracy_before,
            self.accuracy_after,
            self.macro_f1_before,
            self.macro_f1_after,
            self.held_out,
            self.gained,
            self.lost
        )
    }
}

/// Chooses γ among 0 and the [`STRENGTHS`] that raise some label by [`MIN_OFFSET`] or more, on
/// held-out documents, given each one's mean scores and
/// true label: the most accurate strength (the smallest on ties), **kept at 0 unless it gets
/// more documents right than no correction by more than one standard error of the paired
/// difference**, √(b + c) (McNemar's statistic, as `train`'s and `tune`'s choices use). Without
/// that rule, a validation fifth picks strong corrections on leads of a few documents that the
/// test split reverses (measured in `benches/results/label-prior-probe-2026-11-25.md`: α = 1 on
/// a lead of 3 in 2,078, −0.6 points on test).
pub fn choose_strength<'a>(
    documents: impl IntoIterator<Item = (&'a [f64], usize)>,
    label_documents: &[usize],
) -> StrengthChoice {
    let mut chooser = StrengthChooser::new(label_documents);
    documents
        .into_iter()
        .for_each(|(scores, truth)| chooser.add(scores, truth));
    chooser.finish()
}

/// [`choose_strength`] one document at a time: what it keeps is a bit per document and
/// strength, not the scores.
pub struct StrengthChooser {
    grid: Vec<f64>,
    shifts: Vec<Vec<f64>>,
    right: Vec<Vec<bool>>,
    confusions: Vec<Score>,
    shifted: Vec<f64>,
}

impl StrengthChooser {
    pub fn new(label_documents: &[usize]) -> Self {
        let largest = |gamma: f64| {
            offsets(label_documents, gamma)
                .into_iter()
                .fold(0.0, f64::max)
        };
        let grid: Vec<f64> = std::iter::once(0.0)
            .chain(STRENGTHS.into_iter().filter(|&g| largest(g) >= MIN_OFFSET))
            .collect();
        let k = label_documents.len();
        StrengthChooser {
            shifts: grid.iter().map(|&g| offsets(label_documents, g)).collect(),
            right: vec![Vec::new(); grid.len()],
            confusions: (0..grid.len()).map(|_| Score::new(k)).collect(),
            shifted: Vec::with_capacity(k),
            grid,
        }
    }

    /// One held-out document: its mean scores (unshifted) and its true label.
    pub fn add(&mut self, scores: &[f64], truth: usize) {
        for (g, b) in self.shifts.iter().enumerate() {
            self.shifted.clear();
            self.shifted.extend_from_slice(scores);
            shift(&mut self.shifted, b);
            let predicted = crate::learn::learner::argmax(&self.shifted);
            self.right[g].push(predicted == truth);
            self.confusions[g].add(predicted, truth);
        }
    }

    pub fn finish(self) -> StrengthChoice {
        let right = &self.right;
        let accuracy =
            |r: &Vec<bool>| r.iter().filter(|&&x| x).count() as f64 / r.len().max(1) as f64;
        let best = (0..self.grid.len()).fold(0, |best, g| {
            if accuracy(&right[g]) > accuracy(&right[best]) {
                g
            } else {
                best
            }
        });
        let (gained, lost) = discordant(&right[best], &right[0]);
        let chosen = if best > 0 && clearly_better(&right[best], &right[0]) {
            best
        } else {
            0
        };
        StrengthChoice {
            gamma: self.grid[chosen],
            held_out: right[0].len(),
            accuracy_before: accuracy(&right[0]),
            accuracy_after: accuracy(&right[chosen]),
            macro_f1_before: self.confusions[0].accuracy_and_macro_f1().1,
            macro_f1_after: self.confusions[chosen].accuracy_and_macro_f1().1,
            gained,
            lost,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: labels of 99, 9 and 0 documents; γ = 0.5: b = 0.5·ln(100/100) = 0,
    /// 0.5·ln(100/10) = 0.5·ln 10, 0.5·ln(100/1) = ln 10.
    #[test]
    fn offsets_grow_with_the_log_of_rarity() {
        let b = offsets(&[99, 9, 0], 0.5);
        let ln10 = 10f64.ln();
        for (got, want) in b.iter().zip([0.0, 0.5 * ln10, ln10]) {
            assert!((got - want).abs() < 1e-12, "{b:?}");
        }
        assert_eq!(offsets(&[99, 9, 0], 0.0), vec![0.0; 3]);
        assert!(offsets(&[], 0.3).is_empty());
        // Labels added after training (past the offsets) are not shifted.
        let mut s = vec![1.0, 2.0, 3.0];
        shift(&mut s, &[0.5]);
        assert_eq!(s, vec![1.5, 2.0, 3.0]);
    }

    /// A common label (900 documents) and a rare one (9): b_rare = γ·ln(901/10) = 4.50·γ. Ten
    /// held-out documents of the rare label score 0.1 below the common one, 10 common ones 1.0
    /// above: any γ ≥ 0.1/4.50 = 0.022 gets the ten rare right and, below 1/4.50 = 0.22, keeps
    /// the common; the smallest such strength in the grid, 0.05, wins (0.02 is just short).
    #[test]
    fn the_weakest_strength_that_serves_the_rare_label_is_chosen() {
        let docs: Vec<(Vec<f64>, usize)> = (0..10)
            .map(|_| (vec![0.0, -0.1], 1))
            .chain((0..10).map(|_| (vec![1.0, 0.0], 0)))
            .collect();
        let choice = choose_strength(docs.iter().map(|(s, l)| (s.as_slice(), *l)), &[900, 9]);
        assert_eq!(choice.gamma, 0.05);
        assert_eq!(choice.held_out, 20);
        assert_eq!(choice.accuracy_before, 0.5);
        assert_eq!(choice.accuracy_after, 1.0);
        // Before: label 0 F1 = 2·10/(10 + 20) = 2/3, label 1 never predicted: 0.
        assert!((choice.macro_f1_before - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(choice.macro_f1_after, 1.0);
    }

    /// Labels of 100 and 90 documents: ln(101/91) = 0.104, so only γ = 0.4 (0.042) would
    /// come near MIN_OFFSET, and none reaches it: no strength is tried, however the held-out
    /// documents fall.
    #[test]
    fn about_equally_frequent_labels_get_no_shift() {
        let docs: Vec<(Vec<f64>, usize)> = vec![(vec![0.0, -0.001], 1); 30];
        let choice = choose_strength(docs.iter().map(|(s, l)| (s.as_slice(), *l)), &[100, 90]);
        assert_eq!(choice.gamma, 0.0);
        assert_eq!((choice.gained, choice.lost), (0, 0));
        // Ten times rarer: ln(101/11) = 2.22, γ = 0.05 raises it by 0.11, and it is tried.
        let choice = choose_strength(docs.iter().map(|(s, l)| (s.as_slice(), *l)), &[100, 10]);
        assert_eq!(choice.gamma, 0.05);
        assert_eq!(choice.accuracy_after, 1.0);
    }

    /// A gain of 3 documents with 1 lost (b = 3, c = 1: 2 ≤ √4) is no clear gain: no
    /// correction. One more rare document (b = 4, c = 1: 3 > √5) is.
    #[test]
    fn a_gain_within_a_standard_error_keeps_no_correction() {
        let mut docs: Vec<(Vec<f64>, usize)> = vec![(vec![0.0, -0.1], 1); 3];
        // Right without correction, wrong with any γ ≥ 0.01·… that moves the rare label up.
        docs.push((vec![0.0, -0.001], 0));
        docs.extend(vec![(vec![1.0, 0.0], 0); 20]);
        let choice = choose_strength(docs.iter().map(|(s, l)| (s.as_slice(), *l)), &[900, 9]);
        assert_eq!(choice.gamma, 0.0);
        assert_eq!(choice.accuracy_after, choice.accuracy_before);
        docs.push((vec![0.0, -0.1], 1));
        let choice = choose_strength(docs.iter().map(|(s, l)| (s.as_slice(), *l)), &[900, 9]);
        assert_eq!(choice.gamma, 0.05);
    }
}
