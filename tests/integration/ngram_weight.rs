//! `train --ngram-weight`: the bigrams' share beside the words, stored in the model (a format
//! version 6 file), shown by `inspect`, checked where the flags are.

use crate::common::{assert_refused, cwtext, label_of, stderr, stdout, train_seed3};

#[test]
fn lighter_bigrams_are_stored_shown_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, lighter, one) = (
        dir.path().join("plain.cwm"),
        dir.path().join("lighter.cwm"),
        dir.path().join("one.cwm"),
    );
    let out = train_seed3("news", &plain, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = train_seed3("news", &lighter, &["--ngram-weight", "0.5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = cwtext().arg("inspect").arg(&lighter).output().unwrap();
    assert!(
        stdout(&out).contains(r#""ngram_weight_per_mille":500"#),
        "{}",
        stdout(&out)
    );
    // A format version 6 file, so that a cwtext from before the weight refuses it instead of
    // predicting with the bigrams at full weight; the other model stays what it was.
    let version = |path| std::fs::read(path).unwrap()[8];
    assert_eq!(version(&lighter), 6);
    assert!(version(&plain) < 6);
    assert_ne!(
        std::fs::read(&plain).unwrap(),
        std::fs::read(&lighter).unwrap()
    );
    assert_eq!(
        label_of(
            &lighter,
            "The goalie stopped the puck in overtime and the Rangers won"
        ),
        "rec.sport.hockey"
    );
    // Weight 1 is the default: the same bytes as without the flag.
    let out = train_seed3("news", &one, &["--ngram-weight", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&plain).unwrap(), std::fs::read(&one).unwrap());

    for (args, message) in [
        (
            &["--ngrams", "1", "--ngram-weight", "0.5"][..],
            "--ngram-weight weighs bigrams and longer n-grams, but --ngrams is 1",
        ),
        (
            &["--ngram-weight", "0"][..],
            "the weight of n-grams must be in (0, 10], but is 0",
        ),
        (
            &["--ngram-weight", "11"][..],
            "the weight of n-grams must be in (0, 10], but is 11",
        ),
    ] {
        let model = dir.path().join("refused.cwm");
        assert_refused(&train_seed3("news", &model, args), message);
        assert!(!model.exists(), "{args:?} wrote a model");
    }
}
