//! One criterion benchmark per pipeline stage, on the real documents committed under
//! `tests/fixtures/` (20 Newsgroups posts and SpamAssassin mail): decode + email parse,
//! tokenise + hash, score, update, Gibbs probabilities, and exact probabilities against Gibbs
//! per document. Each checks its result before timing, so a benchmark of a broken stage fails
//! instead of reporting a fast number.
//!
//! `cargo bench --bench stages` (throughput in MB/s where the input is text).

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use cwtext::features::FeatureVector;
use cwtext::learn::learner::{CwConfig, DiagonalLearner, Learner};
use cwtext::learn::probability::Method;
use cwtext::model::Model;
use cwtext::text::input::{parse_bytes, Document, DocumentKind};
use cwtext::text::pipeline::{Pipeline, PipelineConfig};

/// Every file under `tests/fixtures/<dir>`, sorted, with the name of its label folder.
fn fixtures(dir: &str) -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir);
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for label in std::fs::read_dir(&root).expect("fixtures exist") {
        let label = label.unwrap().path();
        for file in std::fs::read_dir(&label).unwrap() {
            let name = label.file_name().unwrap().to_string_lossy().into_owned();
            files.push((name, file.unwrap().path()));
        }
    }
    files.sort_by(|a, b| a.1.cmp(&b.1));
    files
        .into_iter()
        .map(|(label, path)| (label, std::fs::read(path).unwrap()))
        .collect()
}

fn parse(bytes: &[u8]) -> Document {
    parse_bytes(bytes, PipelineConfig::default().input_limits()).expect("fixtures are text")
}

fn decode_and_parse(c: &mut Criterion) {
    let mail = fixtures("mail");
    let bytes: usize = mail.iter().map(|(_, b)| b.len()).sum();
    let emails = mail
        .iter()
        .filter(|(_, b)| parse(b).kind == DocumentKind::Email)
        .count();
    assert_eq!(emails, mail.len(), "every mail fixture parses as email");
    let mut group = c.benchmark_group("decode+email");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("spamassassin fixtures", |b| {
        b.iter(|| {
            for (_, m) in &mail {
                black_box(parse(m));
            }
        })
    });
    group.finish();
}

/// Two benchmarks of `config` over `docs`, each pass from a new pipeline (whose token cache
/// starts empty): text → bucket ids, and text → feature vectors.
fn bench_pipeline(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    config: &PipelineConfig,
    docs: &[Document],
    batch: criterion::BatchSize,
) {
    let fresh = || Pipeline::new(config).unwrap();
    group.bench_function(format!("{name}: buckets"), |b| {
        b.iter_batched_ref(
            fresh,
            |pipeline| {
                for d in docs {
                    black_box(pipeline.buckets(d).len());
                }
            },
            batch,
        )
    });
    group.bench_function(format!("{name}: feature vectors"), |b| {
        b.iter_batched_ref(
            fresh,
            |pipeline| {
                for d in docs {
                    black_box(pipeline.features(d));
                }
            },
            batch,
        )
    });
}

/// Text → bucket ids ("tokenize+hash": tokenise, lowercase, drop stop words and long tokens,
/// hash unigrams and bigrams) and text → feature vectors (plus counting, log-tf, L2, sorting).
/// Every iteration starts from a new pipeline, so its token cache starts empty: 61 KB of posts
/// repeat their words less than a whole corpus does, so this understates the speed on a corpus.
fn tokenize_and_hash(c: &mut Criterion) {
    let news: Vec<Document> = fixtures("news").iter().map(|(_, b)| parse(b)).collect();
    let bytes: usize = news.iter().map(|d| d.body.len()).sum();
    let mut group = c.benchmark_group("tokenize+hash");
    group.throughput(Throughput::Bytes(bytes as u64));
    let stemmed = {
        let mut config = PipelineConfig::default();
        config
            .filters
            .push(cwtext::text::pipeline::config::FilterConfig::Stem {
                language: cwtext::text::pipeline::stem::StemLanguage::English,
            });
        config
    };
    for (name, config) in [
        ("default pipeline", PipelineConfig::default()),
        ("with English stemming", stemmed),
    ] {
        let mut pipeline = Pipeline::new(&config).unwrap();
        let buckets: usize = news.iter().map(|d| pipeline.buckets(d).len()).sum();
        let nnz: usize = news
            .iter()
            .map(|d| pipeline.features(d).expect("posts have words").nnz())
            .sum();
        // Unigrams and bigrams of 51 posts: thousands of features, fewer distinct than in all.
        assert!(
            nnz > 10_000 && nnz < buckets && buckets < bytes / 2,
            "{nnz} features, {buckets} n-grams, {bytes} bytes"
        );
        bench_pipeline(
            &mut group,
            name,
            &config,
            &news,
            criterion::BatchSize::LargeInput,
        );
    }
    group.finish();
}

/// The same on the training half of 20 Newsgroups, when `../shared/corpora/fetch.sh` has put
/// it under `$CWTEXT_CORPORA` (default `~/.cache/cwtext-corpora`): the figure the README quotes.
/// One new pipeline per pass over the corpus, as in `cwtext train`.
fn tokenize_and_hash_20ng(c: &mut Criterion) {
    let root = std::env::var_os("CWTEXT_CORPORA")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/cwtext-corpora")))
        .map(|p| p.join("20ng"));
    let Some(root) = root.filter(|r| r.is_dir()) else {
        eprintln!(
            "20 Newsgroups not found (run ../shared/corpora/fetch.sh): skipping its benchmark"
        );
        return;
    };
    let mut news = Vec::new();
    for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.file_type().is_file() && entry.file_name().to_string_lossy().starts_with("train-")
        {
            news.push(parse(&std::fs::read(entry.path()).unwrap()));
        }
    }
    assert!(news.len() > 10_000, "{} training posts", news.len());
    let bytes: usize = news.iter().map(|d| d.body.len()).sum();
    let mut group = c.benchmark_group("tokenize+hash 20ng");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    // The yardstick the speed issue gives ("a bare split-on-non-alphanumeric plus hash"),
    // measured in the same run, so that the pipeline's speed reads as a ratio on a noisy
    // machine: unigrams only, no lowercasing, no stop words, no UAX #29.
    let bare = |docs: &[Document], out: &mut Vec<u32>| {
        for d in docs {
            out.clear();
            for word in d.body.as_bytes().split(|b| !b.is_ascii_alphanumeric()) {
                if !word.is_empty() {
                    let mut h = cwtext::text::pipeline::hash::FrozenHasher::default();
                    std::hash::Hasher::write(&mut h, word);
                    out.push((std::hash::Hasher::finish(&h) >> 46) as u32);
                }
            }
            black_box(out.len());
        }
    };
    let mut words = Vec::new();
    bare(&news[..1], &mut words);
    assert!(!words.is_empty(), "a post has words");
    group.bench_function("bare split on non-alphanumeric + hash", |b| {
        b.iter(|| bare(&news, &mut words))
    });
    bench_pipeline(
        &mut group,
        "default pipeline",
        &PipelineConfig::default(),
        &news,
        criterion::BatchSize::PerIteration,
    );
    group.finish();
}

/// The embedded model and the fixture posts as its feature vectors, with their labels.
fn model_and_examples() -> (Model, Vec<(FeatureVector, usize)>) {
    let model = Model::from_static(
        cwtext::integrations::shelf::DEFAULT_MODEL,
        Path::new("default"),
        cwtext::model::Checksum::Verify,
    )
    .unwrap();
    let mut pipeline = Pipeline::new(model.pipeline()).unwrap();
    let examples = fixtures("news")
        .iter()
        .map(|(label, b)| {
            let y = model.labels().iter().position(|l| l == label).unwrap();
            (pipeline.features(&parse(b)).unwrap(), y)
        })
        .collect();
    (model, examples)
}

fn score(c: &mut Criterion) {
    let (model, examples) = model_and_examples();
    let right = examples
        .iter()
        .filter(|(x, y)| cwtext::learn::learner::argmax(&model.scores(x)) == *y)
        .count();
    assert!(
        right * 10 >= examples.len() * 9,
        "{right} of {} right",
        examples.len()
    );
    c.bench_function("score (20 labels, 51 posts)", |b| {
        b.iter(|| {
            for (x, _) in &examples {
                black_box(model.score_gaussians(x));
            }
        })
    });
}

fn update(c: &mut Criterion) {
    let (model, examples) = model_and_examples();
    let params = CwConfig::default().validate().unwrap();
    let fresh = DiagonalLearner::new(params, model.pipeline().dimension(), model.labels().len());
    // Three passes over the posts of three groups: the mistakes must fall.
    let mut learner = fresh.clone();
    let mistakes: Vec<usize> = (0..3)
        .map(|_| {
            examples
                .iter()
                .filter(|(x, y)| learner.learn(x, *y))
                .count()
        })
        .collect();
    assert!(mistakes[2] < mistakes[0], "mistakes per pass {mistakes:?}");
    c.bench_function("update (CW var, k=1, one pass over 51 posts)", |b| {
        b.iter_batched_ref(
            || fresh.clone(),
            |learner| {
                for (x, y) in &examples {
                    black_box(learner.learn(x, *y));
                }
            },
            criterion::BatchSize::LargeInput,
        )
    });
}

fn gibbs(c: &mut Criterion) {
    let (model, examples) = model_and_examples();
    let method = Method::Gibbs {
        samples: 1000,
        seed: 1,
    };
    let gaussians: Vec<_> = examples
        .iter()
        .map(|(x, _)| model.score_gaussians(x))
        .collect();
    for g in &gaussians {
        let p = method.distribution(g).probabilities;
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }
    c.bench_function("Gibbs probabilities (1,000 samples, 20 labels)", |b| {
        b.iter(|| black_box(method.distribution(black_box(&gaussians[0]))))
    });
}

/// The Gaussians of every fixture of `dir` under a shelf model, calibrated as `predict` scales
/// them.
fn shelf_gaussians(name: &str, dir: &str) -> Vec<Vec<cwtext::learn::learner::ScoreGaussian>> {
    let model = cwtext::integrations::shelf::find(name)
        .unwrap()
        .load(false)
        .unwrap();
    let mut pipeline = Pipeline::new(model.pipeline()).unwrap();
    fixtures(dir)
        .iter()
        .map(|(_, b)| {
            let g = model.score_gaussians(&pipeline.features(&parse(b)).unwrap());
            cwtext::learn::calibration::scaled(&g, model.header.probability_scale)
        })
        .collect()
}

/// K labels that all contend (means within about 2σ, standard deviations 1 : 3 apart): the
/// quadrature's worst case, no label dropped.
fn contending(k: usize) -> Vec<cwtext::learn::learner::ScoreGaussian> {
    (0..k)
        .map(|z| cwtext::learn::learner::ScoreGaussian {
            mean: 0.05 * z as f64,
            variance: 0.1 + 0.1 * (z % 3) as f64,
        })
        .collect()
}

/// Exact probabilities (closed form for 2 labels, adaptive quadrature for more) against 1,000
/// Gibbs samples (with the draws kept, as `classify` runs, and drawn afresh), per document: the spam model on the mail fixtures (K = 2), the topics model on
/// the news fixtures (K = 20), and K = 20 and 40 labels that all contend. Each case first checks
/// that the two agree within Gibbs's sampling error.
fn probabilities(c: &mut Criterion) {
    let gibbs = Method::Gibbs {
        samples: 1000,
        seed: 1,
    };
    let cases = [
        (
            "K=2 spam model, mail fixtures",
            shelf_gaussians("spam", "mail"),
        ),
        (
            "K=20 topics model, news fixtures",
            shelf_gaussians("topics", "news"),
        ),
        ("K=20 all contending", vec![contending(20)]),
        ("K=40 all contending", vec![contending(40)]),
    ];
    let mut group = c.benchmark_group("probabilities per document");
    for (name, docs) in &cases {
        for g in docs {
            let exact = Method::Exact.distribution(g).probabilities;
            let sampled = gibbs.distribution(g).probabilities;
            for (e, s) in exact.iter().zip(&sampled) {
                // 5 standard errors of 1,000 samples, and one sample for p near 0 or 1.
                let tolerance = 5.0 * (e * (1.0 - e) / 1000.0).sqrt() + 1e-3;
                assert!(
                    (e - s).abs() <= tolerance,
                    "{name}: {exact:?} vs {sampled:?}"
                );
            }
        }
        group.throughput(Throughput::Elements(docs.len() as u64));
        group.bench_function(format!("exact: {name}"), |b| {
            b.iter(|| {
                for g in docs {
                    black_box(Method::Exact.distribution(black_box(g)));
                }
            })
        });
        // The same seed for every document, as classify runs: the draws are kept per thread.
        group.bench_function(format!("Gibbs 1,000: {name}"), |b| {
            b.iter(|| {
                for g in docs {
                    black_box(gibbs.distribution(black_box(g)));
                }
            })
        });
        // A new seed per call, as calibration's fit runs: every draw made afresh.
        let mut seed = 0u64;
        group.bench_function(format!("Gibbs 1,000, fresh draws: {name}"), |b| {
            b.iter(|| {
                for g in docs {
                    seed += 1;
                    let fresh = Method::Gibbs {
                        samples: 1000,
                        seed,
                    };
                    black_box(fresh.distribution(black_box(g)));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(
    stages,
    decode_and_parse,
    tokenize_and_hash,
    tokenize_and_hash_20ng,
    score,
    update,
    gibbs,
    probabilities
);
criterion_main!(stages);
