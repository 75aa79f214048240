//! Routing labelled files into `DEST/<label>/`, never overwriting: a name that is taken gets a
//! numbered suffix (`note.txt` → `note-1.txt`). Delivery into mail stores (Maildir, mbox) is
//! [`crate::jobs::deliver`].

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The folder for documents whose best probability is below the threshold.
pub const UNSURE: &str = "_unsure";

/// Copy or move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteMode {
    Copy,
    Move,
}

/// Places `source` into `dest_dir`, creating it, under the first free name. Returns the new path.
pub fn route_file(source: &Path, dest_dir: &Path, mode: RouteMode) -> Result<PathBuf> {
    let name = source.file_name().unwrap_or(source.as_os_str());
    let (candidate, _) = claim_name(dest_dir, Path::new(name))?;
    transfer(source, &candidate, mode)?;
    Ok(candidate)
}

/// Writes `bytes` (a message taken out of an mbox) into `dest_dir` as a file called `name`, or
/// the first free name after it. Returns the new path.
pub fn route_bytes(bytes: &[u8], dest_dir: &Path, name: &str) -> Result<PathBuf> {
    let (candidate, mut file) = claim_name(dest_dir, Path::new(name))?;
    if let Err(e) = file.write_all(bytes).and_then(|_| file.sync_all()) {
        drop(file);
        let _ = std::fs::remove_file(&candidate);
        return Err(Error::io(&candidate, e));
    }
    Ok(candidate)
}

/// Creates the first free file of `dest_dir` named `name`, `stem-1.ext`, `stem-2.ext`, …
fn claim_name(dest_dir: &Path, name: &Path) -> Result<(PathBuf, std::fs::File)> {
    std::fs::create_dir_all(dest_dir).map_err(|e| Error::io(dest_dir, e))?;
    let stem = name
        .file_stem()
        .unwrap_or(name.as_os_str())
        .to_string_lossy()
        .into_owned();
    let ext = name
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()));
    for n in 0u32.. {
        let candidate = if n == 0 {
            dest_dir.join(name)
        } else {
            dest_dir.join(format!("{stem}-{n}{}", ext.as_deref().unwrap_or("")))
        };
        // create_new makes taking the name atomic: two workers never pick the same one.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(file) => return Ok((candidate, file)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(&candidate, e)),
        }
    }
    unreachable!("u32 names exhausted")
}

fn transfer(source: &Path, target: &Path, mode: RouteMode) -> Result<()> {
    let copy = || {
        std::fs::copy(source, target).map_err(|e| {
            let _ = std::fs::remove_file(target);
            Error::io(source, e)
        })
    };
    match mode {
        RouteMode::Copy => copy().map(|_| ()),
        RouteMode::Move => {
            if std::fs::rename(source, target).is_err() {
                // Across file systems rename fails: copy, then remove the original.
                copy()?;
                std::fs::remove_file(source).map_err(|e| Error::io(source, e))?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("note.txt");
        std::fs::write(&src, "one").unwrap();
        let dest = dir.path().join("out/sci");
        let a = route_file(&src, &dest, RouteMode::Copy).unwrap();
        let b = route_file(&src, &dest, RouteMode::Copy).unwrap();
        assert_eq!(a, dest.join("note.txt"));
        assert_eq!(b, dest.join("note-1.txt"));
        let c = route_file(&src, &dest, RouteMode::Move).unwrap();
        assert_eq!(c, dest.join("note-2.txt"));
        assert!(!src.exists());
        assert_eq!(std::fs::read_to_string(c).unwrap(), "one");
    }
}
