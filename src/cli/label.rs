//! `cwtext label DIR`: one line per file (path, label, probability), optionally routing each
//! file into DEST/<label>/ (or DEST/_unsure/ below --min-prob) and archiving it in a search
//! index (`--index IDX`, read by `cwtext search`).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};
use serde_json::json;

use super::archiving::Archiving;
use super::common::{report_skipped, FilterArgs, ModelArg, SamplingArgs, Ui};
use super::Outcome;
use cwtext::jobs::batch::{classify_files, classify_files_keeping_text, DocumentText};
use cwtext::jobs::corpus::walk_files;
use cwtext::jobs::route::{route_file, RouteMode, UNSURE};
use cwtext::model::{Model, Prediction};

const EXAMPLES: &str = "\
Examples:
  cwtext label inbox/ -m mail.cwm -o labels.tsv
  cwtext label downloads/ --copy-to sorted/ --min-prob 0.8
  cwtext label archive/ -o labels.jsonl --include '*.eml'
  cwtext label news/ -m 20ng.cwm --index news.idx && cwtext search news.idx orbit

Each line: path, label, probability (TSV), or a JSON object with `file`, `label`,
`probability` and `entropy` (JSON lines: -o *.jsonl or --format jsonl). Files are never
overwritten when routed: a taken name gets a -1, -2 … suffix.

--index IDX also stores every labelled file in a full-text index (see `cwtext search --help`):
absolute path, subject or first line, the text as UTF-8, label, every label's probability,
entropy and the model's name and CRC-32. Labelling a file again replaces its entry. The index
is committed once at the end, so an interrupted run leaves the previous index as it was.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Tsv,
    Jsonl,
}

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct LabelArgs {
    /// Directory to label (recursively), or a single file.
    pub dir: PathBuf,
    #[command(flatten)]
    pub model: ModelArg,
    /// Write the labels here (TSV, or JSON lines when the name ends in .jsonl) instead of stdout.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Output format (default: from the -o extension, else tsv).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Copy each file into DEST/<label>/.
    #[arg(long, value_name = "DEST", conflicts_with = "move_to")]
    pub copy_to: Option<PathBuf>,
    /// Move each file into DEST/<label>/.
    #[arg(long, value_name = "DEST")]
    pub move_to: Option<PathBuf>,
    /// Route files whose best probability is below P into DEST/_unsure/.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub min_prob: f64,
    /// Also archive the labelled documents in a search index at IDX (a new or empty directory,
    /// or an index written before; see `cwtext search`).
    #[arg(long, value_name = "IDX")]
    pub index: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub sampling: SamplingArgs,
}

/// Files classified (in parallel) before their lines are written.
const LABEL_CHUNK: usize = 4096;

pub fn run(args: LabelArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.min_prob),
        "invalid setting: --min-prob must be in [0, 1], but is {}",
        args.min_prob
    );
    let model = args.model.load(ui)?;
    let filter = args.filter.build()?;
    // The walk itself runs beside the labelling (below); a missing DIR fails here, before the
    // output is created.
    std::fs::metadata(&args.dir).map_err(|e| cwtext::error::Error::io(&args.dir, e))?;
    // Opened before any work, so that a bad index path fails fast.
    let mut archive = match &args.index {
        Some(path) => Some(Archiving::open(path, &model, &args.model)?),
        None => None,
    };
    let route = match (&args.copy_to, &args.move_to) {
        (Some(d), _) => Some((d.clone(), RouteMode::Copy)),
        (_, Some(d)) => Some((d.clone(), RouteMode::Move)),
        _ => None,
    };
    let format = args
        .format
        .unwrap_or(match args.output.as_ref().and_then(|p| p.extension()) {
            Some(e) if e == "jsonl" => Format::Jsonl,
            _ => Format::Tsv,
        });
    let progress = ui.progress(0); // its length grows as the walk finds files
    progress.set_message("labelling");
    let mut out: Box<dyn Write> = match &args.output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("{}: cannot create", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut skipped = Vec::new();
    let out_name = args.output.as_ref().map_or_else(
        || "standard output".to_string(),
        |p| p.display().to_string(),
    );
    let cannot_write = || format!("{out_name}: cannot write");
    // In chunks: each is classified in parallel and written in input order before the next
    // starts, so output flows during a long run, memory stays bounded on millions of files, and
    // the order never depends on the number of threads. With more than one worker thread the
    // directory walk runs in a thread of its own and hands over each chunk as soon as it has
    // listed it: labelling starts at once instead of after the whole walk, which on 20,000
    // files was 4–5% of a two-thread run spent on one core.
    let mut write_chunk = |chunk: &[PathBuf]| -> anyhow::Result<()> {
        progress.inc_length(chunk.len() as u64);
        let results = classify_chunk(&model, chunk, &args, archive.is_some(), &progress)?;
        for (path, result) in chunk.iter().zip(results) {
            let (p, text) = match result {
                Ok(r) => r,
                Err(e) => {
                    skipped.push(e);
                    continue;
                }
            };
            let label = model.labels()[p.label].as_str();
            let prob = p.distribution.probabilities[p.label];
            match format {
                Format::Tsv => writeln!(out, "{}\t{label}\t{prob:.4}", path.display())
                    .with_context(cannot_write)?,
                Format::Jsonl => writeln!(
                    out,
                    "{}",
                    json!({"file": path.display().to_string(), "label": label,
                           "probability": prob, "entropy": p.distribution.entropy})
                )
                .with_context(cannot_write)?,
            }
            let folder = if prob < args.min_prob { UNSURE } else { label };
            // A moved file is archived where it now is.
            let mut archived_path = path.clone();
            if let Some((dest, mode)) = &route {
                match route_file(path, &dest.join(folder), *mode) {
                    Ok(to) if *mode == RouteMode::Move => archived_path = to,
                    Ok(_) => {}
                    Err(e) => {
                        skipped.push(e);
                        continue;
                    }
                }
            }
            if let (Some(a), Some(text)) = (&mut archive, text) {
                a.add(&model, &archived_path, &p, text)?;
            }
            *counts.entry(folder).or_default() += 1;
        }
        Ok(())
    };
    let (dir, filter) = (&args.dir, &filter);
    let warnings = if rayon::current_num_threads() == 1 {
        // One thread asked for: list and label in turn.
        let mut failed = None;
        let warnings = walk_files(dir, filter, LABEL_CHUNK, |chunk| {
            write_chunk(&chunk).map_err(|e| failed = Some(e)).is_ok()
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        warnings
    } else {
        let (send, chunks) = std::sync::mpsc::sync_channel::<Vec<PathBuf>>(1);
        std::thread::scope(|scope| -> anyhow::Result<Vec<String>> {
            let walk = scope.spawn(move || {
                walk_files(dir, filter, LABEL_CHUNK, |chunk| send.send(chunk).is_ok())
            });
            for chunk in chunks {
                write_chunk(&chunk)?;
            }
            Ok(walk.join().expect("the directory walk does not panic")?)
        })?
    };
    warnings.iter().for_each(|w| ui.warn(w));
    out.flush().with_context(cannot_write)?;
    let indexed = match archive {
        Some(a) => {
            progress.set_message("indexing");
            Some(a.commit()?)
        }
        None => None,
    };
    progress.finish_and_clear();
    indexed.into_iter().for_each(|m| ui.info(m));
    let total: usize = counts.values().sum();
    let summary: Vec<String> = counts.iter().map(|(l, n)| format!("{l} {n}")).collect();
    ui.info(format!("labelled {total} files: {}", summary.join(", ")));
    Ok(report_skipped(ui, &skipped))
}

/// A file's prediction, and its text when it is to be archived.
type Labelled = (Prediction, Option<DocumentText>);

/// Classifies one chunk, keeping each document's text only when it is to be archived.
fn classify_chunk(
    model: &Model,
    chunk: &[PathBuf],
    args: &LabelArgs,
    keep_text: bool,
    progress: &dyn cwtext::progress::Progress,
) -> anyhow::Result<Vec<cwtext::Result<Labelled>>> {
    let method = args.sampling.method();
    Ok(if keep_text {
        classify_files_keeping_text(model, chunk, method, progress)?
            .into_iter()
            .map(|r| r.map(|(p, t)| (p, Some(t))))
            .collect()
    } else {
        classify_files(model, chunk, method, progress)?
            .into_iter()
            .map(|r| r.map(|p| (p, None)))
            .collect()
    })
}
