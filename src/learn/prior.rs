//! The per-feature prior of [`WeightPrior::Idf`](crate::learn::learner::WeightPrior::Idf):
//! each weight's starting variance from how rare its feature is in the training documents.

use crate::features::FeatureVector;

/// What [`DocumentFrequencies::variance_factors`] needs of the training documents, gathered in
/// one pass: how many documents contain each feature, and each feature's share of the
/// documents' squared length.
#[derive(Debug, Clone)]
pub struct DocumentFrequencies {
    df: Vec<u32>,
    /// Σ over documents of xⱼ² / Σₖ xₖ² (the bias left out of both).
    mass: Vec<f64>,
    documents: usize,
    bias: Option<usize>,
}

impl DocumentFrequencies {
    /// Counts for a `dimension`-wide feature space whose bias feature (if any) is at `bias`.
    pub fn new(dimension: usize, bias: Option<usize>) -> Self {
        DocumentFrequencies {
            df: vec![0; dimension],
            mass: vec![0.0; dimension],
            documents: 0,
            bias,
        }
    }

    /// Counts one document.
    pub fn add(&mut self, x: &FeatureVector) {
        self.documents += 1;
        let bias = self.bias.map(|b| b as u32);
        let norm: f64 = x
            .indices()
            .iter()
            .zip(x.data())
            .filter(|(&j, _)| Some(j) != bias)
            .map(|(_, &v)| f64::from(v) * f64::from(v))
            .sum();
        for (&j, &v) in x.indices().iter().zip(x.data()) {
            if Some(j) == bias {
                continue;
            }
            self.df[j as usize] += 1;
            if norm > 0.0 {
                self.mass[j as usize] += f64::from(v) * f64::from(v) / norm;
            }
        }
    }

    /// The factors vⱼ by which feature j's prior variance a is scaled: vⱼ = idfⱼ²/s with
    /// idfⱼ = ln((1 + N)/(1 + dfⱼ)) + 1 over the N documents counted (a feature none contains
    /// gets the largest, ln(1 + N) + 1), and s the documents' mean of Σⱼ idfⱼ²xⱼ² / Σⱼ xⱼ² (the
    /// bias left out), so that the average document's prior score variance is a, as under the
    /// flat prior. The bias keeps factor 1.
    pub fn variance_factors(&self) -> Vec<f32> {
        let n = self.documents as f64;
        let idf2: Vec<f64> = self
            .df
            .iter()
            .map(|&d| {
                let idf = ((1.0 + n) / (1.0 + f64::from(d))).ln() + 1.0;
                idf * idf
            })
            .collect();
        // Σ_d Σⱼ idfⱼ² xⱼ²/‖x‖² = Σⱼ idfⱼ² massⱼ; over the documents with a feature.
        let with_features = self.mass.iter().sum::<f64>();
        let s = if with_features > 0.0 {
            idf2.iter().zip(&self.mass).map(|(i, m)| i * m).sum::<f64>() / with_features
        } else {
            1.0
        };
        let mut factors: Vec<f32> = idf2.iter().map(|i| (i / s) as f32).collect();
        if let Some(b) = self.bias.filter(|&b| b < factors.len()) {
            factors[b] = 1.0;
        }
        factors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(pairs: &[(u32, f32)]) -> FeatureVector {
        let (i, v): (Vec<u32>, Vec<f32>) = pairs.iter().copied().unzip();
        FeatureVector::new(5, i, v)
    }

    /// Three documents over features 0..4 (4 is the bias): feature 0 in all three, 1 in one,
    /// 2 in two, 3 in none. By hand: idf = ln(4/(1 + df)) + 1: df 3 → 1, df 1 → 1 + ln 2, df 2 →
    /// 1 + ln(4/3), df 0 → 1 + ln 4.
    #[test]
    fn factors_are_squared_idf_over_the_mean_document() {
        let docs = [
            doc(&[(0, 1.0), (1, 1.0), (4, 1.0)]),
            doc(&[(0, 1.0), (2, 1.0), (4, 1.0)]),
            doc(&[(0, 3.0), (2, 4.0), (4, 1.0)]),
        ];
        let mut counts = DocumentFrequencies::new(5, Some(4));
        docs.iter().for_each(|x| counts.add(x));
        let f = counts.variance_factors();
        let i0 = 1.0f64;
        let i1 = 1.0 + 2f64.ln();
        let i2 = 1.0 + (4.0f64 / 3.0).ln();
        let i3 = 1.0 + 4f64.ln();
        // s: document 1 (i0² + i1²)/2, document 2 (i0² + i2²)/2, document 3 (9·i0² + 16·i2²)/25.
        let s = ((i0 * i0 + i1 * i1) / 2.0
            + (i0 * i0 + i2 * i2) / 2.0
            + (9.0 * i0 * i0 + 16.0 * i2 * i2) / 25.0)
            / 3.0;
        let expect = [i0 * i0 / s, i1 * i1 / s, i2 * i2 / s, i3 * i3 / s, 1.0];
        for (got, want) in f.iter().zip(expect) {
            assert!(
                (f64::from(*got) - want).abs() < 1e-6,
                "{f:?} against {expect:?}"
            );
        }
        // The rarest feature starts least sure, the most common surest.
        assert!(f[3] > f[1] && f[1] > f[2] && f[2] > f[0]);
    }

    #[test]
    fn no_documents_give_factors_of_the_empty_corpus() {
        let f = DocumentFrequencies::new(3, None).variance_factors();
        assert_eq!(f, vec![1.0; 3]);
    }
}
