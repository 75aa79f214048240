//! A program that uses cwtext as a library, without its command line: it classifies the text
//! given as arguments with the built-in `topics` model (20 Newsgroups) and prints the best
//! label and its probability. CI builds and runs it without the default features, which proves
//! that the library needs no clap, anyhow or indicatif:
//!
//! ```sh
//! cargo run --no-default-features --example classify -- "the shuttle reached orbit"
//! ```

use std::path::Path;
use std::process::ExitCode;

use cwtext::integrations::shelf::DEFAULT_MODEL;
use cwtext::jobs::batch::classify_text;
use cwtext::learn::probability::Method;
use cwtext::model::Model;

fn main() -> ExitCode {
    let text = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let result = Model::from_bytes(DEFAULT_MODEL, Path::new("topics")).and_then(|model| {
        let p = classify_text(&model, &text, Method::Exact)?;
        Ok((
            model.labels()[p.label].clone(),
            p.distribution.probabilities[p.label],
        ))
    });
    match result {
        Ok((label, probability)) => {
            println!("{label}\t{probability:.4}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("classify: {e}");
            ExitCode::from(2)
        }
    }
}
