//! The feature hash spreads a real vocabulary like a random function would: on the 93,864
//! distinct words of 20 Newsgroups, the number of words that share their bucket with another
//! word is within 10% of the expectation for a uniformly random function, at several table sizes.
//! (With FxHash's poorly mixed low bits, a low-bit bucket fails this badly; see `low_bits_fail`.)

use std::collections::HashMap;

use cwtext::text::pipeline::hash::{bucket, token_hash, NS_BODY};

pub(crate) fn vocabulary() -> Vec<String> {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/20ng-vocabulary.txt"
    ))
    .unwrap()
    .lines()
    .map(str::to_string)
    .collect()
}

/// Distinct keys that land in a bucket holding more than one key.
fn colliding(buckets: impl Iterator<Item = u32>) -> usize {
    let mut counts: HashMap<u32, usize> = HashMap::new();
    buckets.for_each(|b| *counts.entry(b).or_default() += 1);
    counts.values().filter(|&&c| c > 1).sum()
}

/// n keys into m buckets: each key collides with probability 1 − (1 − 1/m)^(n−1).
fn expected_colliding(n: usize, m: usize) -> f64 {
    n as f64 * (1.0 - (1.0 - 1.0 / m as f64).powf(n as f64 - 1.0))
}

#[test]
fn collisions_match_a_random_function() {
    let words = vocabulary();
    assert_eq!(words.len(), 93_864);
    for bits in [16u8, 18, 20, 22] {
        let got = colliding(words.iter().map(|w| bucket(token_hash(NS_BODY, w), bits)));
        let want = expected_colliding(words.len(), 1 << bits);
        let ratio = got as f64 / want;
        assert!(
            (0.9..=1.1).contains(&ratio),
            "2^{bits} buckets: {got} colliding words, a random function gives {want:.0}"
        );
    }
}

/// The reason the bucket comes from the top bits: FxHash's low bits collide far more than chance
/// on short keys. If this ever passes the ratio test, the comment in hash.rs is out of date.
#[test]
fn low_bits_fail() {
    let words = vocabulary();
    let bits = 20;
    let low = colliding(
        words
            .iter()
            .map(|w| (token_hash(NS_BODY, w) & ((1 << bits) - 1)) as u32),
    );
    let want = expected_colliding(words.len(), 1 << bits);
    assert!(low as f64 > 1.1 * want, "{low} vs {want:.0}");
}

/// A corpus of `labels` labels × `per_label` documents of 80 words each, drawn from the
/// 20 Newsgroups vocabulary (each label its own stretch of it), in `root`; as mail (a From and
/// Subject header) when `mail`.
#[cfg(feature = "cli")]
pub(crate) fn vocabulary_corpus(
    root: &std::path::Path,
    labels: usize,
    per_label: usize,
    mail: bool,
) {
    let words = vocabulary();
    for label in 0..labels {
        let own = &words[label * 2_000..(label + 1) * 2_000];
        let texts = (0..per_label).map(|d| {
            let body: Vec<&str> = (0..80)
                .map(|i| {
                    let k = (d * 7_919 + i * 104_729 + label) % 4_000;
                    if k < 2_000 {
                        own[k].as_str()
                    } else {
                        words[40_000 + k].as_str()
                    }
                })
                .collect();
            let body = body.join(" ");
            if mail {
                format!("From: someone{d}@example.org\nSubject: note {d}\n\n{body}\n")
            } else {
                body
            }
        });
        crate::common::write_label(root, &format!("label{label}"), texts);
    }
}

#[cfg(feature = "cli")]
fn buckets_of(model: &std::path::Path) -> String {
    let out = crate::common::cwtext()
        .arg("inspect")
        .arg(model)
        .output()
        .unwrap();
    let text = crate::common::stdout(&out);
    text.lines()
        .find_map(|l| l.strip_prefix("weights"))
        .map(|l| l.trim().split(' ').next().unwrap().to_string())
        .unwrap_or_else(|| panic!("no weights line in {text}"))
}

/// Plain `train` hashes a corpus of more than 32,768 words (8 buckets a word fill 2^18) and
/// few labels into more buckets, says so, and writes the same model as the flag would; the flag
/// overrides the rule; mail and a corpus of many labels keep 2^18.
#[cfg(feature = "cli")]
#[test]
fn a_corpus_of_many_words_and_few_labels_gets_more_buckets() {
    let dir = tempfile::tempdir().unwrap();
    let (text, mail, many) = (
        dir.path().join("text"),
        dir.path().join("mail"),
        dir.path().join("many"),
    );
    // 2 × 220 documents of 80 words: 35,200 words want 281,600 buckets, so 2^19.
    vocabulary_corpus(&text, 2, 220, false);
    vocabulary_corpus(&mail, 2, 220, true);
    // 20 × 25 × 80 = 40,000 words, but 20 labels × 2^19 × 8 bytes pass 32 MiB.
    vocabulary_corpus(&many, 20, 25, false);
    let train = |corpus: &std::path::Path, model: &str, extra: &[&str]| {
        let path = dir.path().join(model);
        let out = crate::common::cwtext()
            .arg("train")
            .arg(corpus)
            .arg("-o")
            .arg(&path)
            .args(["--seed", "2", "--epochs", "2"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", crate::common::stderr(&out));
        (path, crate::common::stderr(&out))
    };

    let (chosen, notes) = train(&text, "chosen.cwm", &[]);
    assert!(
        notes.contains("hash bits 19 (524,288 buckets, a weight table of 8.4 MB): about 35,200 words, 8 buckets a word for 2 labels within 32 MiB"),
        "{notes}"
    );
    assert_eq!(buckets_of(&chosen), "524288");
    let (asked, _) = train(&text, "asked.cwm", &["--hash-bits", "19"]);
    assert_eq!(
        std::fs::read(&chosen).unwrap(),
        std::fs::read(&asked).unwrap(),
        "the chosen bits train the model the flag does"
    );

    // `tune` hashes every trial, and its winner, as `train` would.
    let tuned = dir.path().join("tuned.cwm");
    let out = crate::common::cwtext()
        .arg("tune")
        .arg(&text)
        .arg("-o")
        .arg(&tuned)
        .args(["--budget", "2", "--max-epochs", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", crate::common::stderr(&out));
    assert!(
        crate::common::stderr(&out).contains("every trial: hash bits 19 (524,288 buckets"),
        "{}",
        crate::common::stderr(&out)
    );
    assert_eq!(buckets_of(&tuned), "524288");

    // Continuing a model keeps its buckets, and says so when the flag asks for others.
    let (_, notes) = train(
        &text,
        "resumed.cwm",
        &["--resume", chosen.to_str().unwrap(), "--hash-bits", "18"],
    );
    assert!(
        notes.contains("--hash-bits 18 is not used:")
            && notes.contains("keeps its own 2^19 buckets"),
        "{notes}"
    );
    assert_eq!(buckets_of(&dir.path().join("resumed.cwm")), "524288");

    // Shards hold a table each: eight shards of 2 labels at 2^19 would pass 32 MiB together.
    let (sharded, notes) = train(&text, "sharded.cwm", &["--shards", "8"]);
    assert_eq!(buckets_of(&sharded), "262144");
    assert!(notes.contains("(8 shards' tables together)"), "{notes}");

    let (base, notes) = train(&text, "base.cwm", &["--hash-bits", "18"]);
    assert_eq!(buckets_of(&base), "262144");
    assert!(!notes.contains("hash bits"), "{notes}");

    let (mail_model, notes) = train(&mail, "mail.cwm", &[]);
    assert_eq!(buckets_of(&mail_model), "262144");
    assert!(
        notes.contains("mail keeps the base 2^18 buckets"),
        "{notes}"
    );

    let (many_model, notes) = train(&many, "many.cwm", &[]);
    assert_eq!(buckets_of(&many_model), "262144");
    assert!(
        notes.contains(
            "hash bits 18: 20 labels at 2^19 buckets would pass a weight table of 32 MiB"
        ),
        "{notes}"
    );
}
