//! `cwtext models`: the ready models built into the binary, for `-m NAME`, and `--save NAME -o
//! FILE` to write one out as a model file that `learn` can teach.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::common::Ui;
use super::Outcome;
use cwtext::integrations::shelf::{self, SHELF};

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cwtext models                              # list them
  cwtext models --save spam -o mail.cwm      # a copy to teach: cwtext learn -m mail.cwm …")]
pub struct ModelsArgs {
    /// Write this built-in model's file to -o, byte for byte, to teach it with `learn` (a
    /// built-in model is part of the binary and cannot change)
    #[arg(long, value_name = "NAME", requires = "output")]
    pub save: Option<String>,
    /// Where --save writes the model file (refused when it exists)
    #[arg(short, long, value_name = "FILE", requires = "save")]
    pub output: Option<PathBuf>,
}

pub fn run(args: ModelsArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    if let (Some(name), Some(path)) = (&args.save, &args.output) {
        let m = shelf::find(name).ok_or_else(|| {
            anyhow::anyhow!(
                "invalid setting: --save {name}: no built-in model of that name ({})",
                shelf::names()
            )
        })?;
        m.save_copy(path)?;
        ui.info(format!(
            "wrote the built-in model {} to {} ({:.1} MB); teach it with `cwtext learn -m {} …`",
            m.name,
            path.display(),
            m.bytes.len() as f64 / 1e6,
            path.display()
        ));
        return Ok(Outcome::Success);
    }
    let mut out = std::io::stdout().lock();
    for m in &SHELF {
        let model = m.load(false)?;
        writeln!(
            out,
            "{:<10} {:>2} labels  {:>5.1} MB  {}",
            m.name,
            model.labels().len(),
            m.bytes.len() as f64 / 1e6,
            m.description
        )?;
    }
    out.flush()?;
    Ok(Outcome::Success)
}
