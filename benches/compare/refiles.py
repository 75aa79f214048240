"""A router taught by refiles, as a user does it, judged on the comparison's whole test split.
Two scenarios:

**A new folder** (`--new LABEL`): a router trained on N documents of each label but one, then
`learn --label NEW` of K documents of the label it lacks.

For each draw (`seed:S`, the first N of each label ordered by sha1(f"{S}:{file name}"), as
`slices.py` draws) and each cwtext binary given:
- `train --seed 1` on the router's documents, then `eval` of the old labels' test files
  (accuracy, ECE and Brier: how honest the router's probabilities are before any refile);
- `learn --label NEW` of K documents of NEW drawn the same way, then `eval` of the old labels'
  test files, of NEW's, and of all of them;
- a retraining (the first binary) on the router's documents and the K refiles together.
`--small LABEL:N` gives the router only N documents of LABEL: the tiny folder most mailboxes have.

**The router's mistakes** (`--mistakes POOL`): a router of N documents of every label; then the
next POOL documents of each label in the training split (by the same draw), in one mixed order,
are classified one at a time, and each one the router gets wrong is refiled (`learn --label` its
true label) before the next is classified. Printed: the test split's accuracy before and after,
and how many were refiled.

Corpora are `compare.py`'s or `slices.py`'s derived ones (`kinds`: easy ham, hard ham, spam).

Usage (from `run.sh`'s virtual environment, after the corpora are fetched):
    benches/compare/.venv/bin/python benches/compare/refiles.py --corpus kinds --new hard_ham \\
        --per-label 30 --refiles 12 --draws seed:3,seed:4 --cwtext old=/tmp/cw-old,new=target/release/cwtext
    benches/compare/.venv/bin/python benches/compare/refiles.py --corpus hamspam --mistakes 100 \
        --per-label 30 --draws seed:1,seed:2 --cwtext old=/tmp/cw-old,new=target/release/cwtext
Prints a markdown table: a row per draw and binary (and for a new folder the retraining's).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import slices  # noqa: E402  (the same splits and draws)


def link(files: list[Path], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for f in files:
        (dest / f.name).symlink_to(f.resolve())


def run(argv: list[str]) -> str:
    """Runs a cwtext command; on failure exits naming the command and printing what it said.
    Exit 1 (some files skipped, as an empty fortune is) is a note, not a failure."""
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode == 1:
        print(f"note: {argv[1]} skipped some files", file=sys.stderr)
    elif out.returncode != 0:
        raise SystemExit(f"failed ({out.returncode}): {' '.join(argv)}\n{out.stderr}")
    return out.stdout


def evaluate(cw: str, model: Path, corpus: Path) -> dict:
    return json.loads(run([cw, "eval", "-m", str(model), str(corpus), "--format", "json"]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="a corpus of compare.py, or kinds/hamspam")
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--new", help="the label the router lacks and the refiles teach")
    what.add_argument("--mistakes", type=int, metavar="POOL",
                      help="documents a label the router classifies, its mistakes refiled")
    ap.add_argument("--per-label", type=int, required=True, help="the router's documents a label")
    ap.add_argument("--refiles", type=int, default=12)
    ap.add_argument("--small", default="", metavar="LABEL:N,...",
                    help="labels of which the router has only N documents (a mail user's tiny folder)")
    ap.add_argument("--draws", default="seed:1,seed:2,seed:3")
    ap.add_argument("--cwtext", required=True, help="NAME=PATH,... (the first also retrains)")
    ap.add_argument("--corpora-dir", type=Path, default=Path.home() / ".cache/cwtext-corpora")
    args = ap.parse_args()
    binaries = [tuple(b.split("=", 1)) for b in args.cwtext.split(",")]
    small = {label: int(n) for label, n in (p.rsplit(":", 1) for p in args.small.split(",") if p)}
    with tempfile.TemporaryDirectory(prefix="cwtext-refiles-") as tmp:
        work = Path(tmp)
        full = slices.full_split(args.corpus, args.corpora_dir, work)
        labels = sorted(p.name for p in (full / "train").iterdir() if p.is_dir())
        if args.mistakes is not None:
            return mistakes(args, binaries, full, labels, work)
        if args.new not in labels:
            raise SystemExit(f"{args.corpus} has no label {args.new!r}: {', '.join(labels)}")
        old_test, new_test = work / "test-old", work / "test-new"
        for label in labels:
            tests = full / "test" / label
            if not tests.is_dir():  # a rare label may have no file in the test split (fortunes: ascii-art)
                print(f"note: {label} has no test file; it is trained on but not judged", file=sys.stderr)
                continue
            link(sorted(tests.iterdir()), (new_test if label == args.new else old_test) / label)
        if not new_test.is_dir():
            raise SystemExit(f"{args.new} has no test file in {args.corpus}'s test split: its recall cannot be judged")
        unknown = sorted(set(small) - set(labels))
        if unknown:
            raise SystemExit(f"{args.corpus} has no label {', '.join(unknown)}")
        print(f"{args.corpus}: router of {args.per_label} a label of {len(labels) - 1} labels"
              + "".join(f" ({label}: {n})" for label, n in small.items()) + ", "
              f"{args.refiles} refiles into {args.new}; test files: "
              f"{sum(1 for _ in old_test.rglob('*') if _.is_file())} old, "
              f"{sum(1 for _ in new_test.rglob('*') if _.is_file())} new\n")
        print("| draw | cwtext | scale | old before | ECE before | Brier before | old after | new recall | all after |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for draw in args.draws.split(","):
            router = work / draw.replace(":", "-")
            shutil.rmtree(router, ignore_errors=True)
            for label in labels:
                if label == args.new:
                    continue
                names = sorted(p.name for p in (full / "train" / label).iterdir())
                count = small.get(label, args.per_label)
                link([full / "train" / label / n for n in slices.draw_names(names, count, draw)],
                     router / "train" / label)
            names = sorted(p.name for p in (full / "train" / args.new).iterdir())
            refiles = [full / "train" / args.new / n for n in slices.draw_names(names, args.refiles, draw)]
            for name, cw in binaries:
                model = router / f"{name}.cwm"
                run([cw, "train", str(router / "train"), "-o", str(model), "--seed", "1", "-q"])
                before = evaluate(cw, model, old_test)
                info = run([cw, "inspect", str(model)])
                scale = next((line.split()[2] for line in info.splitlines() if line.startswith("probability scale")), "?")
                run([cw, "learn", "-m", str(model), "--label", args.new] + [str(r) for r in refiles])
                after, new, every = (evaluate(cw, model, d)["accuracy"] for d in (old_test, new_test, full / "test"))
                print(f"| {draw} | {name} | {float(scale):.4f} | {before['accuracy']:.3f} | {before['ece']:.3f} | "
                      f"{before['brier']:.3f} | {after:.3f} | {new:.3f} | {every:.3f} |", flush=True)
            link(refiles, router / "train" / args.new)
            name, cw = binaries[0]
            model = router / "retrained.cwm"
            run([cw, "train", str(router / "train"), "-o", str(model), "--seed", "1", "-q"])
            after, new, every = (evaluate(cw, model, d)["accuracy"] for d in (old_test, new_test, full / "test"))
            print(f"| {draw} | {name}, retrained with the refiles | | | | | {after:.3f} | {new:.3f} | {every:.3f} |",
                  flush=True)
    return 0


def mistakes(args, binaries, full: Path, labels: list[str], work: Path) -> int:
    """The router's mistakes refiled one at a time (see the module's text)."""
    print(f"{args.corpus}: router of {args.per_label} a label of {len(labels)} labels; "
          f"{args.mistakes} a label classified, the mistakes refiled\n")
    print("| draw | cwtext | scale | before | after | refiled |")
    print("|---|---|---:|---:|---:|---:|")
    for draw in args.draws.split(","):
        router = work / draw.replace(":", "-")
        shutil.rmtree(router, ignore_errors=True)
        pool = []
        for label in labels:
            names = sorted(p.name for p in (full / "train" / label).iterdir())
            order = slices.draw_names(names, len(names), draw)
            link([full / "train" / label / n for n in order[:args.per_label]], router / "train" / label)
            pool += [(label, full / "train" / label / n)
                     for n in order[args.per_label:args.per_label + args.mistakes]]
        pool.sort(key=lambda t: hashlib.sha1(f"{draw}:{t[1].name}".encode()).digest())
        for name, cw in binaries:
            model = router / f"{name}.cwm"
            run([cw, "train", str(router / "train"), "-o", str(model), "--seed", "1", "-q"])
            info = run([cw, "inspect", str(model)])
            scale = next((line.split()[2] for line in info.splitlines() if line.startswith("probability scale")), "?")
            before = evaluate(cw, model, full / "test")["accuracy"]
            refiled = 0
            for label, path in pool:
                out = run([cw, "classify", "-m", str(model), "--format", "tsv", str(path)])
                if out.split("\t")[1] != label:
                    run([cw, "learn", "-m", str(model), "--label", label, "-q", str(path)])
                    refiled += 1
            after = evaluate(cw, model, full / "test")["accuracy"]
            print(f"| {draw} | {name} | {float(scale):.4f} | {before:.3f} | {after:.3f} | {refiled} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
