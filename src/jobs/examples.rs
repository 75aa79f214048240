//! Where training reads its featurised examples from: the [`ExampleSource`] trait, with one
//! implementation in memory (a slice of [`Example`]s) and one on disk
//! ([`crate::jobs::feature_cache::DiskCache`]), so that the epochs, the choice of settings,
//! calibration and the rehearsal fill run the same code, in the same order, on either: the same
//! data and seed give the same model bytes whether the corpus fitted in memory or not.
//! [`Subset`] is a part of a source (the four fifths, the held-out fifth, a shard) by a bit per
//! document, so no part is ever copied or listed. [`visit`] reads a cache file's records on a
//! second thread, ahead of the learner.

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

impl Example {
    /// An example with no features, to be read into.
    pub fn placeholder() -> Self {
        Example {
            x: FeatureVector::empty(0),
            label: 0,
            file: 0,
            split: Default::default(),
        }
    }
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

    /// Whether reading an example is work worth doing on another thread (a cache file's record:
    /// a `pread` and its decoding), which [`visit`] then does ahead of its visitor. In memory
    /// it is a reference: no.
    fn reads_ahead(&self) -> bool {
        false
    }
}

/// Reads the examples of one source, one at a time, into a buffer it reuses: the example
/// returned lives until the next call.
pub trait ExampleReader {
    fn get(&mut self, index: usize) -> Result<&Example>;

    /// Reads example `index` into `out`, reusing its arrays where the reader can (a cache
    /// file's record is decoded straight into it; in memory it is a copy).
    fn read_into(&mut self, index: usize, out: &mut Example) -> Result<()> {
        out.clone_from(self.get(index)?);
        Ok(())
    }
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
    f: impl FnMut(usize, &Example) -> bool,
) -> Result<()> {
    visit(source, 0..source.len(), f)
}

/// A batch a read-ahead thread decodes at a time ends at this many examples or at
/// [`READ_AHEAD_FEATURES`] features, whichever comes first, and it may have
/// [`READ_AHEAD_BATCHES`] batches ready before the visitor takes them. The visitor gives each
/// batch back once visited and its examples' arrays are decoded into again (new arrays for
/// every record cost short texts more than they saved: 700,000 SMS messages trained 1.17 times
/// slower than without reading ahead), but a slot that held more than [`READ_AHEAD_SLOT`]
/// features is dropped, not reused: reused arrays keep their room, and every slot came to
/// hold the room of the longest post it had seen (a default `train` on 200,000 posts peaked
/// 56 MB higher). So a visit holds at most `READ_AHEAD_BATCHES + 2` batches, each
/// `READ_AHEAD_BATCH × READ_AHEAD_SLOT` features of idle room and `READ_AHEAD_FEATURES` in use:
/// about 6 MB, whatever the corpus's size.
pub const READ_AHEAD_BATCH: usize = 256;
pub const READ_AHEAD_FEATURES: usize = 1 << 16;
pub const READ_AHEAD_BATCHES: usize = 4;
pub const READ_AHEAD_SLOT: usize = 256;

/// Examples read ahead: `examples[k]` is the example at `indices[k]`; the examples past
/// `indices.len()` are room to read into.
#[derive(Default)]
struct Batch {
    indices: Vec<usize>,
    examples: Vec<Example>,
}

/// Visits the examples of `source` at the indices `order` gives, in that order, until `f`
/// returns false; `f` gets each example's index. When the source [reads
/// ahead](ExampleSource::reads_ahead) (a cache file), a second thread reads and decodes the
/// records a few batches ahead of `f`, so that a learner on one core does not wait for the
/// `pread`s and the decoding (200,000 20 Newsgroups posts from disk, fixed settings: 1.13 cores
/// busy before, 1.47 with it; the same examples in the same order, so the same model bytes).
/// A read error stops the visit and is returned after the examples before it. With one thread
/// (`--threads 1`, rayon's pool of one) the records are read where they are visited.
pub fn visit<S, I>(source: &S, order: I, mut f: impl FnMut(usize, &Example) -> bool) -> Result<()>
where
    S: ExampleSource + ?Sized,
    I: Iterator<Item = usize> + Send,
{
    // One thread asked for (`--threads 1`): no second one.
    if !source.reads_ahead() || rayon::current_num_threads() < 2 {
        let mut reader = source.reader();
        for i in order {
            if !f(i, reader.get(i)?) {
                break;
            }
        }
        return Ok(());
    }
    std::thread::scope(|scope| {
        let (ready, taken) = std::sync::mpsc::sync_channel::<Result<Batch>>(READ_AHEAD_BATCHES);
        let (give_back, returned) = std::sync::mpsc::channel::<Batch>();
        scope.spawn(move || {
            let mut reader = source.reader();
            let mut order = order.peekable();
            while order.peek().is_some() {
                let mut batch = returned.try_recv().unwrap_or_default();
                batch.indices.clear();
                let mut features = 0;
                while batch.indices.len() < READ_AHEAD_BATCH && features < READ_AHEAD_FEATURES {
                    let Some(i) = order.next() else { break };
                    let k = batch.indices.len();
                    if k == batch.examples.len() {
                        batch.examples.push(Example::placeholder());
                    }
                    let slot = &mut batch.examples[k];
                    if slot.x.nnz() > READ_AHEAD_SLOT {
                        *slot = Example::placeholder();
                    }
                    if let Err(error) = reader.read_into(i, slot) {
                        // The examples before it first, as a visit in this thread sees them.
                        let _ = ready.send(Ok(batch)).and_then(|()| ready.send(Err(error)));
                        return;
                    }
                    features += slot.x.nnz();
                    batch.indices.push(i);
                }
                // The visitor has stopped (it returned or failed): nothing more to read.
                if ready.send(Ok(batch)).is_err() {
                    return;
                }
            }
        });
        for batch in taken {
            let batch = batch?;
            for (&i, e) in batch.indices.iter().zip(&batch.examples) {
                if !f(i, e) {
                    return Ok(());
                }
            }
            let _ = give_back.send(batch);
        }
        Ok(())
    })
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

    fn reads_ahead(&self) -> bool {
        self.source.reads_ahead()
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

    fn read_into(&mut self, index: usize, out: &mut Example) -> Result<()> {
        self.inner.read_into(self.subset.select(index), out)
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

    /// Examples in memory that say they read ahead, and note the threads that read them.
    struct Recorded {
        examples: Vec<Example>,
        readers: std::sync::Mutex<Vec<std::thread::ThreadId>>,
    }

    impl ExampleSource for Recorded {
        fn len(&self) -> usize {
            self.examples.len()
        }

        fn reader(&self) -> Box<dyn ExampleReader + '_> {
            self.readers
                .lock()
                .unwrap()
                .push(std::thread::current().id());
            self.examples.reader()
        }

        fn reads_ahead(&self) -> bool {
            true
        }
    }

    #[test]
    fn a_source_that_reads_ahead_is_read_on_another_thread_in_the_order_given() {
        let n = 3 * READ_AHEAD_BATCH + 17;
        let source = Recorded {
            examples: (0..n).map(example).collect(),
            readers: Default::default(),
        };
        let order = crate::jobs::permutation::Permutation::new(n, 7);
        let wanted: Vec<usize> = order.iter().collect();
        // Two threads allowed (whatever the machine running the test has).
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let visitor = two.install(|| {
            let mut seen = Vec::new();
            visit(&source, wanted.clone().into_iter(), |i, e| {
                assert_eq!(e.file, i);
                seen.push(i);
                true
            })
            .unwrap();
            assert_eq!(seen, wanted);
            // Stopped early, past a batch: the visitor saw exactly what it took, and the
            // reading thread ended (the scope returned).
            let mut seen = 0;
            visit(&source, 0..n, |i, _| {
                seen += 1;
                i < READ_AHEAD_BATCH + 3
            })
            .unwrap();
            assert_eq!(seen, READ_AHEAD_BATCH + 4);
            std::thread::current().id()
        });
        let readers = source.readers.lock().unwrap().clone();
        assert_eq!(readers.len(), 2);
        assert!(readers.iter().all(|&r| r != visitor), "{readers:?}");
        // With one thread allowed: read where it is visited.
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let visitor = one.install(|| {
            let mut seen = 0;
            visit(&source, 0..n, |_, _| {
                seen += 1;
                true
            })
            .unwrap();
            assert_eq!(seen, n);
            std::thread::current().id()
        });
        assert_eq!(source.readers.lock().unwrap().last(), Some(&visitor));
        // In memory: read where it is visited.
        let mut files = Vec::new();
        visit(&source.examples, [5, 2, 9].into_iter(), |_, e| {
            files.push(e.file);
            true
        })
        .unwrap();
        assert_eq!(files, [5, 2, 9]);
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
