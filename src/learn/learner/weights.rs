//! The weight table: for every feature j and label z, the mean μ_zj and variance σ_zj of the
//! weight Gaussian. The K labels' (μ, σ) pairs of one feature are adjacent f32s, so scoring and
//! updating a sparse document touches one short run of memory per feature (one 64-byte cache
//! line holds the row of up to 8 labels).
//!
//! A table is either owned (training, learning) or a view of the weight bytes of a model file:
//! memory-mapped or embedded in the binary. A view costs nothing to open whatever the model's
//! size: f32 weights are read in place, f16 weights row by row as a document needs them
//! ([`WeightTable::with_row`]). Anything that needs the whole table as f32 (a rewrite, a merge)
//! decodes it once on first use, and the first change makes the table owned (copy on write).

use std::sync::{Arc, OnceLock};

/// Means and variances, feature-major: `[feature][label][μ, σ]`.
#[derive(Clone)]
pub struct WeightTable {
    features: usize,
    labels: usize,
    data: Storage,
}

/// Bytes that outlive the table: a memory map, the embedded model, or a copy.
pub type SharedBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// How the values are held.
#[derive(Clone)]
enum Storage {
    Owned(Vec<f32>),
    /// Little-endian values in `bytes[start..]`, with the full f32 table decoded on demand.
    View {
        bytes: SharedBytes,
        start: usize,
        half: bool,
        decoded: OnceLock<Vec<f32>>,
    },
}

/// Rows of at most this many values are decoded from f16 on the stack (64 labels).
const STACK_ROW: usize = 128;

impl WeightTable {
    /// Multiplies every variance of feature j by `factors[j]` (a prior other than a·I, see
    /// [`crate::learn::learner::WeightPrior`]); features past the end of `factors` keep theirs.
    pub fn scale_variances(&mut self, factors: &[f32]) {
        let labels = self.labels;
        let data = self.raw_mut();
        for (row, &f) in data.chunks_exact_mut(2 * labels).zip(factors) {
            row.chunks_exact_mut(2).for_each(|p| p[1] *= f);
        }
    }

    /// Every mean 0, every variance `initial_variance` (Σ₁ = a·I).
    pub fn new(features: usize, labels: usize, initial_variance: f32) -> Self {
        let mut data = zeroed_table(features * labels * 2);
        data.chunks_exact_mut(2)
            .for_each(|p| p[1] = initial_variance);
        WeightTable {
            features,
            labels,
            data: Storage::Owned(data),
        }
    }

    /// Rebuilds a table from its flat data (as stored in a model file).
    pub fn from_raw(features: usize, labels: usize, data: Vec<f32>) -> Option<Self> {
        (data.len() == features * labels * 2).then_some(WeightTable {
            features,
            labels,
            data: Storage::Owned(data),
        })
    }

    /// A view of `features × labels × 2` little-endian values (f16 when `half`, else f32) at
    /// `bytes[start..]`; `None` when the bytes are too short.
    pub fn view(
        features: usize,
        labels: usize,
        bytes: SharedBytes,
        start: usize,
        half: bool,
    ) -> Option<Self> {
        let width = if half { 2 } else { 4 };
        let end = features
            .checked_mul(labels * 2 * width)?
            .checked_add(start)?;
        ((*bytes).as_ref().len() >= end).then_some(WeightTable {
            features,
            labels,
            data: Storage::View {
                bytes,
                start,
                half,
                decoded: OnceLock::new(),
            },
        })
    }

    pub fn features(&self) -> usize {
        self.features
    }

    pub fn labels(&self) -> usize {
        self.labels
    }

    fn len(&self) -> usize {
        self.features * self.labels * 2
    }

    /// The flat data, `[feature][label][μ, σ]`. On a view of f16 (or misaligned f32) weights
    /// the first call decodes the whole table.
    pub fn raw(&self) -> &[f32] {
        match &self.data {
            Storage::Owned(data) => data,
            Storage::View {
                bytes,
                start,
                half,
                decoded,
            } => {
                let bytes = &(**bytes).as_ref()[*start..*start + self.len() * width(*half)];
                if !*half && cfg!(target_endian = "little") {
                    if let Ok(values) = bytemuck::try_cast_slice::<u8, f32>(bytes) {
                        return values;
                    }
                }
                decoded.get_or_init(|| decode(bytes, *half))
            }
        }
    }

    /// The interleaved (μ, σ) pairs of all labels for feature `j`.
    #[inline]
    pub fn row(&self, j: usize) -> &[f32] {
        let w = self.labels * 2;
        match &self.data {
            Storage::Owned(data) => &data[j * w..(j + 1) * w],
            Storage::View { .. } => &self.raw()[j * w..(j + 1) * w],
        }
    }

    /// Calls `f` with row `j`, decoding only that row from an f16 view: what prediction uses,
    /// so that classifying with a mapped model reads a few rows and never the whole table.
    #[inline]
    pub fn with_row<R>(&self, j: usize, f: impl FnOnce(&[f32]) -> R) -> R {
        self.rows().with_row(j, f)
    }

    /// The rows, with where they are held found once: for reading many rows in a loop (a
    /// document's features). Finding a view's values is a checked cast of the mapped bytes
    /// (alignment and length), which cost more than scoring the row when it was done per row.
    #[inline]
    pub fn rows(&self) -> Rows<'_> {
        let width = self.labels * 2;
        let values = match &self.data {
            Storage::View {
                bytes,
                start,
                half: true,
                decoded,
            } if decoded.get().is_none() => {
                let bytes = &(**bytes).as_ref()[*start..*start + self.len() * 2];
                RowValues::F16(bytes)
            }
            _ => RowValues::F32(self.raw()),
        };
        Rows { width, values }
    }

    #[inline]
    pub fn row_mut(&mut self, j: usize) -> &mut [f32] {
        let w = self.labels * 2;
        &mut self.raw_mut()[j * w..(j + 1) * w]
    }

    /// The same table with `extra` more labels, whose weights start at the prior N(0, a).
    pub fn with_more_labels(&self, extra: usize, initial_variance: f32) -> WeightTable {
        self.with_labels_from(extra, |_| [0.0, initial_variance])
    }

    /// The same table with `extra` more labels, each feature's (mean, variance) for them given
    /// by `start` from that feature's row of the existing labels.
    fn with_labels_from(&self, extra: usize, start: impl Fn(&[f32]) -> [f32; 2]) -> WeightTable {
        let labels = self.labels + extra;
        let mut data = Vec::with_capacity(self.features * labels * 2);
        for row in self.raw().chunks_exact(self.labels * 2) {
            data.extend_from_slice(row);
            let new = start(row);
            (0..extra).for_each(|_| data.extend_from_slice(&new));
        }
        WeightTable {
            features: self.features,
            labels,
            data: Storage::Owned(data),
        }
    }

    /// The same table with one more label whose weight for each feature starts at mean 0 and the
    /// largest variance any existing label has for it: for a learner with a per-feature prior
    /// (which the table does not store), the prior a·vⱼ of every feature some label has not yet
    /// learned (an update only shrinks a variance: 1/σⱼ ← 1/σⱼ + λxⱼ² with λ ≥ 0 for KL, σⱼ ← σⱼ −
    /// β(σⱼxⱼ)² with β ≥ 0 for L2, ALGORITHMS.md "Binary update"), and the least
    /// learned label's variance elsewhere.
    pub fn with_label_at_the_widest(&self) -> WeightTable {
        self.with_labels_from(1, |row| {
            [
                0.0,
                row.chunks_exact(2).map(|p| p[1]).fold(0.0f32, f32::max),
            ]
        })
    }

    /// The same table with one more label whose weight for each feature starts as the Gaussian
    /// that moment-matches the existing labels' weights for it, the mixture (1/K)·Σ_z N(μ_zj, σ_zj):
    /// mean μ̄_j = (1/K)·Σ_z μ_zj and variance (1/K)·Σ_z σ_zj + (1/K)·Σ_z (μ_zj − μ̄_j)² (the law of
    /// total variance). Moment matching is the Gaussian q minimising KL(mixture ‖ q) (Bishop,
    /// *Pattern Recognition and Machine Learning*, 2006, §10.7, eq. 10.187 ff.); as a prior for a
    /// new label it is the empirical-Bayes estimate of the distribution the labels' weights are
    /// drawn from (Efron & Morris, JASA 1973). A feature no label has learned keeps the prior.
    pub fn with_label_like_the_others(&self) -> WeightTable {
        let n = self.labels as f64;
        self.with_labels_from(1, |row| {
            let mean = row.chunks_exact(2).map(|p| f64::from(p[0])).sum::<f64>() / n;
            let variance = row
                .chunks_exact(2)
                .map(|p| f64::from(p[1]) + (f64::from(p[0]) - mean).powi(2))
                .sum::<f64>()
                / n;
            [mean as f32, variance as f32]
        })
    }

    /// The flat data, mutable; a view becomes an owned copy first.
    pub fn raw_mut(&mut self) -> &mut [f32] {
        if let Storage::View { decoded, .. } = &mut self.data {
            let owned = match decoded.take() {
                Some(values) => values,
                None => {
                    let mut values = zeroed_table(self.len());
                    values.copy_from_slice(self.raw());
                    values
                }
            };
            self.data = Storage::Owned(owned);
        }
        match &mut self.data {
            Storage::Owned(data) => data,
            Storage::View { .. } => unreachable!("made owned above"),
        }
    }

    /// Whether the values are read from a model file's bytes rather than owned.
    pub fn is_view(&self) -> bool {
        matches!(self.data, Storage::View { .. })
    }

    /// How many features have a weight that moved from the prior: a mean away from 0, or
    /// with a flat prior (`Some(a)`) a variance away from a. A per-feature prior leaves the
    /// variances no common start to compare with, so then (`None`) the means alone count.
    pub fn touched_features(&self, flat_prior: Option<f32>) -> usize {
        self.raw()
            .chunks_exact(self.labels * 2)
            .filter(|row| {
                row.chunks_exact(2)
                    .any(|p| p[0] != 0.0 || flat_prior.is_some_and(|a| p[1] != a))
            })
            .count()
    }
}

/// A table's rows as [`WeightTable::rows`] finds them.
pub struct Rows<'a> {
    /// Values per row: a (μ, σ) pair per label.
    width: usize,
    values: RowValues<'a>,
}

/// Where the rows' values are.
enum RowValues<'a> {
    /// f32 values: owned, decoded, or read in place from a model file.
    F32(&'a [f32]),
    /// The little-endian f16 values of a view not decoded: rows are decoded one at a time.
    F16(&'a [u8]),
}

impl Rows<'_> {
    /// Calls `f` with row `j` (decoded on the stack from f16).
    #[inline]
    pub fn with_row<R>(&self, j: usize, f: impl FnOnce(&[f32]) -> R) -> R {
        let w = self.width;
        match self.values {
            RowValues::F32(values) => f(&values[j * w..(j + 1) * w]),
            RowValues::F16(bytes) => {
                let bytes = &bytes[j * w * 2..(j + 1) * w * 2];
                if w <= STACK_ROW {
                    let mut row = [0f32; STACK_ROW];
                    decode_into(bytes, true, &mut row[..w]);
                    f(&row[..w])
                } else {
                    f(&decode(bytes, true))
                }
            }
        }
    }

    /// Asks the CPU to start loading row `j` into cache. A document's features are known
    /// before its rows are read, and the rows of a large table are spread over memory at random
    /// (hashing): without this, scoring waits for memory once per feature.
    #[inline]
    pub fn prefetch(&self, j: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            let w = self.width;
            // The row's bytes wherever they are: an owned table, a decoded view, or the mapped
            // file itself (f32 or f16).
            let row: Option<&[u8]> = match self.values {
                RowValues::F32(values) => values.get(j * w..(j + 1) * w).map(bytemuck::cast_slice),
                RowValues::F16(bytes) => bytes.get(j * w * 2..(j + 1) * w * 2),
            };
            for line in row.unwrap_or_default().chunks(64) {
                // SAFETY: prefetching is a hint without architectural effect; SSE is part of
                // every x86-64 CPU, and the address points into `row`.
                unsafe {
                    std::arch::x86_64::_mm_prefetch(
                        line.as_ptr().cast::<i8>(),
                        std::arch::x86_64::_MM_HINT_T0,
                    )
                };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = j;
    }
}

fn width(half: bool) -> usize {
    if half {
        2
    } else {
        4
    }
}

/// `len` zeros for a table that training will write, backed by 2 MiB pages where the kernel
/// allows it (Linux, transparent huge pages in `madvise` mode, the usual default). Hashing spreads
/// a document's features at random over a table of tens of megabytes, so with 4 KiB pages nearly
/// every row costs a TLB miss and a page walk on top of the cache miss: on 20 Newsgroups
/// (42 MB table) an epoch took 0.25 s with 4 KiB pages and 0.16 s with 2 MiB pages.
fn zeroed_table(len: usize) -> Vec<f32> {
    let table = vec![0.0; len];
    advise_huge_pages(&table);
    table
}

/// Asks for 2 MiB pages under the whole 2 MiB-aligned part of `values` before it is first
/// written (a zeroed allocation this large is fresh, untouched pages). Only a hint: where it is
/// refused or unsupported, nothing changes but the speed.
fn advise_huge_pages(values: &[f32]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = values.as_ptr() as usize;
        let end = start + std::mem::size_of_val(values);
        let first = start.next_multiple_of(HUGE);
        let len = end.saturating_sub(first) / HUGE * HUGE;
        if len > 0 {
            // SAFETY: `[first, first + len)` lies inside `values`' allocation, and
            // MADV_HUGEPAGE only changes how the kernel backs those pages, never their
            // contents or whether they are mapped.
            unsafe { libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = values;
}

fn decode(bytes: &[u8], half: bool) -> Vec<f32> {
    let mut out = zeroed_table(bytes.len() / width(half));
    decode_into(bytes, half, &mut out);
    out
}

fn decode_into(bytes: &[u8], half: bool, out: &mut [f32]) {
    if half {
        for (o, c) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            *o = half::f16::from_le_bytes([c[0], c[1]]).to_f32();
        }
    } else {
        for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
            *o = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
    }
}

impl PartialEq for WeightTable {
    fn eq(&self, other: &Self) -> bool {
        self.features == other.features && self.labels == other.labels && self.raw() == other.raw()
    }
}

impl std::fmt::Debug for WeightTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WeightTable")
            .field("features", &self.features)
            .field("labels", &self.labels)
            .field("view", &self.is_view())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_like_the_others_moment_matches_them() {
        // One feature, two labels: N(1, 0.5) and N(3, 1.5). The mixture's mean is 2 and its
        // variance (0.5 + 1.5)/2 + ((1 − 2)² + (3 − 2)²)/2 = 2.
        let mut t = WeightTable::new(1, 2, 1.0);
        t.row_mut(0).copy_from_slice(&[1.0, 0.5, 3.0, 1.5]);
        let t = t.with_label_like_the_others();
        assert_eq!(t.labels(), 3);
        assert_eq!(t.row(0), &[1.0, 0.5, 3.0, 1.5, 2.0, 2.0]);
    }

    /// A table of 3 features × 2 labels with distinct values, and its bytes at offset 64.
    fn table_and_bytes(half: bool) -> (WeightTable, SharedBytes) {
        table_and_bytes_at(half, 64)
    }

    /// The same with its bytes at `offset`.
    fn table_and_bytes_at(half: bool, offset: usize) -> (WeightTable, SharedBytes) {
        let values: Vec<f32> = (0..12).map(|i| i as f32 * 0.5 - 2.0).collect();
        let mut bytes = vec![0u8; offset];
        for v in &values {
            if half {
                bytes.extend_from_slice(&half::f16::from_f32(*v).to_le_bytes());
            } else {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        let table = WeightTable::from_raw(3, 2, values).unwrap();
        (table, Arc::new(bytes))
    }

    #[test]
    fn views_read_the_same_values_as_owned_tables() {
        for half in [false, true] {
            let (owned, bytes) = table_and_bytes(half);
            let view = WeightTable::view(3, 2, bytes, 64, half).unwrap();
            assert!(view.is_view());
            for j in 0..3 {
                // Values of the form k/2 are exact in f16.
                view.with_row(j, |row| assert_eq!(row, owned.row(j)));
                assert_eq!(view.row(j), owned.row(j));
            }
            assert_eq!(view, owned);
        }
    }

    /// The rows found once read what `row` reads: from an owned table, an f32 view in place
    /// (aligned) or decoded (misaligned), an f16 view row by row and once decoded.
    #[test]
    fn rows_read_every_storage_alike() {
        for (half, offset) in [(false, 64), (false, 66), (true, 64), (true, 65)] {
            let (owned, bytes) = table_and_bytes_at(half, offset);
            let view = WeightTable::view(3, 2, bytes, offset, half).unwrap();
            for table in [&owned, &view] {
                let rows = table.rows();
                for j in 0..3 {
                    rows.prefetch(j);
                    rows.with_row(j, |row| assert_eq!(row, owned.row(j)));
                }
            }
            // After the whole table was decoded (`row` decodes an f16 view).
            assert_eq!(view.row(2), owned.row(2));
            view.rows().with_row(1, |row| assert_eq!(row, owned.row(1)));
        }
    }

    #[test]
    fn a_view_becomes_owned_on_the_first_change() {
        let (owned, bytes) = table_and_bytes(true);
        let mut view = WeightTable::view(3, 2, bytes.clone(), 64, true).unwrap();
        view.row_mut(1)[0] = 42.0;
        assert!(!view.is_view());
        assert_eq!(view.row(1)[0], 42.0);
        assert_eq!(view.row(0), owned.row(0));
        // The bytes themselves are untouched.
        let again = WeightTable::view(3, 2, bytes, 64, true).unwrap();
        assert_eq!(again, owned);
    }

    #[test]
    fn short_bytes_are_refused() {
        let (_, bytes) = table_and_bytes(false);
        assert!(WeightTable::view(3, 2, bytes.clone(), 68, false).is_none());
        assert!(WeightTable::view(usize::MAX / 2, 2, bytes, 0, false).is_none());
    }
}
