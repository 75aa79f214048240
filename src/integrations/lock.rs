//! Serialising writers of one model file. A model is replaced by rename (see `Model::save`), so
//! locking the model file itself would lock an inode that the next writer no longer sees; the
//! lock lives on a sidecar `MODEL.lock` that is created once and never removed. Readers need no
//! lock: they always see a whole old or a whole new file.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// An exclusive lock on a model path, held until dropped.
#[derive(Debug)]
pub struct ModelLock {
    _file: File,
    path: PathBuf,
}

impl ModelLock {
    /// The lock file of `model`: `model` + ".lock".
    pub fn path_for(model: &Path) -> PathBuf {
        let mut name = model.as_os_str().to_os_string();
        name.push(".lock");
        PathBuf::from(name)
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
