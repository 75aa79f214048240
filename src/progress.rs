//! How long-running library work reports progress, without a terminal library: a job calls
//! these methods as it goes, and the caller decides what to show. The command line draws an
//! `indicatif` bar; a library caller passes [`NoProgress`] or its own implementation.
//! Implementations must be cheap and thread-safe: featurisation calls [`Progress::inc`] from
//! every worker thread, once per document.

/// Progress of one piece of work: a length, a position and a message. Every method does
/// nothing by default.
pub trait Progress: Sync {
    /// The amount of work, in the units of [`Progress::inc`] (documents, steps).
    fn set_length(&self, _len: u64) {}
    /// `delta` more work was found (a walk that lists files as it goes).
    fn inc_length(&self, _delta: u64) {}
    /// How much is done.
    fn set_position(&self, _position: u64) {}
    /// `delta` more is done.
    fn inc(&self, _delta: u64) {}
    /// What is being done now ("reading", "epoch 2/5").
    fn set_message(&self, _message: &str) {}
    /// Starts over (position and elapsed time back to zero).
    fn reset(&self) {}
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}
