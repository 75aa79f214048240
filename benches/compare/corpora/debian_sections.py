#!/usr/bin/env python3
"""Debian package descriptions labelled by archive section: a short-text topic task.
Input: apt lists fetched into a private folder (`apt-get update -o Dir::State::Lists=DIR
-o Acquire::Languages=en`, so the machine's own apt state is untouched): the main component's
Packages index (Package, Section, Description-md5) and its Translation-en (the English short and
long descriptions, keyed by Description-md5). One document per distinct description: its short
line, then the long text (the package name is not included). Left out: descriptions shared by
packages of different sections, sections with fewer than 30 descriptions, and the 'metapackages'
and 'tasks' sections (lists of other packages). At most 300 descriptions a section, the first
300 by SHA-1 of the package name (libs, libdevel, python, doc and perl hold thousands).
Licence: each description is part of its package's metadata, written by its maintainers; the
indices are published by Debian. Usage: debian_sections.py LISTS_DIR OUT_DIR [LANGUAGE]
  ->  OUT_DIR/<section>/<package>.txt
With LANGUAGE (de, fr, it, es, ru, da, pt_BR, ...: fetched with Acquire::Languages), the
descriptions its translators wrote instead of the English ones (Translation-LANGUAGE), the
same sections and rules: the task in another language, for stop words in the corpus's
language (benches/results/stop-words-languages-2026-12-07.md)."""
import collections, glob, hashlib, os, re, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Writer

MIN_DOCS, MAX_DOCS = 30, 300
SKIP = {"metapackages", "tasks"}

def stanzas(path):
    text = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", path], check=True,
                          capture_output=True).stdout.decode("utf-8", "replace")
    for block in text.split("\n\n"):
        fields, key = {}, None
        for line in block.split("\n"):
            if line.startswith((" ", "\t")) and key:
                fields[key] += "\n" + line[1:]
            elif ":" in line:
                key, value = line.split(":", 1)
                fields[key] = value.strip()
        if fields:
            yield fields

def one(lists, pattern):
    """The release's own index (not -updates / -security): dists_<codename>_main_..."""
    found = [f for f in glob.glob(os.path.join(lists, "*")) if re.search(pattern, os.path.basename(f))]
    assert len(found) == 1, f"{pattern}: expected one file in {lists}, found {found}"
    return found[0]

def main(lists, out, language="en"):
    texts = {}
    # apt quotes the underscore of pt_BR in the file name (Translation-pt%5fBR).
    quoted = re.escape(language.replace("_", "%5f"))
    for f in stanzas(one(lists, rf"_dists_[a-z]+_main_i18n_Translation-{quoted}(\.|$)")):
        if "Description-md5" in f and f"Description-{language}" in f:
            short, _, long = f[f"Description-{language}"].partition("\n")
            long = "\n".join("" if l.strip() == "." else l for l in long.split("\n"))
            texts[f["Description-md5"]] = short.strip() + "\n\n" + long.strip()
    by_md5 = collections.defaultdict(list)    # md5 -> [(package, section)]
    for f in stanzas(one(lists, r"_dists_[a-z]+_main_binary-amd64_Packages")):
        if "Description-md5" in f and "Section" in f:
            by_md5[f["Description-md5"]].append((f["Package"], f["Section"].split("/")[-1]))
    docs = collections.defaultdict(list)      # section -> [(package, text)]
    for md5, pkgs in by_md5.items():
        sections = {s for _, s in pkgs}
        if len(sections) == 1 and md5 in texts:
            section = sections.pop()
            if section not in SKIP:
                docs[section].append((min(p for p, _ in pkgs), texts[md5]))
    w = Writer(out)
    for section, items in sorted(docs.items()):
        if len(items) < MIN_DOCS:
            continue
        items.sort(key=lambda it: hashlib.sha1(it[0].encode()).digest())
        for package, text in items[:MAX_DOCS]:
            w.add(section, package, text)
    w.report()

if __name__ == "__main__":
    main(*sys.argv[1:4])
