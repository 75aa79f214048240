//! Update rules: pure functions from the margin statistics of one constraint to the step.
//!
//! For a constraint with mean margin m = μ·g and margin variance v = gᵀΣg (g the difference of
//! the two labels' feature blocks, see `diagonal.rs`), a rule gives α, the mean step
//! (μ ← μ + αΣg), and the two covariance coefficients that the projections use: the precision
//! gain λ of the KL projection (JMLR 2012 §6.1: 1/σⱼ ← 1/σⱼ + λgⱼ²) and the shrink β of the full
//! update Σ ← Σ − βΣggᵀΣ (JMLR eq. 32), which the L2 projection applies per coordinate.
//!
//! Every rule is split in two pure functions: [`UpdateRule::signed_alpha`], the α that makes the
//! rule's constraint hold with equality (negative when it already holds with room to spare), and
//! [`UpdateRule::covariance`], the covariance coefficients for a given α. The ordinary step is
//! `max(0, α)`; the exact k-best strategy (Hildreth) also takes negative corrections.
//!
//! The first-order baselines (perceptron, PA, PA-I, PA-II) fit the same shape with a covariance
//! that never changes: Σ stays I, so v = ‖g‖² and μ ← μ + αg is their textbook update.

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
        self.alpha != 0.0
    }
}

/// The parameters a rule may read: φ = Φ⁻¹(η) (CW, SCW), r (AROW) and C (SCW, PA-I, PA-II).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RuleParams {
    pub phi: f64,
    pub r: f64,
    pub c: f64,
}

/// An update rule.
pub trait UpdateRule: Send + Sync {
    /// The α that solves the rule's constraint with equality for margin `m` and variance `v > 0`,
    /// before clipping at 0; `None` when there is no such α (the perceptron's, or a degenerate
    /// input).
    fn signed_alpha(&self, m: f64, v: f64, p: &RuleParams) -> Option<f64>;

    /// The covariance coefficients (λ, β) of a step of size α.
    fn covariance(&self, alpha: f64, v: f64, p: &RuleParams) -> (f64, f64);

    /// The step for the constraint: nothing when it already holds (α ≤ 0), when v = 0 (an
    /// empty document) or when any statistic is not finite.
    fn step(&self, m: f64, v: f64, p: &RuleParams) -> Step {
        if !(m.is_finite() && v.is_finite()) || v <= 0.0 {
            return Step::NONE;
        }
        match self.signed_alpha(m, v, p) {
            Some(alpha) if alpha > 0.0 => self.step_of(alpha, v, p),
            _ => Step::NONE,
        }
    }

    /// The full step of size α (any sign); `Step::NONE` when something is not finite.
    fn step_of(&self, alpha: f64, v: f64, p: &RuleParams) -> Step {
        let (precision_gain, shrink) = self.covariance(alpha, v, p);
        let step = Step {
            alpha,
            precision_gain,
            shrink,
        };
        if alpha.is_finite() && precision_gain.is_finite() && shrink.is_finite() {
            step
        } else {
            Step::NONE
        }
    }
}

/// The configured rule, as stored in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    /// CW-Var: the linearised variance constraint m ≥ φv (JMLR 2012, Lemma 1).
    Var,
    /// CW-Stdev: the exact standard-deviation constraint m ≥ φ√v (JMLR 2012, Lemma 2).
    Stdev,
    /// AROW: adaptive regularisation of weights (Crammer, Kulesza, Dredze, NIPS 2009).
    Arow,
    /// SCW-I: soft CW with a linear loss (Wang, Zhao, Hoi, ICML 2012).
    Scw1,
    /// SCW-II: soft CW with a squared loss (Wang, Zhao, Hoi, ICML 2012).
    Scw2,
    /// The perceptron (Rosenblatt; multi-class as in Collins 2002): a unit step on a mistake.
    Perceptron,
    /// Passive-aggressive (Crammer et al., JMLR 2006).
    Pa,
    /// PA-I: PA with the step capped at C.
    Pa1,
    /// PA-II: PA with a squared slack, step ℓ/(‖g‖² + 1/(2C)).
    Pa2,
}

impl RuleKind {
    /// Every rule (a test checks the list against the enum, with the `cli` feature's clap).
    pub const ALL: [RuleKind; 9] = [
        RuleKind::Var,
        RuleKind::Stdev,
        RuleKind::Arow,
        RuleKind::Scw1,
        RuleKind::Scw2,
        RuleKind::Perceptron,
        RuleKind::Pa,
        RuleKind::Pa1,
        RuleKind::Pa2,
    ];

    pub fn rule(self) -> &'static dyn UpdateRule {
        match self {
            RuleKind::Var => &CwVar,
            RuleKind::Stdev => &CwStdev,
            RuleKind::Arow => &Arow,
            RuleKind::Scw1 => &Scw1,
            RuleKind::Scw2 => &Scw2,
            RuleKind::Perceptron => &Perceptron,
            RuleKind::Pa => &PassiveAggressive,
            RuleKind::Pa1 => &PassiveAggressive1,
            RuleKind::Pa2 => &PassiveAggressive2,
        }
    }

    /// First-order rules keep Σ = I: no covariance, no probabilities beyond the prior's spread.
    pub fn is_first_order(self) -> bool {
        matches!(
            self,
            RuleKind::Perceptron | RuleKind::Pa | RuleKind::Pa1 | RuleKind::Pa2
        )
    }

    /// Rules whose step solves a hard constraint with equality, so that the exact k-best
    /// strategy (Hildreth) can correct it in both directions and the exact diagonal update can
    /// re-solve it.
    pub fn has_hard_constraint(self) -> bool {
        matches!(self, RuleKind::Var | RuleKind::Stdev | RuleKind::Pa)
    }

    /// Whether the rule reads φ = Φ⁻¹(η).
    pub fn uses_eta(self) -> bool {
        matches!(
            self,
            RuleKind::Var | RuleKind::Stdev | RuleKind::Scw1 | RuleKind::Scw2
        )
    }

    /// Whether the rule reads C.
    pub fn uses_c(self) -> bool {
        matches!(
            self,
            RuleKind::Scw1 | RuleKind::Scw2 | RuleKind::Pa1 | RuleKind::Pa2
        )
    }
}

/// ψ = 1 + φ²/2 and ξ = 1 + φ² (JMLR 2012, after eq. 31).
fn psi_xi(phi: f64) -> (f64, f64) {
    (1.0 + phi * phi / 2.0, 1.0 + phi * phi)
}

/// The stdev family's covariance for a step α: √u = (−αvφ + √(α²v²φ² + 4v))/2 (JMLR eq. 28),
/// λ = αφ/√u (the KL diagonal form of eq. 27) and β = αφ/(√u + vαφ) (eq. 27).
fn stdev_covariance(alpha: f64, v: f64, phi: f64) -> (f64, f64) {
    let avp = alpha * v * phi;
    let sqrt_u = (-avp + (avp * avp + 4.0 * v).sqrt()) / 2.0;
    (alpha * phi / sqrt_u, alpha * phi / (sqrt_u + avp))
}

/// CW-Var (Crammer, Dredze, Pereira, JMLR 2012, Lemma 1, eq. 18):
///
/// α = (−(1+2φm) + √((1+2φm)² − 8φ(m − φv))) / (4φv),
///
/// the positive root of 2φv·α² + (1+2φm)·α + (m − φv)/v = 0, which is the constraint
/// m + αv = φ·v/(1+2αφv) after the update. The discriminant equals (1 − 2φm)² + 8φ²v ≥ 0.
/// Covariance: β = 2αφ/(1+2αφv) (eq. 15); the KL diagonal projection adds λ = 2αφ to each
/// precision (JMLR §6.1).
pub struct CwVar;

impl UpdateRule for CwVar {
    fn signed_alpha(&self, m: f64, v: f64, p: &RuleParams) -> Option<f64> {
        let phi = p.phi;
        let b = 1.0 + 2.0 * phi * m;
        let disc = b * b - 8.0 * phi * (m - phi * v);
        (phi > 0.0).then(|| (-b + disc.max(0.0).sqrt()) / (4.0 * phi * v))
    }

    fn covariance(&self, alpha: f64, v: f64, p: &RuleParams) -> (f64, f64) {
        let g = 2.0 * alpha * p.phi;
        (g, g / (1.0 + g * v))
    }
}

/// CW-Stdev (JMLR 2012, Lemma 2, eq. 31; NIPS 2008, eq. 14), with ψ = 1 + φ²/2, ξ = 1 + φ²:
///
/// α = (−mψ + √(m²φ⁴/4 + vφ²ξ)) / (vξ).
///
/// The new margin variance u satisfies √u = (−αvφ + √(α²v²φ² + 4v))/2 (eq. 28), so that the
/// constraint m + αv = φ√u holds with equality; β = αφ/(√u + vαφ) (eq. 27), and the KL diagonal
/// projection adds λ = αφ/√u to each precision (JMLR §6.1).
pub struct CwStdev;

impl UpdateRule for CwStdev {
    fn signed_alpha(&self, m: f64, v: f64, p: &RuleParams) -> Option<f64> {
        let phi = p.phi;
        let (psi, xi) = psi_xi(phi);
        let phi2 = phi * phi;
        (phi > 0.0)
            .then(|| (-m * psi + (m * m * phi2 * phi2 / 4.0 + v * phi2 * xi).sqrt()) / (v * xi))
    }

    fn covariance(&self, alpha: f64, v: f64, p: &RuleParams) -> (f64, f64) {
        stdev_covariance(alpha, v, p.phi)
    }
}

/// AROW (Crammer, Kulesza, Dredze, NIPS 2009, eqs. 9–10 and Fig. 1): on a hinge loss
/// (m < 1), β = 1/(v + r) and α = (1 − m)·β; Σ ← Σ − βΣggᵀΣ, whose precision form is
/// Σ⁻¹ ← Σ⁻¹ + ggᵀ/r, so the KL diagonal projection adds λ = 1/r. The covariance step does not
/// depend on α.
pub struct Arow;

impl UpdateRule for Arow {
    fn signed_alpha(&self, m: f64, v: f64, p: &RuleParams) -> Option<f64> {
        Some((1.0 - m) / (v + p.r))
    }

    fn covariance(&self, _alpha: f64, v: f64, p: &RuleParams) -> (f64, f64) {
        (1.0 / p.r, 1.0 / (v + p.r))
    }
}

/// SCW-I (Wang, Zhao, Hoi, ICML 2012, Prop. 1): CW-Stdev's α capped at C,
/// α = min(C, max(0, (−mψ + √(m²φ⁴/4 + vφ²ξ))/(vξ))); u and β as in CW-Stdev.
pub struct Scw1;

impl UpdateRule for Scw1 {
    fn signed_alpha(&self, m: f64, v: f64, p: &RuleParams) -> Option<f64> {
        CwStdev.signed_alpha(m, v, p).map(|a| a.min(p.c))
    }

    fn covariance(&self, alpha: f64, v: f64, p: &RuleParams) -> (f64, f64) {
        stdev_covariance(alpha, v, p.phi)
    }
}

/// SCW-II (Wang, Zhao, Hoi, ICML 2012, Prop. 2): with n = v + 1/(2C) and
/// γ = φ√(φ²m²v² + 4nv(n + vφ²)),
///
/// α = (−(2mn + φ²mv) + γ) / (2(n² + nvφ²)),
///
/// and u, β as in CW-Stdev. As C → ∞, n → v and α becomes CW-Stdev's.
pub struct Scw2;

impl UpdateRule for Scw2 {
    fn signed_alpha(&self, m: f64, v: f64, p: &RuleParams) -> Option<f64> {
        let phi = p.phi;
        let phi2 = phi * phi;
        let n = v + 1.0 / (2.0 * p.c);
        let gamma = phi * (phi2 * m * m * v * v + 4.0 * n * v * (n + v * phi2)).sqrt();
        (phi > 0.0)
            .then(|| (-(2.0 * m * n + phi2 * m * v) + gamma) / (2.0 * (n * n + n * v * phi2)))
    }

    fn covariance(&self, alpha: f64, v: f64, p: &RuleParams) -> (f64, f64) {
        stdev_covariance(alpha, v, p.phi)
    }
}

/// The perceptron (Cohen's lecture, "Breaking it down: the perceptron"; multi-class as in
/// Collins 2002): on a mistake (m ≤ 0) μ_y += x and μ_r −= x, i.e. α = 1 with Σ = I.
pub struct Perceptron;

impl UpdateRule for Perceptron {
    fn signed_alpha(&self, m: f64, _v: f64, _p: &RuleParams) -> Option<f64> {
        (m <= 0.0).then_some(1.0)
    }

    fn covariance(&self, _alpha: f64, _v: f64, _p: &RuleParams) -> (f64, f64) {
        (0.0, 0.0)
    }
}

/// PA (Crammer, Dekel, Keshet, Shalev-Shwartz, Singer, JMLR 2006, eq. 6): α = ℓ/‖g‖² with the
/// hinge loss ℓ = 1 − m; with Σ = I, v = ‖g‖².
pub struct PassiveAggressive;

impl UpdateRule for PassiveAggressive {
    fn signed_alpha(&self, m: f64, v: f64, _p: &RuleParams) -> Option<f64> {
        Some((1.0 - m) / v)
    }

    fn covariance(&self, _alpha: f64, _v: f64, _p: &RuleParams) -> (f64, f64) {
        (0.0, 0.0)
    }
}

/// PA-I (JMLR 2006, eq. 6): α = min(C, ℓ/‖g‖²).
pub struct PassiveAggressive1;

impl UpdateRule for PassiveAggressive1 {
    fn signed_alpha(&self, m: f64, v: f64, p: &RuleParams) -> Option<f64> {
        Some(((1.0 - m) / v).min(p.c))
    }

    fn covariance(&self, _alpha: f64, _v: f64, _p: &RuleParams) -> (f64, f64) {
        (0.0, 0.0)
    }
}

/// PA-II (JMLR 2006, eq. 6): α = ℓ/(‖g‖² + 1/(2C)).
pub struct PassiveAggressive2;

impl UpdateRule for PassiveAggressive2 {
    fn signed_alpha(&self, m: f64, v: f64, p: &RuleParams) -> Option<f64> {
        Some((1.0 - m) / (v + 1.0 / (2.0 * p.c)))
    }

    fn covariance(&self, _alpha: f64, _v: f64, _p: &RuleParams) -> (f64, f64) {
        (0.0, 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    fn params(phi: f64) -> RuleParams {
        RuleParams {
            phi,
            r: 1.0,
            c: 1.0,
        }
    }

    /// Hand-computed: φ = 1, m = 0, v = 1. Var: α = (−1 + √9)/4 = 0.5, λ = 2αφ = 1,
    /// β = 1/(1+1) = 0.5.
    #[test]
    fn var_by_hand() {
        let s = CwVar.step(0.0, 1.0, &params(1.0));
        assert!(close(s.alpha, 0.5) && close(s.precision_gain, 1.0) && close(s.shrink, 0.5));
        // φ = 2, m = −1, v = 0.5: b = −3, disc = 9 − 16(−1 − 1) = 41, α = (3 + √41)/4.
        let s = CwVar.step(-1.0, 0.5, &params(2.0));
        assert!(close(s.alpha, (3.0 + 41f64.sqrt()) / 4.0), "{s:?}");
    }

    /// Hand-computed: φ = 1, m = 0, v = 1: ψ = 1.5, ξ = 2, α = √2/2, √u = (−√2/2 + √4.5)/2
    /// = √2/2, λ = αφ/√u = 1, β = αφ/(√u + vαφ) = 0.5.
    #[test]
    fn stdev_by_hand() {
        let s = CwStdev.step(0.0, 1.0, &params(1.0));
        let h = 0.5f64.sqrt();
        assert!(close(s.alpha, h) && close(s.precision_gain, 1.0) && close(s.shrink, 0.5));
    }

    /// Hand-computed AROW: r = 1, m = 0.5, v = 1: β = 1/2, α = 0.5·0.5 = 0.25, λ = 1/r = 1.
    /// No update at m = 1 (no hinge loss).
    #[test]
    fn arow_by_hand() {
        let s = Arow.step(0.5, 1.0, &params(1.0));
        assert!(close(s.alpha, 0.25) && close(s.shrink, 0.5) && close(s.precision_gain, 1.0));
        let p = RuleParams {
            r: 0.1,
            ..params(1.0)
        };
        let s = Arow.step(-1.0, 0.9, &p);
        assert!(close(s.alpha, 2.0) && close(s.shrink, 1.0) && close(s.precision_gain, 10.0));
        assert_eq!(Arow.step(1.0, 1.0, &params(1.0)), Step::NONE);
    }

    /// SCW-I caps CW-Stdev's α at C; SCW-II by hand: φ = 1, m = 0, v = 1, C = 0.5: n = 2,
    /// γ = √(0 + 4·2·1·3) = √24, α = √24/(2(4 + 2)) = √24/12.
    #[test]
    fn scw_by_hand() {
        let p = RuleParams {
            c: 0.5,
            ..params(1.0)
        };
        assert!(close(Scw1.step(0.0, 1.0, &p).alpha, 0.5));
        assert!(close(
            Scw1.step(0.0, 1.0, &params(1.0)).alpha,
            0.5f64.sqrt()
        ));
        let s = Scw2.step(0.0, 1.0, &p);
        assert!(close(s.alpha, 24f64.sqrt() / 12.0), "{s:?}");
        // Its covariance is CW-Stdev's for the same α.
        assert_eq!(
            (s.precision_gain, s.shrink),
            stdev_covariance(s.alpha, 1.0, 1.0)
        );
    }

    /// SCW-II tends to CW-Stdev as C grows (n → v).
    #[test]
    fn scw2_tends_to_stdev() {
        let p = RuleParams {
            c: 1e12,
            ..params(1.3)
        };
        for (m, v) in [(0.0, 1.0), (-0.7, 2.5), (0.4, 0.3)] {
            let a = Scw2.step(m, v, &p).alpha;
            let b = CwStdev.step(m, v, &p).alpha;
            assert!((a - b).abs() < 1e-6, "{m} {v}: {a} vs {b}");
        }
    }

    /// First-order rules by hand: perceptron α = 1 on m ≤ 0 only; PA ℓ/v; PA-I capped; PA-II
    /// with 1/(2C).
    #[test]
    fn first_order_by_hand() {
        let p = RuleParams {
            c: 0.1,
            ..params(1.0)
        };
        assert!(close(Perceptron.step(0.0, 2.0, &p).alpha, 1.0));
        assert_eq!(Perceptron.step(0.1, 2.0, &p), Step::NONE);
        assert!(close(PassiveAggressive.step(-1.0, 4.0, &p).alpha, 0.5));
        assert!(close(PassiveAggressive1.step(-1.0, 4.0, &p).alpha, 0.1));
        assert!(close(
            PassiveAggressive2.step(-1.0, 4.0, &p).alpha,
            2.0 / 9.0
        ));
        assert_eq!(PassiveAggressive.step(1.0, 4.0, &p), Step::NONE);
        for rule in [
            RuleKind::Perceptron,
            RuleKind::Pa,
            RuleKind::Pa1,
            RuleKind::Pa2,
        ] {
            let s = rule.rule().step(-1.0, 1.0, &p);
            assert_eq!((s.precision_gain, s.shrink), (0.0, 0.0), "{rule:?}");
        }
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
            let p = params(phi);
            let s = CwVar.step(m, v, &p);
            assert!(s.is_update());
            let v_new = v - s.shrink * v * v;
            assert!(
                (m + s.alpha * v - phi * v_new).abs() < 1e-9,
                "var {m} {v} {phi}"
            );
            let s = CwStdev.step(m, v, &p);
            assert!(s.is_update());
            let v_new = v - s.shrink * v * v;
            assert!(
                (m + s.alpha * v - phi * v_new.sqrt()).abs() < 1e-9,
                "stdev {m} {v} {phi}"
            );
            // AROW's update is its closed form: m + αv = 1 − r·α... i.e. α(v + r) = 1 − m.
            let s = Arow.step(m, v, &p);
            assert!((s.alpha * (v + p.r) - (1.0 - m)).abs() < 1e-9);
        }
    }

    #[test]
    fn no_update_when_the_constraint_already_holds() {
        // var: m = 2 ≥ φv = 1; stdev: m = 2 ≥ φ√v = 1; the soft rules likewise.
        // Every rule, so that a new one is checked too.
        for rule in RuleKind::ALL {
            assert_eq!(
                rule.rule().step(2.0, 1.0, &params(1.0)),
                Step::NONE,
                "{rule:?}"
            );
        }
    }

    #[test]
    fn degenerate_inputs_give_no_update() {
        for rule in [RuleKind::Var, RuleKind::Stdev, RuleKind::Scw2, RuleKind::Pa] {
            let rule = rule.rule();
            assert_eq!(rule.step(0.0, 0.0, &params(1.0)), Step::NONE);
            assert_eq!(rule.step(f64::NAN, 1.0, &params(1.0)), Step::NONE);
            assert_eq!(rule.step(0.0, f64::INFINITY, &params(1.0)), Step::NONE);
        }
        assert_eq!(CwVar.step(-1.0, 1.0, &params(0.0)), Step::NONE);
        assert_eq!(CwStdev.step(-1.0, 1.0, &params(0.0)), Step::NONE);
    }

    #[cfg(feature = "cli")]
    #[test]
    fn all_lists_every_rule() {
        assert_eq!(
            RuleKind::ALL.as_slice(),
            <RuleKind as clap::ValueEnum>::value_variants()
        );
    }
}
