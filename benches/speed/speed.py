#!/usr/bin/env python3
"""End-to-end speed of cwtext against fastText and Vowpal Wabbit on 20 Newsgroups (one thread each).

Run through run.sh, which prepares the corpus, the peers' virtual environment (benches/compare's)
and the cwtext binary. Two roles:

* the orchestrator (default): runs every step as a process of its own under `/usr/bin/time -v`
  (so peak RSS and CPU share are per step), repeats the timed steps, takes medians and writes
  ONE Markdown table;
* a worker (`speed.py peer train|test fasttext|vw CORPUS MODEL_DIR`): trains or applies one
  Python peer, timing the library call inside the process, and prints JSON.

The peers get their input exactly as benches/compare/compare.py makes it (its `tokens()` and
`vw_line()` are imported from there), so the two benchmarks' numbers are comparable.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import math
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# benches/compare/compare.py: the peers' tokenisation and VW syntax, and the corpus walker.
_spec = importlib.util.spec_from_file_location("compare", ROOT / "benches" / "compare" / "compare.py")
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)

EPOCHS = 5  # cwtext's default --epochs; every tool makes this many passes
# fastText's supervised tutorial settings (as compare.py) but 5 epochs and one thread.
FASTTEXT = dict(compare.FASTTEXT, epoch=EPOCHS, thread=1)


# ------------------------------------------------------------------------------------------------
# Worker: one Python peer, one step


def read_docs(corpus: Path, prefix: str, labels: list[str] | None = None):
    """(labels, texts, y) of the files named prefix* below corpus/<label>/, sorted, as compare.py reads them."""
    if labels is None:
        labels = sorted(p.name for p in corpus.iterdir() if p.is_dir() and not p.name.startswith("."))
    index = {label: i for i, label in enumerate(labels)}
    texts, y = [], []
    for rel, path in compare.corpus_files(corpus):
        if not rel.rsplit("/", 1)[-1].startswith(prefix):
            continue
        texts.append(path.read_bytes().decode("utf-8", errors="replace"))
        y.append(index.get(rel.split("/", 1)[0], -1))
    return labels, texts, y


def vw_bits(k: int) -> int:
    """compare.py's rule: VW's --oaa shares one 2^b table, so b = 18 + ceil(log2 K) (2^18 per label)."""
    return 18 + math.ceil(math.log2(max(k, 2)))


def peer_train(key: str, corpus: Path, model_dir: Path) -> dict:
    labels, texts, y = read_docs(corpus, "train-")
    order = list(range(len(texts)))
    random.Random(1).shuffle(order)  # compare.py's fixed shuffle: the files come sorted by label
    model_dir.mkdir(parents=True, exist_ok=True)
    (model_dir / "labels.json").write_text(json.dumps(labels))
    if key == "fasttext":
        import fasttext

        data = model_dir / "train.txt"
        with open(data, "w", encoding="utf-8") as f:
            for i in order:
                f.write(f"__label__{y[i]} {' '.join(compare.tokens(texts[i]))}\n")
        start = time.perf_counter()
        model = fasttext.train_supervised(input=str(data), **FASTTEXT)
        seconds = time.perf_counter() - start
        model.save_model(str(model_dir / "model.bin"))
    else:
        from vowpalwabbit import Workspace

        data, cache = model_dir / "train.vw", model_dir / "train.cache"
        with open(data, "w", encoding="utf-8") as f:
            for i in order:
                f.write(compare.vw_line(texts[i], y[i] + 1))  # VW's classes are 1..K
        cache.unlink(missing_ok=True)
        # compare.py's settings with 5 passes; --holdout_off so that every pass sees every
        # document (VW otherwise holds out every 10th one and may stop early).
        args = (f"--oaa {len(labels)} --ngram 2 --loss_function logistic --probabilities "
                f"-b {vw_bits(len(labels))} --passes {EPOCHS} -c -k --cache_file {cache} "
                f"--holdout_off --random_seed 1 -d {data} -f {model_dir / 'model.vw'} --quiet")
        start = time.perf_counter()
        Workspace(args).finish()  # parses, trains all passes and writes the model
        seconds = time.perf_counter() - start
        cache.unlink(missing_ok=True)
    data.unlink()
    return {"seconds": seconds, "documents": len(texts)}


def peer_test(key: str, corpus: Path, model_dir: Path) -> dict:
    labels = json.loads((model_dir / "labels.json").read_text())
    _, texts, y = read_docs(corpus, "test-", labels)
    if key == "fasttext":
        import fasttext

        model = fasttext.load_model(str(model_dir / "model.bin"))
        lines = [" ".join(compare.tokens(t)) for t in texts]
        start = time.perf_counter()
        names, _ = model.predict(lines, k=1)
        seconds = time.perf_counter() - start
        pred = [int(n[0][len("__label__"):]) if n else -1 for n in names]
    else:
        from vowpalwabbit import Workspace

        data, preds = model_dir / "test.vw", model_dir / "test.pred"
        with open(data, "w", encoding="utf-8") as f:
            for text in texts:
                f.write(compare.vw_line(text))
        start = time.perf_counter()  # loading the model, parsing, predicting, writing predictions
        Workspace(f"-t -i {model_dir / 'model.vw'} -d {data} -p {preds} --probabilities --quiet").finish()
        seconds = time.perf_counter() - start
        pred = []
        with open(preds) as f:  # "1:p1 2:p2 ... K:pK" per example
            for line in f:
                scores = [item.split(":") for item in line.split()]
                pred.append(int(max(scores, key=lambda cp: float(cp[1]))[0]) - 1)
        data.unlink()
        preds.unlink()
    correct = sum(p == t for p, t in zip(pred, y))
    return {"seconds": seconds, "documents": len(texts), "accuracy": correct / len(texts)}


def worker() -> int:
    ap = argparse.ArgumentParser(prog="speed.py peer")
    ap.add_argument("step", choices=["train", "test"])
    ap.add_argument("key", choices=["fasttext", "vw"])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("model_dir", type=Path)
    a = ap.parse_args(sys.argv[2:])
    if a.key == "fasttext":  # imported here: part of the process start, not of the timed call
        import fasttext  # noqa: F401
    else:
        import vowpalwabbit  # noqa: F401
    result = (peer_train if a.step == "train" else peer_test)(a.key, a.corpus, a.model_dir)
    print(json.dumps(result))
    return 0


# ------------------------------------------------------------------------------------------------
# Orchestrator


class StepError(RuntimeError):
    pass


def measured(cmd: list[str], log: Path, stdout: Path | None = None, stdin: Path | None = None,
             env: dict | None = None, ok=(0,)) -> dict:
    """Run cmd under /usr/bin/time -v: wall seconds (measured here), peak RSS MB, CPU %."""
    tv = log.with_suffix(".time")
    with open(log, "ab") as err:
        err.write(("$ " + " ".join(cmd) + "\n").encode())
        err.flush()
        out = open(stdout, "wb") if stdout else subprocess.DEVNULL
        inp = open(stdin, "rb") if stdin else subprocess.DEVNULL
        try:
            start = time.perf_counter()
            code = subprocess.run(["/usr/bin/time", "-v", "-o", str(tv)] + cmd, stdout=out,
                                  stderr=err, stdin=inp, env=env).returncode
            seconds = time.perf_counter() - start
        finally:
            for f in (out, inp):
                if f is not subprocess.DEVNULL:
                    f.close()
    text = tv.read_text() if tv.exists() else ""
    if code not in ok:
        tail = [l for l in log.read_text(errors="replace").splitlines() if not l.startswith("$ ")][-3:]
        raise StepError(f"`{' '.join(cmd)}` exited with {code}: {' | '.join(tail)} (log: {log})")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    cpu = re.search(r"Percent of CPU this job got: (\d+)%", text)
    cpu_s = sum(float(m) for m in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", text))
    return {"seconds": seconds, "rss_mb": int(rss.group(1)) / 1024 if rss else float("nan"),
            "cpu": int(cpu.group(1)) if cpu else float("nan"), "cpu_seconds": cpu_s}


def env_threads(n: int | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CWTEXT_MODEL"}
    env.pop("RAYON_NUM_THREADS", None)
    if n is not None:
        env["RAYON_NUM_THREADS"] = str(n)
    return env


def summary(runs: list[dict]) -> dict:
    """Median wall time and CPU share over repeats, the largest peak RSS."""
    return {"seconds": statistics.median(r["seconds"] for r in runs),
            "cpu": statistics.median(r["cpu"] for r in runs),
            "rss_mb": max(r["rss_mb"] for r in runs), "runs": runs}


def lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_cwtext(name: str, cw: str, corpus: Path, work: Path, reps: int, calibrate: bool) -> dict:
    model = work / "models" / f"{name}.cwm"
    logf = work / "logs" / f"{name}.log"
    train_cmd = [cw, "train", str(corpus), "--include", "train-*", "-o", str(model),
                 "--threads", "1", "--seed", "1"] + ([] if calibrate else ["--no-calibrate"])
    train = [measured(train_cmd, logf, env=env_threads(1), ok=(0, 1)) for _ in range(reps)]
    # `train` reports the featurisation (once) and the time per epoch over the cached features.
    cache = re.findall(r"featurised the corpus once in ([\d.]+)s; .*\(([\d.]+)s each\)", logf.read_text())
    featurize_s = statistics.median(float(f) for f, _ in cache[-reps:])
    epoch_s = statistics.median(float(e) for _, e in cache[-reps:])
    out = work / f"{name}.label.tsv"
    label_cmd = [cw, "label", str(corpus), "--include", "test-*", "-m", str(model), "--threads", "1", "-q"]
    test = [measured(label_cmd, logf, stdout=out, env=env_threads(1), ok=(0, 1)) for _ in range(reps)]
    ev_json = work / f"{name}.eval.json"
    measured([cw, "eval", "-m", str(model), str(corpus), "--include", "test-*", "--format", "json", "-q"],
             logf, stdout=ev_json, env=env_threads(None), ok=(0, 1))
    ev = json.loads(ev_json.read_text())
    n_train = sum(1 for rel, _ in compare.corpus_files(corpus) if rel.rsplit("/", 1)[-1].startswith("train-"))
    return {"train": summary(train), "test": summary(test), "train_docs": n_train,
            "featurize_s": featurize_s, "epoch_s": epoch_s,
            "test_docs": lines(out), "accuracy": ev["accuracy"], "eval_docs": ev.get("documents"),
            "model_mb": model.stat().st_size / 1e6}


def run_peer(key: str, corpus: Path, work: Path, reps: int) -> dict:
    model_dir = work / "models" / key
    shutil.rmtree(model_dir, ignore_errors=True)
    logf = work / "logs" / f"{key}.log"
    me = [sys.executable, str(Path(__file__).resolve()), "peer"]
    out = work / f"{key}.json"
    steps = {}
    for step in ("train", "test"):
        runs = []
        for _ in range(reps):
            r = measured(me + [step, key, str(corpus), str(model_dir)], logf, stdout=out, env=env_threads(1))
            inner = json.loads(out.read_text())
            # The library call, timed inside the process; the rest is start-up, reading and
            # tokenising, writing the peer's input file, saving or loading the model.
            runs.append({**r, "process_seconds": r["seconds"], "seconds": inner["seconds"],
                         "inner": inner})
        s = summary(runs)
        s["process_seconds"] = statistics.median(r["process_seconds"] for r in runs)
        s["overhead"] = statistics.median(r["process_seconds"] - r["seconds"] for r in runs)
        steps[step] = s
    last = steps["test"]["runs"][-1]["inner"]
    row = {"train": steps["train"], "test": steps["test"],
           "train_docs": steps["train"]["runs"][-1]["inner"]["documents"],
           "test_docs": last["documents"], "accuracy": last["accuracy"]}
    shutil.rmtree(model_dir, ignore_errors=True)  # fastText's .bin is 800 MB
    return row


def spawn_medians(cmds: list[list[str]], stdin: Path, runs: int, env: dict) -> list[list[float]]:
    """Wall times of each `cmd < stdin` from spawn to exit, the commands interleaved run by run
    (so that a change in the machine's load hits them alike), after one untimed warm-up round."""
    times = [[] for _ in cmds]
    for i in range(runs + 1):
        for cmd, got in zip(cmds, times):
            with open(stdin, "rb") as f:
                start = time.perf_counter()
                code = subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, env=env).returncode
                elapsed = time.perf_counter() - start
            if code != 0:
                raise StepError(f"`{' '.join(cmd)} < {stdin}` exited with {code}")
            if i:
                got.append(elapsed)
    return times


def make_label_dir(corpus: Path, dest: Path, n: int) -> int:
    """dest/NNN/IIIII-<label>-<file>: n symbolic links to the 20NG files, repeated as needed."""
    files = [(rel, path) for rel, path in compare.corpus_files(corpus)]
    if not files:
        raise StepError(f"no files below {corpus}")
    stamp = dest / ".count"
    if stamp.exists() and stamp.read_text() == str(n):
        return n
    shutil.rmtree(dest, ignore_errors=True)
    for i in range(n):
        rel, path = files[i % len(files)]
        link = dest / f"{i // 1000:03d}" / f"{i:05d}-{rel.replace('/', '-')}"
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(path)
    stamp.write_text(str(n))  # hidden: cwtext label skips it
    return n


def versions(cw: str) -> dict:
    from importlib.metadata import version

    git = lambda *a: subprocess.run(["git", "-C", str(ROOT), *a], capture_output=True, text=True).stdout.strip()
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = any(not l.startswith("??") and " benches/" not in l for l in git("status", "--porcelain").splitlines())
    return {"cwtext": subprocess.run([cw, "--version"], capture_output=True, text=True).stdout.strip(),
            "commit": commit + (" (working tree has uncommitted changes outside benches/)" if dirty else ""),
            "fasttext-wheel": version("fasttext-wheel"), "vowpalwabbit": version("vowpalwabbit"),
            "python": platform.python_version()}


def machine() -> str:
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "unknown CPU")
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    mem = next((int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal:")), 0)
    return f"`nproc` {nproc}, {cpu}, {mem / 2**20:.1f} GiB memory, {platform.system()} {platform.release()}"


def loadavg() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


def f_rate(x: float) -> str:
    return f"{x:,.0f}"


def f_s(x: float) -> str:
    return f"{x:.4f}" if x < 0.1 else f"{x:.2f}" if x < 10 else f"{x:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora-dir", type=Path, required=True)
    ap.add_argument("--cwtext", required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--classify-runs", type=int, default=50)
    ap.add_argument("--label-files", type=int, default=20000)
    ap.add_argument("--big-bits", type=int, default=22)
    args = ap.parse_args()
    corpus = args.corpora_dir / "20ng"
    work = args.work
    (work / "logs").mkdir(parents=True, exist_ok=True)
    (work / "models").mkdir(parents=True, exist_ok=True)
    for f in (work / "logs").iterdir():
        f.unlink()
    started = time.time()
    load_before = loadavg()
    cw = args.cwtext
    reps = args.repeats

    rows = {}
    log(f"== cwtext --no-calibrate ({reps} train and label runs)")
    rows["cwtext"] = run_cwtext("cwtext", cw, corpus, work, reps, calibrate=False)
    log("== cwtext (default: with calibration)")
    rows["cwtext-cal"] = run_cwtext("cwtext-cal", cw, corpus, work, reps, calibrate=True)
    log("== fastText")
    rows["fasttext"] = run_peer("fasttext", corpus, work, reps)
    log("== Vowpal Wabbit")
    rows["vw"] = run_peer("vw", corpus, work, reps)

    # cwtext-only: classify latency (process start to exit) with the embedded and a big model.
    email = corpus / "sci.space" / "test-05593.txt"
    if not email.exists():
        email = next(p for rel, p in compare.corpus_files(corpus) if "/test-" in "/" + rel)
    log(f"== cwtext classify < one email, {args.classify_runs} runs per model")
    env = env_threads(None)
    big = work / "models" / f"bits{args.big_bits}.cwm"
    log(f"   training a 2^{args.big_bits}-bucket model ({big})")
    big_train = measured([cw, "train", str(corpus), "--include", "train-*", "-o", str(big),
                          "--hash-bits", str(args.big_bits), "--no-calibrate", "--threads", "1", "-q"],
                         work / "logs" / "big.log", env=env_threads(1), ok=(0, 1))
    floor_times, emb_times, big_times = spawn_medians(
        [["/bin/true"], [cw, "classify"], [cw, "classify", "-m", str(big)]], email, args.classify_runs, env)
    floor, emb, big_t = (statistics.median(t) for t in (floor_times, emb_times, big_times))
    emb_m = measured([cw, "classify"], work / "logs" / "classify.log", stdin=email, env=env)
    big_m = measured([cw, "classify", "-m", str(big)], work / "logs" / "classify.log", stdin=email, env=env)
    big_mb = big.stat().st_size / 1e6

    # cwtext-only: label N files, 1 thread against 2, alternating; the outputs must be identical.
    # At least 5 pairs: a pair's ratio moves by ±20% when another tenant takes a core for a
    # few seconds, so the speed-up is the median of the pairs' ratios (each pair ran back to
    # back), not a ratio of medians taken from different moments.
    label_reps = max(reps, 5)
    log(f"== cwtext label on {args.label_files:,} files, --threads 1 vs 2 ({label_reps} runs each)")
    ldir = work / f"label{args.label_files}"
    make_label_dir(corpus, ldir, args.label_files)
    label_runs = {1: [], 2: []}
    outputs = set()
    for i in range(label_reps):
        for t in (1, 2):
            out = work / f"label-threads{t}.tsv"
            label_runs[t].append(measured([cw, "label", str(ldir), "--threads", str(t), "-q"],
                                          work / "logs" / "label.log", stdout=out,
                                          env=env_threads(t), ok=(0, 1)))
            outputs.add(out.read_bytes())
    labelled = lines(work / "label-threads1.tsv")
    identical = len(outputs) == 1
    lab = {t: summary(label_runs[t]) for t in (1, 2)}
    pair_ratios = sorted(one["seconds"] / two["seconds"] for one, two in zip(label_runs[1], label_runs[2]))
    speedup = statistics.median(pair_ratios)

    # ---- the table
    def train_rate(r):
        return r["train_docs"] * EPOCHS / r["train"]["seconds"]

    table = ["| run | train docs/s | train s | start + load s (train / test) | test docs/s | test s "
             "| accuracy | peak RSS MB | CPU % |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    names = {"cwtext": "cwtext `--no-calibrate`", "cwtext-cal": "cwtext, default (calibrates: trains twice)",
             "fasttext": "fastText", "vw": "Vowpal Wabbit"}
    for key, name in names.items():
        r = rows[key]
        over = (f"{f_s(r['train']['overhead'])} / {f_s(r['test']['overhead'])}"
                if "overhead" in r["train"] else "included")
        table.append(f"| {name} | {f_rate(train_rate(r))} | {f_s(r['train']['seconds'])} | {over} | "
                     f"{f_rate(r['test_docs'] / r['test']['seconds'])} | {f_s(r['test']['seconds'])} | "
                     f"{r['accuracy']:.4f} | {r['train']['rss_mb']:.0f} | {r['train']['cpu']:.0f} |")
    table.append(f"| cwtext `classify < email`, embedded model (median of {args.classify_runs}) "
                 f"| | | | {1 / emb:,.0f} | {f_s(emb)} | | {emb_m['rss_mb']:.0f} | {emb_m['cpu']:.0f} |")
    table.append(f"| cwtext `classify < email`, 2^{args.big_bits}-bucket model, {big_mb:,.0f} MB "
                 f"(median of {args.classify_runs}) | | | | {1 / big_t:,.0f} | {f_s(big_t)} | | "
                 f"{big_m['rss_mb']:.0f} | {big_m['cpu']:.0f} |")
    for t in (1, 2):
        table.append(f"| cwtext `label` {args.label_files:,} files, `--threads {t}` | | | | "
                     f"{f_rate(labelled / lab[t]['seconds'])} | {f_s(lab[t]['seconds'])} | | "
                     f"{lab[t]['rss_mb']:.0f} | {lab[t]['cpu']:.0f} |")

    ratio = train_rate(rows["cwtext"]) / train_rate(rows["fasttext"])
    ratio_cal = train_rate(rows["cwtext-cal"]) / train_rate(rows["fasttext"])
    cw_r = rows["cwtext"]
    defaults = {"repeats": 3, "classify_runs": 50, "label_files": 20000}
    options = "".join(f" --{k.replace('_', '-')} {getattr(args, k)}" for k, d in defaults.items()
                      if getattr(args, k) != d)
    v = versions(cw)
    minutes = (time.time() - started) / 60
    n_train, n_test = cw_r["train_docs"], rows["fasttext"]["test_docs"]
    text = "\n".join([
        "# cwtext speed against fastText and Vowpal Wabbit, 20 Newsgroups", "",
        f"Generated by `bash benches/speed/run.sh{options}` (see [benches/speed/README.md](../speed/README.md)) "
        f"in {minutes:.1f} minutes.", "",
        f"- Date: {datetime.date.today().isoformat()}",
        f"- Machine: {machine()}; load average {load_before} at the start, {loadavg()} at the end",
        f"- cwtext: {v['cwtext']}, commit {v['commit']}",
        f"- Peers: fasttext-wheel {v['fasttext-wheel']}, vowpalwabbit {v['vowpalwabbit']}, Python {v['python']}",
        f"- Data: the by-date split, {n_train:,} `train-*` and {n_test:,} `test-*` files; {EPOCHS} epochs "
        f"and one thread for every tool; " + (f"medians of {reps} runs" if reps > 1 else "one run each"), "",
        *table, "",
        f"- **cwtext training docs/s ÷ fastText's: {ratio:.2f}×** (target ≥ 2×: "
        f"{'met' if ratio >= 2 else 'NOT met'}); with calibration (default `train`): {ratio_cal:.2f}×.",
        f"- **Feature cache: an epoch over the cached features takes {cw_r['epoch_s']:.3f} s; one that "
        f"re-read and re-tokenised the corpus would add the {cw_r['featurize_s']:.2f} s of reading and "
        f"featurising it (one thread), so the cache makes later epochs "
        f"{(cw_r['featurize_s'] + cw_r['epoch_s']) / cw_r['epoch_s']:.1f}× faster** (target ≥ 3×; "
        "medians of the times `cwtext train` reports for its phases).",
        f"- **`label` speed-up, 2 threads vs 1: {speedup:.2f}×** (target ≥ 1.8×: "
        f"{'met' if speedup >= 1.8 else 'NOT met'}; median of {label_reps} back-to-back pairs, "
        f"{pair_ratios[0]:.2f}–{pair_ratios[-1]:.2f}×); the outputs of the {2 * label_reps} runs are "
        f"{'byte for byte identical' if identical else 'NOT identical'} ({labelled:,} lines)."
        + (f" The `--threads 2` runs got only {lab[2]['cpu']:.0f}% CPU (CPU time "
           f"{statistics.median(r['cpu_seconds'] for r in lab[2]['runs']):.2f} s against "
           f"{statistics.median(r['cpu_seconds'] for r in lab[1]['runs']):.2f} s with one thread): other "
           "processes held the second core, so this run cannot judge the target."
           if lab[2]["cpu"] < 170 else ""),
        f"- train docs/s = training documents × {EPOCHS} / train s. cwtext's train s and test s are "
        "whole processes (start, reading and featurising the files, model written or loaded); the peers' are "
        "the library call timed inside the worker process: fastText `train_supervised` (reads its prepared "
        "input file) and `predict` on the tokenised test documents; VW's `Workspace` from parsing to the model "
        "written (training) or to the predictions written, model load included (test). "
        "\"start + load\" is the rest of the peer's process: Python start, imports, reading and tokenising "
        "the files, writing the input file, saving or loading the model.",
        "- peak RSS and CPU % come from `/usr/bin/time -v` around the process: the training process for "
        "the tool rows (for the peers including the Python interpreter), the measured process otherwise. "
        "CPU % above 100 means more than one thread worked; VW parses in a thread of its own "
        "(vowpalwabbit 9 has no option to turn it off).",
        f"- accuracy: cwtext from `cwtext eval --format json` ({cw_r['eval_docs']:,} documents: it skips "
        "a file in which it finds no words), the peers over every test file. cwtext's test s is `cwtext "
        "label` with its default 1,000 Gibbs samples per document for the probabilities.",
        f"- classify: process spawn to exit with `{email.relative_to(args.corpora_dir)}` on standard input; "
        f"spawning `/bin/true` the same way, interleaved with them, takes {f_s(floor)} s (median). The 2^{args.big_bits} model "
        f"(trained in {big_train['seconds']:.1f} s) is memory-mapped, so only the pages a document "
        "needs are read.",
        f"- label: {args.label_files:,} symbolic links to the 20 Newsgroups files (repeated), "
        "embedded model, runs alternating between 1 and 2 threads.",
        "",
    ])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    raw = {"versions": v, "rows": rows, "classify": {"floor": floor_times, "embedded": emb_times, "big": big_times,
           "big_train": big_train}, "label": lab, "identical": identical, "ratio": ratio, "speedup": speedup}
    (work / "results.json").write_text(json.dumps(raw, indent=1, default=str))
    print(text)
    log(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(worker() if sys.argv[1:2] == ["peer"] else main())
    except StepError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
