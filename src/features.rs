//! The sparse document vector every learner consumes: `sprs`'s compressed sparse vector with
//! `u32` bucket indices and `f32` values, indices sorted and unique. The last index of the space
//! is the bias feature, which never collides with a hashed feature.

/// A hashed, weighted document.
pub type FeatureVector = sprs::CsVecI<f32, u32>;

/// Squared norm Σⱼ xⱼ², the quantity CW's margin variance scales.
pub fn squared_norm(x: &FeatureVector) -> f64 {
    x.data().iter().map(|&v| f64::from(v) * f64::from(v)).sum()
}
