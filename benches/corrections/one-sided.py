#!/usr/bin/env python3
"""One-sided refiles: what a user who refiles only the mistakes of one label does to a model.

For each CORPUS:LABEL[:KEEP] on the comparison's splits (benches/compare/work/splits/CORPUS/
{train,test}, written by `bash benches/compare/run.sh`):

  1. `cwtext train` on the training split (every KEEP-th file by sha1 of its name when KEEP > 1:
     a small model, as a new user's mailbox is);
  2. the test split is halved by sha1 of each path: half A is what the user sees, half B what
     the model is judged on;
  3. the documents of LABEL in half A that the model files elsewhere are learned into LABEL in
     one `cwtext learn --label LABEL FILES…` call, as a user refiles the ones they notice;
  4. half B is evaluated before and after, and after a retraining on the training split plus
     the refiled documents (what the refiles would give if the model were trained again).

Prints a Markdown table: refiles, how many of them the corrected model files as refiled, and
the accuracy on half B before, after `learn`, and after the retraining.

Usage: one-sided.py --cwtext BIN [--splits DIR] [--work DIR] CORPUS:LABEL[:KEEP] …"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def sha(s):
    return int(hashlib.sha1(s.encode()).hexdigest(), 16)


def run(*args):
    """Runs cwtext; exit code 1 (some files skipped) is fine, anything else stops."""
    r = subprocess.run(list(args), capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"{' '.join(args[:3])}…: exit {r.returncode}: {r.stderr[-800:]}")
    return r.stdout


def link_tree(pairs, root):
    """Symbolic links root/LABEL/NAME → path for (path, label) pairs."""
    for path, label in pairs:
        os.makedirs(os.path.join(root, label), exist_ok=True)
        os.symlink(os.path.realpath(path), os.path.join(root, label, os.path.basename(path)))


def accuracy(cw, model, corpus):
    return json.loads(run(cw, "eval", "-m", model, corpus, "--format", "json"))["accuracy"]


def labelled(cw, model, folder):
    return [json.loads(line) for line in run(cw, "label", folder, "-m", model,
                                             "--format", "jsonl").splitlines()]


def one(cw, splits, work, spec):
    corpus, label, *rest = spec.split(":")
    keep = int(rest[0]) if rest else 1
    src = os.path.join(splits, corpus)
    w = os.path.join(work, f"{corpus}-{label}-{keep}")
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    train = []
    for lab in sorted(os.listdir(os.path.join(src, "train"))):
        for name in sorted(os.listdir(os.path.join(src, "train", lab))):
            if keep == 1 or sha(name) % keep == 0:
                train.append((os.path.join(src, "train", lab, name), lab))
    test = []
    for lab in sorted(os.listdir(os.path.join(src, "test"))):
        for dirpath, _, names in os.walk(os.path.join(src, "test", lab)):
            test += [(os.path.join(dirpath, n), lab) for n in sorted(names)]
    seen = [t for t in test if sha(t[0]) % 2 == 0]
    judged = [t for t in test if sha(t[0]) % 2 == 1]
    for name, pairs in (("train", train), ("A", seen), ("B", judged)):
        link_tree(pairs, os.path.join(w, name))
    model = os.path.join(w, "m.cwm")
    run(cw, "train", os.path.join(w, "train"), "-o", model, "--seed", "1")
    wrong = [r["file"] for r in labelled(cw, model, os.path.join(w, "A"))
             if r["file"].split("/")[-2] == label and r["label"] != label]
    corrected = os.path.join(w, "learned.cwm")
    shutil.copy(model, corrected)
    fixed = 0
    if wrong:
        run(cw, "learn", "-m", corrected, "--label", label, *wrong)
        link_tree([(p, "refiled") for p in wrong], os.path.join(w, "R"))
        fixed = sum(r["label"] == label for r in labelled(cw, corrected, os.path.join(w, "R")))
    link_tree([(p, label) for p in wrong], os.path.join(w, "train-refiled"))
    for lab in sorted(os.listdir(os.path.join(w, "train"))):
        os.makedirs(os.path.join(w, "train-refiled", lab), exist_ok=True)
        for name in os.listdir(os.path.join(w, "train", lab)):
            target = os.path.join(w, "train-refiled", lab, name)
            if not os.path.exists(target):
                os.symlink(os.path.realpath(os.path.join(w, "train", lab, name)), target)
    retrained = os.path.join(w, "retrained.cwm")
    run(cw, "train", os.path.join(w, "train-refiled"), "-o", retrained, "--seed", "1")
    judged_dir = os.path.join(w, "B")
    row = (corpus + ("" if keep == 1 else f" (1/{keep} of training)"), label, len(wrong), fixed,
           accuracy(cw, model, judged_dir), accuracy(cw, corrected, judged_dir),
           accuracy(cw, retrained, judged_dir))
    shutil.rmtree(w)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cwtext", required=True)
    ap.add_argument("--splits", default=os.path.join(HERE, "..", "compare", "work", "splits"))
    ap.add_argument("--work", default="/tmp/cwtext-one-sided")
    ap.add_argument("cases", nargs="+", metavar="CORPUS:LABEL[:KEEP]")
    a = ap.parse_args()
    print("| corpus | refiled into | refiles | filed as refiled after | B before | after learn "
          "| after a retraining | learn − before |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for spec in a.cases:
        c, l, n, f, b, le, rt = one(a.cwtext, a.splits, a.work, spec)
        print(f"| {c} | {l} | {n} | {f} | {b:.4f} | {le:.4f} | {rt:.4f} | "
              f"{100 * (le - b):+.2f} |", flush=True)


if __name__ == "__main__":
    main()
