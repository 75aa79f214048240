//! What the library-level tests share (no `cli` feature needed): `train` and `tune` run
//! in-process with their defaults.

/// Plain `cwtext train` (its default request) run in-process on `corpus`: the model it would
/// write, for comparing with what `tune` keeps of train's pick.
pub fn train_in_process(
    corpus: &cwtext::jobs::corpus::LabelledCorpus,
) -> cwtext::jobs::train::Trained {
    cwtext::jobs::plan::TrainRequest::default()
        .plan()
        .unwrap()
        .train(corpus, None, &cwtext::progress::NoProgress, &mut |_| {})
        .unwrap()
        .trained
}

/// `cwtext tune --budget BUDGET`'s plan, its defaults otherwise.
pub fn tune_plan(budget: usize) -> cwtext::jobs::tune::TunePlan {
    cwtext::jobs::tune::TuneRequest {
        budget,
        ..Default::default()
    }
    .plan()
    .unwrap()
}
