//! `cwtext models`: the ready models built into the binary, for `-m NAME`.

use std::io::Write;

use super::Outcome;
use cwtext::integrations::shelf::SHELF;

pub fn run() -> anyhow::Result<Outcome> {
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
