//! Layer 2, learn: the mathematics of confidence-weighted learning, on feature vectors alone.
//!
//! [`learner`] is the multi-class CW learner (EMNLP 2009), split into update rule, covariance
//! projection and constraint strategy; [`probability`] turns the weight Gaussian into per-label
//! probabilities; [`calibration`] fits and measures the variance scale; [`rehearsal`] is the
//! memory of past documents that `learn` protects.
//!
//! **May use:** the foundation ([`crate::error`], [`crate::features`]). Not the text layer's
//! pipeline (a learner sees vectors, never text), nor the model file, jobs or anything above.

pub mod calibration;
pub mod label_shift;
pub mod learner;
pub mod prior;
pub mod probability;
pub mod rehearsal;
pub mod tally;
