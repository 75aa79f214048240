//! The exact diagonal update (Crammer, Dredze, Pereira, JMLR 2012 §6.2).
//!
//! With Σ kept diagonal during the derivation, α has no closed form: it is the root of
//!
//! * var, eq. 33: f(α) = m + αv − Σₚ φ sₚ / (1 + 2αφ sₚ),
//! * stdev, eq. 34: g(α) = m + αv − Σₚ φ² sₚ / (m + αv + αφ² sₚ),
//!
//! where sₚ = σₚ gₚ² runs over every coordinate the constraint touches (v = Σₚ sₚ). Both have the
//! form h(α) = m + αv − Σₚ aₚ/(b + cₚα), and Lemma 3 shows that on [L, ∞) with L = max(0, −m/v)
//! h is strictly increasing, h(L) ≤ 0, and h(U) > 0 for U = max(a, b) with a = max(0, −2m/v) and
//! b = maxₚ 2d·φsₚ/v (var) or maxₚ 2d·φ²sₚ/v (stdev), d the number of coordinates. So bisection
//! on [L, U] finds the unique root. The covariance then follows in precision form:
//! var 1/σₚ ← 1/σₚ + 2αφ gₚ²; stdev 1/σₚ ← 1/σₚ + αφ²/(m + αv)·gₚ² (from 1/Υ² = 1/Υᵢ² +
//! αφx²/√(xᵀΥ²x) and the KKT condition m + αv = φ√(xᵀΥ²x)).

use super::rule::{RuleKind, Step};

/// Bisection stops when the bracket is this narrow relative to its upper end.
const RELATIVE_TOLERANCE: f64 = 1e-13;
/// And after at most this many halvings (2⁻²⁰⁰ of any bracket is below f64 resolution).
const MAX_BISECTIONS: usize = 200;

/// A root of eq. 33 / 34 with its bracket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExactRoot {
    pub alpha: f64,
    /// Lemma 3's bracket [L, U].
    pub lower: f64,
    pub upper: f64,
}

/// h(α) of eq. 33 (var) or eq. 34 (stdev) for the terms sₚ = σₚgₚ².
pub fn h(rule: RuleKind, alpha: f64, m: f64, v: f64, phi: f64, terms: &[f64]) -> f64 {
    let base = m + alpha * v;
    let sum: f64 = match rule {
        RuleKind::Var => terms
            .iter()
            .map(|&s| phi * s / (1.0 + 2.0 * alpha * phi * s))
            .sum(),
        _ => terms
            .iter()
            .map(|&s| phi * phi * s / (base + alpha * phi * phi * s))
            .sum(),
    };
    base - sum
}

/// Solves eq. 33 (var) or eq. 34 (stdev). `None` when the constraint already holds (no update),
/// when v = 0, or for a rule without an exact diagonal form.
pub fn solve(rule: RuleKind, m: f64, v: f64, phi: f64, terms: &[f64]) -> Option<ExactRoot> {
    if !(m.is_finite() && v.is_finite() && v > 0.0 && phi > 0.0) {
        return None;
    }
    let holds = match rule {
        RuleKind::Var => m >= phi * v,
        RuleKind::Stdev => m >= phi * v.sqrt(),
        _ => return None,
    };
    if holds {
        return None;
    }
    let lower = (-m / v).max(0.0);
    let a = (-2.0 * m / v).max(0.0);
    let d = terms.len() as f64;
    let scale = if rule == RuleKind::Var {
        phi
    } else {
        phi * phi
    };
    let b = terms
        .iter()
        .map(|&s| 2.0 * d * scale * s / v)
        .fold(0.0, f64::max);
    let upper = a.max(b).max(lower);
    let (mut lo, mut hi) = (lower, upper);
    for _ in 0..MAX_BISECTIONS {
        if hi - lo <= RELATIVE_TOLERANCE * hi {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if h(rule, mid, m, v, phi, terms) > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let alpha = 0.5 * (lo + hi);
    (alpha > 0.0 && alpha.is_finite()).then_some(ExactRoot {
        alpha,
        lower,
        upper,
    })
}

/// The step of the exact diagonal update: α from [`solve`], λ in `precision_gain`.
pub fn step(rule: RuleKind, m: f64, v: f64, phi: f64, terms: &[f64]) -> Step {
    let Some(root) = solve(rule, m, v, phi, terms) else {
        return Step::NONE;
    };
    let alpha = root.alpha;
    let precision_gain = match rule {
        RuleKind::Var => 2.0 * alpha * phi,
        _ => alpha * phi * phi / (m + alpha * v),
    };
    if precision_gain.is_finite() && precision_gain > 0.0 {
        Step {
            alpha,
            precision_gain,
            shrink: 0.0,
        }
    } else {
        Step::NONE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CASES: &[(f64, &[f64], f64)] = &[
        (0.0, &[1.0], 1.0),
        (-0.5, &[0.2, 0.7, 0.05], 1.64),
        (0.1, &[3.0, 0.01], 2.33),
        (-3.0, &[0.5; 12], 0.5),
        (0.2, &[1e-4, 2.0, 0.3, 0.3], 1.0),
    ];

    /// Lemma 3: the root lies in [L, U], h(L) ≤ 0 < h(U), and h(α) = 0 within tolerance.
    #[test]
    fn root_is_bracketed_and_solves_the_equation() {
        for rule in [RuleKind::Var, RuleKind::Stdev] {
            for &(m, terms, phi) in CASES {
                let v: f64 = terms.iter().sum();
                let root = solve(rule, m, v, phi, terms).expect("violated constraint");
                assert!(
                    root.lower <= root.alpha && root.alpha <= root.upper,
                    "{root:?}"
                );
                assert!(h(rule, root.upper, m, v, phi, terms) > 0.0);
                // At L itself h may be −∞ (stdev with m = 0): look just above it.
                let above = root.lower + 1e-12 * (1.0 + root.lower);
                assert!(h(rule, above, m, v, phi, terms) <= 0.0 || root.alpha - root.lower < 1e-9);
                let residual = h(rule, root.alpha, m, v, phi, terms);
                assert!(
                    residual.abs() < 1e-9 * (1.0 + m.abs() + v),
                    "{rule:?} {residual}"
                );
            }
        }
    }

    /// With one coordinate the diagonal is the whole matrix, so the exact diagonal update is the
    /// full update: α equals the closed form of Lemma 1 / Lemma 2.
    #[test]
    fn one_coordinate_matches_the_closed_form() {
        use crate::learner::rule::RuleParams;
        for &(m, s, phi) in &[(0.0, 1.0, 1.0), (-0.4, 0.3, 1.64), (0.2, 2.0, 0.8)] {
            let p = RuleParams {
                phi,
                r: 1.0,
                c: 1.0,
            };
            for rule in [RuleKind::Var, RuleKind::Stdev] {
                let exact = step(rule, m, s, phi, &[s]);
                let closed = rule.rule().step(m, s, &p);
                assert!(
                    (exact.alpha - closed.alpha).abs() < 1e-9,
                    "{rule:?} {m} {s}"
                );
                assert!((exact.precision_gain - closed.precision_gain).abs() < 1e-8);
            }
        }
    }

    #[test]
    fn no_update_when_the_constraint_holds_or_v_is_zero() {
        assert!(solve(RuleKind::Var, 2.0, 1.0, 1.0, &[1.0]).is_none());
        assert!(solve(RuleKind::Stdev, 2.0, 1.0, 1.0, &[1.0]).is_none());
        assert!(solve(RuleKind::Stdev, 0.0, 0.0, 1.0, &[]).is_none());
        assert!(solve(RuleKind::Arow, 0.0, 1.0, 1.0, &[1.0]).is_none());
    }
}
