//! `label --index IDX`: the open archive that a labelling run adds its documents to, each with
//! its prediction, its text and the model that labelled it (cargo feature `archive`).

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::integrations::archive::{Archive, ArchiveWriter, ArchivedDocument};
use crate::jobs::batch::DocumentText;
use crate::model::{Model, Prediction};
use crate::text::source::Source;

/// The index being written.
pub struct Archiving {
    writer: ArchiveWriter,
    /// What every document records as the model that labelled it.
    model: String,
    index: PathBuf,
}

impl Archiving {
    /// Opens (or creates) the index at `index` for writing, with as many indexing threads as
    /// the run has workers. `model_name` names the model for people (a file name as given, or a
    /// built-in model's name); [`model_identity`] adds its checksum.
    pub fn open(index: &Path, model: &Model, model_name: &str) -> Result<Archiving> {
        let archive = Archive::open_or_create(index)?;
        Ok(Archiving {
            writer: archive.writer(rayon::current_num_threads())?,
            model: model_identity(model, model_name),
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
    ) -> Result<()> {
        let path = source.path();
        let dist = &p.distribution;
        let mut order: Vec<usize> = (0..dist.probabilities.len()).collect();
        order.sort_by(|&a, &b| dist.probabilities[b].total_cmp(&dist.probabilities[a]));
        // Absolute, so that labelling the same files again from elsewhere finds their entries.
        let key = std::fs::canonicalize(path)
            .or_else(|_| std::path::absolute(path))
            .unwrap_or_else(|_| path.to_path_buf());
        // An mbox message is its file and the byte offset of its `From ` line.
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

    /// The index's folder.
    pub fn index(&self) -> &Path {
        &self.index
    }

    /// Commits everything added at once; returns how many documents were added.
    pub fn commit(self) -> Result<usize> {
        let added = self.writer.added();
        self.writer.commit()?;
        Ok(added)
    }
}

/// `NAME crc32:XXXXXXXX`, as the decision log names models too.
pub use crate::jobs::decisions::model_identity;
