//! Feature values: from a document's bucket list (with repeats) to sorted (bucket, value) pairs.

use serde::{Deserialize, Serialize};

/// How a feature's count becomes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum ValueKind {
    /// 1 for a present feature.
    Binary,
    /// The count.
    Tf,
    /// 1 + ln(count).
    LogTf,
}

impl ValueKind {
    /// The name as typed on the command line (`--values`).
    pub fn name(self) -> &'static str {
        match self {
            ValueKind::Binary => "binary",
            ValueKind::Tf => "tf",
            ValueKind::LogTf => "log-tf",
        }
    }
}

/// The value stage, as stored in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueConfig {
    pub kind: ValueKind,
    /// Scale the document to unit L2 norm (before the bias feature is added).
    pub l2_normalize: bool,
}

impl ValueConfig {
    /// Sorts `buckets`, merges repeats and writes the weighted pairs into `indices`/`values`.
    pub fn weigh(&self, buckets: &mut [u32], indices: &mut Vec<u32>, values: &mut Vec<f32>) {
        buckets.sort_unstable();
        indices.clear();
        values.clear();
        for run in buckets.chunk_by(|a, b| a == b) {
            let count = run.len() as f32;
            indices.push(run[0]);
            values.push(match self.kind {
                ValueKind::Binary => 1.0,
                ValueKind::Tf => count,
                // Most features occur once; 1 + ln 1 is exactly 1.
                ValueKind::LogTf if run.len() == 1 => 1.0,
                ValueKind::LogTf => 1.0 + count.ln(),
            });
        }
        if self.l2_normalize {
            let norm = values.iter().map(|v| v * v).sum::<f32>().sqrt();
            if norm > 0.0 {
                values.iter_mut().for_each(|v| *v /= norm);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weigh(kind: ValueKind, l2: bool) -> (Vec<u32>, Vec<f32>) {
        let (mut i, mut v) = (Vec::new(), Vec::new());
        let mut buckets = vec![7, 3, 7, 7, 1];
        ValueConfig {
            kind,
            l2_normalize: l2,
        }
        .weigh(&mut buckets, &mut i, &mut v);
        (i, v)
    }

    #[test]
    fn value_kinds() {
        assert_eq!(
            weigh(ValueKind::Binary, false),
            (vec![1, 3, 7], vec![1.0, 1.0, 1.0])
        );
        assert_eq!(weigh(ValueKind::Tf, false).1, vec![1.0, 1.0, 3.0]);
        let log = weigh(ValueKind::LogTf, false).1;
        assert!((log[2] - (1.0 + 3f32.ln())).abs() < 1e-6);
        // tf (1, 1, 3) has norm √11.
        let l2 = weigh(ValueKind::Tf, true).1;
        assert!((l2[2] - 3.0 / 11f32.sqrt()).abs() < 1e-6);
    }
}
