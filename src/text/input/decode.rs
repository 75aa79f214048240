//! Text decoding: UTF-8 (with or without BOM), UTF-16 (with BOM, or recognised by its zero bytes),
//! and legacy 8-bit encodings guessed by `chardetng` (windows-1252 / latin-1 for Western text).
//!
//! Binary data is refused here, before any tokenising: known file signatures (images,
//! executables, archives) by `infer` when NUL or control bytes come with them (text may begin
//! like a signature: "BMW …", "SQLite …"), and otherwise the share of NUL and control bytes. A single
//! NUL inside a text file does not make it binary: `content_inspector`'s rule (any NUL in the
//! first KiB) would refuse such files, so the ratio test is written here.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8};

/// How many leading bytes the binary and UTF-16 heuristics look at.
const SNIFF_LEN: usize = 8192;

/// Decodes bytes to text, or says why they look binary.
pub fn decode_text(bytes: &[u8]) -> Result<(Cow<'_, str>, &'static str), String> {
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        let (text, _) = encoding.decode_without_bom_handling(&bytes[bom_len..]);
        return Ok((text, encoding.name()));
    }
    if let Some(encoding) = utf16_without_bom(bytes) {
        let (text, _) = encoding.decode_without_bom_handling(bytes);
        return Ok((text, encoding.name()));
    }
    if let Some(reason) = binary_reason(bytes) {
        return Err(reason);
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok((Cow::Borrowed(text), UTF_8.name()));
    }
    let mut detector = chardetng::EncodingDetector::new();
    detector.feed(
        &bytes[..bytes.len().min(64 * 1024)],
        bytes.len() <= 64 * 1024,
    );
    let encoding = detector.guess(None, true);
    let (text, _) = encoding.decode_without_bom_handling(bytes);
    Ok((text, encoding.name()))
}

/// `String::from_utf8_lossy(bytes)`, with the same result, checked first by `str::from_utf8`:
/// std's lossy conversion walks every byte through its chunk iterator even when all are
/// valid, where `from_utf8` reads ASCII a word at a time (the typical mail's header fields,
/// decoded one by one, took 11,400 instructions the lossy way and 3,000 this way, callgrind).
pub fn lossy_utf8(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Says what binary data looks like, or `None` for text.
pub fn binary_reason(bytes: &[u8]) -> Option<String> {
    let head = &bytes[..bytes.len().min(SNIFF_LEN)];
    if head.is_empty() {
        return None;
    }
    let nul = head.iter().filter(|&&b| b == 0).count();
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b | 0))
        .count();
    // A signature names binary data only beside a byte that text does not have. Many are
    // printable ("BM" a bitmap, "MZ" an executable, "ID3" an MP3, "SQLi" a SQLite database) and
    // are also how sentences begin ("BMW makes good cars"); the formats follow them with sizes,
    // versions and offsets, which hold NUL and control bytes within the first bytes.
    if nul + control > 0 {
        if let Some(kind) = infer::get(bytes) {
            if kind.matcher_type() != infer::MatcherType::Text {
                return Some(format!("{} data", kind.mime_type()));
            }
        }
    }
    // Real text, even damaged, has few of these: a handful of stray NULs or form feeds is text.
    // The NUL share is taken of at least 1 KiB, so that one NUL in a short note stays text;
    // short binaries are caught by their control bytes or their signature (`infer`).
    if nul * 100 > head.len().max(1024) || (nul + control) * 10 > head.len() {
        return Some(format!(
            "{} NUL and {} control bytes in the first {} bytes",
            nul,
            control,
            head.len()
        ));
    }
    None
}

/// Recognises UTF-16 without a byte-order mark: ASCII-heavy UTF-16 has a zero in every other
/// byte, which no 8-bit text has.
fn utf16_without_bom(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(SNIFF_LEN) & !1];
    if head.len() < 4 {
        return None;
    }
    let pairs = head.len() / 2;
    let even_zero = head.iter().step_by(2).filter(|&&b| b == 0).count();
    let odd_zero = head.iter().skip(1).step_by(2).filter(|&&b| b == 0).count();
    // Most characters ASCII (one zero byte per pair), the other byte almost never zero.
    if odd_zero * 10 >= pairs * 7 && even_zero * 20 <= pairs {
        Some(UTF_16LE)
    } else if even_zero * 10 >= pairs * 7 && odd_zero * 20 <= pairs {
        Some(UTF_16BE)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossy_utf8_is_from_utf8_lossy() {
        for bytes in [
            &b""[..],
            b"plain ASCII",
            "caf\u{e9} \u{1f600}".as_bytes(),
            b"bad \xff byte",
            b"cut \xe2\x82",
            b"\xc3\x28 overlong \xc0\xaf",
        ] {
            assert_eq!(lossy_utf8(bytes), String::from_utf8_lossy(bytes));
            assert_eq!(
                matches!(lossy_utf8(bytes), Cow::Borrowed(_)),
                matches!(String::from_utf8_lossy(bytes), Cow::Borrowed(_))
            );
        }
    }

    #[test]
    fn utf8_with_and_without_bom() {
        assert_eq!(decode_text("héllo".as_bytes()).unwrap().0, "héllo");
        let mut with_bom = vec![0xef, 0xbb, 0xbf];
        with_bom.extend_from_slice("héllo".as_bytes());
        let (text, enc) = decode_text(&with_bom).unwrap();
        assert_eq!((text.as_ref(), enc), ("héllo", "UTF-8"));
    }

    #[test]
    fn utf16_with_bom_and_without() {
        let le: Vec<u8> = "naïve text here"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        let mut bom = vec![0xff, 0xfe];
        bom.extend_from_slice(&le);
        assert_eq!(
            decode_text(&bom).unwrap(),
            ("naïve text here".into(), "UTF-16LE")
        );
        assert_eq!(
            decode_text(&le).unwrap(),
            ("naïve text here".into(), "UTF-16LE")
        );
        let be: Vec<u8> = "plain words"
            .encode_utf16()
            .flat_map(|u| u.to_be_bytes())
            .collect();
        assert_eq!(
            decode_text(&be).unwrap(),
            ("plain words".into(), "UTF-16BE")
        );
    }

    #[test]
    fn windows_1252_is_guessed() {
        // "Café crème brûlée à la carte" in windows-1252.
        let bytes =
            b"Caf\xe9 cr\xe8me br\xfbl\xe9e \xe0 la carte, tr\xe8s bien pour le d\xe9jeuner";
        let (text, enc) = decode_text(bytes).unwrap();
        assert!(text.starts_with("Café crème brûlée"), "{text}");
        assert_eq!(enc, "windows-1252");
    }

    #[test]
    fn binary_is_refused_but_a_stray_nul_is_text() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10";
        assert!(decode_text(png).unwrap_err().contains("image/png"));
        let elf = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0>\0";
        assert!(decode_text(elf).is_err());
        let noise: Vec<u8> = (0..4096u64)
            .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8)
            .collect();
        assert!(decode_text(&noise).is_err());
        let mut text = b"a perfectly ordinary sentence ".repeat(20);
        text[100] = 0;
        assert!(decode_text(&text).is_ok());
        // Regression: one NUL in a short text made it "binary" (1 NUL in 72 bytes > 1%).
        assert!(
            decode_text(b"the space shuttle\0reached orbit after its launch from the pad").is_ok()
        );
        let short_binary: Vec<u8> = (0u8..64).collect();
        assert!(decode_text(&short_binary).is_err());
    }

    /// File signatures that are also how sentences begin: `infer` takes "BM" for a bitmap,
    /// "MZ" for an executable, "ID3" for an MP3, "SQLi" for a SQLite database, and so on, and
    /// `train` skipped Debian's synopsis "SQLite map support for Postfix" as binary. Text is
    /// text whatever it starts with; the binary formats behind those signatures follow them with
    /// NUL and control bytes (sizes, versions, offsets), and are still refused, by name.
    #[test]
    fn a_sentence_that_starts_like_a_file_signature_is_text() {
        for sentence in [
            "BMW makes good cars",
            "MZ Wallace bags are light",
            "ID3 tags name the artist",
            "SQLite map support for Postfix",
            "OggS is not a word",
            "GIF87a and GIF89a are two versions",
            "fLaC is how the format spells itself",
            "MThd starts a MIDI file",
            "%PDF-1.4 is printed on the first line",
            "BZh9 was the block size",
        ] {
            let (text, _) =
                decode_text(sentence.as_bytes()).unwrap_or_else(|e| panic!("{sentence}: {e}"));
            assert_eq!(text, sentence);
        }
        // The real formats, by their first bytes.
        for (bytes, mime) in [
            (
                &b"BM\x36\x00\x0c\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00"[..],
                "image/bmp",
            ),
            (
                b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00",
                "application/vnd.microsoft.portable-executable",
            ),
            (
                b"ID3\x03\x00\x00\x00\x00\x1f\x76TIT2\x00\x00\x00\x0c",
                "audio/mpeg",
            ),
            (
                b"SQLite format 3\x00\x10\x00\x01\x01\x00\x40\x20\x20",
                "application/vnd.sqlite3",
            ),
            (
                b"GIF89a\x10\x00\x10\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00",
                "image/gif",
            ),
        ] {
            let reason = decode_text(bytes).unwrap_err();
            assert!(reason.starts_with(mime), "{reason}");
        }
    }
}
