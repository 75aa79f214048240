//! Any bytes → model load: must be refused with an error or load into a usable model, never
//! panic or allocate without bound.
#![no_main]

use cwtext::model::Model;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(model) = Model::from_bytes(bytes, std::path::Path::new("fuzz.cwm")) {
        // A model that loads must be able to score a document.
        let x = cwtext::features::FeatureVector::new(
            model.pipeline().dimension(),
            vec![0, model.pipeline().dimension() as u32 - 1],
            vec![1.0, 1.0],
        );
        let _ = model.scores(&x);
        // And its vocabulary, if it has one, parses or is refused.
        let _ = model.vocabulary();
    }
});
