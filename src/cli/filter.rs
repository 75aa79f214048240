//! `cwtext filter [-m MODEL]`: one message on standard input, the same message on standard output
//! with the decision in added header fields, and an exit code per outcome (the library's
//! [`cwtext::jobs::filter`]). It never loses mail: on any error the message still goes out
//! unchanged apart from an `X-Cwtext-Error` field.

use std::io::{Read, Write};

use clap::Args;

use super::common::{probability, ModelArg, SamplingArgs, ServerArgs, Ui};
use super::Outcome;
use cwtext::jobs::filter::{filter_message, FilterOptions, Verdict, EXIT_ERROR};

const EXAMPLES: &str = "\
Examples:
  cwtext filter -m mail.cwm < message.eml > filtered.eml
  cwtext filter --min-prob 0.9 --subject-tag < message.eml

Without -m (and without CWTEXT_MODEL) filter uses the built-in spam model (labels ham, spam),
not the topics model the other commands default to: a delivery filter without a model of the
user's own folders is a spam filter.

Added header fields, at the end of the message's header (its own line ending, every other byte
unchanged): X-Cwtext-Label (the label, or --unsure-label), X-Cwtext-Probability,
X-Cwtext-Runner-Up (label and probability), X-Cwtext-Best (when unsure: the best label),
X-Cwtext-Note (a message without words, classified by the model's prior) and X-Cwtext-Error
(no decision: the message passes unchanged otherwise).

Exit codes: the label's index in the model (0 for the first label, 1 for the second, as
`cwtext inspect` lists them; labels past 99 exit 99), 100 unsure, 101 error (the message was
still written). With --always-zero every outcome exits 0, as a filter in procmail (`:0fw`) or
maildrop (`xfilter`) must: they treat any other exit as a failed filter. Only a failure to
write the output exits 2.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct FilterArgs {
    #[command(flatten)]
    pub model: ModelArg,
    /// Below this probability of the best label the message is unsure: it gets --unsure-label
    /// and exit code 100.
    #[arg(long, value_name = "P", value_parser = probability)]
    pub min_prob: Option<f64>,
    /// The label of unsure messages (the folder name `label --min-prob` uses).
    #[arg(long, value_name = "LABEL", default_value = "_unsure")]
    pub unsure_label: String,
    /// Prefix the Subject with "[label] " (adds a Subject when there is none).
    #[arg(long)]
    pub subject_tag: bool,
    /// Exit 0 whatever the outcome (for procmail and maildrop filters).
    #[arg(long)]
    pub always_zero: bool,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// The built-in model `filter` uses when none is named.
pub const DEFAULT_FILTER_MODEL: &str = "spam";

fn default_to_spam(mut model: ModelArg) -> ModelArg {
    model
        .model
        .get_or_insert_with(|| DEFAULT_FILTER_MODEL.into());
    model
}

pub fn run(args: FilterArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    // Read the message first: whatever happens to the model, it goes out again.
    let mut message = Vec::new();
    let read_error = std::io::stdin().read_to_end(&mut message).err();
    if args.server.server.is_some() && read_error.is_none() {
        #[cfg(feature = "serve")]
        match remote(&args, &message) {
            Ok((filtered, code)) => {
                let mut out = std::io::stdout().lock();
                pass_on(&mut out, &filtered)?;
                return Ok(Outcome::Code(if args.always_zero { 0 } else { code }));
            }
            Err(why) if args.server.server_fallback == super::common::Fallback::Local => {
                super::remote::falling_back(ui, &why)
            }
            Err(why) => {
                // Never lose the message: it goes on with the error in X-Cwtext-Error.
                let options = FilterOptions {
                    unsure_label: args.unsure_label.clone(),
                    ..FilterOptions::default()
                };
                let filtered = filter_message(Err(why.clone()), &message, &options);
                let mut out = std::io::stdout().lock();
                pass_on(&mut out, &filtered.message)?;
                if !ui.quiet {
                    super::common::say(format_args!(
                        "cwtext: error: {why} (the message was passed on unchanged)"
                    ));
                }
                return Ok(Outcome::Code(if args.always_zero { 0 } else { EXIT_ERROR }));
            }
        }
        #[cfg(not(feature = "serve"))]
        anyhow::bail!("--server needs the `serve` feature, which this cwtext was built without");
    }
    let loaded = match read_error {
        Some(e) => Err(format!(
            "cannot read the whole message from standard input ({e}); it was passed on as read"
        )),
        None => default_to_spam(args.model)
            .load(ui)
            .map_err(|e| format!("{e:#}")),
    };
    let options = FilterOptions {
        min_prob: args.min_prob,
        unsure_label: args.unsure_label.clone(),
        subject_tag: args.subject_tag,
        method: args.sampling.method(),
    };
    let filtered = filter_message(loaded.as_ref().map_err(|e| e.clone()), &message, &options);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    pass_on(&mut out, &filtered.message)?;
    if let (Verdict::Error(e), false) = (&filtered.verdict, ui.quiet) {
        super::common::say(format_args!(
            "cwtext: error: {e} (the message was passed on unchanged)"
        ));
    }
    let code = filtered.verdict.exit_code();
    Ok(Outcome::Code(if args.always_zero { 0 } else { code }))
}

/// `filter --server URL`: the server's filtered message and exit code, or why there is none.
#[cfg(feature = "serve")]
fn remote(args: &FilterArgs, message: &[u8]) -> Result<(Vec<u8>, u8), String> {
    use super::remote::{model_param, sampling_params, Client, Remote};
    let client = Client::new(&args.server, None).map_err(|e| format!("{e:#}"))?;
    let mut pairs = Vec::new();
    pairs.extend(model_param(args.model.model.as_deref()));
    if let Some(p) = args.min_prob {
        pairs.push(("min_prob", p.to_string()));
    }
    pairs.push(("unsure_label", args.unsure_label.clone()));
    pairs.push(("subject_tag", args.subject_tag.to_string()));
    pairs.extend(sampling_params(&args.sampling));
    match client.post("/filter", &pairs, message.to_vec()) {
        Remote::Done(a) if a.status == 200 => {
            let code = a
                .header("x-cwtext-exit-code")
                .and_then(|c| c.parse().ok())
                .unwrap_or(EXIT_ERROR);
            Ok((a.body, code))
        }
        Remote::Done(a) => Err(format!(
            "cwtext serve at {} refused the message: {}",
            client.url(),
            a.error_message()
        )),
        Remote::Unreachable(why) => Err(why),
    }
}

/// Writes the filtered message to standard output. A reader that is gone is a failure here, not
/// the quiet end a closed pipe is for other commands: the message was not passed on, and the
/// delivery agent must see the filter fail (exit 2, whatever --always-zero says) to keep the
/// original. The error's text keeps the cause but not the I/O error itself, which `main`
/// would take for a closed pipe to ignore.
fn pass_on(out: &mut impl Write, message: &[u8]) -> anyhow::Result<()> {
    out.write_all(message)
        .and_then(|()| out.flush())
        .map_err(|e| anyhow::anyhow!("standard output: {e}: cannot pass the message on"))
}
