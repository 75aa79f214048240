//! The held-out fifth (`corpus::held_out`) and the shards (`corpus::shard_of`) are fixed functions
//! of a file's path relative to the corpus root: a model's calibration and a sharded run depend
//! on them, so a change of hash (cwtext's frozen FxHash, `text::pipeline::hash`) must show. Golden answers for a handful
//! of paths, and the same answers from FxHash64 written out here (the fxhash crate's: per 8-byte
//! then 4-byte little-endian word, then per byte, h = (h.rotl(5) ^ word)·0x517cc1b727220a95; the
//! top 32 bits are used). The crate reads words in native byte order: these answers are a
//! little-endian machine's.

use std::path::Path;

use cwtext::jobs::corpus::{held_out, shard_of};

/// FxHash64 of a sequence of writes, each taken in words as the crate does.
fn fx64(writes: &[&[u8]]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let add = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(K);
    let mut h = 0u64;
    for bytes in writes {
        let mut rest = *bytes;
        while rest.len() >= 8 {
            h = add(h, u64::from_le_bytes(rest[..8].try_into().unwrap()));
            rest = &rest[8..];
        }
        if rest.len() >= 4 {
            h = add(
                h,
                u64::from(u32::from_le_bytes(rest[..4].try_into().unwrap())),
            );
            rest = &rest[4..];
        }
        for &b in rest {
            h = add(h, u64::from(b));
        }
    }
    h
}

/// (path relative to the corpus root, held out, shard of 10, shard of 7): today's answers.
const GOLDEN: &[(&str, bool, usize, usize)] = &[
    ("spam/0001.txt", false, 1, 2),
    ("ham/easy-ham-00023.txt", false, 6, 3),
    ("comp.graphics/train-38755", true, 1, 1),
    ("sci.space/test-61234", true, 6, 4),
    ("a", false, 2, 2),
    ("pos/review with spaces.txt", false, 9, 0),
    ("télé/émission-12.txt", false, 5, 5),
    ("rec.sport.hockey/train-52550", false, 9, 3),
];

#[test]
fn held_out_and_shards_are_the_golden_answers() {
    for root in ["/corpus", "relative/corpus"] {
        let root = Path::new(root);
        for &(path, held, ten, seven) in GOLDEN {
            let file = cwtext::text::source::Source::file(root.join(path));
            assert_eq!(held_out(root, &file), held, "{path}");
            assert_eq!(shard_of(root, &file, 10), ten, "{path}");
            assert_eq!(shard_of(root, &file, 7), seven, "{path}");
        }
    }
}

/// The golden answers are FxHash64's top 32 bits: modulo 5 (0 is held out) of the path, modulo
/// n of "shard\0" then the path.
#[test]
fn the_golden_answers_are_fxhash_of_the_relative_path() {
    for &(path, held, ten, seven) in GOLDEN {
        let top = |writes: &[&[u8]]| fx64(writes) >> 32;
        assert_eq!(top(&[path.as_bytes()]) % 5 == 0, held, "{path}");
        let shard = top(&[b"shard\0", path.as_bytes()]);
        assert_eq!(
            (shard % 10, shard % 7),
            (ten as u64, seven as u64),
            "{path}"
        );
    }
}
