//! Layer 5, jobs: the things a user asks for, each reading files or corpora and driving the
//! layers below — train, tune, online corrections, batch classification, label and route,
//! explain, evaluate.
//!
//! [`corpus`] scans a folder per label (and [`folder_level`] words the refusal of a folder named one level off); [`train`] featurises a corpus, chooses settings and
//! trains (with its settings validated once into a [`plan::TrainPlan`], the only way in; the
//! hash bits by the rule of [`buckets`]) on
//! [`trainer`] (the epochs, shards and the model a trainer makes) and [`calibrate`] (the
//! probability scale), reading the featurised examples through [`examples::ExampleSource`] from
//! memory or from [`feature_cache`] (a compact file on disk, for corpora larger than memory;
//! its varints and positioned reads in [`disk`], shared with the spooled [`file_table`]);
//! `cluster` trains across processes (cargo feature `cluster`); [`tune`]
//! searches settings (checked once into a [`tune::TunePlan`]); [`online`] applies corrections;
//! [`batch`] classifies many files and [`classify_output`] prints a prediction as `classify` does; [`label`] walks a folder, classifies and routes, and
//! `archiving` (cargo feature `archive`) keeps what it labelled in a search index; [`route`]
//! copies or moves a file into its label's folder and [`deliver`] a message into a Maildir or
//! mbox store; [`decisions`] records what `label` decided, and [`refile`] learns from where the
//! user refiled messages since; [`metrics`] scores predictions; [`explain`]
//! says which words decided a label; [`plan`] checks a training run's settings; [`filter`] passes
//! one message through with its label in added header fields (mail delivery).
//!
//! **May use:** every layer below ([`crate::text`], [`crate::learn`], [`crate::model`],
//! [`crate::integrations`]) and the foundation. Not [`crate::experiment`].

#[cfg(feature = "archive")]
pub mod archiving;
pub mod batch;
pub mod buckets;
pub mod calibrate;
pub mod classify_output;
#[cfg(feature = "cluster")]
pub mod cluster;
pub mod corpus;
pub mod decisions;
pub mod deliver;
pub mod disk;
pub mod examples;
pub mod explain;
pub mod feature_cache;
pub mod file_table;
pub mod filter;
pub mod folder_level;
pub mod label;
pub mod metrics;
pub mod online;
pub mod permutation;
pub mod plan;
pub mod refile;
pub mod route;
pub mod train;
pub mod trainer;
pub mod tune;
