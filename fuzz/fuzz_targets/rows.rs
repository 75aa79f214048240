//! Any bytes as a file of labelled rows, in each format → scan → every row's text taken out of
//! its span again: must never panic or hang; the rows must lie inside the input, in order, and
//! every span the scan gives must read back.
#![no_main]

use std::path::Path;

use cwtext::text::rows::{scan_bytes, text_of, RowFormat};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    for format in [
        RowFormat::FastText,
        RowFormat::Tsv,
        RowFormat::Csv,
        RowFormat::Semicolon,
        RowFormat::JsonLines,
        RowFormat::Trec,
    ] {
        let Ok(scan) = scan_bytes(bytes, Path::new("fuzz"), format) else {
            continue;
        };
        let (mut last_end, mut last_line) = (0, 0);
        for (span, label) in &scan.rows {
            assert!(*label < scan.labels.len());
            assert!(!scan.labels[*label].is_empty());
            assert!(span.start <= span.end && span.end as usize <= bytes.len(), "{span:?}");
            assert!(span.start >= last_end && span.line > last_line, "{span:?}");
            (last_end, last_line) = (span.end, span.line);
            let raw = &bytes[span.start as usize..span.end as usize];
            let text = text_of(span, raw).unwrap_or_else(|e| panic!("{span:?}: {e}"));
            assert!(text.len() <= raw.len(), "{span:?}");
        }
    }
});
