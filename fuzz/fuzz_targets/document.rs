//! Any bytes → decode → email parse → pipeline → features, and a prediction: must never panic,
//! hang or allocate without bound; and the pipeline's fast path must agree with its general one.
#![no_main]

use std::cell::RefCell;
use std::sync::OnceLock;

use cwtext::text::input::parse_bytes;
use cwtext::model::Model;
use cwtext::text::pipeline::{Pipeline, PipelineConfig};
use cwtext::learn::probability::Method;
use libfuzzer_sys::fuzz_target;

fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        Model::from_bytes(cwtext::integrations::shelf::DEFAULT_MODEL, std::path::Path::new("default"))
            .expect("the embedded model loads")
    })
}

thread_local! {
    /// The default pipeline with stemming and trigrams, which exercises every stage, and the
    /// embedded model's; built once (building them per input made the target 50× slower).
    static PIPELINES: RefCell<(Pipeline, Pipeline)> = RefCell::new({
        let mut config = PipelineConfig {
            max_ngram: 3,
            ..PipelineConfig::default()
        };
        config.filters.push(cwtext::text::pipeline::config::FilterConfig::Stem {
            language: cwtext::text::pipeline::stem::StemLanguage::English,
        });
        (
            Pipeline::new(&config).expect("valid"),
            Pipeline::new(model().pipeline()).expect("valid"),
        )
    });
}

fuzz_target!(|bytes: &[u8]| {
    // The default reading, HTML pages as their text included.
    let Ok(doc) = parse_bytes(bytes, PipelineConfig::default().input_limits()) else { return };
    PIPELINES.with(|p| {
        let (every_stage, default) = &mut *p.borrow_mut();
        let _ = every_stage.features(&doc);
        // Differential: the fast path (ASCII scanner, compiled filters, hash from words) and
        // the general path that explanations use (UAX #29 words, each filter, string hash)
        // give the same buckets in the same order, on any input.
        let fast = default.buckets(&doc).to_vec();
        let general: Vec<u32> = default.trace(&doc).iter().map(|f| f.bucket).collect();
        assert_eq!(fast, general, "fast and general paths disagree");
        if let Some(x) = default.features(&doc) {
            let p = model().predict(&x, Method::Gibbs { samples: 50, seed: 0 });
            let sum: f64 = p.distribution.probabilities.iter().sum();
            assert!((sum - 1.0).abs() < 1e-9, "probabilities sum to {sum}");
        }
    });
});
