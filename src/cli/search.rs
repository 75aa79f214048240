//! `cwtext search IDX QUERY`: full-text search in an archive written by `label --index`,
//! filtered by label and by the probability of the predicted label, with counts per label.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use super::common::{TextOrJson, Ui};
use super::Outcome;
use cwtext::integrations::archive::{Archive, SearchRequest, SearchResults};

const EXAMPLES: &str = "\
Examples:
  cwtext label news/ -m 20ng.cwm --index news.idx
  cwtext search news.idx orbit
  cwtext search news.idx orbit --label sci.space --max-prob 0.6
  cwtext search news.idx '\"space station\" OR shuttle' --top 20 --format json
  cwtext search news.idx '*' --min-prob 0.9 --top 0

QUERY is tantivy query syntax over the subject and the text. Words are joined by AND (every
word must occur) unless OR is written between them; \"a phrase\" matches words in a row, -word
excludes, subject:word or body:word searches one field, '*' matches every document. Case is
ignored, accents are not.

--min-prob and --max-prob (both inclusive) filter on the probability of the predicted label:
--max-prob 0.6 finds the documents the model was unsure about.

Text output: one line per document, best first, with score, label, probability, path and
subject separated by tabs, then one line with the number of matching documents and their count
per label (all matches, not only the --top shown). json: one object per line and document
(`path`, `subject`, `label`, `probability`, `probabilities`, `entropy`, `model`, `score`,
`body`), then a last line {\"matches\": N, \"labels\": {LABEL: COUNT, …}}.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct SearchArgs {
    /// The archive (written by `cwtext label DIR --index IDX`).
    pub index: PathBuf,
    /// What to look for: words, "phrases", OR, -word, field:word; '*' for every document.
    pub query: String,
    /// Only documents with exactly this label.
    #[arg(long, value_name = "L")]
    pub label: Option<String>,
    /// Only documents whose predicted label has at least this probability.
    #[arg(long, value_name = "P")]
    pub min_prob: Option<f64>,
    /// Only documents whose predicted label has at most this probability.
    #[arg(long, value_name = "P")]
    pub max_prob: Option<f64>,
    /// Show the N best documents (0: only the counts per label).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
}

impl SearchArgs {
    /// The validated request.
    fn request(&self) -> anyhow::Result<SearchRequest> {
        let request = SearchRequest {
            query: self.query.clone(),
            label: self.label.clone(),
            min_probability: self.min_prob,
            max_probability: self.max_prob,
            top: self.top,
        };
        request.validate()?;
        Ok(request)
    }
}

pub fn run(args: SearchArgs, _ui: &Ui) -> anyhow::Result<Outcome> {
    let request = args.request()?;
    let archive = Archive::open(&args.index)?;
    let results = archive.search(&request)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let cannot_write = || "standard output: cannot write";
    match args.format {
        TextOrJson::Text => write_text(&mut out, &results),
        TextOrJson::Json => write_json(&mut out, &results),
    }
    .with_context(cannot_write)?;
    out.flush().with_context(cannot_write)?;
    Ok(Outcome::Success)
}

/// Labels by count, most frequent first (ties by name).
fn counts_by_frequency(results: &SearchResults) -> Vec<(&str, usize)> {
    let mut counts: Vec<(&str, usize)> = results
        .label_counts
        .iter()
        .map(|(l, n)| (l.as_str(), *n))
        .collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counts
}

fn write_text(out: &mut impl Write, results: &SearchResults) -> std::io::Result<()> {
    // Tabs and line breaks inside a field would break the one-line-per-hit layout.
    let flat = |s: &str| s.replace(|c: char| c.is_control(), " ");
    for hit in &results.hits {
        let d = &hit.document;
        writeln!(
            out,
            "{:.3}\t{}\t{:.4}\t{}\t{}",
            hit.score,
            flat(&d.label),
            d.probability,
            flat(&d.path),
            flat(&d.subject)
        )?;
    }
    let counts: Vec<String> = counts_by_frequency(results)
        .iter()
        .map(|(l, n)| format!("{l} {n}"))
        .collect();
    match results.total() {
        0 => writeln!(out, "no matching documents"),
        1 => writeln!(out, "1 matching document: {}", counts.join(", ")),
        n => writeln!(out, "{n} matching documents: {}", counts.join(", ")),
    }
}

fn write_json(out: &mut impl Write, results: &SearchResults) -> std::io::Result<()> {
    for hit in &results.hits {
        let d = &hit.document;
        let probabilities: serde_json::Map<String, serde_json::Value> = d
            .probabilities
            .iter()
            .map(|(l, p)| (l.clone(), json!(p)))
            .collect();
        let line = json!({
            "path": d.path, "subject": d.subject, "label": d.label,
            "probability": d.probability, "probabilities": probabilities,
            "entropy": d.entropy, "model": d.model, "score": hit.score, "body": d.body,
        });
        writeln!(out, "{line}")?;
    }
    let labels: serde_json::Map<String, serde_json::Value> = counts_by_frequency(results)
        .into_iter()
        .map(|(l, n)| (l.to_string(), json!(n)))
        .collect();
    writeln!(
        out,
        "{}",
        json!({"matches": results.total(), "labels": labels})
    )
}
