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
/// Inlined for the one-byte case (most of a cached record's bucket gaps and fields), which
/// every epoch from disk decodes once per feature.
#[inline]
pub fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let b = *bytes.get(*at)?;
    if b < 0x80 {
        *at += 1;
        return Some(u64::from(b));
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
    }
}
