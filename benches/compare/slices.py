"""Small corpora, as a user starts: cwtext against the peers when each label has only a few dozen
training documents, tested on the comparison's whole test split.

A slice takes N training documents a label from the comparison's training split (`compare.py`'s
`make_split`) and keeps its whole test split, so every slice of a corpus is judged on the same
test files. A draw is either `first:K` (the K-th block of N files of each label in name order:
for SpamAssassin's numbered files, the oldest mail) or `seed:S` (the first N of each label
ordered by sha1(f"{S}:{file name}")). cwtext runs plain `train --seed 1` (and each `--variant
NAME=ARGS`, its arguments added), then `eval`, through `compare.py`'s `run_cwtext`; the peers
through `run_peer`, with their fixed settings.

Besides `compare.py`'s corpora, `kinds` is SpamAssassin's five collections merged by what the
mail is: easy ham (easy-ham-1, easy-ham-2), hard ham, spam (spam-1, spam-2); `hamspam` merges
them into ham and spam. With `--test newest` the newest quarter is taken of each collection
before merging, so that every collection is tested on its own later mail.

Usage (from `run.sh`'s virtual environment, after the corpora are fetched):
    benches/compare/.venv/bin/python benches/compare/slices.py --cwtext target/release/cwtext \\
        --corpus kinds --per-label 15,30,60 --draws seed:20,seed:21,seed:22 \\
        [--peers sgd,pa,nb,logreg,liblinear] [--variant 'eta07=--eta 0.7'] [--out FILE]
Prints a markdown table (a row per slice, a column per tool, and cwtext minus the best peer)
and the means.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import compare  # noqa: E402  (the same split, peers and scoring)

# Derived corpora: name -> (compare.py corpus, label of the derived corpus for each source label).
MERGED = {
    "kinds": ("spamassassin_folders", {"easy-ham-1": "easy_ham", "easy-ham-2": "easy_ham",
                                       "hard-ham-1": "hard_ham", "spam-1": "spam", "spam-2": "spam"}),
    # Ham and spam from the five collections: with --test newest each collection's newest
    # quarter is tested (`spamassassin`'s ham folder sorts hard ham last, so its newest quarter
    # would be every hard-ham message and the training pool none).
    "hamspam": ("spamassassin_folders", {"easy-ham-1": "ham", "easy-ham-2": "ham",
                                         "hard-ham-1": "ham", "spam-1": "spam", "spam-2": "spam"}),
}

DEFAULT_PEERS = "sgd,pa,nb,logreg,liblinear"


def newest_split(source: str, corpora_dir: Path, dest: Path) -> Path:
    """Each label's files in name order: the last quarter is the test split, the rest the
    training pool (for SpamAssassin, whose names number the mail by arrival, later mail)."""
    root = corpora_dir / compare.ALL_CORPORA[source][0]
    shutil.rmtree(dest, ignore_errors=True)
    by_label: dict[str, list[tuple[str, Path]]] = {}
    for rel, target in compare.corpus_files(root):
        by_label.setdefault(rel.split("/", 1)[0], []).append((rel, target))
    for files in by_label.values():
        cut = len(files) * 3 // 4
        for i, (rel, target) in enumerate(files):
            link = dest / ("train" if i < cut else "test") / rel
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(target)
    return dest


def full_split(corpus: str, corpora_dir: Path, work: Path, newest: bool = False) -> Path:
    """The comparison's split of the corpus, or with `newest` each label's newest quarter as the
    test split (merged labels for a derived one): {train,test}/<label>/<file>."""
    source, merge = MERGED.get(corpus, (corpus, None))
    if newest:
        made = newest_split(source, corpora_dir, work / "source")
    else:
        made = Path(compare.make_split(source, corpora_dir, work / "source")["root"])
    if merge is None:
        return made
    dest = work / "full"
    for part in ("train", "test"):
        for label_dir in sorted((made / part).iterdir()):
            if label_dir.name not in merge:
                raise SystemExit(f"{corpus}: no merged label for {label_dir.name}")
            out = dest / part / merge[label_dir.name]
            out.mkdir(parents=True, exist_ok=True)
            for f in sorted(label_dir.iterdir()):
                # The source label in the name keeps files of two source folders apart.
                (out / f"{label_dir.name}-{f.name}").symlink_to(f.resolve())
    return dest


def draw_names(names: list[str], n: int, draw: str) -> list[str]:
    kind, _, value = draw.partition(":")
    if kind == "first":
        k = int(value)
        return names[k * n:(k + 1) * n]
    if kind == "seed":
        return sorted(names, key=lambda name: hashlib.sha1(f"{value}:{name}".encode()).digest())[:n]
    raise SystemExit(f"unknown draw {draw!r}: first:K or seed:S")


def make_slice(full: Path, n: int, draw: str, dest: Path) -> dict:
    """dest/train with n documents a label by the draw, dest/test the whole test split (links)."""
    shutil.rmtree(dest, ignore_errors=True)  # the links, not what they point to
    labels = sorted(p.name for p in (full / "train").iterdir() if p.is_dir())
    for label in labels:
        names = sorted(p.name for p in (full / "train" / label).iterdir())
        chosen = draw_names(names, n, draw)
        if len(chosen) < n:
            raise SystemExit(f"{label}: {len(names)} training files, not enough for {draw} of {n}")
        for name in chosen:
            link = dest / "train" / label / name
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to((full / "train" / label / name).resolve())
        for f in sorted((full / "test" / label).iterdir()):
            link = dest / "test" / label / f.name
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(f.resolve())
    return {"root": str(dest), "labels": len(labels)}


def score_tools(cwtext: str, split: dict, work: Path, what: str, variants: list, peers: list[str],
                has_probs: dict) -> dict[str, float]:
    """Test accuracy on `split` of plain `train --seed 1` with each variant's arguments added
    (leading NAME=VALUE words set the environment, as in a shell) and of each peer with its
    fixed settings, by tool name; `what` names the split in errors."""
    got = {}
    for name, extra in variants:
        env = dict(w.split("=", 1) for w in itertools.takewhile(
            lambda w: re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", w), extra))
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            row = compare.run_cwtext(name, cwtext, split, work,
                                     ["train", "--seed", "1", "-q"] + extra[len(env):])
        finally:
            for k, v in saved.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
        if "error" in row:
            raise SystemExit(f"{name} on {what}: {row['error']}")
        got[name] = row["accuracy"]
    for key in peers:
        row = compare.run_peer(key, has_probs[key], split, work, quick=False)
        if "error" in row:
            raise SystemExit(f"{key} on {what}: {row['error']}")
        got[key] = row["accuracy"]
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cwtext", required=True)
    ap.add_argument("--corpus", required=True, help="a corpus of compare.py, or kinds")
    ap.add_argument("--per-label", required=True, help="comma-separated training documents a label")
    ap.add_argument("--draws", default="seed:10,seed:11,seed:12",
                    help="comma-separated first:K or seed:S")
    ap.add_argument("--peers", default=DEFAULT_PEERS)
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME=ARGS: cwtext train with ARGS added (repeatable); leading "
                         "VAR=VALUE words set the environment")
    ap.add_argument("--corpora-dir", type=Path,
                    default=Path(os.environ.get("CORPORA", Path.home() / ".cache/cwtext-corpora")))
    ap.add_argument("--test", choices=["split", "newest"], default="split",
                    help="split: the comparison's test split; newest: each label's newest quarter "
                         "by name (the draws then come from the older three quarters)")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    peers = [p for p in a.peers.split(",") if p]
    names = {key: name for name, key, _ in compare.PEERS}
    has_probs = {key: probs for _, key, probs in compare.PEERS}
    variants = [("cwtext", [])] + [(v.split("=", 1)[0], shlex.split(v.split("=", 1)[1]))
                                   for v in a.variant]
    tools = [name for name, _ in variants] + peers
    rows, table = [], []
    with tempfile.TemporaryDirectory(prefix="cwtext-slices-") as tmp:
        work = Path(tmp)
        (work / "logs").mkdir()
        full = full_split(a.corpus, a.corpora_dir, work, a.test == "newest")
        for n in [int(x) for x in a.per_label.split(",")]:
            for draw in a.draws.split(","):
                split = make_slice(full, n, draw, work / "slice")
                got = score_tools(a.cwtext, split, work, f"{a.corpus}-{n} {draw}", variants,
                                  peers, has_probs)
                best = max(got[p] for p in peers) if peers else float("nan")
                rows.append(got)
                line = (f"| {a.corpus}-{n} | {n * split['labels']} | {draw} | "
                        + " | ".join(f"{got[t]:.4f}" for t in tools)
                        + f" | {100 * (got['cwtext'] - best):+.1f} |")
                table.append(line)
                print(line, file=sys.stderr, flush=True)
    header = ["| corpus | training documents | draw | " + " | ".join(names.get(t, t) for t in tools)
              + " | cwtext − best peer (points) |",
              "|---|---:|---|" + "---:|" * (len(tools) + 1)]
    means = ("| mean | | | " + " | ".join(f"{np.mean([r[t] for r in rows]):.4f}" for t in tools)
             + f" | {100 * np.mean([r['cwtext'] - max(r[p] for p in peers) for r in rows]):+.1f} |")
    text = "\n".join(header + table + [means])
    print(text)
    if a.out:
        a.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
