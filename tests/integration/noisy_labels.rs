//! Labels filed by mistake: CW meets every training document's margin however long the step,
//! so in its later epochs it learns the documents filed under the wrong label. `train` also
//! trains the chosen settings with the soft rule (SCW-I, its step capped) beside those epochs,
//! compares the two on the held-out fifth after the run's epochs, and takes the soft rule
//! when it is ahead by a standard error of the paired difference. Until 2026-11-29 only short
//! texts tried it, after 1 epoch, where CW had not yet learned the noise: long documents with
//! three in ten of them misfiled kept CW.

use std::path::Path;

use crate::common::{cwtext, eval_json, inspect_json, stderr, stdout, train_seed3};

const TOPICS: &[&str] = &["astronomy", "cooking", "sailing"];

/// One long document of `topic`: 80 words, each (with probability 0.05) one of 40 words of the
/// topic's own or else one of 2,000 words every topic shares.
fn topic_document(rng: &mut rand_chacha::ChaCha8Rng, topic: &str) -> String {
    use rand::Rng;
    let words: Vec<String> = (0..80)
        .map(|_| {
            if rng.gen_bool(0.05) {
                format!("{}{:02}", &topic[..3], rng.gen_range(0..40))
            } else {
                format!("w{:04}", rng.gen_range(0..2000))
            }
        })
        .collect();
    words.join(" ")
}

/// Long documents by topic ([`topic_document`]). Training documents (`per_label` a topic) are
/// filed under another topic, drawn at random, with probability `misfiled`; the 100 test
/// documents a topic are filed under their own.
fn topic_corpus(root: &Path, per_label: usize, misfiled: f64, seed: u64) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut n = 0;
    for (part, per) in [("train", per_label), ("test", 100)] {
        for (t, topic) in TOPICS.iter().enumerate() {
            for _ in 0..per {
                let text = topic_document(&mut rng, topic);
                let filed = if part == "train" && rng.gen_bool(misfiled) {
                    TOPICS[(t + rng.gen_range(1..TOPICS.len())) % TOPICS.len()]
                } else {
                    topic
                };
                let dir = root.join(part).join(filed);
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join(format!("{n:05}.txt")), text).unwrap();
                n += 1;
            }
        }
    }
}

fn accuracy(model: &Path, test: &Path) -> f64 {
    eval_json(model, test, &[])["accuracy"].as_f64().unwrap()
}

/// Three in ten of 1,200 long training documents misfiled: plain `train` takes the soft rule,
/// says why, `inspect` shows it, and on the documents of the test split, filed under their own
/// topic, it is more accurate than CW alone (`--eta 0.9`: asking for CW's η keeps CW).
#[test]
fn long_documents_with_three_in_ten_misfiled_take_the_soft_rule() {
    let dir = tempfile::tempdir().unwrap();
    topic_corpus(dir.path(), 400, 0.3, 3);
    let (train, test) = (dir.path().join("train"), dir.path().join("test"));
    let soft = dir.path().join("soft.cwm");
    let out = train_seed3(train.to_str().unwrap(), &soft, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("the soft rule beside CW: SCW-I (C 0.3, η 0.99, prior flat) with the chosen settings, compared after the run's epochs"),
        "{err}"
    );
    let took = err
        .lines()
        .find(|l| l.starts_with("took the soft rule SCW-I (C 0.3, η 0.99, prior flat): held-out accuracy after 5 epochs"))
        .unwrap_or_else(|| panic!("the soft rule not taken: {err}"));
    assert!(took.contains("taken when ahead by more than 1)"), "{took}");
    let out = cwtext().arg("inspect").arg(&soft).output().unwrap();
    let shown = stdout(&out);
    assert!(
        shown.contains(r#""rule":"scw1""#) && shown.contains(r#""c":0.3"#),
        "{shown}"
    );
    assert!(
        shown.contains("update rule        took the soft rule SCW-I"),
        "{shown}"
    );

    let cw = dir.path().join("cw.cwm");
    let out = train_seed3(train.to_str().unwrap(), &cw, &["--eta", "0.9"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("soft rule"), "{}", stderr(&out));
    let (soft_accuracy, cw_accuracy) = (accuracy(&soft, &test), accuracy(&cw, &test));
    // 300 test documents: measured 0.9067 against 0.8700 (over seeds 1 to 6 of this corpus
    // the soft rule was taken every time, ahead on the test documents by 3.0 to 7.3 points).
    assert!(
        soft_accuracy > cw_accuracy + 0.02,
        "soft rule {soft_accuracy} against CW {cw_accuracy}"
    );
}

/// The same documents filed under their own topic: the soft rule is tried and CW kept.
#[test]
fn long_documents_filed_right_keep_cw() {
    let dir = tempfile::tempdir().unwrap();
    topic_corpus(dir.path(), 400, 0.0, 3);
    let model = dir.path().join("m.cwm");
    let out = train_seed3(dir.path().join("train").to_str().unwrap(), &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.lines()
            .any(|l| l.starts_with("kept CW, not the soft rule SCW-I (C 0.3, η 0.99, prior flat): held-out accuracy after 5 epochs")),
        "{err}"
    );
    let out = cwtext().arg("inspect").arg(&model).output().unwrap();
    let shown = stdout(&out);
    assert!(shown.contains(r#""rule":"stdev""#), "{shown}");
    assert!(
        shown.contains("update rule        kept CW, not the soft rule"),
        "{shown}"
    );
}

/// The soft rule was taken for the training files' labels, whose filing it doubts: a folder
/// the user creates by refiling has no training files, and `learn` teaches it with CW's
/// uncapped step. A dozen refiles of a fourth topic into the model `train` made find more of
/// its test documents than the same refiles into the same rule set by hand (`--algo scw1`,
/// which records no such choice and keeps the capped step for every label).
#[test]
fn a_new_folder_in_a_model_that_took_the_soft_rule_is_learned_with_cws_step() {
    use rand::SeedableRng;
    let dir = tempfile::tempdir().unwrap();
    topic_corpus(dir.path(), 400, 0.3, 3);
    let train = dir.path().join("train");
    let chosen = dir.path().join("chosen.cwm");
    let out = train_seed3(train.to_str().unwrap(), &chosen, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("\ntook the soft rule"),
        "{}",
        stderr(&out)
    );
    let by_hand = dir.path().join("by-hand.cwm");
    let soft = [
        "--algo", "scw1", "-C", "0.3", "--eta", "0.99", "--prior", "flat",
    ];
    let out = train_seed3(train.to_str().unwrap(), &by_hand, &soft);
    assert!(out.status.success(), "{}", stderr(&out));

    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let refiles = dir.path().join("refiles");
    let test = dir.path().join("new-test").join("botany");
    std::fs::create_dir_all(&refiles).unwrap();
    std::fs::create_dir_all(&test).unwrap();
    for i in 0..12 {
        std::fs::write(
            refiles.join(format!("{i:02}.txt")),
            topic_document(&mut rng, "botany"),
        )
        .unwrap();
    }
    for i in 0..100 {
        std::fs::write(
            test.join(format!("{i:03}.txt")),
            topic_document(&mut rng, "botany"),
        )
        .unwrap();
    }
    let recall = |model: &Path| {
        let out = cwtext()
            .args(["learn", "-m"])
            .arg(model)
            .args(["--label", "botany"])
            .arg(&refiles)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        accuracy(model, test.parent().unwrap())
    };
    let (learned, capped) = (recall(&chosen), recall(&by_hand));
    // 100 test documents of the new topic: measured 0.32 against 0.11.
    assert!(
        learned > capped + 0.15,
        "CW's step {learned} against the capped step {capped}"
    );
    // The topics the model was trained on keep the capped step: the model says so.
    let out = cwtext().arg("inspect").arg(&chosen).output().unwrap();
    assert!(
        stdout(&out).contains(r#""rule":"scw1""#),
        "{}",
        stdout(&out)
    );
}

/// `inspect --format json`'s record of the soft rule.
fn soft_rule_record(model: &Path) -> serde_json::Value {
    inspect_json(model)["soft_rule"].clone()
}

/// A model that took the soft rule keeps its record when continued (`--resume`, here with the
/// files of a fourth topic) and when merged: every label trained from files, the new topic's
/// too, keeps the capped step, and only a folder made later by refiling is learned with CW's.
/// Until 2026-11-29 a continued model lost the record (its later folders then learned with
/// the capped step), and a merged one counted the other input's topics as added since.
#[test]
fn a_continued_or_merged_soft_model_keeps_its_record() {
    use rand::SeedableRng;
    let dir = tempfile::tempdir().unwrap();
    topic_corpus(dir.path(), 400, 0.3, 3);
    let chosen = dir.path().join("chosen.cwm");
    let out = train_seed3(dir.path().join("train").to_str().unwrap(), &chosen, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(soft_rule_record(&chosen)["taken"], true);
    assert_eq!(soft_rule_record(&chosen)["labels"], 3);

    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let more = dir.path().join("more").join("geology");
    std::fs::create_dir_all(&more).unwrap();
    for i in 0..60 {
        let text = topic_document(&mut rng, "geology");
        std::fs::write(more.join(format!("{i:02}.txt")), text).unwrap();
    }
    let resumed = dir.path().join("resumed.cwm");
    let resume = ["--resume", chosen.to_str().unwrap()];
    let out = train_seed3(more.parent().unwrap().to_str().unwrap(), &resumed, &resume);
    assert!(out.status.success(), "{}", stderr(&out));
    let record = soft_rule_record(&resumed);
    assert_eq!(record["taken"], true, "{record}");
    assert_eq!(record["labels"], 4, "{record}");

    let merged = dir.path().join("merged.cwm");
    let out = cwtext()
        .arg("merge")
        .args([&chosen, &resumed])
        .arg("-o")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(soft_rule_record(&merged)["labels"], 4);

    // A folder made by refiling is the one added since; inspect names it.
    let refiles = dir.path().join("refiles");
    std::fs::create_dir_all(&refiles).unwrap();
    for i in 0..3 {
        let text = topic_document(&mut rng, "botany");
        std::fs::write(refiles.join(format!("{i}.txt")), text).unwrap();
    }
    let out = cwtext()
        .args(["learn", "-m"])
        .arg(&resumed)
        .args(["--label", "botany"])
        .arg(&refiles)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(soft_rule_record(&resumed)["labels"], 4);
    let out = cwtext().arg("inspect").arg(&resumed).output().unwrap();
    assert!(
        stdout(&out).contains(
            "\n                   1 label added since training learns with CW's uncapped step: botany\n"
        ),
        "{}",
        stdout(&out)
    );
}

/// Long documents whose shared words are drawn by Zipf's law (rank r with weight 1/r over
/// 2,000 words), so that frequent word pairs recur across topics as they do in reviews, and
/// each word is with probability `topical` one of 40 of the topic's own: 400 words each. As in
/// [`topic_corpus`], a share `misfiled` of the training documents is filed under another topic;
/// the 100 test documents a topic are filed right.
fn zipf_topic_corpus(root: &Path, per_label: usize, topical: f64, misfiled: f64, seed: u64) {
    use rand::distributions::{Distribution, WeightedIndex};
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let shared = WeightedIndex::new((1..=2000).map(|r| 1.0 / r as f64)).unwrap();
    let mut n = 0;
    for (part, per) in [("train", per_label), ("test", 100)] {
        for (t, topic) in TOPICS.iter().enumerate() {
            for _ in 0..per {
                let words: Vec<String> = (0..400)
                    .map(|_| {
                        if rng.gen_bool(topical) {
                            format!("{}{:02}", &topic[..3], rng.gen_range(0..40))
                        } else {
                            format!("w{:04}", shared.sample(&mut rng))
                        }
                    })
                    .collect();
                let filed = if part == "train" && rng.gen_bool(misfiled) {
                    TOPICS[(t + rng.gen_range(1..TOPICS.len())) % TOPICS.len()]
                } else {
                    topic
                };
                let dir = root.join(part).join(filed);
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join(format!("{n:05}.txt")), words.join(" ")).unwrap();
                n += 1;
            }
        }
    }
}

/// Long documents where the lighter bigrams win, three in ten misfiled: the soft rule is
/// compared with the winner on the winner's features, so it is trained with the lighter
/// bigrams, taken, and the model ships both choices its records say were taken. Until
/// 2026-11-29 the soft model was trained at full weight only: here it lost to the lighter CW
/// held out (0.7254 against 0.7295) and CW was kept, 0.9367 on the test documents; had it won,
/// the model would have shipped full-weight bigrams under a record of the lighter ones.
#[test]
fn the_soft_rule_is_tried_with_the_lighter_bigrams_when_they_win() {
    let dir = tempfile::tempdir().unwrap();
    zipf_topic_corpus(dir.path(), 400, 0.025, 0.3, 11);
    let (train, test) = (dir.path().join("train"), dir.path().join("test"));
    let model = dir.path().join("m.cwm");
    let out = train_seed3(train.to_str().unwrap(), &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("\ntook bigrams at weight 0.5"), "{err}");
    assert!(err.contains("\ntook the soft rule SCW-I"), "{err}");
    let shown = inspect_json(&model);
    assert_eq!(shown["pipeline"]["ngram_weight_per_mille"], 500, "{shown}");
    assert_eq!(shown["learner"]["rule"], "scw1", "{shown}");
    // Compared with the winner: the lighter CW's held-out accuracy is the soft trial's before.
    assert_eq!(
        shown["soft_rule"]["accuracy_before"],
        shown["ngram_weight"]["accuracy"]
    );
    // 300 test documents: measured 0.9700, against 0.9367 for the lighter CW the old rule kept.
    let lighter_cw = dir.path().join("lighter-cw.cwm");
    let out = train_seed3(
        train.to_str().unwrap(),
        &lighter_cw,
        &["--ngram-weight", "0.5", "--eta", "0.9"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (soft, cw) = (accuracy(&model, &test), accuracy(&lighter_cw, &test));
    assert!(
        soft > cw + 0.015,
        "soft rule {soft} against the lighter CW {cw}"
    );
}
