//! Layer 4, integrations: cwtext's ties to things outside it — a full-text index, SVG plots,
//! the ready models built into the binary, and file locks.
//!
//! `archive` keeps labelled documents in a tantivy index (`label --index`, `search`; cargo
//! feature `archive`); [`plot`] draws reliability diagrams; [`shelf`] holds the embedded
//! models; [`lock`] serialises writers of one model file.
//!
//! **May use:** the foundation, [`crate::text`], [`crate::learn`] and [`crate::model`]. Not
//! [`crate::jobs`] or [`crate::experiment`], which use these.

#[cfg(feature = "archive")]
pub mod archive;
pub mod lock;
pub mod plot;
pub mod shelf;
