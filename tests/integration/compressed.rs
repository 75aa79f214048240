//! Compressed files are read as the text they hold: a corpus shipped gzipped (man pages, rotated
//! logs, archived mail folders) trains the same model as the same corpus uncompressed, and a
//! compressed document classifies as its text does.

use std::io::Write;
use std::path::Path;

use crate::common::{cwtext, fixtures, stderr, stdout};

/// Copies `news/` into `dir`, each file compressed by one of the four formats in turn.
fn compressed_copy(dir: &Path) {
    let mut n = 0;
    for label in std::fs::read_dir(fixtures().join("news")).unwrap() {
        let label = label.unwrap().path();
        let out = dir.join(label.file_name().unwrap());
        std::fs::create_dir_all(&out).unwrap();
        let mut files: Vec<_> = std::fs::read_dir(&label)
            .unwrap()
            .map(|f| f.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read(&file).unwrap();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let (ext, packed) = match n % 4 {
                0 => {
                    let mut e = flate2::write::GzEncoder::new(Vec::new(), Default::default());
                    e.write_all(&text).unwrap();
                    ("gz", e.finish().unwrap())
                }
                1 => {
                    let mut e = bzip2::write::BzEncoder::new(Vec::new(), Default::default());
                    e.write_all(&text).unwrap();
                    ("bz2", e.finish().unwrap())
                }
                2 => {
                    let mut packed = Vec::new();
                    lzma_rs::xz_compress(&mut &text[..], &mut packed).unwrap();
                    ("xz", packed)
                }
                _ => (
                    "zst",
                    ruzstd::encoding::compress_to_vec(
                        &text[..],
                        ruzstd::encoding::CompressionLevel::Fastest,
                    ),
                ),
            };
            n += 1;
            std::fs::write(out.join(format!("{name}.{ext}")), packed).unwrap();
        }
    }
}

#[test]
fn a_compressed_corpus_trains_the_model_its_text_trains() {
    let tmp = tempfile::tempdir().unwrap();
    let packed = tmp.path().join("packed");
    compressed_copy(&packed);
    let train = |dir: &Path, model: &str| {
        let out = cwtext()
            .args(["train", "--include", "train-*", "--seed", "7", "-o"])
            .arg(tmp.path().join(model))
            .arg(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            !stderr(&out).contains("skipped"),
            "nothing is skipped: {}",
            stderr(&out)
        );
        std::fs::read(tmp.path().join(model)).unwrap()
    };
    // Before compressed files were read, every one was skipped as "application/gzip data" (or
    // as control bytes) and train refused a corpus with no readable document.
    let from_text = train(&fixtures().join("news"), "text.cwm");
    let from_packed = train(&packed, "packed.cwm");
    assert!(
        from_text == from_packed,
        "the same documents, compressed, train the same bytes"
    );

    // Evaluating on the compressed test files gives the plain files' figures.
    let eval = |dir: &Path| {
        let out = cwtext()
            .args([
                "eval",
                "--include",
                "test-*",
                "--format",
                "json",
                "-q",
                "-m",
            ])
            .arg(tmp.path().join("text.cwm"))
            .arg(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        (v["documents"].clone(), v["accuracy"].clone())
    };
    let (documents, accuracy) = eval(&packed);
    assert_eq!(documents, 15);
    assert_eq!((documents, accuracy), eval(&fixtures().join("news")));
}

#[test]
fn files_made_by_gzip_bzip2_xz_and_zstd_classify_as_their_text() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("m.cwm");
    let out = cwtext()
        .args(["train", "--include", "train-*", "-q", "-o"])
        .arg(&model)
        .arg(fixtures().join("news"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let classify = |file: &Path| {
        let out = cwtext()
            .args(["classify", "--format", "json", "-m"])
            .arg(&model)
            .pipe_stdin(file)
            .unwrap()
            .output()
            .unwrap();
        assert!(out.status.success(), "{}: {}", file.display(), stderr(&out));
        stdout(&out)
    };
    let plain = classify(&fixtures().join("news/sci.space/test-05543.txt"));
    assert!(plain.contains("\"sci.space\""), "{plain}");
    for ext in ["gz", "bz2", "xz", "zst"] {
        let file = fixtures().join(format!("compressed/sci.space-test-05543.txt.{ext}"));
        assert_eq!(classify(&file), plain, "{ext}");
    }
}

#[test]
fn damaged_compressed_files_are_named_and_skipped_and_a_bomb_is_cut_at_the_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("c");
    compressed_copy(&corpus);
    // A gzip file whose deflate data is garbage.
    let mut bad = vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 3];
    bad.extend_from_slice(&[0xff; 64]);
    std::fs::write(corpus.join("sci.space/train-broken.txt.gz"), bad).unwrap();
    // 32 MiB of text in a 32 KiB file: read only up to --max-document-bytes.
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    for _ in 0..(1 << 20) {
        e.write_all(b"orbit launch shuttle nasa moon rocket\n")
            .unwrap();
    }
    std::fs::write(
        corpus.join("sci.space/train-bomb.txt.gz"),
        e.finish().unwrap(),
    )
    .unwrap();
    let out = cwtext()
        .args([
            "train",
            "--include",
            "train-*",
            "--max-document-bytes",
            "100000",
            "-o",
        ])
        .arg(tmp.path().join("m.cwm"))
        .arg(&corpus)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(
        err.contains("train-broken.txt.gz") && err.contains("gzip data that does not decompress"),
        "{err}"
    );
    assert!(
        err.contains("train-bomb.txt.gz: holds more than 100000 bytes once decompressed (gzip)"),
        "{err}"
    );
    // The rest trained: 36 training files and the bomb, the broken one skipped.
    assert!(tmp.path().join("m.cwm").exists(), "{err}");
    assert!(err.contains(" on 37 documents, 3 labels"), "{err}");
}
