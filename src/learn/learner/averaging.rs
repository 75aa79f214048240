//! Lazy averaging of the means: the deterministic approximation to the voted perceptron in
//! Cohen's lecture ("Breaking it down: the voted perceptron", a = Σₖ mₖvₖ / m), kept so that a
//! sparse update stays O(nnz).
//!
//! Instead of adding the whole weight vector to a running sum after every example, keep
//! u = Σ t·Δₜ over the updates Δₜ made at example t (counting examples from 1). After m examples
//! the average of the weights used to predict examples 1..m is w − u/m: an update made at
//! example t is in the weights of the m − t examples after it, and Δₜ(1 − t/m) = Δₜ(m − t)/m.

/// The running sum u and the example count m.
#[derive(Debug, Clone, PartialEq)]
pub struct Averager {
    sum: Vec<f64>,
    count: u64,
}

impl Averager {
    /// An averager for `len` means.
    pub fn new(len: usize) -> Self {
        Averager {
            sum: vec![0.0; len],
            count: 0,
        }
    }

    /// Counts the next example; call before its updates.
    pub fn tick(&mut self) {
        self.count += 1;
    }

    /// Records the update `delta` of mean `index` at the current example.
    #[inline]
    pub fn record(&mut self, index: usize, delta: f64) {
        self.sum[index] += self.count as f64 * delta;
    }

    /// The average of mean `index`, whose current value is `mean`.
    pub fn average(&self, index: usize, mean: f64) -> f64 {
        if self.count == 0 {
            mean
        } else {
            mean - self.sum[index] / self.count as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lazy average equals the explicit average of the weights before each example.
    #[test]
    fn lazy_average_equals_the_explicit_one() {
        let updates: &[&[(usize, f64)]] = &[&[(0, 1.0)], &[], &[(1, -2.0), (0, 0.5)], &[], &[]];
        let mut w = [0.0f64; 2];
        let mut explicit = [0.0f64; 2];
        let mut avg = Averager::new(2);
        for step in updates {
            // The lecture's voted perceptron predicts example t with the weights before it.
            explicit.iter_mut().zip(&w).for_each(|(e, w)| *e += w);
            avg.tick();
            for &(i, d) in *step {
                w[i] += d;
                avg.record(i, d);
            }
        }
        for i in 0..2 {
            let want = explicit[i] / updates.len() as f64;
            assert!((avg.average(i, w[i]) - want).abs() < 1e-12, "{i}");
        }
    }
}
