//! Serialising writers of one model file. A model is replaced by rename (see `Model::save`), so
//! locking the model file itself would lock an inode that the next writer no longer sees; the
//! lock lives on a sidecar `MODEL.lock` that is created once and never removed. Readers need no
//! lock: they always see a whole old or a whole new file.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::link_target;

/// `path` with `suffix` appended to its name (`mail.cwm` + `.lock` = `mail.cwm.lock`): the
/// files that live beside a model or a mailbox.
pub fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// The file beside a model: [`sidecar`] of the file `model` names once symbolic links are
/// followed ([`link_target`]; `model` itself when they cannot be), so that a model named
/// through a link and by its own path has one lock, one journal, one server mark.
fn beside_model(model: &Path, suffix: &str) -> PathBuf {
    sidecar(
        &link_target(model).unwrap_or_else(|_| model.to_path_buf()),
        suffix,
    )
}

/// The journal a `cwtext serve` keeps beside `model` (`MODEL.journal`, written by
/// `serve::journal`).
pub fn journal_path(model: &Path) -> PathBuf {
    beside_model(model, ".journal")
}

/// The length of a journal's header: a journal longer than that holds records a server wrote
/// (corrections it acknowledged) that are not yet in the model file.
pub const JOURNAL_HEADER_LEN: u64 = 16;

/// An exclusive lock on a model path, held until dropped.
#[derive(Debug)]
pub struct ModelLock {
    _file: File,
    path: PathBuf,
}

impl ModelLock {
    /// The lock file of `model`: `model` + ".lock".
    pub fn path_for(model: &Path) -> PathBuf {
        beside_model(model, ".lock")
    }

    /// Waits for and takes the exclusive lock of `model`.
    pub fn acquire(model: &Path) -> Result<ModelLock> {
        let path = Self::path_for(model);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        file.lock().map_err(|e| Error::io(&path, e))?;
        Ok(ModelLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Takes the lock to correct the model in place (`learn`): refused with
    /// [`Error::Served`] when a `cwtext serve` holds the model, whose next snapshot would undo
    /// the correction, and with [`Error::Journaled`] when a server that stopped without its
    /// last snapshot (killed) left corrections in the journal: changing the file now would
    /// leave them for a model that no longer exists (the server refuses such a journal).
    pub fn acquire_to_learn(model: &Path) -> Result<ModelLock> {
        let lock = ModelLock::acquire(model)?;
        if let Some((server, pid)) = ServerMark::holder(model) {
            return Err(Error::Served {
                path: model.to_path_buf(),
                server,
                pid,
            });
        }
        let journal = journal_path(model);
        if std::fs::metadata(&journal).is_ok_and(|m| m.len() > JOURNAL_HEADER_LEN) {
            return Err(Error::Journaled {
                path: model.to_path_buf(),
                journal,
            });
        }
        Ok(lock)
    }
}

/// A running `cwtext serve`'s claim on a model: `MODEL.server`, locked (`flock`) for as long as
/// the server runs, holding its address and process id. The lock, not the file, says the
/// server is alive: a killed server leaves the file, but the system drops its lock; a server
/// that stops removes it.
#[derive(Debug)]
pub struct ServerMark {
    _file: File,
    path: PathBuf,
}

impl ServerMark {
    /// The mark of `model`: `model` + ".server".
    pub fn path_for(model: &Path) -> PathBuf {
        beside_model(model, ".server")
    }

    /// Claims `model` for a server at `address`; an error naming the other server when one
    /// already holds it.
    pub fn hold(model: &Path, address: &str) -> Result<ServerMark> {
        use std::io::Write;
        use std::os::unix::fs::MetadataExt;
        let path = Self::path_for(model);
        loop {
            let mut file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(&path)
                .map_err(|e| Error::io(&path, e))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let (server, pid) = Self::holder(model).unwrap_or_default();
                    return Err(Error::Served {
                        path: model.to_path_buf(),
                        server,
                        pid,
                    });
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
            }
            // A server that stops removes its mark (Drop) before its lock goes: a file opened
            // just before that removal is locked here but no longer at the path, and holding it
            // would claim nothing. Then open the path again.
            let held = file.metadata().map_err(|e| Error::io(&path, e))?;
            let at_path = std::fs::metadata(&path).ok();
            if at_path.is_none_or(|m| m.dev() != held.dev() || m.ino() != held.ino()) {
                continue;
            }
            file.set_len(0).map_err(|e| Error::io(&path, e))?;
            writeln!(file, "{address}\n{}", std::process::id()).map_err(|e| Error::io(&path, e))?;
            return Ok(ServerMark { _file: file, path });
        }
    }

    /// The address and process id of the server holding `model`, if one runs.
    pub fn holder(model: &Path) -> Option<(String, String)> {
        let path = Self::path_for(model);
        let file = File::open(&path).ok()?;
        match file.try_lock_shared() {
            Ok(()) => None,
            Err(_) => {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let mut lines = text.lines();
                let server = lines.next().unwrap_or("an unknown address").to_string();
                let pid = lines.next().unwrap_or("?").to_string();
                Some((server, pid))
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A server that stops takes its mark away (while it still holds the lock, so no other server
/// can have claimed that file); a killed one leaves it, unlocked, and the next server reuses it.
impl Drop for ServerMark {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("m.cwm");
        let first = ModelLock::acquire(&model).unwrap();
        assert!(first.path().ends_with("m.cwm.lock"));
        let other = File::open(first.path()).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(first);
        assert!(other.try_lock().is_ok());
    }
}
