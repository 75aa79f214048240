//! cwtext's integration tests, one test binary (as ripgrep does) so that a test run links once.
//! Each module was a test binary of its own; `cargo test --test integration MODULE::` runs one,
//! e.g. `cargo test --release --test integration reproduce:: -- --ignored`. The modules that run
//! the `cwtext` binary need the `cli` feature; the others test the library alone.

#[cfg(feature = "cli")]
mod common;
mod in_process;

#[cfg(all(feature = "cli", feature = "archive"))]
mod archive;
#[cfg(feature = "cli")]
mod bad_inputs;
#[cfg(feature = "cli")]
mod chargrams;
#[cfg(feature = "cli")]
mod cli;
#[cfg(feature = "cli")]
mod compressed;
#[cfg(feature = "cli")]
mod corrections;
#[cfg(feature = "cli")]
mod dataset_layouts;
#[cfg(feature = "cli")]
mod delivery;
#[cfg(feature = "cli")]
mod elisions;
#[cfg(feature = "cli")]
mod feature_cache;
#[cfg(feature = "cli")]
mod filter;
#[cfg(feature = "cli")]
mod grouped_held_out;
mod hash_collisions;
#[cfg(feature = "cli")]
mod label_shift;
mod layers;
mod learners;
#[cfg(feature = "cli")]
mod lines;
#[cfg(feature = "cli")]
mod mailbox;
mod model_compat;
#[cfg(feature = "cli")]
mod ngram_weight;
#[cfg(feature = "cli")]
mod noisy_labels;
mod reproduce;
#[cfg(feature = "cli")]
mod rows;
mod selection;
#[cfg(all(feature = "cli", feature = "serve"))]
mod serve;
#[cfg(feature = "cli")]
mod short_texts;
mod splits;
#[cfg(feature = "cli")]
mod stop_word_languages;
#[cfg(feature = "cli")]
mod store;
#[cfg(feature = "cli")]
mod tune;
#[cfg(feature = "cli")]
mod unspaced;
