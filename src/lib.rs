//! cwtext: confidence-weighted online text classification.
//!
//! The crate is a chain of small pieces, each in its own module:
//!
//! * [`input`] turns any file's bytes into a [`input::Document`] (text decoding, email parsing);
//! * [`pipeline`] turns a document into a hashed sparse [`features::FeatureVector`], one stage per
//!   file, configured by a serde value that is stored in every model;
//! * [`learner`] holds the multi-class confidence-weighted learner (EMNLP 2009), split into the
//!   update rule, the covariance projection and the constraint strategy;
//! * [`probability`] turns the weight Gaussian into per-label probabilities;
//! * [`model`] reads and writes the versioned model file;
//! * [`corpus`], [`train`], [`metrics`] and [`route`] are the batch jobs the CLI runs;
//! * `archive` keeps labelled documents in a full-text index (tantivy) for `label --index`
//!   and `search` (the default cargo feature `archive`);
//! * [`cli`] is the command-line layer: argument structs and one `run` per subcommand.
//!
//! `main.rs` only parses the arguments and dispatches to [`cli::run`].

#[cfg(feature = "archive")]
pub mod archive;
pub mod batch;
pub mod calibration;
pub mod cli;
#[cfg(feature = "cluster")]
pub mod cluster;
pub mod corpus;
pub mod error;
pub mod experiment;
pub mod explain;
pub mod features;
pub mod input;
pub mod learner;
pub mod lock;
pub mod merge;
pub mod metrics;
pub mod model;
pub mod online;
pub mod pipeline;
pub mod plot;
pub mod probability;
pub mod rehearsal;
pub mod route;
pub mod shelf;
pub mod train;
pub mod tune;
pub mod vocabulary;

pub use error::{Error, Result};
