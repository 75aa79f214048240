//! cwtext: confidence-weighted online text classification.
//!
//! The crate is built in layers; each is a folder whose module doc says what it may use, and
//! dependencies point one way, downwards:
//!
//! | layer | modules | what it is |
//! |---|---|---|
//! | foundation | [`error`], [`features`], [`progress`] | the typed errors, the sparse vector and the progress trait every layer shares |
//! | 1 [`text`] | input, pipeline, vocabulary | any file's bytes → a hashed sparse [`features::FeatureVector`] |
//! | 2 [`learn`] | learner, probability, calibration, rehearsal | the CW learner and its probabilities, on vectors alone |
//! | 3 [`model`] | the [`model::Model`], its file format, merge | pipeline + labels + learner, saved and loaded |
//! | 4 [`integrations`] | archive, plot, shelf, lock | ties to things outside: a search index, SVG, embedded models, file locks |
//! | 5 [`jobs`] | corpus, train, tune, online, batch, label, route, deliver, decisions, refile, metrics, explain, cluster | what a user asks for, over files and corpora |
//! | 6 [`experiment`] | the papers' reproductions | uses every layer; nothing uses it |
//! | 6 `serve` | the server of `cwtext serve` (cargo feature `serve`) | uses every layer below; nothing uses it |
//!
//! # Use from Rust
//!
//! Train on a folder per label and classify a string, in-process (what `cwtext train` and
//! `cwtext classify` do; with `default-features = false` the crate has no command-line
//! dependencies):
//!
//! ```
//! use std::path::Path;
//!
//! use cwtext::jobs::batch::classify_text;
//! use cwtext::jobs::corpus::{scan_labelled, FileFilter};
//! use cwtext::jobs::plan::TrainRequest;
//! use cwtext::learn::probability::Method;
//! use cwtext::progress::NoProgress;
//!
//! # fn main() -> cwtext::Result<()> {
//! // tests/fixtures/news/{rec.sport.hockey,sci.space,talk.politics.mideast}/<file>
//! let corpus = scan_labelled(Path::new("tests/fixtures/news"), &FileFilter::default())?;
//! // `cwtext train`'s settings, every rule checked once; here with fewer epochs.
//! let plan = TrainRequest { epochs: 3, ..TrainRequest::default() }.plan()?;
//! let model = plan.train(&corpus, None, &NoProgress, &mut |_| {})?.trained.model;
//!
//! let text = "The space shuttle will launch a satellite into orbit around the moon.";
//! let prediction = classify_text(&model, text, Method::Exact)?;
//! assert_eq!(model.labels()[prediction.label], "sci.space");
//! let p = prediction.distribution.probabilities[prediction.label];
//! assert!(p > 1.0 / 3.0, "{p}"); // the best of three labels
//! # Ok(())
//! # }
//! ```
//!
//! The command-line interface is not part of the library: it lives in the `cwtext` binary
//! (`src/main.rs` and `src/cli/`), behind the default cargo feature `cli`.

pub mod error;
pub mod experiment;
pub mod features;
pub mod integrations;
pub mod jobs;
pub mod learn;
pub mod model;
pub mod progress;
#[cfg(feature = "serve")]
pub mod serve;
pub mod text;

pub use error::{Error, Result};
