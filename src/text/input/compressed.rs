//! Compressed files read as the text they hold: gzip (how Debian and most systems ship man pages
//! and rotate logs), bzip2, xz and zstd. They are recognised by their magic bytes, not by the
//! file name, and decompressed up to the document byte limit (`--max-document-bytes`), so a
//! small file that expands to gigabytes costs no more than the limit. What they hold is then
//! read like any other file: text in any encoding, or mail; a tar archive inside stays binary.
//!
//! The decoders are pure-Rust crates (flate2, bzip2 with libbz2-rs-sys, lzma-rs, ruzstd): no C
//! library to build.

use std::io::{self, Read, Write};

/// A compression format recognised by its magic bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Bzip2,
    Xz,
    Zstd,
}

impl Compression {
    /// The format whose magic bytes `bytes` start with.
    pub fn detect(bytes: &[u8]) -> Option<Self> {
        // RFC 1952 §2.3.1: ID1 ID2 and CM = 8 (deflate), the only method defined.
        if bytes.starts_with(&[0x1f, 0x8b, 0x08]) {
            Some(Compression::Gzip)
        // bzip2: "BZh" and the block size digit '1'..'9'.
        } else if bytes.len() >= 4 && bytes.starts_with(b"BZh") && (b'1'..=b'9').contains(&bytes[3])
        {
            Some(Compression::Bzip2)
        // The .xz file format §2.1.1.1: FD 37 7A 58 5A 00.
        } else if bytes.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Some(Compression::Xz)
        // RFC 8878 §3.1.1: the frame magic number 0xFD2FB528, little-endian.
        } else if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Compression::Zstd)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
            Compression::Zstd => "zstd",
        }
    }
}

/// What decompressing gave.
#[derive(Debug, PartialEq, Eq)]
pub struct Decompressed {
    /// At most `max + 1` bytes: one more than the limit says that there were more.
    pub bytes: Vec<u8>,
    /// The compressed data stopped before its end (the file was cut, or read only in part);
    /// `bytes` holds what came before.
    pub truncated: bool,
}

/// Decompresses `data` as `kind`, keeping at most `max + 1` bytes of what it holds. Damaged
/// data is an error saying what is wrong, unless it is merely cut short and something came out
/// before the cut (`truncated`).
pub fn decompress(data: &[u8], kind: Compression, max: usize) -> Result<Decompressed, String> {
    let limit = max.saturating_add(1);
    let mut out = Capped {
        bytes: Vec::new(),
        limit,
    };
    let result = match kind {
        Compression::Gzip => copy(flate2::read::MultiGzDecoder::new(data), &mut out),
        Compression::Bzip2 => copy(bzip2::read::MultiBzDecoder::new(data), &mut out),
        Compression::Zstd => ruzstd::decoding::StreamingDecoder::new(data)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
            .and_then(|d| copy(d, &mut out)),
        Compression::Xz => {
            lzma_rs::xz_decompress(&mut io::BufReader::new(data), &mut out).map_err(|e| match e {
                lzma_rs::error::Error::IoError(io) => io,
                other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
            })
        }
    };
    let full = out.bytes.len() >= limit;
    match result {
        Ok(()) => Ok(Decompressed {
            bytes: out.bytes,
            truncated: false,
        }),
        // The limit was reached: the rest is not wanted.
        Err(_) if full => Ok(Decompressed {
            bytes: out.bytes,
            truncated: false,
        }),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && !out.bytes.is_empty() => {
            Ok(Decompressed {
                bytes: out.bytes,
                truncated: true,
            })
        }
        Err(e) => Err(format!(
            "{} data that does not decompress: {e}",
            kind.name()
        )),
    }
}

/// What compressed `bytes` hold, at most `max` bytes of it, and a warning for each thing left
/// out (the data cut short, more than `max` bytes; `limit` names the bound for people, such as
/// `--max-document-bytes`); `None` when `bytes` are not compressed. Damaged data is an error
/// naming `path`. What a document and a compressed mbox share.
pub fn decompress_within(
    bytes: &[u8],
    path: &std::path::Path,
    max: usize,
    limit: &str,
) -> crate::error::Result<Option<(Vec<u8>, Vec<String>)>> {
    let Some(kind) = Compression::detect(bytes) else {
        return Ok(None);
    };
    let out = decompress(bytes, kind, max).map_err(|reason| crate::error::Error::Binary {
        path: path.to_path_buf(),
        reason,
    })?;
    let mut warnings = Vec::new();
    if out.truncated {
        warnings.push(format!(
            "{}: its {} data ends early (the file is cut, or more than {max} bytes compressed): only the {} bytes before were read",
            path.display(),
            kind.name(),
            out.bytes.len()
        ));
    }
    let mut whole = out.bytes;
    if whole.len() > max {
        warnings.push(format!(
            "{}: holds more than {max} bytes once decompressed ({}), only the first {max} were read ({limit})",
            path.display(),
            kind.name()
        ));
        whole.truncate(max);
    }
    Ok(Some((whole, warnings)))
}

/// Copies until `out` is full or `from` ends.
fn copy(mut from: impl Read, out: &mut Capped) -> io::Result<()> {
    let mut buffer = [0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        out.write_all(&buffer[..n])?;
    }
}

/// A writer that keeps the first `limit` bytes and then refuses more.
struct Capped {
    bytes: Vec<u8>,
    limit: usize,
}

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = self.limit - self.bytes.len();
        if room == 0 {
            return Err(io::Error::other("the document byte limit is reached"));
        }
        let n = buf.len().min(room);
        self.bytes.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &[u8] = "Ein Beispiel für Text: Grüße aus der Handbuchseite.\n".as_bytes();

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn all_four(data: &[u8]) -> Vec<(Compression, Vec<u8>)> {
        let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
        bz.write_all(data).unwrap();
        let mut xz = Vec::new();
        lzma_rs::xz_compress(&mut io::BufReader::new(data), &mut xz).unwrap();
        let zst =
            ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest);
        vec![
            (Compression::Gzip, gzip(data)),
            (Compression::Bzip2, bz.finish().unwrap()),
            (Compression::Xz, xz),
            (Compression::Zstd, zst),
        ]
    }

    #[test]
    fn each_format_is_recognised_and_gives_back_its_bytes() {
        for (kind, packed) in all_four(TEXT) {
            assert_eq!(Compression::detect(&packed), Some(kind));
            let out = decompress(&packed, kind, 1 << 20).unwrap();
            assert_eq!(out.bytes, TEXT, "{kind:?}");
            assert!(!out.truncated);
        }
        // Text, mail and other binaries are not compressed data.
        assert_eq!(Compression::detect(TEXT), None);
        assert_eq!(Compression::detect(b"From: a@b\n\nhi"), None);
        assert_eq!(Compression::detect(b"BZh"), None);
        assert_eq!(Compression::detect(b"BZhx rest"), None);
        assert_eq!(Compression::detect(b"\x89PNG\r\n\x1a\n"), None);
    }

    #[test]
    fn a_bomb_costs_no_more_than_the_limit() {
        // 8 MiB of zeros compress to a few KiB (lzma-rs's encoder stores literals only, so its
        // xz is not small); only limit + 1 bytes are ever held.
        let zeros = vec![0u8; 8 << 20];
        for (kind, packed) in all_four(&zeros) {
            assert!(
                kind == Compression::Xz || packed.len() < 64 << 10,
                "{kind:?} {}",
                packed.len()
            );
            let out = decompress(&packed, kind, 1000).unwrap();
            assert_eq!(out.bytes.len(), 1001, "{kind:?}");
            assert!(!out.truncated);
        }
    }

    #[test]
    fn a_cut_stream_keeps_what_came_before_and_damage_is_named() {
        let long: Vec<u8> = TEXT.iter().cycle().take(200_000).copied().collect();
        let packed = gzip(&long);
        let cut = decompress(&packed[..packed.len() / 2], Compression::Gzip, 1 << 20).unwrap();
        assert!(cut.truncated);
        assert!(!cut.bytes.is_empty() && long.starts_with(&cut.bytes));

        let mut bad = gzip(TEXT);
        let middle = bad.len() / 2;
        bad[middle] ^= 0xff;
        bad[middle + 1] ^= 0xff;
        let err = decompress(&bad, Compression::Gzip, 1 << 20).unwrap_err();
        assert!(
            err.starts_with("gzip data that does not decompress: "),
            "{err}"
        );
        // Nothing decodable at all after the magic.
        let err = decompress(&[0x1f, 0x8b, 0x08], Compression::Gzip, 100).unwrap_err();
        assert!(
            err.starts_with("gzip data that does not decompress"),
            "{err}"
        );
    }
}
