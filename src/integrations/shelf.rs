//! The shelf: ready models built into the binary, so that people can route mail, sort reviews
//! or file news without training anything. Each is chosen by name (`-m spam`); a path still
//! names a model file. How each was built, and its test accuracy, is in `models/README.md`.

use std::path::Path;

use crate::error::Result;
use crate::model::{Checksum, Model};

/// One ready model.
#[derive(Debug)]
pub struct ShelfModel {
    /// What `-m` takes.
    pub name: &'static str,
    /// One line for listings and help.
    pub description: &'static str,
    /// The model file, embedded with `include_bytes!`.
    pub bytes: &'static [u8],
}

impl ShelfModel {
    /// How the model is named in messages and in an archive's model identity.
    pub fn origin(&self) -> String {
        format!("<shelf model {}>", self.name)
    }

    /// Parses the embedded bytes. Nothing is copied, and the checksum is left to the test
    /// below unless `verify` asks for it (`--verify`).
    pub fn load(&self, verify: bool) -> Result<Model> {
        let checksum = if verify {
            Checksum::Verify
        } else {
            Checksum::Embedded
        };
        Model::from_static(self.bytes, Path::new(&self.origin()), checksum)
    }

    /// Writes the model's file to `path`, byte for byte, so that it can be taught (`learn`
    /// changes a model file, and a built-in model is part of the binary). The checksum is
    /// verified first; an existing `path` is refused, not replaced (it may be a model with
    /// corrections in it); the file appears whole or not at all (written beside it, then
    /// linked into place).
    pub fn save_copy(&self, path: &Path) -> Result<()> {
        self.load(true)?;
        let io = |e| crate::error::Error::io(path, e);
        if path.exists() {
            return Err(crate::error::Error::InvalidSetting(format!(
                "{} exists; a copy of the built-in model {} would replace it (remove it or choose another name)",
                path.display(),
                self.name
            )));
        }
        let mut tmp = crate::model::format::model_tempfile_beside(path).map_err(io)?;
        std::io::Write::write_all(tmp.as_file_mut(), self.bytes).map_err(io)?;
        tmp.as_file().sync_all().map_err(io)?;
        tmp.persist_noclobber(path).map_err(|e| io(e.error))?;
        Ok(())
    }
}

/// The models on the shelf; the first is the default.
/// The default model's bytes (the `topics` shelf model, trained on 20 Newsgroups; see
/// `models/README.md`).
pub static DEFAULT_MODEL: &[u8] = SHELF[0].bytes;

pub static SHELF: [ShelfModel; 3] = [
    ShelfModel {
        name: "topics",
        description: "news topics: the 20 Newsgroups (alt.atheism … talk.religion.misc)",
        bytes: include_bytes!("../../models/topics.cwm"),
    },
    ShelfModel {
        name: "spam",
        description: "mail: spam or ham (SpamAssassin public corpus, raw RFC 822 messages)",
        bytes: include_bytes!("../../models/spam.cwm"),
    },
    ShelfModel {
        name: "sentiment",
        description: "movie-review sentences: pos or neg (Pang & Lee sentence polarity)",
        bytes: include_bytes!("../../models/sentiment.cwm"),
    },
];

/// The model used when none is named.
pub fn default_model() -> &'static ShelfModel {
    &SHELF[0]
}

/// The shelf model called `name`, if any.
pub fn find(name: &str) -> Option<&'static ShelfModel> {
    SHELF.iter().find(|m| m.name == name)
}

/// What a model argument (`-m`) that is a built-in model's name means, the same for every
/// command and for `serve`: the built-in model, even when a file of that name is in the
/// current directory (`./NAME` names the file); the flag is whether such a file is there, for
/// the warning.
pub fn named(spec: &std::path::Path) -> Option<(&'static ShelfModel, bool)> {
    let m = find(spec.to_str()?)?;
    Some((m, spec.exists()))
}

/// The warning when [`named`] finds a file beside the built-in name.
pub fn also_a_file(name: &str) -> String {
    format!("{name} names a built-in model and a file; using the built-in one (write ./{name} for the file)")
}

/// The names, for messages: "topics, spam, sentiment".
pub fn names() -> String {
    SHELF.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shelf_model_is_intact_and_loads_within_the_size_budget() {
        for m in &SHELF {
            // The checksum that `load` skips by default: verified here, on the bytes the
            // binary embeds.
            let model = m.load(true).unwrap_or_else(|e| panic!("{}: {e}", m.name));
            assert!(
                m.bytes.len() <= 8 << 20,
                "{} is {} bytes",
                m.name,
                m.bytes.len()
            );
            assert!(model.labels().len() >= 2, "{}", m.name);
        }
        let labels = |name| find(name).unwrap().load(false).unwrap().labels().to_vec();
        assert_eq!(labels("spam"), ["ham", "spam"]);
        assert_eq!(labels("sentiment"), ["neg", "pos"]);
        assert_eq!(labels("topics").len(), 20);
        assert!(find("nope").is_none());
        assert_eq!(default_model().name, "topics");
    }
}
