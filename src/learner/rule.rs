//! Update rules: pure functions from the margin statistics of one constraint to the step size.
//!
//! For a constraint with mean margin m = μ·g and margin variance v = gᵀΣg (g the difference of
//! the two labels' feature blocks, see `multiclass.rs`), a rule returns α, the mean step
//! (μ ← μ + αΣg), and the two covariance coefficients that the projections use: the precision
//! gain λ of the KL projection (JMLR 2012 §6.1: 1/σⱼ ← 1/σⱼ + λgⱼ²) and the shrink β of the full
//! update Σ ← Σ − βΣggᵀΣ (which the L2 projection applies per coordinate).

use serde::{Deserialize, Serialize};

/// The result of a rule for one constraint. `alpha == 0` means no update.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub alpha: f64,
    /// KL projection: precision gain per unit gⱼ².
    pub precision_gain: f64,
    /// Full-covariance shrink β.
    pub shrink: f64,
}

impl Step {
    pub const NONE: Step = Step {
        alpha: 0.0,
        precision_gain: 0.0,
        shrink: 0.0,
    };

    pub fn is_update(&self) -> bool {
        self.alpha > 0.0
    }
}

/// An update rule of the CW family.
pub trait UpdateRule: Send + Sync {
    /// The step for mean margin `m`, margin variance `v` and confidence `phi` = Φ⁻¹(η) > 0.
    fn step(&self, m: f64, v: f64, phi: f64) -> Step;
}

/// The configured rule, as stored in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    /// CW-Var: the linearised variance constraint m ≥ φv (JMLR 2012, Lemma 1).
    Var,
    /// CW-Stdev: the exact standard-deviation constraint m ≥ φ√v (JMLR 2012, Lemma 2).
    Stdev,
}

impl RuleKind {
    pub fn rule(self) -> &'static dyn UpdateRule {
        match self {
            RuleKind::Var => &CwVar,
            RuleKind::Stdev => &CwStdev,
        }
    }
}

/// Guards shared by every rule: an empty document (v = 0) or a non-finite statistic gives no
/// update rather than a NaN that would poison the weights.
fn degenerate(m: f64, v: f64, phi: f64) -> bool {
    !(m.is_finite() && v.is_finite() && phi.is_finite()) || v <= 0.0 || phi <= 0.0
}

fn finite_or_none(step: Step) -> Step {
    if step.alpha.is_finite() && step.precision_gain.is_finite() && step.shrink.is_finite() {
        step
    } else {
        Step::NONE
    }
}

/// CW-Var (Crammer, Dredze, Pereira, JMLR 2012, Lemma 1, eq. 18):
///
/// α = max(0, (−(1+2φm) + √((1+2φm)² − 8φ(m − φv))) / (4φv)),
///
/// the positive root of 2φv·α² + (1+2φm)·α + (m − φv)/v = 0, which is the constraint
/// m + αv = φ·v/(1+2αφv) after the update. Covariance: β = 2αφ/(1+2αφv) (eq. 15); the KL
/// diagonal projection adds λ = 2αφ to each precision (JMLR §6.1).
pub struct CwVar;

impl UpdateRule for CwVar {
    fn step(&self, m: f64, v: f64, phi: f64) -> Step {
        if degenerate(m, v, phi) {
            return Step::NONE;
        }
        let b = 1.0 + 2.0 * phi * m;
        let disc = b * b - 8.0 * phi * (m - phi * v);
        let alpha = ((-b + disc.max(0.0).sqrt()) / (4.0 * phi * v)).max(0.0);
        if alpha <= 0.0 {
            return Step::NONE;
        }
        finite_or_none(Step {
            alpha,
            precision_gain: 2.0 * alpha * phi,
            shrink: 2.0 * alpha * phi / (1.0 + 2.0 * alpha * phi * v),
        })
    }
}

/// CW-Stdev (JMLR 2012, Lemma 2, eq. 31; NIPS 2008, eq. 14), with ψ = 1 + φ²/2, ξ = 1 + φ²:
///
/// α = max(0, (−mψ + √(m²φ⁴/4 + vφ²ξ)) / (vξ)).
///
/// The new margin variance u satisfies √u = (−αvφ + √(α²v²φ² + 4v))/2 (eq. 28), so that the
/// constraint m + αv = φ√u holds with equality; β = αφ/(√u + vαφ) (eq. 27), and the KL diagonal
/// projection adds λ = αφ/√u to each precision (JMLR §6.1).
pub struct CwStdev;

impl UpdateRule for CwStdev {
    fn step(&self, m: f64, v: f64, phi: f64) -> Step {
        if degenerate(m, v, phi) {
            return Step::NONE;
        }
        let psi = 1.0 + phi * phi / 2.0;
        let xi = 1.0 + phi * phi;
        let phi2 = phi * phi;
        let alpha =
            ((-m * psi + (m * m * phi2 * phi2 / 4.0 + v * phi2 * xi).sqrt()) / (v * xi)).max(0.0);
        if alpha <= 0.0 {
            return Step::NONE;
        }
        let avp = alpha * v * phi;
        let sqrt_u = (-avp + (avp * avp + 4.0 * v).sqrt()) / 2.0;
        finite_or_none(Step {
            alpha,
            precision_gain: alpha * phi / sqrt_u,
            shrink: alpha * phi / (sqrt_u + avp),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Hand-computed: φ = 1, m = 0, v = 1. Var: α = (−1 + √9)/4 = 0.5, λ = 2αφ = 1,
    /// β = 1/(1+1) = 0.5.
    #[test]
    fn var_by_hand() {
        let s = CwVar.step(0.0, 1.0, 1.0);
        assert!(close(s.alpha, 0.5) && close(s.precision_gain, 1.0) && close(s.shrink, 0.5));
        // φ = 2, m = −1, v = 0.5: b = −3, disc = 9 − 16(−1 − 1) = 41, α = (3 + √41)/4.
        let s = CwVar.step(-1.0, 0.5, 2.0);
        assert!(close(s.alpha, (3.0 + 41f64.sqrt()) / 4.0), "{s:?}");
    }

    /// Hand-computed: φ = 1, m = 0, v = 1: ψ = 1.5, ξ = 2, α = √2/2, √u = (−√2/2 + √4.5)/2
    /// = √2/2, λ = αφ/√u = 1, β = αφ/(√u + vαφ) = 0.5.
    #[test]
    fn stdev_by_hand() {
        let s = CwStdev.step(0.0, 1.0, 1.0);
        let h = 0.5f64.sqrt();
        assert!(close(s.alpha, h) && close(s.precision_gain, 1.0) && close(s.shrink, 0.5));
    }

    /// After a full-covariance update the constraint holds with equality:
    /// var m + αv = φ·v(1 − βv); stdev m + αv = φ√(v(1 − βv)).
    #[test]
    fn constraint_holds_with_equality_after_an_update() {
        for &(m, v, phi) in &[
            (0.0, 1.0, 1.0),
            (-2.0, 3.0, 0.5),
            (0.3, 0.2, 1.64),
            (-0.1, 7.0, 2.3),
        ] {
            let s = CwVar.step(m, v, phi);
            assert!(s.is_update());
            let v_new = v - s.shrink * v * v;
            assert!(
                (m + s.alpha * v - phi * v_new).abs() < 1e-9,
                "var {m} {v} {phi}"
            );
            let s = CwStdev.step(m, v, phi);
            assert!(s.is_update());
            let v_new = v - s.shrink * v * v;
            assert!(
                (m + s.alpha * v - phi * v_new.sqrt()).abs() < 1e-9,
                "stdev {m} {v} {phi}"
            );
        }
    }

    #[test]
    fn no_update_when_the_constraint_already_holds() {
        // var: m = 2 ≥ φv = 1; stdev: m = 2 ≥ φ√v = 1.
        assert_eq!(CwVar.step(2.0, 1.0, 1.0), Step::NONE);
        assert_eq!(CwStdev.step(2.0, 1.0, 1.0), Step::NONE);
    }

    #[test]
    fn degenerate_inputs_give_no_update() {
        for rule in [RuleKind::Var.rule(), RuleKind::Stdev.rule()] {
            assert_eq!(rule.step(0.0, 0.0, 1.0), Step::NONE);
            assert_eq!(rule.step(f64::NAN, 1.0, 1.0), Step::NONE);
            assert_eq!(rule.step(0.0, f64::INFINITY, 1.0), Step::NONE);
            assert_eq!(rule.step(-1.0, 1.0, 0.0), Step::NONE);
        }
    }
}
