//! Corrections after deployment: one CW update per labelled document, applied to a loaded model
//! (`cwtext learn`). A label the model has never seen gets a new weight block at the prior, so a
//! router can learn a new folder from its first message.

use crate::error::Result;
use crate::features::FeatureVector;
use crate::learner::Learner;
use crate::model::Model;

/// What a batch of corrections did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Corrections {
    pub documents: usize,
    /// Documents the model labelled wrongly before their update.
    pub mistakes: usize,
    /// Labels added on the fly, in order.
    pub new_labels: Vec<String>,
}

/// Applies one update per (document, label), in order.
pub fn learn(model: &mut Model, documents: &[(FeatureVector, String)]) -> Result<Corrections> {
    let mut report = Corrections::default();
    // The model no longer matches the file it was read from.
    model.file_crc = None;
    for (x, label) in documents {
        let index = match model.labels().iter().position(|l| l == label) {
            Some(i) => i,
            None => {
                let i = model.learner.add_label()?;
                model.header.labels.push(label.clone());
                report.new_labels.push(label.clone());
                i
            }
        };
        let t = &mut model.header.training;
        t.label_documents.resize(model.header.labels.len(), 0);
        t.label_documents[index] += 1;
        t.documents += 1;
        report.mistakes += usize::from(model.learner.learn(x, index));
        report.documents += 1;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learner::CwConfig;
    use crate::model::{LearnerConfig, ModelHeader, TrainingStats, WeightEncoding};
    use crate::pipeline::PipelineConfig;

    #[test]
    fn a_new_label_starts_at_the_prior_and_is_learned() {
        let pipeline = PipelineConfig {
            hash_bits: 16,
            ..PipelineConfig::default()
        };
        let params = CwConfig::default().validate().unwrap();
        let dim = pipeline.dimension();
        let mut model = Model {
            header: ModelHeader {
                cwtext_version: "test".into(),
                features: dim,
                pipeline,
                labels: vec!["a".into(), "b".into()],
                learner: LearnerConfig::Cw(CwConfig::default()),
                training: TrainingStats {
                    label_documents: vec![0, 0],
                    ..TrainingStats::default()
                },
                encoding: WeightEncoding::F32,
                probability_scale: 1.0,
                calibration: None,
                selection: None,
                vocabulary_bytes: 0,
            },
            learner: crate::learner::DiagonalLearner::new(params, dim, 2),
            vocabulary: None,
            file_crc: None,
        };
        let x = FeatureVector::new(dim, vec![7, dim as u32 - 1], vec![1.0, 1.0]);
        let r = learn(
            &mut model,
            &[(x.clone(), "c".into()), (x.clone(), "c".into())],
        )
        .unwrap();
        assert_eq!(r.new_labels, ["c"]);
        assert_eq!(r.documents, 2);
        assert_eq!(model.labels(), ["a", "b", "c"]);
        assert_eq!(model.header.training.label_documents, [0, 0, 2]);
        assert_eq!(crate::learner::argmax(&model.scores(&x)), 2);
        // An untouched feature of the new label is at the prior.
        assert_eq!(&model.learner.weights().row(0)[4..6], &[0.0, 1.0]);
        // The file round-trips with the new label.
        let back = Model::from_bytes(&model.to_bytes(), std::path::Path::new("m")).unwrap();
        assert_eq!(back, model);
    }
}
