//! The byte-level helpers of training's files on disk, shared by the feature cache
//! ([`crate::jobs::feature_cache`]) and the spooled file list ([`crate::jobs::file_table`]):
//! LEB128 varints and positioned reads.

use std::fs::File;

/// Appends `v` as an LEB128 varint (7 bits a byte, low first): the feature cache's records
/// and the spooled file list both use it.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint of [`put_varint`] at `at`, moving `at` past it; `None` when cut short.
/// Inlined for one and two bytes, which every epoch from disk decodes once per feature: a
/// record's fields take one, and its bucket gaps one or two (a post's ~150 buckets among 2^18
/// are ~1,700 apart, so most gaps take two bytes; with only the one-byte case inlined, the call
/// for the rest was 5% of a training run from disk).
#[inline]
pub fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let b = *bytes.get(*at)?;
    if b < 0x80 {
        *at += 1;
        return Some(u64::from(b));
    }
    let c = *bytes.get(*at + 1)?;
    if c < 0x80 {
        *at += 2;
        return Some(u64::from(b & 0x7f) | u64::from(c) << 7);
    }
    get_long_varint(bytes, at)
}

fn get_long_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

/// Reads `buf.len()` bytes at `offset` (`pread`).
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let (mut done, mut buf) = (0u64, buf);
        while !buf.is_empty() {
            let n = std::os::windows::fs::FileExt::seek_read(file, buf, offset + done)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            done += n as u64;
            buf = &mut buf[n..];
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        let mut out = Vec::new();
        let values = [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX];
        values.iter().for_each(|&v| put_varint(&mut out, v));
        let mut at = 0;
        for &v in &values {
            assert_eq!(get_varint(&out, &mut at), Some(v));
        }
        assert_eq!(at, out.len());
        assert_eq!(get_varint(&[0x80], &mut 0), None);
        assert_eq!(get_varint(&[0x80, 0x80], &mut 0), None);
        // Every one-, two- and three-byte boundary, from the start and after a prefix.
        for v in [
            0, 127, 128, 129, 255, 256, 16_383, 16_384, 16_385, 2_097_151, 2_097_152,
        ] {
            let mut out = vec![0x7f];
            put_varint(&mut out, v);
            let mut at = 1;
            assert_eq!(get_varint(&out, &mut at), Some(v), "{v}");
            assert_eq!(at, out.len(), "{v}");
            // Cut one byte short: no value.
            assert_eq!(get_varint(&out[..out.len() - 1], &mut 1), None, "{v}");
        }
    }
}
