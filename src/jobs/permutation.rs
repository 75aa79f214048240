//! The order of a training epoch, computed on the fly: a keyed pseudorandom permutation of
//! `0..n` that takes O(1) memory whatever `n` is (issue 20), so that a corpus of any size is
//! shuffled across its labels in every epoch, the first included, without a list of indices.
//!
//! It is a balanced Feistel network over the smallest even number of bits that covers `n`
//! (at least 2), with [`ROUNDS`] rounds whose round function is a keyed 64-bit mix of the half
//! and the round number; an index the network maps outside `0..n` is mapped again until it lands
//! inside (*cycle walking*, Black and Rogaway, "Ciphers with Arbitrary Finite Domains", CT-RSA
//! 2002, §3), which keeps it a bijection of `0..n`. The domain is less than 4n, so an index takes
//! fewer than 4 passes on average. Luby and Rackoff (SIAM J. Comput. 17, 1988) show four rounds
//! of a random function already give a permutation that cannot be told from a random one by
//! few queries; six rounds of a good mix leave no visible structure for training (the tests
//! check that labels are mixed from the first epoch and that every seed and epoch differs).

/// Feistel rounds.
pub const ROUNDS: u64 = 6;

/// A pseudorandom permutation of `0..n`, chosen by a 64-bit key.
#[derive(Debug, Clone, Copy)]
pub struct Permutation {
    n: u64,
    /// Bits of each half.
    half: u32,
    mask: u64,
    key: u64,
}

/// SplitMix64's finaliser (Steele, Lea and Flood, OOPSLA 2014): every input bit moves every
/// output bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Permutation {
    /// The permutation of `0..n` that `key` chooses.
    pub fn new(n: usize, key: u64) -> Self {
        let n = n as u64;
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let half = bits.div_ceil(2);
        Permutation {
            n,
            half,
            mask: (1u64 << half) - 1,
            key: mix(key),
        }
    }

    pub fn len(&self) -> usize {
        self.n as usize
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// One pass of the network over the domain of 2^(2·half) indices.
    fn network(&self, x: u64) -> u64 {
        let (mut left, mut right) = (x >> self.half, x & self.mask);
        for round in 0..ROUNDS {
            let f = mix(self.key ^ right ^ (round << 56)) & self.mask;
            (left, right) = (right, left ^ f);
        }
        (left << self.half) | right
    }

    /// The index at position `i` (`i < n`).
    pub fn get(&self, i: usize) -> usize {
        debug_assert!((i as u64) < self.n);
        let mut x = self.network(i as u64);
        while x >= self.n {
            x = self.network(x);
        }
        x as usize
    }

    /// Every index of `0..n`, each once, in the permuted order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_is_a_bijection_for_every_size() {
        for n in (0..300).chain([1000, 1023, 1024, 1025, 65_537]) {
            let p = Permutation::new(n, 42 + n as u64);
            let mut seen = vec![false; n];
            for i in p.iter() {
                assert!(!seen[i], "n = {n}: {i} twice");
                seen[i] = true;
            }
            assert!(seen.iter().all(|&s| s), "n = {n}");
        }
    }

    #[test]
    fn keys_give_different_orders_and_no_order_is_near_the_identity() {
        let n = 10_000;
        let orders: Vec<Vec<usize>> = (0..8)
            .map(|k| Permutation::new(n, k).iter().collect())
            .collect();
        for (a, x) in orders.iter().enumerate() {
            // Few fixed points (a random permutation has about one).
            let fixed = x.iter().enumerate().filter(|&(i, &j)| i == j).count();
            assert!(fixed < 10, "key {a}: {fixed} fixed points");
            for y in &orders[a + 1..] {
                let same = x.iter().zip(y).filter(|(p, q)| p == q).count();
                assert!(same < 10, "keys agree at {same} positions");
            }
        }
    }

    #[test]
    fn a_corpus_in_label_order_is_mixed_across_labels_from_the_start() {
        // 20 labels of 500 documents each, stored label after label, as a corpus is.
        let (labels, per) = (20, 500);
        let label = |i: usize| i / per;
        let p = Permutation::new(labels * per, 7);
        // The first 200 documents of the epoch: every label, none more than 3 times its share.
        let mut counts = vec![0usize; labels];
        p.iter().take(200).for_each(|i| counts[label(i)] += 1);
        assert!(counts.iter().all(|&c| c > 0 && c <= 30), "{counts:?}");
        // Consecutive documents share a label about as often as chance (1/20).
        let order: Vec<usize> = p.iter().collect();
        let same = order
            .windows(2)
            .filter(|w| label(w[0]) == label(w[1]))
            .count() as f64
            / (order.len() - 1) as f64;
        assert!((0.03..0.07).contains(&same), "{same}");
        // Positions are spread evenly: each tenth of the epoch holds each tenth of the corpus
        // roughly a tenth of the time.
        let mut grid = [[0usize; 10]; 10];
        for (pos, &i) in order.iter().enumerate() {
            grid[pos * 10 / order.len()][i * 10 / order.len()] += 1;
        }
        for row in grid {
            for c in row {
                assert!((60..=140).contains(&c), "{grid:?}");
            }
        }
    }
}
