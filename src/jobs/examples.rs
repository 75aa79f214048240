//! Where training reads its featurised examples from: the [`ExampleSource`] trait, with one
//! implementation in memory (a slice of [`Example`]s) and one on disk
//! ([`crate::jobs::feature_cache::DiskCache`]), so that the epochs, the choice of settings,
//! calibration and the rehearsal fill run the same code, in the same order, on either: the same
//! data and seed give the same model bytes whether the corpus fitted in memory or not.
//! [`Subset`] is a part of a source (the four fifths, the held-out fifth, a shard) by index, so
//! no part is ever copied.

use crate::error::Result;
use crate::features::FeatureVector;

/// One featurised training document.
#[derive(Debug, Clone)]
pub struct Example {
    pub x: FeatureVector,
    pub label: usize,
    /// The index of its file in the corpus.
    pub file: usize,
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
    let mut reader = source.reader();
    for i in 0..source.len() {
        f(i, reader.get(i)?);
    }
    Ok(())
}

/// Some examples of a source, by their indices in it (in the source's order): 4 bytes per
/// example, whatever the examples hold.
pub struct Subset<'a, S: ?Sized> {
    source: &'a S,
    indices: Vec<u32>,
}

impl<'a, S: ExampleSource + ?Sized> Subset<'a, S> {
    /// The examples at `indices` of `source`.
    pub fn new(source: &'a S, indices: Vec<u32>) -> Self {
        Subset { source, indices }
    }

    /// Splits `source` in one pass into the examples for which `part` is false and those for
    /// which it is true, each in the source's order.
    pub fn split(source: &'a S, part: &dyn Fn(&Example) -> bool) -> Result<(Self, Self)> {
        let (mut no, mut yes) = (Vec::new(), Vec::new());
        for_each(source, |i, e| {
            let i = u32::try_from(i).expect("sources hold fewer than 2^32 examples");
            if part(e) {
                yes.push(i)
            } else {
                no.push(i)
            }
        })?;
        Ok((Subset::new(source, no), Subset::new(source, yes)))
    }
}

impl<S: ExampleSource + ?Sized> ExampleSource for Subset<'_, S> {
    fn len(&self) -> usize {
        self.indices.len()
    }

    fn reader(&self) -> Box<dyn ExampleReader + '_> {
        Box::new(SubsetReader {
            inner: self.source.reader(),
            indices: &self.indices,
        })
    }
}

struct SubsetReader<'a> {
    inner: Box<dyn ExampleReader + 'a>,
    indices: &'a [u32],
}

impl ExampleReader for SubsetReader<'_> {
    fn get(&mut self, index: usize) -> Result<&Example> {
        self.inner.get(self.indices[index] as usize)
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
        let inner = Subset::new(&multiples, vec![1, 3]);
        assert_eq!(files(&inner), [3, 9]);
    }
}
