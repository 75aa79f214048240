"""Labels filed by mistake: cwtext against the peers when a share of the training documents carry
a wrong label, tested on the comparison's clean test split.

A user's folders are not filed perfectly (a message dropped into the folder next to the right
one, a review rated by a slip of the finger), and crowd-labelled corpora carry noise of their own.
This takes the comparison's split of a corpus (`compare.py`'s `make_split`) and moves a share P
of each label's training files to another label: a file moves when sha1(f"{S}:{name}") falls in
the lowest P of its range, and goes to a label chosen by a second hash among the others
(uniform noise, the usual model in the literature), or with `--to neighbour` to the other
label the file resembles most (tf-idf centroids), as a hurried refile does. The test split stays as it is. cwtext runs
plain `train --seed 1` (and each `--variant NAME=ARGS`), then `eval`; the peers run with their
fixed settings.

Usage (from `run.sh`'s virtual environment, after the corpora are fetched):
    benches/compare/.venv/bin/python benches/compare/noise.py --cwtext target/release/cwtext \\
        --corpus questions --noise 0,0.1,0.25 [--seeds 1] [--to random|neighbour] \\
        [--peers pa,logreg,liblinear,vw,fasttext] [--variant 'soft=--algo scw1'] [--out FILE]
Prints a markdown table (a row per corpus, noise and seed; a column per tool; cwtext minus the
best peer) and the means.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import compare  # noqa: E402  (the same split, peers and scoring)
import slices  # noqa: E402  (full_split)


def unit(text: str) -> float:
    return int.from_bytes(hashlib.sha1(text.encode()).digest()[:8], "big") / 2**64


def nearest_other_labels(full: Path, labels: list[str]) -> dict[str, str]:
    """For each training file (label/name), the other label it resembles most: the one whose
    centroid of sublinear tf-idf unit vectors (unigrams, every training file) is nearest to the
    file's own vector by cosine. A folder a message is dropped into by mistake is rarely a
    random one: it is the one next to the right one, or the one it looks like."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    keys, texts = [], []
    for label in labels:
        for f in sorted((full / "train" / label).iterdir()):
            keys.append((label, f.name))
            texts.append(f.read_bytes().decode("utf-8", errors="replace"))
    x = TfidfVectorizer(sublinear_tf=True).fit_transform(texts)
    index = {label: i for i, label in enumerate(labels)}
    own = np.array([index[label] for label, _ in keys])
    centroids = np.vstack([np.asarray(x[own == i].mean(axis=0)) for i in range(len(labels))])
    centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12)
    similarity = np.asarray(x @ centroids.T)
    similarity[np.arange(len(keys)), own] = -np.inf
    nearest = similarity.argmax(axis=1)
    return {f"{label}/{name}": labels[j] for (label, name), j in zip(keys, nearest)}


def make_noisy(full: Path, share: float, seed: int, dest: Path, to: str = "random") -> dict:
    """dest/train: every training file, a share of each label's moved to another label (at
    random, or with `to="neighbour"` to the label it resembles most); dest/test: the whole test
    split (links)."""
    shutil.rmtree(dest, ignore_errors=True)
    labels = sorted(p.name for p in (full / "train").iterdir() if p.is_dir())
    nearest = nearest_other_labels(full, labels) if to == "neighbour" and share > 0 else {}
    moved = 0
    for label in labels:
        others = [other for other in labels if other != label]
        for f in sorted((full / "train" / label).iterdir()):
            target = label
            if unit(f"{seed}:{label}/{f.name}") < share:
                if to == "neighbour":
                    target = nearest[f"{label}/{f.name}"]
                else:
                    target = others[int(unit(f"{seed}:to:{label}/{f.name}") * len(others))]
                moved += 1
            # The source label in the name keeps two labels' files of one name apart.
            link = dest / "train" / target / f"{label}-{f.name}"
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(f.resolve())
        for f in sorted((full / "test" / label).iterdir()):
            link = dest / "test" / label / f.name
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(f.resolve())
    return {"root": str(dest), "labels": len(labels), "moved": moved}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cwtext", required=True)
    ap.add_argument("--corpus", required=True, help="comma-separated corpora of compare.py")
    ap.add_argument("--noise", default="0,0.1,0.25", help="comma-separated shares moved")
    ap.add_argument("--seeds", default="1", help="comma-separated noise seeds")
    ap.add_argument("--to", choices=["random", "neighbour"], default="random",
                    help="where a moved file goes: a label at random, or the one it resembles most")
    ap.add_argument("--peers", default="pa,logreg,liblinear,vw,fasttext")
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME=ARGS: cwtext train with ARGS added (repeatable)")
    ap.add_argument("--corpora-dir", type=Path,
                    default=Path(os.environ.get("CORPORA", Path.home() / ".cache/cwtext-corpora")))
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    peers = [p for p in a.peers.split(",") if p]
    names = {key: name for name, key, _ in compare.PEERS}
    has_probs = {key: probs for _, key, probs in compare.PEERS}
    variants = [("cwtext", [])] + [(v.split("=", 1)[0], shlex.split(v.split("=", 1)[1]))
                                   for v in a.variant]
    tools = [name for name, _ in variants] + peers
    rows, table = [], []
    with tempfile.TemporaryDirectory(prefix="cwtext-noise-") as tmp:
        work = Path(tmp)
        (work / "logs").mkdir()
        for corpus in a.corpus.split(","):
            full = slices.full_split(corpus, a.corpora_dir, work / corpus)
            for share in [float(x) for x in a.noise.split(",")]:
                for seed in [int(x) for x in a.seeds.split(",")]:
                    split = make_noisy(full, share, seed, work / "noisy", a.to)
                    got = slices.score_tools(a.cwtext, split, work, f"{corpus} {share}",
                                             variants, peers, has_probs)
                    best = max((got[p] for p in peers), default=float("nan"))
                    rows.append(got)
                    line = (f"| {corpus} | {share:.2f} | {seed} | {split['moved']} | "
                            + " | ".join(f"{got[t]:.4f}" for t in tools)
                            + f" | {100 * (got['cwtext'] - best):+.2f} |")
                    table.append(line)
                    print(line, file=sys.stderr, flush=True)
    header = ["| corpus | share moved | seed | files moved | "
              + " | ".join(names.get(t, t) for t in tools) + " | cwtext − best peer (points) |",
              "|---|---:|---:|---:|" + "---:|" * (len(tools) + 1)]
    means = ("| mean | | | | " + " | ".join(f"{np.mean([r[t] for r in rows]):.4f}" for t in tools)
             + f" | {100 * np.mean([r['cwtext'] - max((r[p] for p in peers), default=float('nan')) for r in rows]):+.2f} |")
    text = "\n".join(header + table + [means])
    print(text)
    if a.out:
        a.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
