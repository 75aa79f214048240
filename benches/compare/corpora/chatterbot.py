#!/usr/bin/env python3
"""What people type to a chat bot, by topic: the English conversations of the PyPI wheel
chatterbot-corpus==1.3.3 (chatterbot_corpus/data/english/*.yml; BSD-3-Clause, Gunther Cox and
contributors). Each file is one topic (ai, computers, emotion, food, greetings, history, money,
sports, trivia, ...: 21 in all) holding conversations, each a list of turns whose first is what a
user says. The prompt (that first turn) is the document and its file's topic the label: short
intent-like texts (a median of 6 words), few a label (1 to 261), skewed.

Selection: a prompt is taken once per topic (the files repeat a prompt for each of its answers),
and a prompt that appears under two topics is left out (its label is ambiguous): 746 prompts.
Doc ids are the first 10 hex digits of the prompt's SHA-1, so they do not depend on file order.
The YAML is read with PyYAML (fetch.sh puts the downloaded wheel on PYTHONPATH).
Usage: chatterbot.py DATA_DIR OUT_ROOT  ->  OUT_ROOT/chatbot_topics/<topic>/<sha1 prefix>.txt"""
import collections, glob, hashlib, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Writer
import yaml

def main(src, out):
    prompts = collections.defaultdict(set)
    files = sorted(glob.glob(os.path.join(src, "english", "*.yml")))
    assert len(files) == 21, f"expected the 21 English topics of chatterbot-corpus 1.3.3, found {len(files)}"
    for path in files:
        topic = os.path.basename(path)[:-len(".yml")]
        data = yaml.safe_load(open(path, encoding="utf-8"))
        for turns in data.get("conversations") or []:
            if turns and isinstance(turns[0], str) and turns[0].strip():
                prompts[topic].add(turns[0].strip())
    topics_of = collections.Counter(p for ps in prompts.values() for p in ps)
    w = Writer(os.path.join(out, "chatbot_topics"))
    for topic in sorted(prompts):
        for prompt in sorted(prompts[topic]):
            if topics_of[prompt] == 1:
                w.add(topic, hashlib.sha1(prompt.encode("utf-8")).hexdigest()[:10], prompt)
    w.report()

if __name__ == "__main__":
    main(*sys.argv[1:3])
