#!/usr/bin/env python3
"""Side-by-side benchmark of cwtext against fastText, Vowpal Wabbit and scikit-learn.

Run through run.sh, which prepares the corpora, the virtual environment and the cwtext binary.
This file has two roles:

* the orchestrator (default): makes the deterministic splits, runs every tool on every corpus,
  each step in its own process (so that peak RSS is per tool and per step), computes the same
  measures for every tool from its predictions and writes the Markdown tables;
* a worker (`compare.py peer train|predict ...`): trains or applies ONE Python peer and exits.

Every probability-based measure (ECE, Brier, entropy) is computed by `calibration()` below from
the per-document probability vectors, the same way for every peer; cwtext's own figures come
from `cwtext eval --format json` and are cross-checked with the same function applied to
`cwtext classify --format json`.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import os
import pickle
import platform
import random
import re
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

# ------------------------------------------------------------------------------------------------
# Corpora and splits

# name -> (folder below CORPORA, split rule). "files": the corpus' own train-*/test-* file names;
# "hash": a fixed hash of the path relative to the corpus root puts one fifth in the test split.
CORPORA = {
    "20ng": ("20ng", "files"),
    "spamassassin": ("spamassassin/binary", "hash"),
    "movie_sentiment": ("movie_sentiment", "hash"),
    "sms_spam": ("sms_spam", "hash"),
    "fortunes_category": ("fortunes_category", "hash"),
}


def is_test(rel: str) -> bool:
    """The hash split: first 8 bytes of sha1(relative path) as a big-endian integer, mod 5 == 0."""
    return int.from_bytes(hashlib.sha1(rel.encode("utf-8")).digest()[:8], "big") % 5 == 0


def corpus_files(root: Path):
    """(relative path, absolute path) of every non-hidden file below root/<label>/, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if "/" in rel:  # a file directly in the root has no label folder
                out.append((rel, path.resolve()))
    return out


def make_split(corpus: str, corpora_dir: Path, splits_dir: Path) -> dict:
    """Materialise SPLITS/<corpus>/{train,test}/<label>/<file> as symbolic links, afresh."""
    sub, rule = CORPORA[corpus]
    root = corpora_dir / sub
    dest = splits_dir / corpus
    shutil.rmtree(dest, ignore_errors=True)
    counts = {"train": 0, "test": 0}
    for rel, target in corpus_files(root):
        name = rel.rsplit("/", 1)[-1]
        if rule == "files":
            part = "test" if name.startswith("test-") else "train" if name.startswith("train-") else None
            if part is None:
                continue
        else:
            part = "test" if is_test(rel) else "train"
        link = dest / part / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
        counts[part] += 1
    labels = sorted(p.name for p in (dest / "train").iterdir() if p.is_dir())
    return {"root": str(dest), "rule": rule, "labels": len(labels), **counts}


def read_split(split: Path, labels: list[str] | None = None):
    """Every document below split/<label>/ in sorted order, decoded as UTF-8 (errors='replace').

    Returns (labels, paths, texts, y); y indexes `labels` (taken from the folders when not given,
    -1 for a label the model never saw)."""
    if labels is None:
        labels = sorted(p.name for p in split.iterdir() if p.is_dir() and not p.name.startswith("."))
    index = {label: i for i, label in enumerate(labels)}
    paths, texts, y = [], [], []
    for rel, _ in corpus_files(split):
        path = split / rel
        paths.append(str(path))
        texts.append(path.read_bytes().decode("utf-8", errors="replace"))
        y.append(index.get(rel.split("/", 1)[0], -1))
    return labels, paths, texts, np.array(y, dtype=np.int64)


# ------------------------------------------------------------------------------------------------
# Peers: settings and the worker that trains or applies one of them

# (table name, key, has probabilities)
PEERS = [
    ("fastText", "fasttext", True),
    ("Vowpal Wabbit", "vw", True),
    ("SGDClassifier (log loss)", "sgd", True),
    ("PassiveAggressive", "pa", False),
    ("Perceptron", "perceptron", False),
    ("MultinomialNB", "nb", True),
    ("LogisticRegression", "logreg", True),
]

HASH_FEATURES = 2**18  # per label, the same hashed space as cwtext's default --hash-bits 18

# fastText's supervised tutorial: "-lr 1.0 -epoch 25 -wordNgrams 2"; the rest are its supervised
# defaults (dim 100, softmax loss, minCount 1, 2M n-gram buckets). thread=2: the machine's cores.
FASTTEXT = dict(lr=1.0, epoch=25, wordNgrams=2, dim=100, loss="softmax", minCount=1,
                bucket=2_000_000, thread=2, seed=1, verbose=0)
VW_PASSES = 10

_PUNCT = re.compile(r"([.!?,'/()])")


def tokens(text: str) -> list[str]:
    """fastText's tutorial normalisation: lower case, punctuation split off, whitespace-separated."""
    return _PUNCT.sub(r" \1 ", text.lower()).split()


def vw_line(text: str, label: int | None = None) -> str:
    """A VW example: '|' and ':' are VW syntax, so they become spaces; one namespace 'w'."""
    body = " ".join(tokens(text.replace("|", " ").replace(":", " ")))
    return f"{'' if label is None else label} |w {body}\n"


def sklearn_model(key: str, quick: bool):
    """The scikit-learn pipeline of a peer: hashed unigrams and bigrams, tf-idf, classifier."""
    from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
    from sklearn.linear_model import LogisticRegression, Perceptron, SGDClassifier
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import make_pipeline

    # Raw counts of unigrams and bigrams hashed into 2^18 columns, then sublinear tf-idf with
    # unit length, as scikit-learn's text classification example does (TfidfVectorizer(
    # sublinear_tf=True)); HashingVectorizer + TfidfTransformer is its documented hashed form.
    # alternate_sign=False keeps counts non-negative (MultinomialNB and the log of tf need it).
    vec = HashingVectorizer(ngram_range=(1, 2), n_features=HASH_FEATURES, alternate_sign=False,
                            norm=None)
    tfidf = TfidfTransformer(sublinear_tf=True)
    iters = 5 if quick else 1000  # scikit-learn's default max_iter; tol=1e-3 stops long before
    if key == "sgd":
        # alpha=1e-6 rather than the 1e-4 default, which underfits unit-length tf-idf rows:
        # the best validation log loss of {1e-5, 1e-6, 1e-7} (see the README).
        clf = SGDClassifier(loss="log_loss", alpha=1e-6, max_iter=iters, tol=1e-3, n_jobs=2,
                            random_state=1)
    elif key == "pa":
        try:  # deprecated in scikit-learn 1.8 (removed in 1.10) in favour of the SGD form below
            from sklearn.linear_model import PassiveAggressiveClassifier
            warnings.simplefilter("ignore", FutureWarning)
            clf = PassiveAggressiveClassifier(C=1.0, max_iter=iters, tol=1e-3, n_jobs=2, random_state=1)
        except ImportError:
            clf = SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1", eta0=1.0,
                                max_iter=iters, tol=1e-3, n_jobs=2, random_state=1)
    elif key == "perceptron":
        clf = Perceptron(max_iter=iters, tol=1e-3, n_jobs=2, random_state=1)
    elif key == "nb":
        # alpha=0.01 as in scikit-learn's out-of-core and sparse-features text examples.
        clf = MultinomialNB(alpha=0.01)
    elif key == "logreg":
        # Multinomial (softmax) logistic regression. SAGA: one cheap pass over the sparse rows
        # per iteration, about a minute on 20 Newsgroups where L-BFGS took minutes (and over
        # 10 minutes with 40 labels). C=1000: unit-length tf-idf rows need weak regularisation;
        # the best validation log loss of {10, 100, 1000} (C=10 is as accurate but
        # underconfident: ECE 0.31 on 20ng).
        clf = LogisticRegression(C=1000.0, solver="saga", max_iter=10 if quick else 300, tol=1e-3,
                                 random_state=1)
    else:
        raise ValueError(key)
    return make_pipeline(vec, tfidf, clf)


def peer_train(key: str, split: Path, model_dir: Path, quick: bool) -> dict:
    """Read split/, train the peer, save its model in model_dir. Returns seconds and model files."""
    start = time.perf_counter()
    labels, _, texts, y = read_split(split)
    # One fixed shuffle for every peer: the files come sorted by label, which online learners
    # (fastText, VW, SGD) must not see in that order.
    order = list(range(len(texts)))
    random.Random(1).shuffle(order)
    texts = [texts[i] for i in order]
    y = y[order]
    model_dir.mkdir(parents=True, exist_ok=True)
    extra = {}
    (model_dir / "labels.json").write_text(json.dumps(labels))
    if key == "fasttext":
        import fasttext

        data = model_dir / "train.txt"
        with open(data, "w", encoding="utf-8") as f:
            for text, label in zip(texts, y):
                f.write(f"__label__{label} {' '.join(tokens(text))}\n")
        params = dict(FASTTEXT, epoch=5) if quick else FASTTEXT
        model = fasttext.train_supervised(input=str(data), **params)
        model.save_model(str(model_dir / "model.bin"))
        data.unlink()
        files = ["model.bin", "labels.json"]
    elif key == "vw":
        from vowpalwabbit import Workspace

        data, cache = model_dir / "train.vw", model_dir / "train.cache"
        with open(data, "w", encoding="utf-8") as f:
            for text, label in zip(texts, y):
                f.write(vw_line(text, int(label) + 1))  # VW's classes are 1..K
        # One-against-all with logistic loss so that --probabilities gives calibrated scores;
        # several passes over a cache (VW holds out every 10th example to stop early).
        # VW's --oaa keeps all K classes in ONE 2^b table, so b = 18 + ceil(log2 K) gives each
        # class the 2^18 hashed weights that every other tool has per label.
        bits = 18 + math.ceil(math.log2(max(len(labels), 2)))
        passes = 2 if quick else VW_PASSES
        vw = Workspace(f"--oaa {len(labels)} --ngram 2 --loss_function logistic --probabilities "
                       f"-b {bits} --passes {passes} -c -k --cache_file {cache} --random_seed 1 "
                       f"-d {data} -f {model_dir / 'model.vw'} --quiet")
        vw.finish()
        data.unlink()
        cache.unlink(missing_ok=True)
        files = ["model.vw", "labels.json"]
    else:
        model = sklearn_model(key, quick)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning (saga, --quick), deprecations
            model.fit(texts, y)
        with open(model_dir / "model.pkl", "wb") as f:
            pickle.dump(model, f, protocol=5)
        files = ["model.pkl"]
        clf = model[-1]
        if hasattr(clf, "n_iter_"):  # reported when an iterative solver hit its max_iter
            extra["iterations"] = int(np.max(clf.n_iter_))
            extra["max_iter"] = int(clf.max_iter)
    return {"seconds": time.perf_counter() - start,
            "model_bytes": sum((model_dir / name).stat().st_size for name in files), **extra}


def peer_predict(key: str, split: Path, model_dir: Path, out: Path) -> dict:
    """Apply the saved model to every document of split/; save truth, predictions, probabilities."""
    start = time.perf_counter()
    labels = json.loads((model_dir / "labels.json").read_text())
    _, _, texts, y = read_split(split, labels)
    k = len(labels)
    probs = None
    if key == "fasttext":
        import fasttext

        model = fasttext.load_model(str(model_dir / "model.bin"))
        # k=-1: the probability of every label (softmax), best first.
        names, values = model.predict([" ".join(tokens(t)) for t in texts], k=-1, threshold=0.0)
        probs = np.zeros((len(texts), k))
        for row, (ls, ps) in enumerate(zip(names, values)):
            for label, p in zip(ls, ps):
                probs[row, int(label[len("__label__"):])] = p
            if not ls:  # a document without a single token: fastText predicts nothing
                probs[row] = 1.0 / k
    elif key == "vw":
        from vowpalwabbit import Workspace

        data, preds = model_dir / "test.vw", model_dir / "test.pred"
        with open(data, "w", encoding="utf-8") as f:
            for text in texts:
                f.write(vw_line(text))
        Workspace(f"-t -i {model_dir / 'model.vw'} -d {data} -p {preds} --probabilities --quiet").finish()
        probs = np.zeros((len(texts), k))
        with open(preds) as f:  # one line per example: "1:p1 2:p2 ... K:pK"
            for row, line in enumerate(f):
                for item in line.split():
                    cls, p = item.split(":")
                    probs[row, int(cls) - 1] = float(p)
        data.unlink()
        preds.unlink()
    else:
        with open(model_dir / "model.pkl", "rb") as f:
            model = pickle.load(f)
        if key in ("pa", "perceptron"):  # no probabilities: the decision function's argmax
            pred = model.predict(texts)
        else:
            # classes_ are label indices: put each column where its label is
            probs = np.zeros((len(texts), k))
            probs[:, model.classes_] = model.predict_proba(texts)
    if probs is not None:
        pred = probs.argmax(axis=1)  # the prediction is the most probable label, for every tool
    seconds = time.perf_counter() - start
    np.savez(out, truth=y, pred=np.asarray(pred, dtype=np.int64),
             probs=probs if probs is not None else np.zeros((0, 0)))
    return {"seconds": seconds}


# ------------------------------------------------------------------------------------------------
# Measures (the same code for every tool)


def accuracy_f1(truth: np.ndarray, pred: np.ndarray, k: int) -> tuple[float, float]:
    """Accuracy and macro-F1 over the labels that occur in the truth or the predictions."""
    accuracy = float(np.mean(truth == pred)) if len(truth) else float("nan")
    f1s = []
    for c in range(k):
        tp = int(np.sum((truth == c) & (pred == c)))
        support, predicted = int(np.sum(truth == c)), int(np.sum(pred == c))
        if support == 0 and predicted == 0:
            continue
        precision = tp / predicted if predicted else 0.0
        recall = tp / support if support else 0.0
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return accuracy, float(np.mean(f1s)) if f1s else float("nan")


def calibration(truth: np.ndarray, probs: np.ndarray, pred: np.ndarray | None = None,
                bins: int = 10) -> dict:
    """ECE, multi-class Brier score and mean normalised entropy of per-document distributions.

    ECE: the confidence is the probability of the predicted label (the most probable one unless
    `pred` says otherwise: cwtext predicts by its mean scores); documents go
    into `bins` equal-width bins [i/bins, (i+1)/bins) (the last one closed at 1); ECE is the
    document-weighted mean over bins of |accuracy - mean confidence|.
    Brier: mean over documents of sum_k (p_k - [y = k])^2 (0 is perfect, 2 the worst).
    Entropy: -sum_k p_k log p_k / log K (0 = certain, 1 = uniform), averaged over documents."""
    n, k = probs.shape
    probs = probs / np.clip(probs.sum(axis=1, keepdims=True), 1e-300, None)
    if pred is None:
        pred = probs.argmax(axis=1)
    confidence = probs[np.arange(n), pred]
    correct = (pred == truth).astype(float)
    which = np.minimum((confidence * bins).astype(int), bins - 1)
    ece = sum(abs(correct[which == b].sum() - confidence[which == b].sum()) for b in range(bins)) / n
    onehot = np.zeros_like(probs)
    known = truth >= 0
    onehot[np.arange(n)[known], truth[known]] = 1.0
    brier = float(np.mean(np.sum((probs - onehot) ** 2, axis=1)))
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(probs > 0, probs * np.log(probs), 0.0)
    entropy = float(np.mean(-plogp.sum(axis=1) / math.log(k))) if k > 1 else 0.0
    return {"ece": float(ece), "brier": brier, "entropy": entropy}


# ------------------------------------------------------------------------------------------------
# Orchestrator


# Runs argv[2:] as its child and writes the child's peak RSS (KiB, children included) to argv[1].
# Why a launcher: Linux carries a process' peak RSS across exec, so a command started directly
# from this (large) orchestrator would report at least the orchestrator's RSS. Started from this
# small `python -S` process instead, the floor is about 6 MB (GNU time's `%M` does the same).
LAUNCHER = """import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
"""


def run_measured(cmd: list[str], stdout_path: Path, log_path: Path) -> tuple[int, float, float]:
    """Run cmd; returns (exit code, wall seconds, peak RSS in MB of cmd and its descendants)."""
    rss_path = stdout_path.with_suffix(".rss")
    rss_path.unlink(missing_ok=True)
    with open(stdout_path, "wb") as out, open(log_path, "ab") as log:
        log.write(("$ " + " ".join(cmd) + "\n").encode())
        log.flush()
        start = time.perf_counter()
        code = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, str(rss_path)] + cmd,
                              stdout=out, stderr=log, stdin=subprocess.DEVNULL).returncode
        seconds = time.perf_counter() - start
    rss_kib = int(rss_path.read_text()) if rss_path.exists() else 0
    return code, seconds, rss_kib / 1024.0  # ru_maxrss is in KiB on Linux


def log_tail(path: Path, lines: int = 3) -> str:
    text = path.read_text(errors="replace").strip().splitlines() if path.exists() else []
    return " | ".join(line.strip() for line in text[-lines:] if not line.startswith("$ "))


def run_peer(key: str, has_probs: bool, split: dict, work: Path, quick: bool) -> dict:
    """Train and apply one Python peer, each step in its own process."""
    model_dir = work / "models" / key
    shutil.rmtree(model_dir, ignore_errors=True)
    model_dir.mkdir(parents=True)
    log = work / "logs" / f"{key}.log"
    me = [sys.executable, os.path.abspath(__file__), "peer"]
    flags = ["--quick"] if quick else []
    rc, _, rss_train = run_measured(
        me + ["train", key, f"{split['root']}/train", str(model_dir)] + flags, work / "out.json", log)
    if rc != 0:
        return {"error": f"train failed (exit {rc}): {log_tail(log)}"}
    trained = json.loads((work / "out.json").read_text())
    npz = work / f"{key}.npz"
    rc, _, rss_predict = run_measured(
        me + ["predict", key, f"{split['root']}/test", str(model_dir), str(npz)], work / "out.json", log)
    if rc != 0:
        return {"error": f"predict failed (exit {rc}): {log_tail(log)}"}
    predicted = json.loads((work / "out.json").read_text())
    saved = np.load(npz)
    k = split["labels"]
    acc, f1 = accuracy_f1(saved["truth"], saved["pred"], k)
    row = {"accuracy": acc, "macro_f1": f1, "train_s": trained["seconds"],
           "predict_s": predicted["seconds"], "rss_mb": max(rss_train, rss_predict),
           "model_mb": trained["model_bytes"] / 1e6, "documents": int(len(saved["truth"]))}
    if trained.get("iterations", 0) >= trained.get("max_iter", math.inf):
        row["note"] = f"stopped at max_iter={trained['max_iter']} before meeting its tolerance"
    if has_probs:
        row.update(calibration(saved["truth"], saved["probs"]))
    return row


def cwtext_classify_calibration(cwtext: str, model: Path, test_root: Path,
                                labels: list[str]) -> dict | None:
    """Cross-check: ECE / Brier / entropy by calibration() from `cwtext classify --format json`."""
    _, paths, _, truth = read_split(test_root, labels)
    index = {label: i for i, label in enumerate(labels)}
    got = {}
    for start in range(0, len(paths), 2000):
        chunk = paths[start:start + 2000]
        proc = subprocess.run([cwtext, "classify", "-m", str(model), "--format", "json", "-q"] + chunk,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if proc.returncode not in (0, 1):
            return None
        for line in proc.stdout.splitlines():
            doc = json.loads(line)
            got[doc["file"]] = (doc["label"], doc["probabilities"])
    rows = [i for i, p in enumerate(paths) if p in got]
    if not rows:
        return None
    probs = np.zeros((len(rows), len(labels)))
    pred = np.zeros(len(rows), dtype=np.int64)
    for r, i in enumerate(rows):
        pred[r] = index[got[paths[i]][0]]
        for label, p in got[paths[i]][1].items():
            probs[r, index[label]] = p
    result = calibration(truth[rows], probs, pred)
    # Documents whose predicted label has less than the largest probability (ties do not count).
    result["argmax_differs"] = int(np.sum(probs[np.arange(len(rows)), pred] < probs.max(axis=1)))
    result["documents"] = len(rows)
    return result


def run_cwtext(name: str, cwtext: str, split: dict, work: Path, train_args: list[str]) -> dict:
    """`cwtext train|tune` then `cwtext eval --format json`, each measured like the peers."""
    model = work / "models" / f"{name}.cwm"
    model.parent.mkdir(parents=True, exist_ok=True)
    model.unlink(missing_ok=True)
    log = work / "logs" / f"{name}.log"
    rc, train_s, rss_train = run_measured(
        [cwtext] + train_args[:1] + [f"{split['root']}/train", "-o", str(model)] + train_args[1:],
        work / "out.txt", log)
    if rc not in (0, 1):  # 1: some files skipped (counted below through `documents`)
        return {"error": f"{train_args[0]} failed (exit {rc}): {log_tail(log)}"}
    rc, predict_s, rss_eval = run_measured(
        [cwtext, "eval", "-m", str(model), f"{split['root']}/test", "--format", "json", "-q"],
        work / "out.json", log)
    if rc not in (0, 1):
        return {"error": f"eval failed (exit {rc}): {log_tail(log)}"}
    ev = json.loads((work / "out.json").read_text())
    row = {"accuracy": ev["accuracy"], "macro_f1": ev["macro_f1"], "train_s": train_s,
           "predict_s": predict_s, "rss_mb": max(rss_train, rss_eval),
           "model_mb": model.stat().st_size / 1e6, "documents": ev.get("documents"),
           "entropy": ev.get("mean_entropy"), "ece": ev.get("ece"), "brier": ev.get("brier")}
    labels = sorted(p.name for p in Path(split["root"], "train").iterdir() if p.is_dir())
    row["classify_check"] = cwtext_classify_calibration(cwtext, model, Path(split["root"], "test"),
                                                        labels)
    return row


def versions(cwtext: str, repo: Path) -> dict:
    from importlib.metadata import version

    out = {name: version(name) for name in
           ("fasttext-wheel", "vowpalwabbit", "scikit-learn", "numpy", "scipy")}
    out["python"] = platform.python_version()
    out["cwtext"] = subprocess.run([cwtext, "--version"], capture_output=True, text=True).stdout.strip()
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], capture_output=True, text=True).stdout.strip()
    commit = git("rev-parse", "--short", "HEAD")
    if commit:
        dirty = any(not l.startswith("??") and " benches/" not in l for l in git("status", "--porcelain").splitlines())
        out["commit"] = commit + (" with uncommitted changes" if dirty else "")
    return out


def machine() -> str:
    mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal:")), "0")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
    return (f"{os.cpu_count()} cores (`nproc` {subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()}), "
            f"{platform.machine()}, {int(mem) / 2**20:.1f} GiB memory" + (f", {cpu}" if cpu else ""))


def fmt(value, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def fmt_seconds(s: float) -> str:
    return f"{s:.2f}" if s < 10 else f"{s:.1f}" if s < 100 else f"{s:.0f}"


def corpus_section(corpus: str, split: dict, rows: list[tuple[str, dict]]) -> list[str]:
    lines = [f"## {corpus}", "",
             f"{split['labels']} labels; {split['train']:,} training and {split['test']:,} test documents "
             f"({'its own train-*/test-* files' if split['rule'] == 'files' else 'hash split, one fifth held out'}).",
             "",
             "| tool | accuracy | macro-F1 | train s | predict s | peak RSS MB | model MB | ECE | Brier | entropy |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    best = max((r["accuracy"] for _, r in rows if "accuracy" in r), default=None)
    for name, r in rows:
        if "accuracy" not in r:
            lines.append(f"| {name} | {r.get('error', 'n/a')} | | | | | | | | |")
            continue
        acc = fmt(r["accuracy"])
        if best is not None and round(r["accuracy"], 4) == round(best, 4):
            acc = f"**{acc}**"
        lines.append(f"| {name} | {acc} | {fmt(r['macro_f1'])} | {fmt_seconds(r['train_s'])} | "
                     f"{fmt_seconds(r['predict_s'])} | {r['rss_mb']:.0f} | {r['model_mb']:.1f} | "
                     f"{fmt(r.get('ece'))} | {fmt(r.get('brier'))} | {fmt(r.get('entropy'))} |")
    lines.append("")
    notes = [f"{name} {r['note']}." for name, r in rows if r.get("note")]
    for name, r in rows:
        if name.startswith("cwtext") and "accuracy" in r:
            if r.get("documents") is not None and r["documents"] != split["test"]:
                notes.append(f"{name} evaluated {r['documents']:,} of the {split['test']:,} test files: it "
                             "skips a file in which it finds no words (the peers classify every file).")
            check = r.get("classify_check")
            if check:
                notes.append(f"{name}, recomputed by compare.py from `cwtext classify --format json` "
                             f"({check['documents']:,} documents): ECE {fmt(check['ece'])}, "
                             f"Brier {fmt(check['brier'])}, entropy {fmt(check['entropy'])}"
                             + (f"; in {check['argmax_differs']:,} document"
                                f"{'' if check['argmax_differs'] == 1 else 's'} its label is not the "
                                "most probable one of its own probabilities"
                                if check.get("argmax_differs") else "")
                             + ".")
    # The verdict: cwtext tuned when it ran, else cwtext with its defaults.
    by_name = dict(rows)
    cw_name = "cwtext tuned" if "accuracy" in by_name.get("cwtext tuned", {}) else "cwtext"
    cw = by_name.get(cw_name, {})
    peers = [(n, r) for n, r in rows if not n.startswith("cwtext") and "accuracy" in r]
    if "accuracy" in cw and peers:
        best_name, best_row = max(peers, key=lambda nr: nr[1]["accuracy"])
        # Compared as printed (4 decimals): cwtext's denominator can be a file or two smaller.
        ok = round(cw["accuracy"], 4) >= round(best_row["accuracy"], 4)
        verdict = (f"**Verdict:** {cw_name} accuracy {fmt(cw['accuracy'])} vs best peer {best_name} "
                   f"{fmt(best_row['accuracy'])}: {'at least as accurate' if ok else 'less accurate'} "
                   f"({cw['accuracy'] - best_row['accuracy']:+.4f}).")
        ece, source = cw.get("ece"), ""
        if ece is None and cw.get("classify_check"):
            ece, source = cw["classify_check"]["ece"], " (recomputed from `cwtext classify`; eval gives no ECE)"
        others = [(n, by_name.get(n, {}).get("ece")) for n in ("fastText", "LogisticRegression")]
        if ece is None:
            verdict += " ECE: n/a (cwtext eval gives no `ece`)."
        else:
            parts = ", ".join(f"{n} {fmt(e)}" for n, e in others)
            known = [e for _, e in others if e is not None]
            lower = all(ece < e for e in known) and len(known) == len(others)
            verdict += (f" ECE {fmt(ece)}{source} vs {parts}: "
                        f"{'lower than both' if lower else 'not lower than both'}.")
        notes.append(verdict)
    verdict = notes.pop() if notes and notes[-1].startswith("**Verdict") else None
    return lines + [f"- {n}" for n in notes] + ([""] if notes else []) + ([verdict, ""] if verdict else [])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora-dir", type=Path, required=True)
    ap.add_argument("--cwtext", required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--out", type=Path, help="Markdown file to write")
    ap.add_argument("--corpora", default=",".join(CORPORA), help="comma-separated subset")
    ap.add_argument("--quick", action="store_true", help="small budget and epochs: a smoke test")
    ap.add_argument("--tune-budget", type=int, help="cwtext tune --budget (default 24, --quick 3)")
    args = ap.parse_args()
    corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
    unknown = [c for c in corpora if c not in CORPORA]
    if unknown:
        ap.error(f"unknown corpus {', '.join(unknown)} (known: {', '.join(CORPORA)})")
    budget = args.tune_budget or (3 if args.quick else 24)
    repo = Path(__file__).resolve().parents[2]
    started = time.time()
    tune_ok = subprocess.run([args.cwtext, "tune", "--help"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL).returncode == 0
    sections, results = [], {}
    for corpus in corpora:
        print(f"== {corpus}", file=sys.stderr, flush=True)
        split = make_split(corpus, args.corpora_dir, args.work / "splits")
        work = args.work / "runs" / corpus
        shutil.rmtree(work, ignore_errors=True)
        (work / "logs").mkdir(parents=True)
        rows = []
        tools = [("cwtext", lambda: run_cwtext("cwtext", args.cwtext, split, work,
                                               ["train", "--seed", "1", "-q"]))]
        if tune_ok:
            tools.append(("cwtext tuned", lambda: run_cwtext(
                "cwtext-tuned", args.cwtext, split, work,
                ["tune", "--budget", str(budget), "--seed", "1", "-q"])))
        for name, key, has_probs in PEERS:
            tools.append((name, lambda key=key, has_probs=has_probs:
                          run_peer(key, has_probs, split, work, args.quick)))
        for name, run in tools:
            t0 = time.perf_counter()
            row = run()
            rows.append((name, row))
            status = f"accuracy {row['accuracy']:.4f}" if "accuracy" in row else row["error"]
            print(f"   {name}: {status} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
            if name == "cwtext" and not tune_ok:
                rows.append(("cwtext tuned", {"error": "n/a (cwtext tune unavailable)"}))
        shutil.rmtree(work / "models", ignore_errors=True)  # fastText's .bin files are large
        results[corpus] = {"split": split, "rows": rows}
        sections += corpus_section(corpus, split, rows)
    v = versions(args.cwtext, repo)
    minutes = (time.time() - started) / 60
    header = [
        "# cwtext vs peers: accuracy, speed, size and calibration", "",
        f"Generated by `bash benches/compare/run.sh{' --quick' if args.quick else ''}"
        f"{'' if corpora == list(CORPORA) else ' --corpora ' + ','.join(corpora)}` "
        f"(see [benches/compare/README.md](../compare/README.md)) in {minutes:.1f} minutes.", "",
        f"- Date: {datetime.date.today().isoformat()}",
        f"- Machine: {machine()}, {platform.system()} {platform.release()}",
        f"- cwtext: {v['cwtext']}" + (f", commit {v['commit']}" if "commit" in v else "")
        + (f"; `tune --budget {budget}`" if tune_ok else "; `cwtext tune` unavailable"),
        f"- Peers: fasttext-wheel {v['fasttext-wheel']}, vowpalwabbit {v['vowpalwabbit']}, "
        f"scikit-learn {v['scikit-learn']} (numpy {v['numpy']}, scipy {v['scipy']}), Python {v['python']}",
        f"- Mode: {'QUICK smoke test (tiny epochs and budgets: not results)' if args.quick else 'full'}", "",
        "Accuracy and macro-F1 on the held-out split (best accuracy in bold); train s: reading, "
        "featurising and training, model saved; predict s: loading the model, reading, featurising "
        "and predicting the whole test split; peak RSS: the larger of the two steps' processes; "
        "model MB: bytes on disk / 10⁶; ECE (10 equal-width bins over the probability of the "
        "predicted label), multi-class Brier score and mean normalised entropy where the tool gives "
        "probabilities. cwtext's ECE, Brier and entropy are its own `eval --format json` figures.", "",
    ]
    text = "\n".join(header + sections).rstrip() + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    (args.work / "results.json").write_text(json.dumps({"versions": v, "results": results}, indent=1))
    print(text)
    if args.out:
        print(f"written to {args.out}", file=sys.stderr)
    return 0


def worker() -> int:
    """compare.py peer train KEY SPLIT MODEL_DIR [--quick] | peer predict KEY SPLIT MODEL_DIR OUT"""
    ap = argparse.ArgumentParser(prog="compare.py peer")
    ap.add_argument("step", choices=["train", "predict"])
    ap.add_argument("key", choices=[key for _, key, _ in PEERS])
    ap.add_argument("split", type=Path)
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("out", type=Path, nargs="?")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args(sys.argv[2:])
    # Import the peer's library before any clock starts: import time is not the tool's work.
    if a.key == "fasttext":
        import fasttext  # noqa: F401
    elif a.key == "vw":
        import vowpalwabbit  # noqa: F401
    else:
        sklearn_model(a.key, a.quick)
    if a.step == "train":
        result = peer_train(a.key, a.split, a.model_dir, a.quick)
    else:
        result = peer_predict(a.key, a.split, a.model_dir, a.out)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(worker() if sys.argv[1:2] == ["peer"] else main())
