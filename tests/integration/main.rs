//! cwtext's integration tests, one test binary (as ripgrep does) so that a test run links once.
//! Each module was a test binary of its own; `cargo test --test integration MODULE::` runs one,
//! e.g. `cargo test --release --test integration reproduce:: -- --ignored`.

mod common;

#[cfg(feature = "archive")]
mod archive;
mod bad_inputs;
mod cli;
mod hash_collisions;
mod layers;
mod learners;
mod model_compat;
mod reproduce;
mod selection;
mod splits;
