//! `label --index IDX`: opens the library's archive for a `label` run, naming the model as the
//! user gave it. Builds without the `archive` cargo feature (no tantivy) keep the option and
//! refuse it by name.

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
    use super::*;

    /// The index being written.
    pub struct Archiving(cwtext::jobs::archiving::Archiving);

    impl Archiving {
        /// Opens (or creates) the index at `index` for writing.
        pub fn open(index: &Path, model: &Model, arg: &ModelArg) -> anyhow::Result<Archiving> {
            let name = arg.model.as_ref().map_or_else(
                || {
                    cwtext::integrations::shelf::default_model()
                        .name
                        .to_string()
                },
                |p| p.display().to_string(),
            );
            Ok(Archiving(cwtext::jobs::archiving::Archiving::open(
                index, model, &name,
            )?))
        }

        /// Adds (or replaces) the document at `source` (a file, or an mbox message).
        pub fn add(
            &mut self,
            model: &Model,
            source: &Source,
            p: &Prediction,
            text: DocumentText,
        ) -> anyhow::Result<()> {
            Ok(self.0.add(model, source, p, text)?)
        }

        /// Commits everything added at once; returns the line that says so.
        pub fn commit(self) -> anyhow::Result<String> {
            let index = self.0.index().to_path_buf();
            let added = self.0.commit()?;
            Ok(format!("indexed {added} files in {}", index.display()))
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
