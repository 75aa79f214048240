//! Combining models trained on different data (Crammer, Dredze, Pereira, JMLR 2012 §7.10).
//!
//! The combined Gaussian minimises the summed divergence to the C input Gaussians. With the
//! **KL divergence** D(N(μ, Σ) ‖ N(μ_c, Σ_c)) = ½[tr(Σ_c⁻¹Σ) + (μ_c − μ)ᵀΣ_c⁻¹(μ_c − μ) − d +
//! ln det Σ_c − ln det Σ], setting the gradients of the sum to zero gives
//!
//! * ∂/∂μ: Σ_c Σ_c⁻¹(μ − μ_c) = 0, so μ = (Σ_c Σ_c⁻¹)⁻¹ Σ_c Σ_c⁻¹ μ_c, the precision-weighted
//!   mean (as the paper prints);
//! * ∂/∂Σ: ½ Σ_c (Σ_c⁻¹ − Σ⁻¹) = 0, so Σ⁻¹ = (1/C) Σ_c Σ_c⁻¹, the **average** of the
//!   precisions. The paper prints their sum, Σ⁻¹ = Σ_c Σ_c⁻¹, which is the product of the
//!   Gaussians (a posterior that counts shared prior knowledge C times and would make a merged
//!   model C times over-confident); we use the minimiser. The mean is the same either way.
//!
//! Σ is diagonal, so this holds weight by weight: 1/σ = mean_c(1/σ_c), μ = Σ_c(μ_c/σ_c) / Σ_c(1/σ_c).
//! With the **Euclidean** distance the minimiser is the uniform average (the paper's "L2"
//! combination): μ = mean_c μ_c, and we average σ the same way.
//!
//! Label sets are united: a label some inputs never saw is combined from the inputs that have it
//! (an input's untouched prior for a label says nothing about it).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::learn::learner::weights::WeightTable;
use crate::learn::learner::DiagonalLearner;
use crate::model::{LearnerConfig, Model, TrainingStats};

/// How to combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum MergeMethod {
    /// The Gaussian closest in summed KL divergence: precision-weighted means, averaged precisions.
    Kl,
    /// The uniform average of means (and of variances).
    Average,
}

/// Combines weight tables whose blocks map into `out_blocks` output blocks: `inputs[c]` is a
/// table and, for each of its blocks, the output block it feeds.
pub fn combine(
    inputs: &[(&WeightTable, Vec<usize>)],
    out_blocks: usize,
    method: MergeMethod,
) -> WeightTable {
    let features = inputs[0].0.features();
    let mut out = WeightTable::new(features, out_blocks, 1.0);
    // Per output block: Σ weight·μ, Σ weight, Σ σ, count.
    let mut acc = vec![(0.0f64, 0.0f64, 0.0f64, 0usize); out_blocks];
    for j in 0..features {
        acc.iter_mut().for_each(|a| *a = (0.0, 0.0, 0.0, 0));
        for (table, map) in inputs {
            for (pair, &z) in table.row(j).chunks_exact(2).zip(map) {
                let (mu, sigma) = (f64::from(pair[0]), f64::from(pair[1]));
                let a = &mut acc[z];
                let w = match method {
                    MergeMethod::Kl => 1.0 / sigma,
                    MergeMethod::Average => 1.0,
                };
                a.0 += w * mu;
                a.1 += w;
                a.2 += sigma;
                a.3 += 1;
            }
        }
        let row = out.row_mut(j);
        for (z, &(weighted, weight, sigmas, n)) in acc.iter().enumerate() {
            if n == 0 {
                continue;
            }
            row[2 * z] = (weighted / weight) as f32;
            row[2 * z + 1] = match method {
                // 1/σ = (1/n)·Σ 1/σ_c.
                MergeMethod::Kl => (n as f64 / weight) as f32,
                MergeMethod::Average => (sigmas / n as f64) as f32,
            };
        }
    }
    out
}

/// Names the first setting in which two serialisable values differ, e.g.
/// "hash_bits is 20 in B but 18 in A", down to the element of a list ("filters[2] is absent in
/// B but {\"type\":\"stop_words\",…} in A"), each value cut to 60 characters.
fn difference<T: Serialize>(a: &T, b: &T, a_name: &str, b_name: &str) -> Option<String> {
    let (a, b) = (serde_json::to_value(a).ok()?, serde_json::to_value(b).ok()?);
    fn walk(
        a: &serde_json::Value,
        b: &serde_json::Value,
        path: &str,
    ) -> Option<(String, String, String)> {
        match (a, b) {
            (serde_json::Value::Object(x), serde_json::Value::Object(y)) => {
                x.keys().chain(y.keys()).find_map(|k| {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    match (x.get(k), y.get(k)) {
                        (Some(u), Some(v)) => walk(u, v, &p),
                        (u, v) => Some((p, show(u), show(v))),
                    }
                })
            }
            (serde_json::Value::Array(x), serde_json::Value::Array(y)) => (0..x.len().max(y.len()))
                .find_map(|i| {
                    let p = format!("{path}[{i}]");
                    match (x.get(i), y.get(i)) {
                        (Some(u), Some(v)) => walk(u, v, &p),
                        (u, v) => Some((p, show(u), show(v))),
                    }
                }),
            _ if a != b => Some((path.to_string(), show(Some(a)), show(Some(b)))),
            _ => None,
        }
    }
    fn show(v: Option<&serde_json::Value>) -> String {
        v.map_or("absent".into(), |v| {
            let s = v.to_string();
            if s.len() > 60 {
                format!(
                    "{}…",
                    &s[..s.char_indices().nth(57).map_or(s.len(), |c| c.0)]
                )
            } else {
                s
            }
        })
    }
    walk(&a, &b, "").map(|(path, x, y)| format!("{path} is {y} in {b_name} but {x} in {a_name}"))
}

/// The first learner setting (rule, η, prior, …) in which a model differs from the first, named
/// as [`difference`] names it; `None` when they agree. The merged model keeps the first
/// model's settings for what it learns next (`train` may take the soft rule on one shard's
/// short texts and CW on another's); means and variances combine the same way whatever the
/// rule, so this is a note, not a refusal.
pub fn learner_difference(models: &[Model], names: &[String]) -> Option<String> {
    let LearnerConfig::Cw(first) = &models.first()?.header.learner;
    models.iter().zip(names).skip(1).find_map(|(m, name)| {
        let LearnerConfig::Cw(config) = &m.header.learner;
        difference(first, config, names.first()?, name)
    })
}

/// The merged model's record of the soft rule: the first input's (its rule is the merged
/// model's), counting as trained from files the merged labels, from the first on, that some
/// input was trained on from files (its first `labels`, or every label of an input without a
/// record); `learn` corrects the labels after them with CW's uncapped step
/// ([`crate::model::SoftRuleTrial::labels`]).
fn merged_soft_rule(models: &[Model], merged: &[String]) -> Option<crate::model::SoftRuleTrial> {
    let trial = models.first()?.header.soft_rule.clone()?;
    trial.trained_labels()?;
    let labels = leading_labels_of_some_input(models, merged, |m| {
        (m.header.soft_rule.as_ref())
            .and_then(|t| t.trained_labels())
            .unwrap_or(m.labels().len())
    });
    Some(crate::model::SoftRuleTrial { labels, ..trial })
}

/// How many of the merged labels the merged scale (the mean of the inputs') was fitted on, for
/// [`crate::model::CalibrationInfo::fitted_labels`]: the leading merged labels that some input
/// with a fitted scale had in its fit (its first `fitted_labels`; all of its labels when it
/// does not record them). So a label that `learn` adds after the merge is one the scale never
/// saw, as after `train` ([`crate::jobs::online::learned_on_raw_variance`]).
fn merged_fitted_labels(models: &[Model], merged: &[String]) -> usize {
    leading_labels_of_some_input(models, merged, |m| match &m.header.calibration {
        None if m.header.probability_scale == 1.0 => 0,
        Some(c) if c.fitted_labels > 0 => c.fitted_labels,
        _ => m.labels().len(),
    })
}

/// How many leading labels of `merged` are each among the first `leading(input)` labels of
/// some input.
fn leading_labels_of_some_input(
    models: &[Model],
    merged: &[String],
    leading: impl Fn(&Model) -> usize,
) -> usize {
    let leading: Vec<&[String]> = models
        .iter()
        .map(|m| &m.labels()[..leading(m).min(m.labels().len())])
        .collect();
    leading_in_some(&leading, merged)
}

/// How many leading labels of `merged` are each in some of `inputs`.
fn leading_in_some(inputs: &[&[String]], merged: &[String]) -> usize {
    merged
        .iter()
        .take_while(|l| inputs.iter().any(|i| i.contains(l)))
        .count()
}

/// Merges models into one: same pipeline and formulation required, label sets united, training
/// statistics summed. `names` name the inputs in messages.
pub fn merge(models: &[Model], names: &[String], method: MergeMethod) -> Result<Model> {
    let first = models
        .first()
        .ok_or_else(|| Error::InvalidSetting("merge needs at least one model".into()))?;
    let LearnerConfig::Cw(first_config) = &first.header.learner;
    for (m, name) in models.iter().zip(names).skip(1) {
        if let Some(d) = difference(&first.header.pipeline, &m.header.pipeline, &names[0], name) {
            return Err(Error::InvalidSetting(format!(
                "cannot merge models with different pipelines: {d} (parts trained apart choose their stop words, hash bits, bigram weight, character n-grams and n-grams from their own files: train them with the same --stopwords, --hash-bits, --ngram-weight, --char-ngrams and --ngrams)"
            )));
        }
        let LearnerConfig::Cw(config) = &m.header.learner;
        if config.binary != first_config.binary {
            return Err(Error::InvalidSetting(format!(
                "cannot merge a binary-formulation model with a multi-class one ({} and {name})",
                names[0]
            )));
        }
        if config.binary && m.labels() != first.labels() {
            return Err(Error::InvalidSetting(format!(
                "binary models must have the same two labels in the same order: {:?} in {} but {:?} in {name}",
                first.labels(),
                names[0],
                m.labels()
            )));
        }
    }
    let mut labels: Vec<String> = Vec::new();
    let mut inputs = Vec::with_capacity(models.len());
    for m in models {
        let map: Vec<usize> = if first_config.binary {
            vec![0]
        } else {
            m.labels()
                .iter()
                .map(|l| crate::model::index_or_push(&mut labels, l))
                .collect()
        };
        inputs.push((m.learner.weights(), map));
    }
    if first_config.binary {
        labels = first.labels().to_vec();
    }
    let blocks = if first_config.binary { 1 } else { labels.len() };
    let table = combine(&inputs, blocks, method);
    let params = first_config.clone().validate()?;
    let learner = DiagonalLearner::from_weights(params, labels.len(), table)
        .expect("blocks follow the formulation");
    let mut training = TrainingStats {
        label_documents: vec![0; labels.len()],
        seed: first.header.training.seed,
        ..TrainingStats::default()
    };
    for m in models {
        let t = &m.header.training;
        training.documents += t.documents;
        training.skipped += t.skipped;
        training.epochs = training.epochs.max(t.epochs);
        training.exact_cap_hits += t.exact_cap_hits;
        for (l, n) in m.labels().iter().zip(&t.label_documents) {
            if let Some(i) = labels.iter().position(|x| x == l) {
                training.label_documents[i] += n;
            }
        }
    }
    let flat = first_config
        .prior
        .is_flat()
        .then_some(first_config.initial_variance as f32);
    training.distinct_features = learner.weights().touched_features(flat).saturating_sub(1);
    let scale = models
        .iter()
        .map(|m| m.header.probability_scale)
        .sum::<f64>()
        / models.len() as f64;
    let mut header = first.header.clone();
    header.labels = labels;
    header.training = training;
    header.probability_scale = scale;
    // Not refitted: say so, rather than keep the first input's record of its own fit.
    header.calibration = models
        .iter()
        .any(|m| m.header.probability_scale != 1.0)
        .then(|| crate::model::CalibrationInfo {
            fitted_by: format!("merge, as the mean of {} inputs' scales", models.len()),
            folds: 0,
            held_out: 0,
            brier_before: 0.0,
            brier_after: 0.0,
            variance_shrinkage: 1.0,
            corrections_since: 0,
            fitted_labels: merged_fitted_labels(models, &header.labels),
        });
    header.selection = None;
    header.soft_rule = merged_soft_rule(models, &header.labels);
    // A label shift's strength was chosen on one model's held-out fifth: not carried over.
    header.label_shift = None;
    header.cwtext_version = env!("CARGO_PKG_VERSION").to_string();
    // Named features only when every part kept them: a partial vocabulary would name some
    // buckets and silently miss what the others learned.
    let mut vocabularies = Vec::new();
    for (m, name) in models.iter().zip(names) {
        let kind = |kind| Error::Model {
            path: name.into(),
            kind,
        };
        vocabularies.push(m.vocabulary().map_err(kind)?);
    }
    let vocabulary = vocabularies
        .iter()
        .map(|v| v.as_deref())
        .collect::<Option<Vec<_>>>()
        .map(crate::text::vocabulary::Vocabulary::union);
    let rehearsal = merged_rehearsal(models, &header.labels, &learner)?;
    let mut model = Model {
        header,
        learner,
        vocabulary: None,
        file_crc: None,
        rehearsal: rehearsal.map(crate::model::KeptDocuments::Parsed),
    };
    model.set_vocabulary(vocabulary);
    Ok(model)
}

/// The documents `learn` protects in the merged model ([`crate::learn::rehearsal`]): every
/// input's kept documents offered again, input by input, under their merged label, to a memory
/// of the largest input's capacity, with the merged model's scores as their references (the
/// scores `learn` should keep are the merged model's). `None` when no input kept any (models
/// from before format version 3). Before 2026-12-07 a merged model kept none, and `learn` could
/// not protect its other labels from one-sided refiles.
fn merged_rehearsal(
    models: &[Model],
    merged: &[String],
    learner: &DiagonalLearner,
) -> Result<Option<crate::learn::rehearsal::Rehearsal>> {
    // A damaged section is refused naming its file (the model records where it was read from).
    let mut kept = Vec::new();
    for m in models {
        if let Some(memory) = m.rehearsal()? {
            kept.push((m, memory));
        }
    }
    let Some(capacity) = kept.iter().map(|(_, r)| r.capacity()).max() else {
        return Ok(None);
    };
    let mut memory = crate::learn::rehearsal::Rehearsal::new(capacity, merged.len());
    for (m, r) in &kept {
        for (label, name) in m.labels().iter().enumerate() {
            let Some(to) = merged.iter().position(|l| l == name) else {
                continue;
            };
            for d in r.documents(label) {
                memory.offer(to, &d.x, learner);
            }
        }
    }
    Ok(Some(memory))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(labels: usize, pairs: &[[f32; 2]]) -> WeightTable {
        WeightTable::from_raw(1, labels, pairs.iter().flatten().copied().collect()).unwrap()
    }

    /// Hand-computed, one weight: (μ, σ) = (1, 0.5) and (4, 2). KL: precisions 2 and 0.5,
    /// μ = (1·2 + 4·0.5)/2.5 = 1.6, 1/σ = (2 + 0.5)/2 = 1.25 so σ = 0.8. Average: μ = 2.5,
    /// σ = 1.25.
    #[test]
    fn kl_and_average_by_hand() {
        let a = table(1, &[[1.0, 0.5]]);
        let b = table(1, &[[4.0, 2.0]]);
        let inputs = [(&a, vec![0]), (&b, vec![0])];
        let kl = combine(&inputs, 1, MergeMethod::Kl);
        assert!((kl.row(0)[0] - 1.6).abs() < 1e-6 && (kl.row(0)[1] - 0.8).abs() < 1e-6);
        let avg = combine(&inputs, 1, MergeMethod::Average);
        assert_eq!(avg.row(0), &[2.5, 1.25]);
    }

    /// The KL combination minimises the summed divergence: nudging μ or σ away raises it.
    #[test]
    fn kl_merge_is_the_minimiser() {
        let inputs = [(1.0f64, 0.5f64), (4.0, 2.0), (-1.0, 0.1)];
        let kl = |mu: f64, s: f64| -> f64 {
            inputs
                .iter()
                .map(|&(m, sc)| 0.5 * (s / sc + (m - mu).powi(2) / sc - 1.0 + (sc / s).ln()))
                .sum()
        };
        let tables: Vec<WeightTable> = inputs
            .iter()
            .map(|&(m, s)| table(1, &[[m as f32, s as f32]]))
            .collect();
        let merged = combine(
            &tables.iter().map(|t| (t, vec![0])).collect::<Vec<_>>(),
            1,
            MergeMethod::Kl,
        );
        let (mu, s) = (f64::from(merged.row(0)[0]), f64::from(merged.row(0)[1]));
        let best = kl(mu, s);
        for (dm, ds) in [(0.01, 0.0), (-0.01, 0.0), (0.0, 0.01), (0.0, -0.01)] {
            assert!(kl(mu + dm, s + ds) > best, "{dm} {ds}");
        }
        // The paper's printed sum of precisions is not the minimiser.
        let summed = 1.0 / inputs.iter().map(|i| 1.0 / i.1).sum::<f64>();
        assert!(kl(mu, summed) > best);
    }

    /// The merged labels an input's fit (or soft-rule training) covered are the leading ones
    /// that some input covered: a label after the first one no input covered counts as added
    /// since, as labels `learn` adds come last.
    #[test]
    fn the_leading_labels_some_input_covered_are_counted() {
        let s = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        // Input a was fitted on x and y (a label it learned later is not among them), b on z.
        let (a, b) = (s(&["x", "y"]), s(&["z"]));
        let inputs = [a.as_slice(), b.as_slice()];
        assert_eq!(leading_in_some(&inputs, &s(&["x", "y", "z", "new"])), 3);
        assert_eq!(leading_in_some(&inputs, &s(&["x", "y", "z"])), 3);
        assert_eq!(leading_in_some(&inputs, &s(&["x", "new", "z"])), 1);
        assert_eq!(leading_in_some(&inputs, &s(&["new", "x"])), 0);
    }

    /// Labels are united; a label only one input has comes from that input alone.
    #[test]
    fn labels_are_united() {
        let a = table(2, &[[1.0, 1.0], [2.0, 1.0]]);
        let b = table(2, &[[3.0, 1.0], [5.0, 0.5]]);
        // a: labels x, y; b: labels y, z → outputs x, y, z.
        let merged = combine(
            &[(&a, vec![0, 1]), (&b, vec![1, 2])],
            3,
            MergeMethod::Average,
        );
        assert_eq!(merged.row(0), &[1.0, 1.0, 2.5, 1.0, 5.0, 0.5]);
    }

    #[test]
    fn differences_are_named() {
        use crate::text::pipeline::PipelineConfig;
        let a = PipelineConfig::default();
        let b = PipelineConfig {
            hash_bits: 20,
            ..PipelineConfig::default()
        };
        let d = difference(&a, &b, "A", "B").unwrap();
        assert_eq!(d, "hash_bits is 20 in B but 18 in A");
        assert!(difference(&a, &a.clone(), "A", "B").is_none());
    }

    /// Two models of one corpus, where `train` chose the stop-word list for one seed and not
    /// for another: the message names the filter that differs, not both lists of filters with
    /// the whole list's 174 words (it printed 1,700 characters).
    #[test]
    fn a_difference_in_a_list_names_the_element_briefly() {
        use crate::text::pipeline::config::FilterConfig;
        use crate::text::pipeline::PipelineConfig;
        let without = PipelineConfig::default();
        let mut with = without.clone();
        with.filters.push(FilterConfig::StopWords {
            name: "english".into(),
            words: crate::text::pipeline::stopwords::load("english").unwrap(),
        });
        let at = without.filters.len();
        let d = difference(&with, &without, "a.cwm", "b.cwm").unwrap();
        assert!(
            d.starts_with(&format!(
                "filters[{at}] is absent in b.cwm but {{\"type\":\"stop_words\",\"name\":\"english\""
            )),
            "{d}"
        );
        assert!(d.ends_with("… in a.cwm"), "{d}");
        assert!(d.len() < 120, "{} characters: {d}", d.len());
    }
}
