//! Model files written by earlier versions of the format keep loading (or are refused with a
//! clear message once a format is retired). One frozen model per format version lives in
//! `tests/models/`; never regenerate them: they stand for files users already have.

use std::path::Path;

use cwtext::learn::probability::Method;
use cwtext::model::{Model, WeightEncoding, FORMAT_VERSION};
use cwtext::text::input::parse_bytes;
use cwtext::text::pipeline::Pipeline;

fn frozen(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/models")
        .join(name)
}

/// v1: trained with cwtext 0.1.0 on `tests/fixtures/mail` (train-* files), 2^16 buckets, f16:
/// `cwtext train mail --include 'train-*' --hash-bits 16 --encoding f16 -o v1-mail.cwm`.
#[test]
fn format_v1_loads_and_classifies() {
    assert_eq!(FORMAT_VERSION, 7, "add a frozen model for the new version");
    let model = Model::load(&frozen("v1-mail.cwm")).unwrap();
    assert_eq!(model.labels(), ["ham", "spam"]);
    assert_eq!(model.header.encoding, WeightEncoding::F16);
    assert_eq!(model.header.training.documents, 60);
    assert_eq!(model.pipeline().hash_bits, 16);
    // Written before HTML was read as text: it goes on reading HTML as it did.
    assert!(!model.pipeline().html_text);
    let mut pipeline = Pipeline::new(model.pipeline()).unwrap();
    let mail = b"From: deals@cheap-pills.example\nSubject: LIMITED OFFER free money\n\n\
        Click here to claim your FREE money now!!! Unsubscribe: reply remove.\n";
    let x = pipeline
        .features(&parse_bytes(mail, model.pipeline().input_limits()).unwrap())
        .unwrap();
    let p = model.predict(
        &x,
        Method::Gibbs {
            samples: 1000,
            seed: 0,
        },
    );
    assert_eq!(model.labels()[p.label], "spam");
    assert!((p.distribution.probabilities.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    let exact = model.predict(&x, Method::Exact);
    assert!((exact.distribution.probabilities[1] - p.distribution.probabilities[1]).abs() < 0.05);
}

/// v2 (adds the vocabulary section): trained with cwtext 0.1.0 on `tests/fixtures/mail`
/// (train-* files), 2^16 buckets, f16, one text per bucket:
/// `cwtext train mail --include 'train-*' --hash-bits 16 --encoding f16 --keep-vocabulary 1
/// -o v2-mail-vocabulary.cwm`.
#[test]
fn format_v2_loads_with_its_vocabulary() {
    let path = frozen("v2-mail-vocabulary.cwm");
    let model = Model::load(&path).unwrap();
    assert_eq!(model.labels(), ["ham", "spam"]);
    assert_eq!(model.header.training.documents, 60);
    let vocabulary = model
        .vocabulary()
        .unwrap()
        .expect("a v2 file keeps a vocabulary");
    assert_eq!(vocabulary.texts_per_bucket(), 1);
    let bucket = cwtext::text::pipeline::hash::bucket(
        cwtext::text::pipeline::hash::token_hash(cwtext::text::pipeline::hash::NS_BODY, "click"),
        16,
    );
    assert_eq!(vocabulary.get(bucket).unwrap().texts, ["click"]);
    // Saving it again gives the same bytes (the vocabulary section is carried as it is).
    let dir = tempfile::tempdir().unwrap();
    model.save(&dir.path().join("again.cwm")).unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("again.cwm")).unwrap(),
        std::fs::read(&path).unwrap()
    );
}

/// v3 (adds the rehearsal section, issue 16): trained on `tests/fixtures/mail` (train-* files),
/// 2^16 buckets, f16: `cwtext train mail --include 'train-*' --hash-bits 16 --encoding f16
/// -o v3-mail-rehearsal.cwm`; 32 documents kept per label (30 ham and 30 spam were offered).
#[test]
fn format_v3_loads_with_its_rehearsal_documents() {
    let path = frozen("v3-mail-rehearsal.cwm");
    let model = Model::load(&path).unwrap();
    assert_eq!(model.labels(), ["ham", "spam"]);
    assert_eq!(model.header.training.documents, 60);
    let memory = model
        .rehearsal()
        .unwrap()
        .expect("a v3 file keeps rehearsal documents");
    assert_eq!(memory.capacity(), 32);
    assert_eq!(memory.labels(), 2);
    for label in 0..2 {
        let kept = memory.documents(label);
        assert_eq!(
            kept.len(),
            30,
            "fewer documents than the capacity: all kept"
        );
        for d in kept {
            assert_eq!(d.reference.len(), 2);
            // The reference is the model's mean score on the document when it was kept.
            let now = model.scores(&d.x);
            for (&kept, &now) in d.reference.iter().zip(&now) {
                assert!(
                    (f64::from(kept) - now).abs() <= 0.02 * now.abs().max(1.0),
                    "{kept} vs {now} (f16 weights)"
                );
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    model.save(&dir.path().join("again.cwm")).unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("again.cwm")).unwrap(),
        std::fs::read(&path).unwrap()
    );
}

/// v4 (a pipeline with character n-grams beside the words; no new section): trained on
/// `tests/fixtures/rows/news-train.txt` (36 posts, a small corpus, so `train` gave it character
/// n-grams), 2^16 buckets, f16: `cwtext train rows/news-train.txt --hash-bits 16 --encoding f16
/// -o v4-news-chars.cwm`.
#[test]
fn format_v4_loads_with_its_character_n_grams() {
    use cwtext::text::pipeline::chargrams::CharNgrams;
    let path = frozen("v4-news-chars.cwm");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes[8], 4);
    let model = Model::load(&path).unwrap();
    assert_eq!(
        model.labels(),
        ["rec.sport.hockey", "sci.space", "talk.politics.mideast"]
    );
    assert_eq!(model.pipeline().char_ngrams, Some(CharNgrams::default()));
    let length = model
        .header
        .text_length
        .expect("train recorded the texts' length");
    assert_eq!((length.sampled, length.documents, length.mail), (36, 36, 0));
    assert!(!length.is_short() && length.is_small());
    // The character n-grams are features: a word never seen in training still counts through
    // its letters ("spacewalks" shares <sp, spa, pac, ... with "space").
    let mut pipeline = Pipeline::new(model.pipeline()).unwrap();
    let limits = model.pipeline().input_limits();
    let doc = parse_bytes(b"spacewalks", limits).unwrap();
    let x = pipeline.features(&doc).unwrap();
    // 1 word (no bigram), the 10 + 9 + 8 n-grams of 3 to 5 characters of <spacewalks>, and
    // the bias (two buckets might coincide).
    assert!((27..=29).contains(&x.nnz()), "{} features", x.nnz());
    let p = model.predict(&x, Method::Exact);
    assert_eq!(model.labels()[p.label], "sci.space");
    // Saved again: the same bytes. The same file claiming to be version 3 is refused: a
    // cwtext of version 3 would read the header and predict without the n-grams.
    let err = saved_again_and_refused_as(&model, &bytes, 3);
    assert!(
        err.contains("character n-grams in a version 3 file"),
        "{err}"
    );
}

/// Checks that `model` saves to `bytes` again, and returns the error that loading `bytes`
/// relabelled as format `version` (checksum mended) gives.
fn saved_again_and_refused_as(model: &Model, bytes: &[u8], version: u8) -> String {
    let dir = tempfile::tempdir().unwrap();
    model.save(&dir.path().join("again.cwm")).unwrap();
    assert_eq!(std::fs::read(dir.path().join("again.cwm")).unwrap(), bytes);
    let mut older = bytes.to_vec();
    older[8] = version;
    let crc = crc32fast::hash(&older[..older.len() - 4]);
    let end = older.len() - 4;
    older[end..].copy_from_slice(&crc.to_le_bytes());
    let old = dir.path().join("old.cwm");
    std::fs::write(&old, &older).unwrap();
    Model::load(&old).unwrap_err().to_string()
}

/// v5 (the first word as a feature of its own too, `first:WORD`; no new section): trained on
/// `tests/fixtures/rows/news-train.txt` (as v4, with character n-grams), the first word forced
/// on, 2^16 buckets, f16: `cwtext train rows/news-train.txt --hash-bits 16 --encoding f16
/// --first-word -o v5-news-first-word.cwm` (which gives these bytes again).
#[test]
fn format_v5_loads_with_its_first_word() {
    let path = frozen("v5-news-first-word.cwm");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes[8], 5);
    let model = Model::load(&path).unwrap();
    assert!(model.pipeline().first_word);
    assert!(model.pipeline().char_ngrams.is_some());
    // "spacewalks": 1 word (no bigram), its first-word feature, the 27 character n-grams of
    // <spacewalks> and the bias (two buckets might coincide); v4's same text has one fewer.
    let mut pipeline = Pipeline::new(model.pipeline()).unwrap();
    let limits = model.pipeline().input_limits();
    let x = pipeline
        .features(&parse_bytes(b"spacewalks", limits).unwrap())
        .unwrap();
    assert!((28..=30).contains(&x.nnz()), "{} features", x.nnz());
    let p = model.predict(&x, Method::Exact);
    assert_eq!(model.labels()[p.label], "sci.space");
    let traced = pipeline.trace(&parse_bytes(b"Spacewalks are long", limits).unwrap());
    assert!(
        traced.iter().any(|t| t.text == "first:spacewalks"),
        "{traced:?}"
    );
    // Saved again: the same bytes. Claiming version 4, refused: a cwtext of version 4 would
    // predict without the first word.
    let err = saved_again_and_refused_as(&model, &bytes, 4);
    assert!(
        err.contains("a first-word feature in a version 4 file"),
        "{err}"
    );
}

/// v6 (the n-grams at a weight of their own beside the words; no new section): trained on
/// `tests/fixtures/rows/news-train.txt` (as v4, with character n-grams), bigrams at half weight,
/// 2^16 buckets, f16: `cwtext train rows/news-train.txt --hash-bits 16 --encoding f16
/// --ngram-weight 0.5 -o v6-news-ngram-weight.cwm` (which gives these bytes again).
#[test]
fn format_v6_loads_with_its_n_gram_weight() {
    let path = frozen("v6-news-ngram-weight.cwm");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes[8], 6);
    let model = Model::load(&path).unwrap();
    assert_eq!(model.pipeline().ngram_weight_per_mille, Some(500));
    assert!(model.pipeline().char_ngrams.is_some());
    // "space shuttle": its bigram weighs half a word in the words' view.
    let mut pipeline = Pipeline::new(model.pipeline()).unwrap();
    let limits = model.pipeline().input_limits();
    let x = pipeline
        .features(&parse_bytes(b"space shuttle", limits).unwrap())
        .unwrap();
    let value = |b: u32| x.get(b as usize).copied().unwrap_or(0.0);
    use cwtext::text::pipeline::hash::{bucket, ngram_hash, token_hash, NS_BODY};
    let word = value(bucket(token_hash(NS_BODY, "space"), 16));
    let gram = value(bucket(
        ngram_hash(token_hash(NS_BODY, "space"), token_hash(NS_BODY, "shuttle")),
        16,
    ));
    assert!(
        word > 0.0 && (gram - word / 2.0).abs() < 1e-6,
        "{word} {gram}"
    );
    let p = model.predict(&x, Method::Exact);
    assert_eq!(model.labels()[p.label], "sci.space");
    // Saved again: the same bytes. Claiming version 5, refused: a cwtext of version 5 would
    // predict with the bigrams at full weight.
    let err = saved_again_and_refused_as(&model, &bytes, 5);
    assert!(
        err.contains("an n-gram weight in a version 5 file"),
        "{err}"
    );
}

/// v7 (a filter that takes elided articles off words; no new section): trained on
/// `tests/fixtures/rows/news-train.txt` (as v4, with character n-grams), the French articles
/// asked for, 2^16 buckets, f16: `cwtext train rows/news-train.txt --hash-bits 16 --encoding
/// f16 --elisions french -o v7-news-elisions.cwm` (which gives these bytes again).
#[test]
fn format_v7_loads_with_its_elisions() {
    let path = frozen("v7-news-elisions.cwm");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes[8], 7);
    let model = Model::load(&path).unwrap();
    assert_eq!(model.pipeline().elisions_name(), Some("french"));
    // The article comes off before the words are hashed: "l'espace" is the word "espace".
    let mut pipeline = Pipeline::new(model.pipeline()).unwrap();
    let limits = model.pipeline().input_limits();
    let traced = pipeline.trace(&parse_bytes(b"L'espace qu'on voit", limits).unwrap());
    // (The character n-grams are of the text's words as written.)
    let words: Vec<&str> = (traced.iter().map(|t| t.text.as_str()))
        .filter(|t| !t.starts_with("chars:"))
        .collect();
    assert_eq!(words, ["espace", "voit", "espace voit"]);
    let x = pipeline
        .features(&parse_bytes(b"the space shuttle's launch", limits).unwrap())
        .unwrap();
    let p = model.predict(&x, Method::Exact);
    assert_eq!(model.labels()[p.label], "sci.space");
    // Saved again: the same bytes. Claiming version 6, refused: a cwtext of version 6 cannot
    // read the filter.
    let err = saved_again_and_refused_as(&model, &bytes, 6);
    assert!(err.contains("elided articles in a version 6 file"), "{err}");
}
