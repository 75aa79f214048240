//! Layer 1, text: from a file's bytes to a hashed sparse feature vector.
//!
//! [`input`] decodes any file into a [`input::Document`] (text encodings, email); [`pipeline`] is
//! the configured chain of stages (tokenise, filter, n-grams, hash, weight) stored in every
//! model; [`subword_trainer`] trains the BPE or WordPiece vocabulary a subword pipeline stores;
//! [`vocabulary`] keeps the words behind each bucket for `explain` and `inspect`;
//! [`length`] measures how long a corpus's texts are, [`language`] which stemmer their language has; [`featurize`] runs a pipeline on a file or document, the step training and inference share;
//! [`left_out`] names what no walk reads (hidden files, what systems leave in folders);
//! [`source`] says where a document's bytes are (a file, or one message of an mbox), and
//! [`mailbox`] reads mail stores (Maildir, mbox, MH) as folders of such documents; [`rows`]
//! reads one file of labelled rows (fastText lines, TSV, CSV) as documents, [`line_files`] a
//! folder of a file per label with a line per document.
//!
//! **May use:** the crate root's foundation ([`crate::error`], [`crate::features`],
//! [`crate::progress`]) and nothing else of the crate: no learner, model or job.

pub mod featurize;
pub mod input;
pub mod language;
pub mod left_out;
pub mod length;
pub mod line_files;
pub mod mailbox;
pub mod pipeline;
pub mod rows;
pub mod source;
pub mod subword_trainer;
pub mod vocabulary;
