//! Which names in a folder are nobody's documents: hidden files and what operating systems and
//! archivers leave behind. One rule for every walk of a corpus or a mail store.

/// Whether a file or folder is left out of every walk: hidden (a dot first, which covers
/// macOS's `.DS_Store` and `._*` resource forks too), or what an operating system or an
/// archiver leaves in a folder and nobody filed: Windows's `desktop.ini` and thumbnail caches,
/// the `__MACOSX` folder of a zip made on a Mac, macOS's custom-icon file `Icon\r`, the recycle
/// bin and volume information of a Windows drive (case ignored). Read as documents they were a
/// label's (`desktop.ini`, text) or a skipped binary file that failed the batch (`Thumbs.db`),
/// and `__MACOSX` was warned about as a label without documents.
pub fn is_left_out(name: &std::ffi::OsStr) -> bool {
    const LEFT_BY_SYSTEMS: [&str; 8] = [
        "desktop.ini",
        "thumbs.db",
        "ehthumbs.db",
        "ehthumbs_vista.db",
        "__macosx",
        "icon\r",
        "$recycle.bin",
        "system volume information",
    ];
    let name = name.to_string_lossy();
    name.starts_with('.')
        || LEFT_BY_SYSTEMS
            .iter()
            .any(|left| name.eq_ignore_ascii_case(left))
}

#[cfg(test)]
mod tests {
    use super::is_left_out;
    use std::ffi::OsStr;

    #[test]
    fn hidden_files_and_what_systems_leave_are_left_out_and_nothing_else() {
        for name in [
            ".DS_Store",
            "._review.txt",
            "desktop.ini",
            "Desktop.INI",
            "Thumbs.db",
            "__MACOSX",
            "Icon\r",
            "$RECYCLE.BIN",
            "System Volume Information",
        ] {
            assert!(is_left_out(OsStr::new(name)), "{name:?}");
        }
        for name in [
            "Icon",
            "thumbs.db.txt",
            "desktop",
            "MACOSX",
            "spam",
            "00001.txt",
        ] {
            assert!(!is_left_out(OsStr::new(name)), "{name:?}");
        }
    }
}
