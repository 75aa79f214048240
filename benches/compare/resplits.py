"""How much of a single split's verdict is the split: cwtext's default `train` against the default
peers on K fresh random train/test splits of each corpus, and on short-text corpora derived from
the long ones (a package's one-line synopsis, a man page's NAME line, a Reuters story's first 12
words), which no tool was tuned on.

`compare.py` splits each corpus once (a hash of the path, or the corpus's own split) and judges
"within 0.5 points of the best peer" on that one test split. On a corpus of 3,000 short
documents the test fifth holds 600, and one standard error of an accuracy near 0.72 is 1.8
points: the verdict can be the split's. Here split r puts a file in the test fifth when
sha1(f"{r}:{relative path}") mod 5 == 0, so each split is fixed by r and the same for every
tool. Each tool runs and is scored by `compare.py`'s own `run_cwtext` (plain `train --seed 1`,
then `eval`) and `run_peer` (its worker, with the fixed settings, and autotune's time bound).

Usage (from `run.sh`'s virtual environment, after `run.sh` has fetched the corpora):
    benches/compare/.venv/bin/python benches/compare/resplits.py \
        --cwtext target/release/cwtext --corpora nyt_sentiment,synopsis --splits 5 [--tune] [--out FILE]
--tune adds `cwtext tune --seed 1` and fastText autotune (with --budget seconds, default 30).
--group REGEX splits by groups instead of files: the regex's first group, searched in the
relative path, stands for the path in the hash, so the documents of one group (the paragraphs of
one text, the messages of one thread) fall on one side together; a path it does not match is
its own group. E.g. `--group='-(c[a-r][0-9][0-9])-'` (with `=`: the pattern starts with a dash) for
brown_genres' paragraphs by text.
Corpora: any name of `compare.py` (dev and extra), a path (holding a '/') of any folder with a
folder per label, and the derived short-text corpora
`synopsis` (Debian sections by the package's one-line synopsis), `man_names` (the man pages'
language by the NAME line), `r8_heads`, `r52_heads` (Reuters topics by a story's first 12 words).
Prints a markdown table per corpus and a summary; --out also writes it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import compare  # noqa: E402  (the same peers, split reading and scoring)


def synopsis(text: str) -> str:
    """A Debian package description's first line: its synopsis."""
    return text.split("\n", 1)[0]


_MAN_FONT = re.compile(r"\\f[BIRP]")


def man_name(text: str) -> str:
    """The text under a man page's first section heading (.SH NAME, .SH NAZWA, ...), joined onto one
    line, with the font escapes and `\\-` dashes undone."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(".SH"):
            out = []
            for more in lines[i + 1:]:
                if more.startswith("."):
                    if out:
                        break
                    continue
                out.append(more)
            return _MAN_FONT.sub("", " ".join(out).replace("\\-", "-"))
    return ""


def first_words(n: int):
    return lambda text: " ".join(text.split()[:n])


# name: (source corpus of compare.py, how a document is cut down)
DERIVED = {
    "synopsis": ("debian_sections", synopsis),
    "man_names": ("manpages_language", man_name),
    "r8_heads": ("reuters_r8", first_words(12)),
    "r52_heads": ("reuters_r52", first_words(12)),
}


def documents(corpus: str, corpora_dir: Path):
    """(relative path, text) of every document of a corpus, derived ones cut down; empty ones
    (a man page without a section heading) left out."""
    if "/" in corpus:
        # A folder of one folder per label, given by its path.
        root, cut = Path(corpus), None
    else:
        source, cut = DERIVED.get(corpus, (corpus, None))
        root = corpora_dir / compare.ALL_CORPORA[source][0]
    # Every file is in the pool: a corpus's own train/test split (Reuters) is not used.
    for rel, path in compare.corpus_files(root):
        text = path.read_bytes().decode("utf-8", errors="replace")
        if cut is not None:
            text = cut(text).strip()
            if not text:
                continue
        yield rel, text


def write_split(docs: list[tuple[str, str]], r: int, dest: Path, group: re.Pattern | None = None) -> dict:
    shutil.rmtree(dest, ignore_errors=True)
    counts = {"train": 0, "test": 0}
    for rel, text in docs:
        found = group.search(rel) if group else None
        key = found.group(1) if found else rel
        digest = hashlib.sha1(f"{r}:{key}".encode("utf-8")).digest()
        part = "test" if int.from_bytes(digest[:8], "big") % 5 == 0 else "train"
        path = dest / part / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
        counts[part] += 1
    return counts


def measure(tool: str, split: dict, work: Path, cwtext: str, budget: int) -> tuple[float, float]:
    """(accuracy, macro-F1) of one tool on one split, run and scored by `compare.py`'s own
    functions (`run_cwtext` for `cwtext` and `cwtext tune`, `run_peer` for the peers)."""
    if tool.startswith("cwtext"):
        command = tool.split()[-1] if " " in tool else "train"
        row = compare.run_cwtext(tool.replace(" ", "-"), cwtext, split, work,
                                 [command, "--seed", "1", "-q"])
    else:
        has_probs = dict((key, probs) for _, key, probs in compare.PEERS + compare.TUNED_PEERS)[tool]
        row = compare.run_peer(tool, has_probs, split, work, quick=False,
                               budget=budget if tool == "fasttext-autotune" else 0)
    if "error" in row:
        raise SystemExit(f"{tool} on {split['root']}: {row['error']}")
    return row["accuracy"], row["macro_f1"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cwtext", required=True)
    ap.add_argument("--corpora", required=True,
                    help="comma-separated names, or paths (holding a '/') of folders with a folder per label")
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--corpora-dir", type=Path,
                    default=Path(os.environ.get("CORPORA", Path.home() / ".cache/cwtext-corpora")))
    ap.add_argument("--peers", default=",".join(key for _, key, _ in compare.PEERS))
    ap.add_argument("--tune", action="store_true",
                    help="also `cwtext tune --seed 1` and fastText autotune (--budget seconds)")
    ap.add_argument("--budget", type=int, default=compare.AUTOTUNE_MIN_SECONDS)
    ap.add_argument("--group", type=re.compile,
                    help="split by groups: the first group of this regex in the relative path")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    peers = [p for p in a.peers.split(",") if p]
    names = {key: name for name, key, _ in compare.PEERS + compare.TUNED_PEERS}
    names["cwtext tune"] = "cwtext tune"
    tuned = ["cwtext tune", "fasttext-autotune"] if a.tune else []
    tools = ["cwtext"] + peers + tuned
    key = f"the group `{a.group.pattern}` matches in the path" if a.group else "path"
    lines = [f"Random splits: {a.splits} per corpus (test = sha1(\"r:{key}\") mod 5 == 0, r = 0..{a.splits - 1}); "
             "accuracy on each test split, then the mean; cwtext is plain `train --seed 1`.", ""]
    summary = ["| corpus | documents | cwtext mean | best default peer by mean | Δ points (means) | splits within 0.5 of that split's best default peer | splits ahead of it | worst split Δ |"
               + (" tune mean | tune ≥ best default peer and autotune |" if a.tune else ""),
               "|---|---:|---:|---|---:|---:|---:|---:|" + ("---:|---:|" if a.tune else "")]
    with tempfile.TemporaryDirectory(prefix="cwtext-resplits-") as tmp:
        work = Path(tmp)
        (work / "logs").mkdir()
        for corpus in a.corpora.split(","):
            docs = list(documents(corpus, a.corpora_dir))
            corpus = Path(corpus).name if "/" in corpus else corpus
            acc = {t: [] for t in tools}
            f1 = {t: [] for t in tools}
            for r in range(a.splits):
                root = work / "split"
                write_split(docs, r, root, a.group)
                split = {"root": str(root),
                         "labels": sum(1 for p in (root / "train").iterdir() if p.is_dir())}
                for tool in tools:
                    got = measure(tool, split, work, a.cwtext, a.budget)
                    acc[tool].append(got[0])
                    f1[tool].append(got[1])
                print(f"{corpus} split {r}: " + " ".join(f"{t}={acc[t][-1]:.4f}" for t in tools),
                      file=sys.stderr)
            lines += [f"## {corpus} ({len(docs)} documents)", "",
                      "| tool | " + " | ".join(f"split {r}" for r in range(a.splits)) + " | mean accuracy | mean macro-F1 |",
                      "|---|" + "---:|" * (a.splits + 2)]
            for t in tools:
                lines.append(f"| {names.get(t, t)} | " + " | ".join(f"{x:.4f}" for x in acc[t])
                             + f" | {np.mean(acc[t]):.4f} | {np.mean(f1[t]):.4f} |")
            lines.append("")
            best = max(peers, key=lambda p: np.mean(acc[p]))
            deltas = [100 * (acc["cwtext"][r] - max(acc[p][r] for p in peers)) for r in range(a.splits)]
            summary.append(
                f"| {corpus} | {len(docs)} | {np.mean(acc['cwtext']):.4f} | {names[best]} {np.mean(acc[best]):.4f} "
                f"| {100 * (np.mean(acc['cwtext']) - np.mean(acc[best])):+.2f} "
                f"| {sum(d >= -0.5 for d in deltas)} of {a.splits} | {sum(d > 0 for d in deltas)} of {a.splits} "
                f"| {min(deltas):+.2f} |"
                + (f" {np.mean(acc['cwtext tune']):.4f} | "
                   f"{sum(acc['cwtext tune'][r] >= max([acc[p][r] for p in peers] + [acc['fasttext-autotune'][r]]) for r in range(a.splits))} of {a.splits} |"
                   if a.tune else ""))
    text = "\n".join(["## Summary", ""] + summary + [""] + lines)
    print(text)
    if a.out:
        a.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
