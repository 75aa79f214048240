//! Where training reads its featurised examples from: the [`ExampleSource`] trait, with one
//! implementation in memory (a slice of [`Example`]s) and one on disk
//! ([`crate::jobs::feature_cache::DiskCache`]), so that the epochs, the choice of settings,
//! calibration and the rehearsal fill run the same code, in the same order, on either: the same
//! data and seed give the same model bytes whether the corpus fitted in memory or not.
//! [`Subset`] is a part of a source (the four fifths, the held-out fifth, a shard) by a bit per
//! document, so no part is ever copied or listed.

use crate::error::Result;
use crate::features::FeatureVector;

/// One featurised training document.
#[derive(Debug, Clone)]
pub struct Example {
    pub x: FeatureVector,
    pub label: usize,
    /// The index of its file in the corpus.
    pub file: usize,
    /// Its held-out fifth and shard.
    pub split: crate::jobs::corpus::SplitKeys,
}

/// Featurised examples, read by index. Each thread that reads makes its own
/// [`ExampleReader`]; reading in memory cannot fail, reading a cache file can (an I/O error
/// naming the file).
pub trait ExampleSource: Sync {
    /// The number of examples.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A reader with its own buffers (one per thread: readers are not shared).
    fn reader(&self) -> Box<dyn ExampleReader + '_>;
}

/// Reads the examples of one source, one at a time, into a buffer it reuses: the example
/// returned lives until the next call.
pub trait ExampleReader {
    fn get(&mut self, index: usize) -> Result<&Example>;
}

impl ExampleSource for [Example] {
    fn len(&self) -> usize {
        <[Example]>::len(self)
    }

    fn reader(&self) -> Box<dyn ExampleReader + '_> {
        Box::new(SliceReader(self))
    }
}

impl ExampleSource for Vec<Example> {
    fn len(&self) -> usize {
        <[Example]>::len(self)
    }

    fn reader(&self) -> Box<dyn ExampleReader + '_> {
        Box::new(SliceReader(self))
    }
}

struct SliceReader<'a>(&'a [Example]);

impl ExampleReader for SliceReader<'_> {
    fn get(&mut self, index: usize) -> Result<&Example> {
        Ok(&self.0[index])
    }
}

impl ExampleSource for [&Example] {
    fn len(&self) -> usize {
        <[&Example]>::len(self)
    }

    fn reader(&self) -> Box<dyn ExampleReader + '_> {
        Box::new(RefsReader(self))
    }
}

struct RefsReader<'a, 'b>(&'a [&'b Example]);

impl ExampleReader for RefsReader<'_, '_> {
    fn get(&mut self, index: usize) -> Result<&Example> {
        Ok(self.0[index])
    }
}

/// Visits every example of `source` in index order.
pub fn for_each<S: ExampleSource + ?Sized>(
    source: &S,
    mut f: impl FnMut(usize, &Example),
) -> Result<()> {
    for_each_while(source, |i, e| {
        f(i, e);
        true
    })
}

/// [`for_each`] until `f` returns false.
pub fn for_each_while<S: ExampleSource + ?Sized>(
    source: &S,
    mut f: impl FnMut(usize, &Example) -> bool,
) -> Result<()> {
    let mut reader = source.reader();
    for i in 0..source.len() {
        if !f(i, reader.get(i)?) {
            break;
        }
    }
    Ok(())
}

/// Some examples of a source (in the source's order), by a bit per example of the source and
/// a count per 64 of them: a quarter of a byte per document, whatever the examples hold (the
/// four fifths, the held-out fifth, a shard). Its `i`-th example is found by the counts (a
/// binary search) and the bits of one word.
pub struct Subset<'a, S: ?Sized> {
    source: &'a S,
    bits: Vec<u64>,
    /// Members in the words before each word.
    before: Vec<u64>,
    count: usize,
}

impl<'a, S: ExampleSource + ?Sized> Subset<'a, S> {
    /// Splits `source` in one pass into `parts` parts, `part` giving each example's (below
    /// `parts`).
    pub fn partition(
        source: &'a S,
        parts: usize,
        part: &dyn Fn(&Example) -> usize,
    ) -> Result<Vec<Self>> {
        let words = source.len().div_ceil(64);
        let mut out: Vec<Self> = (0..parts)
            .map(|_| Subset {
                source,
                bits: vec![0; words],
                before: Vec::new(),
                count: 0,
            })
            .collect();
        for_each(source, |i, e| {
            let s = &mut out[part(e)];
            s.bits[i / 64] |= 1 << (i % 64);
        })?;
        Ok(out
            .into_iter()
            .map(|s| Subset::from_bits(source, s.bits))
            .collect())
    }

    /// The subset of `source` whose members are the set bits of `bits`.
    fn from_bits(source: &'a S, bits: Vec<u64>) -> Self {
        let mut total = 0;
        let before = bits
            .iter()
            .map(|w| {
                let before = total;
                total += u64::from(w.count_ones());
                before
            })
            .collect();
        Subset {
            source,
            bits,
            before,
            count: total as usize,
        }
    }

    /// The examples of the source that are not in this subset, in the source's order, found
    /// from the bits alone (no pass over the source).
    pub fn complement(&self) -> Self {
        let n = self.source.len();
        let mut bits: Vec<u64> = self.bits.iter().map(|w| !w).collect();
        if !n.is_multiple_of(64) {
            if let Some(last) = bits.last_mut() {
                *last &= (1u64 << (n % 64)) - 1;
            }
        }
        Subset::from_bits(self.source, bits)
    }

    /// Splits `source` in one pass into the examples for which `part` is false and those for
    /// which it is true, each in the source's order.
    pub fn split(source: &'a S, part: &dyn Fn(&Example) -> bool) -> Result<(Self, Self)> {
        let mut two = Subset::partition(source, 2, &|e| usize::from(part(e)))?;
        let yes = two.pop().expect("two parts");
        let no = two.pop().expect("two parts");
        Ok((no, yes))
    }

    /// The bytes it takes in memory.
    pub fn memory(&self) -> usize {
        (self.bits.capacity() + self.before.capacity()) * 8
    }
}

impl<S: ?Sized> Subset<'_, S> {
    /// The index in the source of its `i`-th example.
    fn select(&self, i: usize) -> usize {
        let i = i as u64;
        let w = self.before.partition_point(|&b| b <= i) - 1;
        let mut word = self.bits[w];
        for _ in 0..i - self.before[w] {
            word &= word - 1;
        }
        w * 64 + word.trailing_zeros() as usize
    }
}

impl<S: ExampleSource + ?Sized> ExampleSource for Subset<'_, S> {
    fn len(&self) -> usize {
        self.count
    }

    fn reader(&self) -> Box<dyn ExampleReader + '_> {
        Box::new(SubsetReader {
            inner: self.source.reader(),
            subset: self,
        })
    }
}

struct SubsetReader<'a, S: ?Sized> {
    inner: Box<dyn ExampleReader + 'a>,
    subset: &'a Subset<'a, S>,
}

impl<S: ?Sized> ExampleReader for SubsetReader<'_, S> {
    fn get(&mut self, index: usize) -> Result<&Example> {
        self.inner.get(self.subset.select(index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(file: usize) -> Example {
        Example {
            x: FeatureVector::new(8, vec![file as u32 % 8], vec![1.0]),
            label: file % 2,
            file,
            split: Default::default(),
        }
    }

    #[test]
    fn a_split_keeps_the_order_of_its_source() {
        let examples: Vec<Example> = (0..10).map(example).collect();
        let (odd_not, multiples) = Subset::split(&examples[..], &|e| e.file % 3 == 0).unwrap();
        let files = |s: &dyn ExampleSource| {
            let mut out = Vec::new();
            for_each(s, |_, e| out.push(e.file)).unwrap();
            out
        };
        assert_eq!(files(&multiples), [0, 3, 6, 9]);
        assert_eq!(files(&odd_not), [1, 2, 4, 5, 7, 8]);
        // A subset of a subset.
        let (_, inner) = Subset::split(&multiples, &|e| e.file % 2 == 1).unwrap();
        assert_eq!(files(&inner), [3, 9]);
        assert_eq!(inner.len(), 2);
        let shards = Subset::partition(&examples[..], 3, &|e| e.file % 3).unwrap();
        assert_eq!(files(&shards[1]), [1, 4, 7]);
        // The complement from the bits alone: the other part, in order, past a word of bits.
        assert_eq!(files(&multiples.complement()), files(&odd_not));
        assert_eq!(files(&shards[1].complement()), [0, 2, 3, 5, 6, 8, 9]);
        let many: Vec<Example> = (0..130).map(example).collect();
        let (rest, fives) = Subset::split(&many[..], &|e| e.file % 5 == 0).unwrap();
        assert_eq!(files(&fives.complement()), files(&rest));
        assert_eq!(fives.complement().len(), rest.len());
        // Past one word of bits, and read out of order.
        let many: Vec<Example> = (0..1000).map(example).collect();
        let (_, sevens) = Subset::split(&many[..], &|e| e.file % 7 == 3).unwrap();
        let mut reader = sevens.reader();
        for i in [100, 0, 142, 5, 64, 63] {
            assert_eq!(reader.get(i).unwrap().file, 7 * i + 3);
        }
    }
}
