#!/usr/bin/env python3
"""Language identification from Debian's manual pages: every manpages-* package of the release
(manpages and manpages-dev for English, manpages-XX and manpages-XX-dev for the translations of
the Linux man-pages project and others), fetched as .deb files with `apt-get download` and
unpacked with `dpkg-deb -x` (nothing installed). The label is the locale folder below
/usr/share/man/ (de, fr, pt_BR, zh_CN, zh_TW, ...; "en" for the untranslated pages). One
decompressed page per file, as troff source (what `man` reads). Left out: symbolic links and
`.so` redirections (a page that only points to another), byte-identical pages, and languages with
fewer than 20 pages. At most 300 pages a language (the first 300 by SHA-1 of their path), so that
the six largest translations do not make most of the corpus.
Licences: those of the man pages, mostly GPL-2+ / BSD / MIT-style "Verbatim" terms of the Linux
man-pages project and the manpages-l10n translations (GPL-3+), as stated in each package's
/usr/share/doc/<package>/copyright.
Usage: manpages.py DEB_DIR OUT_DIR  ->  OUT_DIR/<language>/<section>-<page>.txt"""
import glob, gzip, hashlib, os, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Writer

MIN_PAGES, MAX_PAGES = 20, 300

def main(debdir, out):
    tmp = tempfile.mkdtemp()
    for deb in sorted(glob.glob(os.path.join(debdir, "manpages*.deb"))):
        subprocess.run(["dpkg-deb", "-x", deb, tmp], check=True)
    man = os.path.join(tmp, "usr/share/man")
    pages = {}                                # language -> [(relative path, bytes)]
    seen = set()
    for dirpath, dirnames, filenames in os.walk(man):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, man)
        first = rel_dir.split(os.sep)[0]
        lang = "en" if first.startswith("man") else first
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            data = open(path, "rb").read()
            if name.endswith(".gz"):
                data = gzip.decompress(data)
            body = [l for l in data.splitlines() if l.strip() and not l.startswith((b'.\\"', b"'\\\""))]
            if len(body) <= 2 and any(l.startswith(b".so ") for l in body):
                continue                      # a redirection to another page
            digest = hashlib.sha1(data).digest()
            if digest in seen:
                continue
            seen.add(digest)
            rel = os.path.join(rel_dir, name[:-3] if name.endswith(".gz") else name)
            pages.setdefault(lang, []).append((rel, data))
    w = Writer(out)
    for lang, items in sorted(pages.items()):
        if len(items) < MIN_PAGES:
            print(f"   {lang}: {len(items)} pages, left out", file=sys.stderr)
            continue
        items.sort(key=lambda it: hashlib.sha1(it[0].encode()).digest())
        for rel, data in items[:MAX_PAGES]:
            section, page = rel.split(os.sep)[-2:]
            w.add_bytes(lang, f"{section}-{page}", data)
    w.report()
    subprocess.run(["rm", "-rf", tmp], check=True)

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
