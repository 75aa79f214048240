//! Reproductions of the papers' experiments, as library functions that return tables, so that
//! `cwtext experiment …` prints them and tests assert their shape:
//!
//! * [`synthetic`]: NIPS 2008 §5, cumulative mistakes on 1,000 points in R²⁰ (Fig. 2a);
//! * [`epochs`]: EMNLP 2009 §6, test accuracy after each training epoch for the constraint
//!   strategies and the baselines (Fig. 1, Tables 2–3);
//! * [`shards`]: JMLR 2012 §7.10 Fig. 6, models trained on disjoint shards and combined;
//! * [`calibration`]: test-set calibration of the shipped model under each way of fitting its
//!   probability scale.

pub mod calibration;
pub mod epochs;
pub mod shards;
pub mod synthetic;

/// Mean and (population) standard deviation.
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}
