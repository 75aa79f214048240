//! Any bytes as an mbox → scan → every message read back with its quoting undone: must never
//! panic or hang, and the messages must lie inside the input, in order, apart.
#![no_main]

use std::path::Path;

use cwtext::text::mailbox::mbox::{scan_bytes, split_bytes, unquote};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(scan) = scan_bytes(bytes, Path::new("fuzz")) {
        let mut last = 0;
        for s in &scan.spans {
            assert!(last <= s.offset && s.offset < s.start && s.start < s.end, "{s:?}");
            assert!(s.end as usize <= bytes.len(), "{s:?} past {}", bytes.len());
            last = s.end;
            let message = unquote(&bytes[s.start as usize..s.end as usize]);
            assert!(message.len() <= (s.end - s.start) as usize);
        }
    }
    let _ = split_bytes(bytes, "-", cwtext::text::pipeline::DEFAULT_MAX_DOCUMENT_BYTES);
});
