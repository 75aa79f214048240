//! The weight table: for every feature j and label z, the mean μ_zj and variance σ_zj of the
//! weight Gaussian. The K labels' (μ, σ) pairs of one feature are adjacent f32s, so scoring and
//! updating a sparse document touches one short run of memory per feature.

/// Means and variances, feature-major: `[feature][label][μ, σ]`.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightTable {
    features: usize,
    labels: usize,
    data: Vec<f32>,
}

impl WeightTable {
    /// Every mean 0, every variance `initial_variance` (Σ₁ = a·I).
    pub fn new(features: usize, labels: usize, initial_variance: f32) -> Self {
        let mut data = vec![0.0; features * labels * 2];
        data.chunks_exact_mut(2)
            .for_each(|p| p[1] = initial_variance);
        WeightTable {
            features,
            labels,
            data,
        }
    }

    /// Rebuilds a table from its flat data (as stored in a model file).
    pub fn from_raw(features: usize, labels: usize, data: Vec<f32>) -> Option<Self> {
        (data.len() == features * labels * 2).then_some(WeightTable {
            features,
            labels,
            data,
        })
    }

    pub fn features(&self) -> usize {
        self.features
    }

    pub fn labels(&self) -> usize {
        self.labels
    }

    /// The flat data, `[feature][label][μ, σ]`.
    pub fn raw(&self) -> &[f32] {
        &self.data
    }

    /// The interleaved (μ, σ) pairs of all labels for feature `j`.
    #[inline]
    pub fn row(&self, j: usize) -> &[f32] {
        let w = self.labels * 2;
        &self.data[j * w..(j + 1) * w]
    }

    #[inline]
    pub fn row_mut(&mut self, j: usize) -> &mut [f32] {
        let w = self.labels * 2;
        &mut self.data[j * w..(j + 1) * w]
    }

    /// The same table with `extra` more labels, whose weights start at the prior N(0, a).
    pub fn with_more_labels(&self, extra: usize, initial_variance: f32) -> WeightTable {
        let labels = self.labels + extra;
        let mut data = Vec::with_capacity(self.features * labels * 2);
        for row in self.data.chunks_exact(self.labels * 2) {
            data.extend_from_slice(row);
            (0..extra).for_each(|_| data.extend_from_slice(&[0.0, initial_variance]));
        }
        WeightTable {
            features: self.features,
            labels,
            data,
        }
    }

    /// The flat data, mutable.
    pub fn raw_mut(&mut self) -> &mut [f32] {
        &mut self.data
    }

    /// How many features have a weight that moved from the prior.
    pub fn touched_features(&self, initial_variance: f32) -> usize {
        self.data
            .chunks_exact(self.labels * 2)
            .filter(|row| {
                row.chunks_exact(2)
                    .any(|p| p[0] != 0.0 || p[1] != initial_variance)
            })
            .count()
    }
}
