//! Per-label probabilities from the weight Gaussian (EMNLP 2009 §7).
//!
//! Pr[y | x] is the probability that label y wins argmax_z w·f(x, z) when w ~ N(μ, Σ). Because
//! the label blocks are disjoint and Σ is diagonal, the K scores are independent Gaussians
//! s_z ~ N(μ_z·x, Σⱼ σ_zj xⱼ²) ([`ScoreGaussian`]); drawing K scalars per sample is exactly the
//! distribution of drawing the whole weight vector, at O(nnz·K + S·K) instead of O(S·nnz·K).
//!
//! The same independence gives the probabilities exactly (ALGORITHMS.md): in closed form for two
//! labels, Pr\[s₁ > s₀\] = Φ((m₁ − m₀)/√(v₀ + v₁)), and for more by one-dimensional quadrature,
//! Pr\[y\] = ∫ N(s; m_y, v_y) Π_{z≠y} Φ((s − m_z)/√v_z) ds, adaptive to a stated tolerance
//! ([`quadrature`]).

use rand::distributions::Distribution;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use statrs::distribution::Normal;

use crate::learn::learner::ScoreGaussian;

/// The default number of Gibbs samples: the standard error of a probability is at most
/// 0.5/√S ≈ 0.016.
pub const DEFAULT_SAMPLES: usize = 1000;

/// A label distribution with its normalised entropy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelDistribution {
    /// Pr[label | x], indexed like the model's labels; sums to 1.
    pub probabilities: Vec<f64>,
    /// −Σ P log P / log K, in [0, 1]: 0 is certain, 1 is uniform.
    pub entropy: f64,
}

/// How label probabilities are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Gibbs sampling (EMNLP §7): `samples` draws from a seeded generator.
    Gibbs { samples: usize, seed: u64 },
    /// The closed form for two labels, adaptive quadrature for more: every probability within
    /// [`QUADRATURE_TOLERANCE`] (10⁻⁹) of the exact value.
    Exact,
}

impl Method {
    /// The distribution of the label scores' Gaussians.
    pub fn distribution(self, gaussians: &[ScoreGaussian]) -> LabelDistribution {
        match self {
            Method::Gibbs { samples, seed } => sample_distribution(gaussians, samples, seed),
            Method::Exact => {
                let probabilities = quadrature(gaussians);
                let entropy = normalised_entropy(&probabilities);
                LabelDistribution {
                    probabilities,
                    entropy,
                }
            }
        }
    }
}

/// How far (in standard deviations) a score's distribution is followed either side of its mean:
/// Φ(−8.5) ≈ 9.5·10⁻¹⁸, so what lies beyond changes no probability by more than that per label.
const QUADRATURE_REACH: f64 = 8.5;
/// The target of the adaptive quadrature: the estimated error, summed over the labels, is at
/// most this; so is every probability's error (the tests check it against a brute-force grid).
pub const QUADRATURE_TOLERANCE: f64 = 1e-9;
/// The most pieces the adaptive rule splits the range into: a safety net it does not reach on
/// the tests' cases (standard deviations 10⁶ apart take under a hundred).
const QUADRATURE_MAX_PIECES: usize = 4096;

/// Φ(z) = ½ erfc(−z/√2), the standard normal CDF (Φ(z) = 1 in f64 above z = 8.3).
fn normal_cdf(z: f64) -> f64 {
    if z > 8.3 {
        1.0
    } else {
        0.5 * statrs::function::erf::erfc(-z * std::f64::consts::FRAC_1_SQRT_2)
    }
}

/// Pr[label z has the highest score] for independent Gaussian scores s_z ~ N(m_z, v_z), with
/// ties (possible only between point masses, v = 0) going to the lower index as in argmax.
/// Equivalent to [`quadrature_with_error`] without the error estimate.
pub fn quadrature(gaussians: &[ScoreGaussian]) -> Vec<f64> {
    quadrature_with_error(gaussians).0
}

/// The label probabilities and an estimate of their absolute error, summed over the labels
/// (0 where the answer is in closed form).
///
/// * Two labels: Pr\[s₁ > s₀\] = Φ((m₁ − m₀)/√(v₀ + v₁)), since s₁ − s₀ ~ N(m₁ − m₀, v₀ + v₁);
///   each side is its own tail, Φ(−d) and Φ(d), never 1 − Φ, so small probabilities keep their
///   relative precision. Two point masses compare as argmax does.
/// * More: labels that cannot win are dropped first. With F = max_z (m_z − 8.5σ_z), the score
///   floor some label is all but sure to exceed, a label with m + 8.5σ < F wins with
///   probability below Φ(−8.5), and its CDF is 1 within that above F. A point mass that is
///   left sits at F (its m − 0σ ≤ F ≤ its m); its probability is Π_{z≠y} Pr\[s_z < m_y\] (≤ for
///   z after y). The others are Pr\[y\] = ∫_F^H N(s; m_y, v_y) Π_{z≠y} Φ((s − m_z)/σ_z) ds
///   (ALGORITHMS.md, EMNLP 2009 §7), H = max (m + 8.5σ), a smooth integrand on (F, H): the point
///   masses are steps at F and 1 above it. All labels are integrated at once by adaptive
///   Gauss–Kronrod (7-point Gauss, 15-point Kronrod; Piessens et al., QUADPACK, 1983): the
///   range starts in pieces cut at each label's mean, and the piece with the largest error
///   estimate Σ_y |K15_y − G7_y| is halved until the estimates sum to at most
///   [`QUADRATURE_TOLERANCE`]. At each node the K integrands f_y Π_{z≠y} F_z come from prefix
///   and suffix products of the CDFs, O(K) per node. If only two labels can win, their closed
///   form is used.
///
/// The result is normalised to sum to 1 (it does within the error before that).
pub fn quadrature_with_error(gaussians: &[ScoreGaussian]) -> (Vec<f64>, f64) {
    let k = gaussians.len();
    let mut p = vec![0.0; k];
    if k == 0 {
        return (p, 0.0);
    }
    let sd = standard_deviations(gaussians);
    let floor = gaussians
        .iter()
        .zip(&sd)
        .map(|(g, s)| g.mean - QUADRATURE_REACH * s)
        .fold(f64::NEG_INFINITY, f64::max);
    let contenders: Vec<usize> = (0..k)
        .filter(|&z| gaussians[z].mean + QUADRATURE_REACH * sd[z] >= floor)
        .collect();
    let mut error = 0.0;
    match contenders[..] {
        [] => {}
        [y] => p[y] = 1.0,
        [a, b] => {
            let (pa, pb) = two_labels(gaussians[a].mean, sd[a], gaussians[b].mean, sd[b]);
            (p[a], p[b]) = (pa, pb);
        }
        _ => {
            // Point masses: a step each, all at the floor.
            for &y in contenders.iter().filter(|&&y| sd[y] == 0.0) {
                let m = gaussians[y].mean;
                p[y] = contenders
                    .iter()
                    .filter(|&&z| z != y)
                    .map(|&z| {
                        if sd[z] > 0.0 {
                            normal_cdf((m - gaussians[z].mean) / sd[z])
                        } else if gaussians[z].mean < m || (z > y && gaussians[z].mean == m) {
                            1.0
                        } else {
                            0.0
                        }
                    })
                    .product();
            }
            let smooth: Vec<(usize, f64, f64)> = contenders
                .iter()
                .filter(|&&z| sd[z] > 0.0)
                .map(|&z| (z, gaussians[z].mean, sd[z]))
                .collect();
            if !smooth.is_empty() {
                let (integrals, e) = integrate_max_density(&smooth, floor);
                for (&(z, _, _), q) in smooth.iter().zip(integrals) {
                    p[z] = q;
                }
                error = e;
            }
        }
    }
    let sum: f64 = p.iter().sum();
    if sum > 0.0 && sum.is_finite() {
        p.iter_mut().for_each(|q| *q /= sum);
    } else {
        p.iter_mut().for_each(|q| *q = 0.0);
        p[crate::learn::learner::argmax(&gaussians.iter().map(|g| g.mean).collect::<Vec<_>>())] =
            1.0;
    }
    (p, error)
}

/// Pr[s_a > s_b] and Pr[s_b > s_a] for two independent scores (one wins on a tie of two point
/// masses: the lower index, as argmax).
fn two_labels(ma: f64, sa: f64, mb: f64, sb: f64) -> (f64, f64) {
    let v = sa * sa + sb * sb;
    if v > 0.0 {
        let d = (ma - mb) / v.sqrt();
        (normal_cdf(d), normal_cdf(-d))
    } else if mb > ma {
        (0.0, 1.0)
    } else {
        (1.0, 0.0)
    }
}

/// Gauss–Kronrod 7–15 nodes on [−1, 1] (QUADPACK's qk15): the Kronrod abscissae from the
/// outside in, the last one 0; the Gauss nodes are the odd-numbered ones (1, 3, 5, 7).
#[allow(clippy::excessive_precision)] // QUADPACK's digits, as printed there.
const GK15_NODES: [f64; 8] = [
    0.991_455_371_120_812_639_206_854_697_526_329,
    0.949_107_912_342_758_524_526_189_684_047_851,
    0.864_864_423_359_769_072_789_712_788_640_926,
    0.741_531_185_599_394_439_863_864_773_280_788,
    0.586_087_235_467_691_130_294_144_845_693_013,
    0.405_845_151_377_397_166_906_606_412_076_961,
    0.207_784_955_007_898_467_600_689_403_773_245,
    0.0,
];
#[allow(clippy::excessive_precision)] // QUADPACK's digits, as printed there.
const GK15_KRONROD_WEIGHTS: [f64; 8] = [
    0.022_935_322_010_529_224_963_732_008_058_970,
    0.063_092_092_629_978_553_290_700_663_189_204,
    0.104_790_010_322_250_183_839_876_322_541_518,
    0.140_653_259_715_525_918_745_189_590_510_238,
    0.169_004_726_639_267_902_826_583_426_598_550,
    0.190_350_578_064_785_409_913_256_402_421_014,
    0.204_432_940_075_298_892_414_161_999_234_649,
    0.209_482_141_084_727_828_012_999_174_891_714,
];
/// The 7-point Gauss weights of nodes 1, 3, 5 and 7.
#[allow(clippy::excessive_precision)] // QUADPACK's digits, as printed there.
const GK15_GAUSS_WEIGHTS: [f64; 4] = [
    0.129_484_966_168_869_693_270_611_432_679_082,
    0.279_705_391_489_276_667_901_467_771_423_780,
    0.381_830_050_505_118_944_950_369_775_488_975,
    0.417_959_183_673_469_387_755_102_040_816_327,
];

/// One piece of the range with its Kronrod estimates (one per label, at `offset` in the arena)
/// and its error estimate.
#[derive(Debug, Clone, Copy)]
struct Piece {
    a: f64,
    b: f64,
    error: f64,
    offset: usize,
}

/// Scratch space and the labels' parameters for the Gauss–Kronrod rule.
struct MaxDensity<'a> {
    labels: &'a [(usize, f64, f64)],
    /// The labels still below their reach somewhere in the current piece; the others have
    /// F = 1 and f = 0 (to Φ(−8.5)) there and take no part.
    active: Vec<usize>,
    cdf: Vec<f64>,
    suffix: Vec<f64>,
    kronrod: Vec<f64>,
    gauss: Vec<f64>,
}

impl MaxDensity<'_> {
    /// The integrands f_y(s) Π_{z≠y} F_z(s) of the active labels, added with weight `wk` to the
    /// Kronrod sums and `wg` to the Gauss sums.
    fn add(&mut self, s: f64, wk: f64, wg: f64) {
        let n = self.active.len();
        for (c, &i) in self.cdf.iter_mut().zip(&self.active) {
            let (_, m, sd) = self.labels[i];
            *c = normal_cdf((s - m) / sd);
        }
        let mut after = 1.0;
        for i in (0..n).rev() {
            self.suffix[i] = after;
            after *= self.cdf[i];
        }
        let mut before = 1.0;
        let norm = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
        for i in 0..n {
            let others = before * self.suffix[i];
            before *= self.cdf[i];
            if others == 0.0 {
                continue;
            }
            let (_, m, sd) = self.labels[self.active[i]];
            let t = (s - m) / sd;
            let f = norm / sd * (-0.5 * t * t).exp() * others;
            self.kronrod[i] += wk * f;
            self.gauss[i] += wg * f;
        }
    }

    /// The Kronrod estimates over [a, b] into `out` (one per label), and the error estimate
    /// Σ_y |K_y − G_y|.
    fn piece(&mut self, a: f64, b: f64, out: &mut [f64]) -> f64 {
        self.active.clear();
        self.active.extend(
            (0..self.labels.len())
                .filter(|&i| a < self.labels[i].1 + QUADRATURE_REACH * self.labels[i].2),
        );
        let n = self.active.len();
        self.kronrod[..n].iter_mut().for_each(|x| *x = 0.0);
        self.gauss[..n].iter_mut().for_each(|x| *x = 0.0);
        let (centre, half) = (0.5 * (a + b), 0.5 * (b - a));
        for (j, (&x, &wk)) in GK15_NODES.iter().zip(&GK15_KRONROD_WEIGHTS).enumerate() {
            let wg = if j % 2 == 1 {
                GK15_GAUSS_WEIGHTS[j / 2]
            } else {
                0.0
            };
            if x == 0.0 {
                self.add(centre, wk, wg);
            } else {
                self.add(centre - half * x, wk, wg);
                self.add(centre + half * x, wk, wg);
            }
        }
        out.iter_mut().for_each(|o| *o = 0.0);
        let mut error = 0.0;
        for (i, &y) in self.active.iter().enumerate() {
            out[y] = self.kronrod[i] * half;
            error += (self.kronrod[i] - self.gauss[i]).abs() * half;
        }
        error
    }
}

/// ∫ over [floor, H] of every label's f_y Π_{z≠y} F_z by globally adaptive Gauss–Kronrod (see
/// [`quadrature_with_error`]); `labels` are (index, mean, standard deviation > 0).
fn integrate_max_density(labels: &[(usize, f64, f64)], floor: f64) -> (Vec<f64>, f64) {
    let n = labels.len();
    let top = labels
        .iter()
        .map(|&(_, m, s)| m + QUADRATURE_REACH * s)
        .fold(f64::NEG_INFINITY, f64::max);
    if !(top > floor && floor.is_finite() && top.is_finite()) {
        return (vec![0.0; n], 0.0);
    }
    // Every label's density must meet pieces narrow enough for its nodes to see it: cut at
    // m + jσ for j = 0, ±2.5, ±5, ±8 (beyond 8σ lies Φ(−8) ≈ 6·10⁻¹⁶), skipping a cut within
    // 1.5σ of that label past the last one kept, so that each label's pieces are at most 4.5σ
    // wide and labels of like scale share their cuts. Adaptivity refines from there.
    let mut candidates: Vec<(f64, f64)> = labels
        .iter()
        .flat_map(|&(_, m, s)| [-8.0, -5.0, -2.5, 0.0, 2.5, 5.0, 8.0].map(|j| (m + j * s, 1.5 * s)))
        .filter(|&(c, _)| c > floor && c < top)
        .collect();
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut cuts = vec![floor];
    for (c, gap) in candidates {
        if c - cuts[cuts.len() - 1] >= gap {
            cuts.push(c);
        }
    }
    if top - cuts[cuts.len() - 1] > 0.0 {
        cuts.push(top);
    }
    let mut rule = MaxDensity {
        labels,
        active: Vec::with_capacity(n),
        cdf: vec![0.0; n],
        suffix: vec![0.0; n],
        kronrod: vec![0.0; n],
        gauss: vec![0.0; n],
    };
    let mut arena: Vec<f64> = Vec::with_capacity(n * 4 * cuts.len());
    let mut pieces: Vec<Piece> = Vec::with_capacity(4 * cuts.len());
    let evaluate = |a: f64, b: f64, arena: &mut Vec<f64>, rule: &mut MaxDensity| {
        let offset = arena.len();
        arena.resize(offset + n, 0.0);
        let error = rule.piece(a, b, &mut arena[offset..]);
        Piece {
            a,
            b,
            error,
            offset,
        }
    };
    for w in cuts.windows(2) {
        pieces.push(evaluate(w[0], w[1], &mut arena, &mut rule));
    }
    // The error of pieces too small to halve in f64 (never seen; kept in the estimate).
    let mut stuck = 0.0;
    loop {
        let total: f64 = pieces.iter().map(|p| p.error).sum();
        if total <= QUADRATURE_TOLERANCE || pieces.len() >= QUADRATURE_MAX_PIECES {
            break;
        }
        let worst = (0..pieces.len())
            .max_by(|&i, &j| pieces[i].error.total_cmp(&pieces[j].error))
            .expect("at least one piece");
        let Piece { a, b, .. } = pieces[worst];
        let mid = 0.5 * (a + b);
        if !(a < mid && mid < b) {
            // The piece is as small as f64 allows: its estimate stays.
            stuck += pieces[worst].error;
            pieces[worst].error = 0.0;
            continue;
        }
        pieces[worst] = evaluate(a, mid, &mut arena, &mut rule);
        pieces.push(evaluate(mid, b, &mut arena, &mut rule));
    }
    let mut integrals = vec![0.0; n];
    let mut error = 0.0;
    for piece in &pieces {
        for (q, x) in integrals
            .iter_mut()
            .zip(&arena[piece.offset..piece.offset + n])
        {
            *q += x;
        }
        error += piece.error;
    }
    (integrals, error + stuck)
}

/// Estimates the label distribution from `samples` draws, seeded so that the same input gives
/// the same answer.
pub fn sample_distribution(
    gaussians: &[ScoreGaussian],
    samples: usize,
    seed: u64,
) -> LabelDistribution {
    let probabilities = gibbs_probabilities(gaussians, samples, seed);
    let entropy = normalised_entropy(&probabilities);
    LabelDistribution {
        probabilities,
        entropy,
    }
}

/// Monte Carlo estimate of Pr[argmax = z] for independent Gaussian scores.
///
/// The draws depend only on the seed, not on the scores: `samples` × K labels take the first
/// samples × K standard normals of the seed's stream, so a document classified with the
/// default seed uses the draws of the one before it, whatever model it is. So each thread
/// keeps the start of the streams of the seeds it sees again ([`DrawCache`]) and reads them
/// instead of drawing them again: the same numbers in the same order, so the same counts,
/// without the generator's cost (about a tenth of a served request).
pub fn gibbs_probabilities(gaussians: &[ScoreGaussian], samples: usize, seed: u64) -> Vec<f64> {
    if gaussians.is_empty() {
        return Vec::new();
    }
    let samples = samples.max(1);
    let stdevs = standard_deviations(gaussians);
    let n = samples.checked_mul(gaussians.len());
    let wins = DRAWS.with_borrow_mut(|cache| match n.and_then(|n| cache.draws(seed, n)) {
        Some(table) => count_kept_wins(gaussians, &stdevs, table),
        None => count_wins(gaussians, &stdevs, samples, standard_normal_draws(seed)),
    });
    wins.into_iter()
        .map(|w| w as f64 / samples as f64)
        .collect()
}

/// The standard normal draws of `seed`, one per call: what the sampler consumes, kept or not.
fn standard_normal_draws(seed: u64) -> impl FnMut() -> f64 {
    let standard = Normal::new(0.0, 1.0).expect("the standard normal is valid");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    move || standard.sample(&mut rng)
}

/// The most draws a thread keeps in all (8 MiB): `--samples` in the millions over many labels
/// is drawn as it goes instead.
const MAX_KEPT_DRAWS: usize = 1 << 20;
/// The most seeds a thread keeps the draws of, and the most missed seeds it remembers: every
/// model shares a seed's draws, so this is for callers that change the seed (`sample_seed`
/// per request) among a few.
const MAX_KEPT_SEEDS: usize = 4;

thread_local! {
    static DRAWS: std::cell::RefCell<DrawCache> = const { std::cell::RefCell::new(DrawCache::new()) };
}

/// The start of one seed's stream of standard normals, and its generator to draw further.
struct KeptStream {
    seed: u64,
    draws: Vec<f64>,
    more: Box<dyn FnMut() -> f64>,
}

/// One thread's kept standard normal draws, by seed: each the first draws of the seed's
/// stream, as long as the longest asked for (samples × labels), so one serves every model and
/// sample count of that seed.
struct DrawCache {
    /// The kept streams, the most recently read last.
    kept: Vec<KeptStream>,
    /// The last seeds asked for that were not kept, the newest last. A seed is kept the second
    /// time it is asked for among them, so a caller that seeds every document differently
    /// (calibration's fit) never pays for filling a table it does not read again.
    missed: Vec<u64>,
}

impl DrawCache {
    const fn new() -> DrawCache {
        DrawCache {
            kept: Vec::new(),
            missed: Vec::new(),
        }
    }

    /// The kept seeds and how many draws of each are kept.
    #[cfg(test)]
    fn kept_seeds(&self) -> Vec<(u64, usize)> {
        self.kept.iter().map(|k| (k.seed, k.draws.len())).collect()
    }

    /// The first `n` draws of `seed`, if kept (or worth keeping now).
    fn draws(&mut self, seed: u64, n: usize) -> Option<&[f64]> {
        if n > MAX_KEPT_DRAWS {
            return None;
        }
        if let Some(i) = self.kept.iter().position(|k| k.seed == seed) {
            let stream = self.kept.remove(i);
            self.kept.push(stream);
        } else if let Some(i) = self.missed.iter().position(|&s| s == seed) {
            self.missed.remove(i);
            if self.kept.len() == MAX_KEPT_SEEDS {
                self.kept.remove(0);
            }
            self.kept.push(KeptStream {
                seed,
                draws: Vec::new(),
                more: Box::new(standard_normal_draws(seed)),
            });
        } else {
            if self.missed.len() == MAX_KEPT_SEEDS {
                self.missed.remove(0);
            }
            self.missed.push(seed);
            return None;
        }
        // Longer draws for this seed push the least recently read others out of the budget.
        let (stream, others) = self.kept.split_last().expect("the stream just read");
        let mut total =
            others.iter().map(|k| k.draws.len()).sum::<usize>() + stream.draws.len().max(n);
        while total > MAX_KEPT_DRAWS {
            total -= self.kept.remove(0).draws.len();
        }
        let stream = self.kept.last_mut().expect("the stream just read");
        let more = &mut stream.more;
        let have = stream.draws.len();
        stream.draws.extend((have..n).map(|_| more()));
        Some(&stream.draws[..n])
    }
}

/// How often each label's sampled score is the highest, from standard normal draws taken in
/// order (sample by sample, label by label).
fn count_wins(
    gaussians: &[ScoreGaussian],
    stdevs: &[f64],
    samples: usize,
    mut draw: impl FnMut() -> f64,
) -> Vec<usize> {
    if gaussians.len() == 2 && gaussians[0].mean.is_finite() {
        let pairs = (0..samples).map(|_| {
            let z0 = draw();
            (z0, draw())
        });
        two_label_wins(gaussians, stdevs, samples, pairs)
    } else {
        wins(gaussians, stdevs, samples, draw)
    }
}

/// [`count_wins`] of draws already taken (a seed's kept draws, `samples × labels` of them):
/// the two-label loop then reads the pairs straight from the slice, with no call per draw
/// (`gibbs_probabilities` of a two-label model at 1,000 samples: 17,900 → 7,000 instructions,
/// callgrind).
fn count_kept_wins(gaussians: &[ScoreGaussian], stdevs: &[f64], draws: &[f64]) -> Vec<usize> {
    let samples = draws.len() / gaussians.len();
    if gaussians.len() == 2 && gaussians[0].mean.is_finite() {
        let pairs = draws.chunks_exact(2).map(|z| (z[0], z[1]));
        two_label_wins(gaussians, stdevs, samples, pairs)
    } else {
        let mut z = draws.iter().copied();
        wins(gaussians, stdevs, samples, move || {
            z.next().expect("the table holds samples × labels draws")
        })
    }
}

/// How often each label's sampled score is the highest (the first one on ties).
fn wins(
    gaussians: &[ScoreGaussian],
    stdevs: &[f64],
    samples: usize,
    mut draw: impl FnMut() -> f64,
) -> Vec<usize> {
    let mut wins = vec![0usize; gaussians.len()];
    for _ in 0..samples {
        let mut best = (0, f64::NEG_INFINITY);
        for (z, (g, sd)) in gaussians.iter().zip(stdevs).enumerate() {
            let s = g.mean + sd * draw();
            if s > best.1 {
                best = (z, s);
            }
        }
        wins[best.0] += 1;
    }
    wins
}

/// [`wins`] written out for two labels (a spam filter's case), 40% faster, from `samples`
/// pairs of draws (the first label's, the second's): the same counts when the first label's
/// mean is finite, since its score is then finite and always the best before the second is
/// compared.
fn two_label_wins(
    gaussians: &[ScoreGaussian],
    stdevs: &[f64],
    samples: usize,
    pairs: impl Iterator<Item = (f64, f64)>,
) -> Vec<usize> {
    let (m0, m1) = (gaussians[0].mean, gaussians[1].mean);
    let (d0, d1) = (stdevs[0], stdevs[1]);
    let second = pairs
        .filter(|&(z0, z1)| m1 + d1 * z1 > m0 + d0 * z0)
        .count();
    vec![samples - second, second]
}

/// The standard deviation of each score; 0 for a zero or non-finite variance (a point mass).
fn standard_deviations(gaussians: &[ScoreGaussian]) -> Vec<f64> {
    gaussians
        .iter()
        .map(|g| {
            if g.variance > 0.0 && g.variance.is_finite() {
                g.variance.sqrt()
            } else {
                0.0
            }
        })
        .collect()
}

/// −Σ P log P / log K; 0 for a single label.
pub fn normalised_entropy(p: &[f64]) -> f64 {
    if p.len() < 2 {
        return 0.0;
    }
    let h: f64 = p.iter().filter(|&&q| q > 0.0).map(|&q| -q * q.ln()).sum();
    // A certain distribution sums to −0.0; report it as 0 (JSON would print "-0.0").
    (h / (p.len() as f64).ln()).clamp(0.0, 1.0) + 0.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use statrs::distribution::ContinuousCDF;

    fn g(mean: f64, variance: f64) -> ScoreGaussian {
        ScoreGaussian { mean, variance }
    }

    /// The two-label path gives, draw for draw, what the loop over any number of labels gives:
    /// the same counts, so `classify`'s answers do not change. Zero, huge and tiny variances,
    /// equal means, and (through `gibbs_probabilities`) infinite and NaN means.
    #[test]
    fn the_two_label_path_counts_as_the_general_loop() {
        let mut rng = ChaCha8Rng::seed_from_u64(99);
        let mut cases = vec![
            [g(0.0, 0.0), g(0.0, 0.0)],
            [g(1.0, 0.0), g(0.5, 1.0)],
            [g(0.2, 1e300), g(0.1, 1e-300)],
            [g(f64::INFINITY, 1.0), g(0.0, 1.0)],
            [g(f64::NEG_INFINITY, 1.0), g(0.0, 1.0)],
            [g(f64::NAN, 1.0), g(0.0, 1.0)],
            [g(0.0, 1.0), g(f64::NAN, 1.0)],
            [g(0.0, f64::NAN), g(0.0, -1.0)],
        ];
        for _ in 0..200 {
            use rand::Rng;
            cases.push([
                g(rng.gen_range(-2.0..2.0), rng.gen_range(0.0..2.0)),
                g(rng.gen_range(-2.0..2.0), rng.gen_range(0.0..2.0)),
            ]);
        }
        for (i, gs) in cases.iter().enumerate() {
            let stdevs = standard_deviations(gs);
            for samples in [1, 1000] {
                let want = wins(gs, &stdevs, samples, standard_normal_draws(i as u64));
                let got: Vec<usize> = gibbs_probabilities(gs, samples, i as u64)
                    .iter()
                    .map(|p| (p * samples as f64).round() as usize)
                    .collect();
                assert_eq!(want, got, "case {i} {gs:?}");
                if gs[0].mean.is_finite() {
                    let two = count_wins(gs, &stdevs, samples, standard_normal_draws(i as u64));
                    assert_eq!(want, two, "case {i}");
                    let mut draw = standard_normal_draws(i as u64);
                    let kept: Vec<f64> = (0..2 * samples).map(|_| draw()).collect();
                    assert_eq!(want, count_kept_wins(gs, &stdevs, &kept), "case {i}");
                }
            }
        }
    }

    /// Kept draws give, call after call, the counts of drawing afresh: for 2, 3 and 20 labels,
    /// a repeated seed (drawn, then kept, then read), seeds that change every call (never
    /// kept), keys that alternate, and a key too large to keep.
    #[test]
    fn kept_draws_count_as_fresh_draws() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut scores = |k: usize| -> Vec<ScoreGaussian> {
            use rand::Rng;
            (0..k)
                .map(|_| g(rng.gen_range(-1.0..1.0), rng.gen_range(0.0..1.0)))
                .collect()
        };
        let fresh = |gs: &[ScoreGaussian], samples: usize, seed: u64| -> Vec<f64> {
            let counts = wins(
                gs,
                &standard_deviations(gs),
                samples,
                standard_normal_draws(seed),
            );
            counts.iter().map(|&w| w as f64 / samples as f64).collect()
        };
        let mut calls: Vec<(Vec<ScoreGaussian>, usize, u64)> = Vec::new();
        for k in [2, 3, 20] {
            for _ in 0..5 {
                calls.push((scores(k), 1000, 0));
            }
            for seed in 0..4 {
                calls.push((scores(k), 300, seed));
            }
            for i in 0..6 {
                calls.push((scores(k), 200 + i % 2, 9));
            }
        }
        for _ in 0..3 {
            calls.push((scores(2), MAX_KEPT_DRAWS / 2 + 1, 1));
        }
        for (i, (gs, samples, seed)) in calls.iter().enumerate() {
            assert_eq!(
                gibbs_probabilities(gs, *samples, *seed),
                fresh(gs, *samples, *seed),
                "call {i}: {} labels, {samples} samples, seed {seed}",
                gs.len()
            );
        }
        // The repeated default seed is kept; the too-large call never is.
        DRAWS.with_borrow(|cache| assert!(cache.kept_seeds().iter().any(|k| k.0 == 0)));
    }

    /// A thread that serves two models (a spam filter of 2 labels and a topic router of 20,
    /// requests interleaved) keeps the draws of both, not drawn afresh for every request: one
    /// kept stream of the seed, as long as the router's draws, whose start is the filter's.
    /// Each call still counts as fresh draws do.
    #[test]
    fn two_models_in_turn_keep_their_draws() {
        std::thread::spawn(|| {
            let spam = [g(0.3, 0.5), g(-0.2, 0.4)];
            let topics: Vec<ScoreGaussian> = (0..20).map(|z| g(0.01 * z as f64, 0.2)).collect();
            for _ in 0..4 {
                for gs in [&spam[..], &topics[..]] {
                    let want = wins(gs, &standard_deviations(gs), 1000, standard_normal_draws(0));
                    let got: Vec<usize> = gibbs_probabilities(gs, 1000, 0)
                        .iter()
                        .map(|p| (p * 1000.0).round() as usize)
                        .collect();
                    assert_eq!(want, got);
                }
            }
            let kept = DRAWS.with_borrow(|cache| cache.kept_seeds());
            assert_eq!(kept, [(0, 1000 * 20)]);
        })
        .join()
        .unwrap();
    }

    /// Two labels: Pr[s₀ > s₁] = Φ((m₀ − m₁)/√(v₀ + v₁)). Within three standard errors.
    #[test]
    fn two_labels_match_the_normal_cdf() {
        let gs = [g(0.4, 0.3), g(0.0, 0.5)];
        let n = 20_000;
        let p = gibbs_probabilities(&gs, n, 7);
        let want = Normal::new(0.0, 1.0).unwrap().cdf(0.4 / 0.8f64.sqrt());
        let se = (want * (1.0 - want) / n as f64).sqrt();
        assert!((p[0] - want).abs() < 3.0 * se, "{} vs {want}", p[0]);
        assert!((p[0] + p[1] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn same_seed_same_answer_and_degenerate_variances() {
        let gs = [g(1.0, 0.0), g(0.0, 0.0), g(0.5, 0.0)];
        assert_eq!(gibbs_probabilities(&gs, 100, 1), vec![1.0, 0.0, 0.0]);
        let gs = [g(0.1, 1.0), g(0.0, 1.0), g(0.2, 1.0)];
        assert_eq!(
            gibbs_probabilities(&gs, 500, 3),
            gibbs_probabilities(&gs, 500, 3)
        );
    }

    #[test]
    fn quadrature_handles_point_masses() {
        assert_eq!(quadrature(&[g(1.0, 0.0), g(0.0, 0.0)]), vec![1.0, 0.0]);
        assert_eq!(quadrature(&[g(0.0, 0.0), g(0.0, 0.0)]), vec![1.0, 0.0]);
        let p = quadrature(&[g(0.0, 0.0), g(0.0, 1.0)]);
        assert!((p[0] - 0.5).abs() < 1e-9, "{p:?}");
    }

    fn phi(x: f64) -> f64 {
        Normal::new(0.0, 1.0).unwrap().cdf(x)
    }

    /// Two labels against the closed form at many m/√v, including the binary formulation (label 0
    /// a point mass, label 1 N(m, v)) and standard deviations 10³ and 10⁶ apart: each probability
    /// within 10⁻¹² of itself, relatively, so the far tail (Φ(−8) ≈ 6·10⁻¹⁶) is right too. (The
    /// trapezoid rule missed by 4·10⁻⁵ at m/√v = −1.)
    #[test]
    fn two_labels_are_the_normal_cdf_exactly() {
        for t in [-8.0, -6.0, -3.0, -1.0, -0.1, 0.0, 0.3, 1.0, 2.5, 5.0] {
            for (s0, s1) in [(0.0, 1.0), (1.0, 1.0), (1e-3, 1.0), (1.0, 1e3), (1e-6, 1.0)] {
                let v = s0 * s0 + s1 * s1;
                let gs = [g(0.25, s0 * s0), g(0.25 + t * v.sqrt(), s1 * s1)];
                let p = quadrature(&gs);
                let want = [phi(-t), phi(t)];
                for z in 0..2 {
                    assert!(
                        (p[z] - want[z]).abs() <= 1e-12 * want[z],
                        "t {t} σ {s0}, {s1} label {z}: {} vs {}",
                        p[z],
                        want[z]
                    );
                }
            }
        }
    }

    /// The reference for K > 2: Pr[y] = ∫ N(s; m_y, v_y) Π_{z≠y} Pr[s_z below s] ds by composite
    /// Simpson on pieces cut at every m_z + jσ_z, j = −10 … 10, each with steps of at most σ/100
    /// for the smallest σ of the labels around (within 10σ of) it, so that the error is of order
    /// (1/100)⁴/180 ≈ 10⁻¹⁰ relative. Point masses are steps (ties to the lower index): they start
    /// the integral and have probability Π Pr[s_z below m_y].
    fn brute_force(gs: &[ScoreGaussian]) -> Vec<f64> {
        let k = gs.len();
        let sd: Vec<f64> = gs.iter().map(|g| g.variance.sqrt()).collect();
        let reach = |z: usize| (gs[z].mean - 10.0 * sd[z], gs[z].mean + 10.0 * sd[z]);
        let lo = (0..k).map(|z| reach(z).0).fold(f64::MIN, f64::max);
        let hi = (0..k).map(|z| reach(z).1).fold(f64::MIN, f64::max);
        let below = |z: usize, s: f64, strict: bool| {
            if sd[z] > 0.0 {
                phi((s - gs[z].mean) / sd[z])
            } else if gs[z].mean < s || (!strict && gs[z].mean == s) {
                1.0
            } else {
                0.0
            }
        };
        let mut p = vec![0.0; k];
        for y in (0..k).filter(|&y| sd[y] == 0.0) {
            p[y] = (0..k)
                .filter(|&z| z != y)
                .map(|z| below(z, gs[y].mean, z < y))
                .product();
        }
        let mut cuts = vec![lo, hi];
        for z in 0..k {
            for j in -10..=10 {
                let c = gs[z].mean + j as f64 * sd[z];
                if c > lo && c < hi {
                    cuts.push(c);
                }
            }
        }
        cuts.sort_by(f64::total_cmp);
        cuts.dedup();
        // The integrand of every continuous label at s, by direct products.
        let density = |s: f64, out: &mut [f64]| {
            let below: Vec<f64> = (0..k).map(|z| below(z, s, false)).collect();
            for y in (0..k).filter(|&y| sd[y] > 0.0) {
                let t = (s - gs[y].mean) / sd[y];
                let others: f64 = (0..k).filter(|&z| z != y).map(|z| below[z]).product();
                out[y] =
                    (-0.5 * t * t).exp() / (sd[y] * (2.0 * std::f64::consts::PI).sqrt()) * others;
            }
        };
        let mut f = vec![0.0; k];
        for w in cuts.windows(2) {
            let local = (0..k)
                .filter(|&z| sd[z] > 0.0 && reach(z).0 < w[1] && reach(z).1 > w[0])
                .map(|z| sd[z])
                .fold(f64::INFINITY, f64::min);
            if !local.is_finite() {
                continue;
            }
            let n = 2 * ((50.0 * (w[1] - w[0]) / local).ceil() as usize).max(1);
            let h = (w[1] - w[0]) / n as f64;
            for i in 0..=n {
                // Inside the open piece only: a point mass at its left end is a step there.
                let s = match i {
                    0 => w[0] + 1e-9 * h,
                    i if i == n => w[1] - 1e-9 * h,
                    i => w[0] + i as f64 * h,
                };
                density(s, &mut f);
                let weight = if i == 0 || i == n {
                    1.0
                } else if i % 2 == 1 {
                    4.0
                } else {
                    2.0
                };
                for y in 0..k {
                    if sd[y] > 0.0 {
                        p[y] += f[y] * weight * h / 3.0;
                    }
                }
            }
        }
        p
    }

    /// Cases for K > 2: standard deviations 10³ and 10⁶ apart, point masses (at the top, below
    /// it, tied with each other), identical labels, and many labels of which few can win.
    fn hard_cases() -> Vec<Vec<ScoreGaussian>> {
        vec![
            vec![g(0.0, 1.0), g(0.5, 1e-6), g(-0.3, 1e6)],
            vec![g(0.0, 1.0), g(0.001, 1e-12), g(0.2, 1e-6), g(-0.5, 4.0)],
            vec![g(1.0, 1e-12), g(0.0, 1e-6), g(-2e3, 1e6), g(0.9, 1.0)],
            vec![g(0.0, 0.0), g(0.3, 1.0), g(-0.2, 0.5)],
            vec![g(0.0, 0.0), g(0.0, 0.0), g(0.1, 1.0), g(-0.1, 1e-6)],
            vec![g(-1.0, 0.0), g(0.5, 0.0), g(0.2, 0.01), g(0.6, 1e-4)],
            vec![g(0.2, 0.3), g(0.2, 0.3), g(0.2, 0.3)],
            vec![
                g(0.3, 0.2),
                g(0.1, 0.05),
                g(0.5, 0.6),
                g(-0.2, 0.01),
                g(0.35, 4e-4),
                g(-3.0, 0.1),
            ],
            (0..40)
                .map(|z| g(0.05 * z as f64 - 1.0, 0.02 + 0.01 * (z % 7) as f64))
                .collect(),
        ]
    }

    /// K > 2 against the brute-force grid: every probability within 10⁻⁹, the stated tolerance,
    /// and so is the error estimate (measured: at most 1.4·10⁻¹¹ off); the same ties (identical
    /// labels get equal shares, tied point masses go to the first).
    #[test]
    fn quadrature_matches_a_brute_force_grid() {
        for gs in hard_cases() {
            let (p, estimate) = quadrature_with_error(&gs);
            assert!(estimate <= QUADRATURE_TOLERANCE, "{estimate}: {gs:?}");
            let want = brute_force(&gs);
            let total: f64 = want.iter().sum();
            assert!(
                (total - 1.0).abs() < 1e-10,
                "reference sums to {total}: {gs:?}"
            );
            for z in 0..gs.len() {
                assert!(
                    (p[z] - want[z]).abs() < QUADRATURE_TOLERANCE,
                    "label {z}: {} vs {} ({gs:?})",
                    p[z],
                    want[z]
                );
            }
        }
        let p = quadrature(&[g(0.2, 0.3), g(0.2, 0.3), g(0.2, 0.3)]);
        assert!(p.iter().all(|q| (q - 1.0 / 3.0).abs() < 1e-12), "{p:?}");
        let p = quadrature(&[g(0.0, 0.0), g(0.0, 0.0), g(0.1, 1.0), g(-0.1, 1e-6)]);
        assert_eq!(p[1], 0.0, "the tie between point masses goes to the first");
        let p = quadrature(&hard_cases()[7]);
        assert_eq!(p[5], 0.0, "a label 8.5σ below another's floor cannot win");
    }

    /// K > 2 against 100,000 Gibbs samples, an independent check of what is integrated (ties,
    /// point masses, the dropped labels); precision is the brute-force test's. Within 4.5
    /// standard errors √(p(1 − p)/n), at most 7.1·10⁻³ at p = ½; where p is 0 to 10⁻¹⁵, no
    /// sample may win. (The 40-label case is left out: 4 million draws take seconds in debug.)
    #[test]
    fn quadrature_agrees_with_a_large_gibbs_sample() {
        let n = 100_000;
        for (i, gs) in hard_cases().iter().enumerate().take(8) {
            let exact = quadrature(gs);
            let gibbs = gibbs_probabilities(gs, n, 17 + i as u64);
            for (z, (e, s)) in exact.iter().zip(&gibbs).enumerate() {
                let se = (e * (1.0 - e) / n as f64).sqrt();
                assert!(
                    (e - s).abs() <= 4.5 * se,
                    "case {i} label {z}: exact {e} vs Gibbs {s}"
                );
            }
        }
    }

    #[test]
    fn entropy_is_normalised() {
        assert_eq!(normalised_entropy(&[1.0, 0.0, 0.0]), 0.0);
        assert!(
            normalised_entropy(&[0.0, 1.0]).is_sign_positive(),
            "no negative zero"
        );
        assert!((normalised_entropy(&[0.25; 4]) - 1.0).abs() < 1e-12);
        // −(0.5 ln 0.5 + 0.5 ln 0.5)/ln 3 = ln 2/ln 3.
        assert!((normalised_entropy(&[0.5, 0.5, 0.0]) - 2f64.ln() / 3f64.ln()).abs() < 1e-12);
        assert_eq!(normalised_entropy(&[1.0]), 0.0);
    }
}
