//! `label --index IDX`: the open archive that a `label` run adds its documents to. Builds
//! without the `archive` cargo feature (no tantivy) keep the option and refuse it by name.

use std::path::Path;

use super::common::ModelArg;
use cwtext::jobs::batch::DocumentText;
use cwtext::model::{Model, Prediction};
use cwtext::text::source::Source;

#[cfg(feature = "archive")]
pub use with_tantivy::Archiving;
#[cfg(not(feature = "archive"))]
pub use without_tantivy::Archiving;

#[cfg(feature = "archive")]
mod with_tantivy {
    use std::path::PathBuf;

    use super::*;
    use cwtext::integrations::archive::{Archive, ArchiveWriter, ArchivedDocument};

    /// The index being written.
    pub struct Archiving {
        writer: ArchiveWriter,
        /// What every document records as the model that labelled it.
        model: String,
        index: PathBuf,
    }

    impl Archiving {
        /// Opens (or creates) the index at `index` for writing, with as many indexing threads
        /// as the run has workers.
        pub fn open(index: &Path, model: &Model, arg: &ModelArg) -> anyhow::Result<Archiving> {
            let archive = Archive::open_or_create(index)?;
            Ok(Archiving {
                writer: archive.writer(rayon::current_num_threads())?,
                model: model_identity(model, arg),
                index: index.to_path_buf(),
            })
        }

        /// Adds (or replaces) the document at `source` (a file, or an mbox message).
        pub fn add(
            &mut self,
            model: &Model,
            source: &Source,
            p: &Prediction,
            text: DocumentText,
        ) -> anyhow::Result<()> {
            let path = source.path();
            let dist = &p.distribution;
            let mut order: Vec<usize> = (0..dist.probabilities.len()).collect();
            order.sort_by(|&a, &b| dist.probabilities[b].total_cmp(&dist.probabilities[a]));
            // Absolute, so that labelling the same files again from elsewhere finds their
            // entries.
            let key = std::fs::canonicalize(path)
                .or_else(|_| std::path::absolute(path))
                .unwrap_or_else(|_| path.to_path_buf());
            // An mbox message is its file and the offset of its `From ` line.
            let key = match source.mbox_span() {
                Some(span) => format!("{}@{}", key.to_string_lossy(), span.offset),
                None => key.to_string_lossy().into_owned(),
            };
            self.writer.upsert(&ArchivedDocument {
                path: key,
                subject: text.subject,
                body: text.body,
                label: model.labels()[p.label].clone(),
                probability: dist.probabilities[p.label],
                probabilities: order
                    .into_iter()
                    .map(|i| (model.labels()[i].clone(), dist.probabilities[i]))
                    .collect(),
                entropy: dist.entropy,
                model: self.model.clone(),
            })?;
            Ok(())
        }

        /// Commits everything added at once; returns the line that says so.
        pub fn commit(self) -> anyhow::Result<String> {
            let added = self.writer.added();
            self.writer.commit()?;
            Ok(format!("indexed {added} files in {}", self.index.display()))
        }
    }

    /// `NAME crc32:XXXXXXXX`: which model labelled a document (the file name as given, or the
    /// built-in model's name, and the checksum that tells versions of one file apart).
    fn model_identity(model: &Model, arg: &ModelArg) -> String {
        let name = arg.model.as_ref().map_or_else(
            || {
                cwtext::integrations::shelf::default_model()
                    .name
                    .to_string()
            },
            |p| p.display().to_string(),
        );
        match model.fingerprint() {
            Some(crc) => format!("{name} crc32:{crc:08x}"),
            None => name,
        }
    }
}

#[cfg(not(feature = "archive"))]
mod without_tantivy {
    use super::*;

    /// Never made: `open` refuses.
    pub enum Archiving {}

    impl Archiving {
        pub fn open(index: &Path, _: &Model, _: &ModelArg) -> anyhow::Result<Archiving> {
            anyhow::bail!(
                "{}: --index needs cwtext built with the `archive` cargo feature",
                index.display()
            )
        }

        pub fn add(
            &mut self,
            _: &Model,
            _: &Source,
            _: &Prediction,
            _: DocumentText,
        ) -> anyhow::Result<()> {
            match *self {}
        }

        pub fn commit(self) -> anyhow::Result<String> {
            match self {}
        }
    }
}
