//! Why a document got its label, and what a model has learned, in words.
//!
//! A label's score is a sum over the document's features, sᵧ = Σⱼ xⱼ μⱼᵧ, so the margin of
//! the predicted label y over the runner-up r splits exactly into one term per feature,
//! xⱼ (μⱼᵧ − μⱼᵣ). [`explain`] ranks those terms and names each feature by the document's own
//! text (traced through the pipeline, so no vocabulary is needed); a model trained with
//! `--keep-vocabulary` also says what else training saw in the same hash bucket.
//! [`strongest_features`] ranks a model's features for each label by how sure the model is
//! that they favour it.

use crate::error::{Error, Result};
use crate::features::FeatureVector;
use crate::model::Model;
use crate::text::input::Document;
use crate::text::pipeline::Pipeline;
use crate::text::vocabulary::Vocabulary;

/// How the bias feature (each label's prior) is named.
pub const BIAS: &str = "(bias: the label's prior)";

/// One feature's part in the margin of the predicted label over the runner-up.
#[derive(Debug, Clone, PartialEq)]
pub struct Contribution {
    /// The feature's index (a hash bucket, or the bias).
    pub feature: u32,
    /// The document's texts behind the feature (several when they share a bucket).
    pub texts: Vec<String>,
    /// The feature's value in the document (after weighting and normalisation).
    pub value: f64,
    /// value × (μ of the label − μ of the runner-up): positive favours the label.
    pub contribution: f64,
    /// (mean, variance) of the feature's weight for the predicted label.
    pub label_weight: (f64, f64),
    /// (mean, variance) for the runner-up.
    pub runner_up_weight: (f64, f64),
    /// Other texts training saw in this bucket (only with a kept vocabulary), and how many
    /// distinct texts in all.
    pub also: Vec<String>,
    pub distinct: Option<usize>,
}

/// Why the best label beat the runner-up.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    pub label: usize,
    pub runner_up: usize,
    /// Mean scores of the label and the runner-up: their difference is the sum of the
    /// contributions.
    pub label_score: f64,
    pub runner_up_score: f64,
    /// Every feature of the document, most favourable to the label first.
    pub contributions: Vec<Contribution>,
}

/// One side of an explanation: the strongest parts for a label, and what the rest add up to.
#[derive(Debug)]
pub struct Side<'a> {
    /// The largest parts, largest first.
    pub shown: Vec<&'a Contribution>,
    /// The sum of the parts not shown.
    pub rest: f64,
    /// How many parts are not shown.
    pub more: usize,
}

impl Explanation {
    /// The top `n` parts for the label (positive parts) and for the runner-up (negative parts,
    /// largest first), and what the rest add up to on each side.
    pub fn sides(&self, n: usize) -> [Side<'_>; 2] {
        let (pro, con): (Vec<&Contribution>, Vec<&Contribution>) = self
            .contributions
            .iter()
            .partition(|c| c.contribution > 0.0);
        let con: Vec<&Contribution> = con
            .into_iter()
            .rev()
            .filter(|c| c.contribution < 0.0)
            .collect();
        [pro, con].map(|all| {
            let rest: f64 = all.iter().skip(n).map(|c| c.contribution).sum();
            let more = all.len().saturating_sub(n);
            Side {
                shown: all.into_iter().take(n).collect(),
                rest,
                more,
            }
        })
    }
}

impl Contribution {
    /// The feature for people: its texts, or `#bucket` when none is known.
    pub fn name(&self) -> String {
        let mut name = self.texts.join(" | ");
        if name.is_empty() {
            name = format!("#{}", self.feature);
        }
        name
    }

    /// What else training saw in the feature's bucket: the kept texts, and how many more
    /// (`None` without a kept vocabulary, or when nothing else shares it).
    pub fn shared_with(&self) -> Option<String> {
        let distinct = self.distinct?;
        let more = distinct.saturating_sub(self.texts.len() + self.also.len());
        let mut parts = self.also.clone();
        if more > 0 {
            parts.push(format!(
                "{more} {}",
                if parts.is_empty() {
                    "other texts"
                } else {
                    "more"
                }
            ));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// Explains the prediction for `doc`, whose feature vector `x` the caller has already made
/// with `pipeline` (and predicts from); the pipeline traces the features back to their text.
pub fn explain(
    model: &Model,
    vocabulary: Option<&Vocabulary>,
    pipeline: &mut Pipeline,
    doc: &Document,
    x: &FeatureVector,
) -> Result<Explanation> {
    if model.labels().len() < 2 {
        return Err(Error::InvalidSetting(
            "a model with one label has nothing to explain".into(),
        ));
    }
    let scores = model.scores(x);
    let label = crate::learn::learner::argmax(&scores);
    let mut others = scores.clone();
    others[label] = f64::NEG_INFINITY;
    let runner_up = crate::learn::learner::argmax(&others);
    let mut texts: crate::text::pipeline::hash::HashMap<u32, Vec<String>> = Default::default();
    for f in pipeline.trace(doc) {
        let at = texts.entry(f.bucket).or_default();
        if !at.contains(&f.text) {
            at.push(f.text);
        }
    }
    let bias = model.pipeline().buckets() as u32;
    let mut contributions: Vec<Contribution> = x
        .indices()
        .iter()
        .zip(x.data())
        .map(|(&j, &value)| {
            let weights = model.learner.label_weights(j as usize);
            let (value, (mu_y, _), (mu_r, _)) =
                (f64::from(value), weights[label], weights[runner_up]);
            let texts = if j == bias {
                vec![BIAS.to_string()]
            } else {
                texts.remove(&j).unwrap_or_default()
            };
            let seen = vocabulary.and_then(|v| v.get(j));
            Contribution {
                feature: j,
                also: seen.map_or_else(Vec::new, |s| {
                    s.texts
                        .iter()
                        .filter(|t| !texts.contains(t))
                        .cloned()
                        .collect()
                }),
                distinct: seen.map(|s| s.distinct),
                texts,
                value,
                contribution: value * (mu_y - mu_r),
                label_weight: weights[label],
                runner_up_weight: weights[runner_up],
            }
        })
        .collect();
    contributions.sort_by(|a, b| {
        b.contribution
            .total_cmp(&a.contribution)
            .then(a.feature.cmp(&b.feature))
    });
    Ok(Explanation {
        label,
        runner_up,
        label_score: scores[label],
        runner_up_score: scores[runner_up],
        contributions,
    })
}

/// A feature that favours one label.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelFeature {
    pub feature: u32,
    /// (mean, variance) of its weight for the label.
    pub weight: (f64, f64),
    /// z = (μᵧ − μₗ) / √(Σᵧ + Σₗ) against the label l with the next highest mean: the model
    /// is Φ(z) sure that the feature favours y over every other label's best.
    pub confidence: f64,
    /// What training saw in the bucket (with a kept vocabulary; most frequent first).
    pub texts: Vec<String>,
}

/// For every label, the `n` features the model is surest favour it: ranked by z (see
/// [`LabelFeature::confidence`]), positive only, the bias left out. Only the label with a
/// feature's highest mean can have a positive z, so one pass over the table serves all labels.
pub fn strongest_features(
    model: &Model,
    vocabulary: Option<&Vocabulary>,
    n: usize,
) -> Vec<Vec<LabelFeature>> {
    let mut best: Vec<Vec<LabelFeature>> = vec![Vec::new(); model.labels().len()];
    for j in 0..model.pipeline().buckets() {
        let weights = model.learner.label_weights(j);
        // The highest mean and the next (ties: the lower label first).
        let (mut label, mut next) = (0, usize::MAX);
        for l in 1..weights.len() {
            if weights[l].0 > weights[label].0 {
                (label, next) = (l, label);
            } else if next == usize::MAX || weights[l].0 > weights[next].0 {
                next = l;
            }
        }
        if next == usize::MAX {
            continue;
        }
        let ((mu, var), (mu_l, var_l)) = (weights[label], weights[next]);
        let spread = (var + var_l).sqrt();
        let z = (mu - mu_l) / spread;
        if spread > 0.0 && z > 0.0 && z.is_finite() {
            best[label].push(LabelFeature {
                feature: j as u32,
                weight: (mu, var),
                confidence: z,
                texts: Vec::new(),
            });
        }
    }
    for features in &mut best {
        features.sort_by(|a, b| {
            b.confidence
                .total_cmp(&a.confidence)
                .then(a.feature.cmp(&b.feature))
        });
        features.truncate(n);
        if let Some(v) = vocabulary {
            for f in features.iter_mut() {
                f.texts = v.get(f.feature).map_or_else(Vec::new, |s| s.texts.to_vec());
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(feature: u32, contribution: f64) -> Contribution {
        Contribution {
            feature,
            texts: vec![],
            value: 1.0,
            contribution,
            label_weight: (0.0, 1.0),
            runner_up_weight: (0.0, 1.0),
            also: vec![],
            distinct: None,
        }
    }

    /// Parts for the label, largest first; parts against it, most negative first; zero parts on
    /// neither side; the rest summed.
    #[test]
    fn sides_split_pro_and_con() {
        let why = Explanation {
            label: 0,
            runner_up: 1,
            label_score: 1.0,
            runner_up_score: 0.0,
            contributions: [3.0, 1.0, 0.5, 0.0, -0.25, -2.0]
                .iter()
                .enumerate()
                .map(|(i, &c)| part(i as u32, c))
                .collect(),
        };
        let [pro, con] = why.sides(1);
        assert_eq!(pro.shown.iter().map(|c| c.feature).collect::<Vec<_>>(), [0]);
        assert_eq!((pro.rest, pro.more), (1.5, 2));
        assert_eq!(con.shown.iter().map(|c| c.feature).collect::<Vec<_>>(), [5]);
        assert_eq!((con.rest, con.more), (-0.25, 1));
        assert_eq!(why.contributions[5].name(), "#5");
        assert_eq!(why.contributions[5].shared_with(), None);
    }
}
