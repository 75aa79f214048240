//! `cwtext eval -m MODEL DIR`: accuracy, macro-F1, per-label scores, confusion matrix and mean
//! normalised entropy on a labelled folder.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::common::{report_skipped, FilterArgs, ModelArg, SamplingArgs, TextOrJson, Ui};
use super::Outcome;
use cwtext::jobs::batch::classify_files;
use cwtext::jobs::metrics::{Evaluation, Evaluator};

const EXAMPLES: &str = "\
Examples:
  cwtext eval -m 20ng.cwm 20ng/ --include 'test-*'
  cwtext eval -m mail.cwm held-out/ --format json
  cwtext eval -m 20ng.cwm 20ng/ --include 'test-*' --plot plots/

JSON: `documents`, `accuracy`, `macro_f1`, `mean_entropy`, `ece` (expected calibration error,
10 bins over the probability of the predicted label), `brier` (multi-class Brier score),
`calibration` (per bin: lower, upper, examples, errors, error_rate, mean_confidence),
`per_label` (label, precision, recall, f1, support), `labels` and `confusion`
(confusion[true][predicted], in `labels` order), `coverage` (per --min-prob threshold:
min_prob, kept, share, accuracy on the kept documents), `probability_scale` and `scale_fitted`
(how and on what the model's scale was fitted, absent when it was not), `prior_only` (how many
documents had no word and were classified by the model's prior alone, as classify and label
do; they count like the others).";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct EvalArgs {
    /// Labelled folder DIR/<label>/**/<file>, a mail store (Maildir, mbox files, MH) whose
    /// folders are the labels, a folder of a file per label with a line per document
    /// (rt-polarity.pos, rt-polarity.neg), or one file of labelled rows (`__label__LABEL text`
    /// lines, TREC's `COARSE:fine text`, .tsv, .csv, .jsonl).
    pub dir: PathBuf,
    #[command(flatten)]
    pub model: ModelArg,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// Also write DIR/reliability.svg (the calibration bins), DIR/coverage.svg (accuracy
    /// against the share of documents kept, per --min-prob threshold) and
    /// DIR/learning-curve.svg (the model's online training accuracy per epoch).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

pub fn run(args: EvalArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    let model = args.model.load(ui)?;
    // One label is enough to evaluate: a folder of one kind of mail measures its recall.
    let corpus = args.filter.scan(&args.dir, 1)?;
    corpus.notes.iter().for_each(|n| ui.info(n));
    corpus.warnings.iter().for_each(|w| ui.warn(w));
    // eval holds every result until its report anyway: the list is read into memory.
    let entries = corpus.files.to_vec()?;
    let mut documents = vec![0; corpus.labels.len()];
    entries.iter().for_each(|(_, label)| documents[*label] += 1);
    let labels = model.labels();
    let listed = match labels.len() {
        0..=10 => labels.join(", "),
        n => format!("{}, … ({n} in all)", labels[..10].join(", ")),
    };
    for u in cwtext::jobs::metrics::unknown_labels(labels, &corpus.labels, &documents) {
        ui.warn(format!(
            "the model has no label {:?}: its {} {} as wrong{} (the model's labels: {listed})",
            u.label,
            u.documents,
            if u.documents == 1 {
                "document counts"
            } else {
                "documents count"
            },
            u.like
                .map(|m| format!("; it has {m:?}: name the folder or file so"))
                .unwrap_or_default(),
        ));
    }

    let files: Vec<_> = entries.iter().map(|(s, _)| s.clone()).collect();
    let progress = ui.progress(files.len() as u64);
    progress.set_message("evaluating");
    let results = classify_files(&model, &files, args.sampling.method(), &progress)?;
    progress.finish_and_clear();
    let mut evaluator = Evaluator::new(model.labels().to_vec());
    let mut skipped = Vec::new();
    // Documents without a word are evaluated as classify and label decide them: by the
    // model's prior. They count, and the summary says how many there were.
    let mut prior_only = 0;
    for ((_, truth), result) in entries.iter().zip(results) {
        match result {
            Ok(p) => {
                prior_only += usize::from(p.prior_only);
                let t = evaluator.label_index(&corpus.labels[*truth]);
                evaluator.add(t, p.label, &p.distribution);
            }
            Err(e) => skipped.push(e),
        }
    }
    let report = evaluator.finish();
    if let Some(dir) = &args.plot {
        std::fs::create_dir_all(dir).map_err(|e| cwtext::Error::io(dir, e))?;
        cwtext::integrations::plot::reliability_diagram(
            &report.calibration,
            report.ece,
            &dir.join("reliability.svg"),
        )?;
        let points: Vec<(f64, f64, Option<f64>)> = report
            .coverage
            .iter()
            .map(|c| (c.min_prob, c.share, c.accuracy))
            .collect();
        cwtext::integrations::plot::coverage_curve(&points, &dir.join("coverage.svg"))?;
        cwtext::integrations::plot::learning_curve(
            &model.header.training.epoch_accuracy,
            "online training accuracy",
            &dir.join("learning-curve.svg"),
        )?;
        ui.info(format!(
            "wrote {}, {} and {}",
            dir.join("reliability.svg").display(),
            dir.join("coverage.svg").display(),
            dir.join("learning-curve.svg").display()
        ));
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let h = &model.header;
    let scale = match (&h.calibration, h.probability_scale == 1.0) {
        (Some(c), _) => format!("{:.4} ({})", h.probability_scale, c.describe()),
        (None, true) => "1 (not calibrated)".to_string(),
        (None, false) => format!("{:.4} (fitted on held-out documents)", h.probability_scale),
    };
    match args.format {
        TextOrJson::Json => {
            #[derive(serde::Serialize)]
            struct WithScale<'a> {
                #[serde(flatten)]
                report: &'a Evaluation,
                probability_scale: f64,
                scale_fitted: &'a Option<cwtext::model::CalibrationInfo>,
                prior_only: usize,
            }
            let json = WithScale {
                prior_only,
                report: &report,
                probability_scale: h.probability_scale,
                scale_fitted: &h.calibration,
            };
            writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?
        }
        TextOrJson::Text => {
            write_text(&mut out, &report)?;
            writeln!(out)?;
            writeln!(out, "probability scale {scale}")?;
        }
    }
    out.flush()?;
    if prior_only > 0 {
        ui.info(format!(
            "{prior_only} document(s) without a word were classified by the model's prior alone, as classify and label do"
        ));
    }
    Ok(report_skipped(ui, &skipped))
}

fn write_text(out: &mut impl Write, r: &Evaluation) -> std::io::Result<()> {
    writeln!(out, "documents     {}", r.documents)?;
    writeln!(out, "accuracy      {:.4}", r.accuracy)?;
    writeln!(out, "macro-F1      {:.4}", r.macro_f1)?;
    writeln!(out, "mean entropy  {:.4}", r.mean_entropy)?;
    writeln!(out, "ECE           {:.4}", r.ece)?;
    writeln!(out, "Brier         {:.4}", r.brier)?;
    let width = r.labels.iter().map(|l| l.len()).max().unwrap_or(5).max(5);
    writeln!(out)?;
    writeln!(
        out,
        "  # {:width$}  precision  recall  f1      support",
        "label"
    )?;
    for (i, s) in r.per_label.iter().enumerate() {
        writeln!(
            out,
            "{:>3} {:width$}  {:.4}     {:.4}  {:.4}  {}",
            i + 1,
            s.label,
            s.precision,
            s.recall,
            s.f1,
            s.support
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "calibration (EMNLP 2009 §7): probability of the predicted label"
    )?;
    writeln!(
        out,
        "  bin         examples  errors  error rate  mean probability"
    )?;
    for b in r.calibration.iter().filter(|b| b.examples > 0) {
        writeln!(
            out,
            "  [{:.1}, {:.1}{}  {:>8}  {:>6}  {:>10.4}  {:>16.4}",
            b.lower,
            b.upper,
            if b.upper >= 1.0 { "]" } else { ")" },
            b.examples,
            b.errors,
            b.error_rate,
            b.mean_confidence
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "unsure band: documents below --min-prob P would be unsure (`filter`, `label`)"
    )?;
    writeln!(out, "  min-prob  kept    share   accuracy on kept")?;
    for c in &r.coverage {
        let accuracy = c.accuracy.map_or("-".to_string(), |a| format!("{a:.4}"));
        writeln!(
            out,
            "  {:<8}  {:>6}  {:.4}  {accuracy}",
            c.min_prob, c.kept, c.share
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "confusion matrix (rows: true label #, columns: predicted label #)"
    )?;
    let cell = r
        .confusion
        .iter()
        .flatten()
        .max()
        .map_or(1, |m| m.to_string().len())
        .max(r.labels.len().to_string().len());
    write!(out, "   ")?;
    for j in 0..r.labels.len() {
        write!(out, " {:>cell$}", j + 1)?;
    }
    writeln!(out)?;
    for (i, row) in r.confusion.iter().enumerate() {
        write!(out, "{:>3}", i + 1)?;
        for n in row {
            write!(out, " {n:>cell$}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}
