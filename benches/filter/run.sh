#!/usr/bin/env bash
# `cwtext filter` on real mail: every SpamAssassin message (raw, as delivered) must come back
# byte for byte apart from the added X-Cwtext fields, and one message's whole process (start to
# exit, embedded model) is timed against `cwtext classify` and /bin/true in alternation.
# Usage: bash benches/filter/run.sh [RUNS]   (default 50 timed runs of each command)
# Environment: CORPORA (default ~/.cache/cwtext-corpora; SpamAssassin fetched when missing),
#              CWTEXT (default: this checkout's release build).
# Writes benches/results/filter-YYYY-MM-DD.md and prints it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CORPORA=${CORPORA:-$HOME/.cache/cwtext-corpora}
RUNS=${1:-50}
# shellcheck source=../common.sh
source "$HERE/../common.sh"
ensure_cwtext
[ -d "$CORPORA/spamassassin/binary" ] || bash "$ROOT/benches/compare/corpora/fetch.sh" "$CORPORA"
OUT=$ROOT/benches/results/filter-$(date +%F).md
python3 - "$CWTEXT" "$CORPORA/spamassassin/binary" "$RUNS" "$OUT" <<'PY'
import os, statistics, subprocess, sys, time
cwtext, root, runs, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)

def strip_added(data: bytes) -> bytes:
    """The output without the block of X-Cwtext lines the filter added (the first such block
    that starts a line)."""
    start = data.find(b"X-Cwtext-") if data.startswith(b"X-Cwtext-") else data.find(b"\nX-Cwtext-") + 1
    if start <= 0 and not data.startswith(b"X-Cwtext-"):
        return data
    end = start
    while data.startswith(b"X-Cwtext-", end):
        end = data.index(b"\n", end) + 1
    return data[:start] + data[end:]

bad, errors, codes = [], 0, {}
for path in files:
    data = open(path, "rb").read()
    p = subprocess.run([cwtext, "filter", "-m", "spam", "-q"], input=data, capture_output=True)
    codes[p.returncode] = codes.get(p.returncode, 0) + 1
    if b"X-Cwtext-Error" in p.stdout:
        errors += 1
    if strip_added(p.stdout) != data:
        bad.append(path)

def timed(cmd, data):
    t = time.perf_counter()
    subprocess.run(cmd, input=data, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000

sample = open(files[len(files) // 2], "rb").read()
cmds = {"filter": [cwtext, "filter", "-m", "spam"], "classify": [cwtext, "classify", "-m", "spam"],
        "/bin/true": ["/bin/true"]}
times = {k: [] for k in cmds}
for k, c in cmds.items():
    timed(c, sample)  # warm the page cache
for _ in range(runs):
    for k, c in cmds.items():
        times[k].append(timed(c, sample))
med = {k: statistics.median(v) for k, v in times.items()}
lines = [
    f"# `cwtext filter` on real mail ({time.strftime('%Y-%m-%d')})",
    "",
    f"`bash benches/filter/run.sh {runs}`, the built-in `spam` model, {os.cpu_count()} cores.",
    "",
    "| check | result |",
    "|---|---|",
    f"| SpamAssassin messages filtered | {len(files):,} |",
    f"| output = input + the added X-Cwtext fields, byte for byte | {len(files) - len(bad):,} of {len(files):,} |",
    f"| messages with an X-Cwtext-Error field | {errors} |",
    f"| exit codes | {', '.join(f'{c}: {n:,}' for c, n in sorted(codes.items()))} (0 ham, 1 spam; the built-in model was trained on these messages, so this is no accuracy figure) |",
    "",
    f"One message ({len(sample):,} bytes), whole process as the delivery agent waits for it, median of {runs} alternating runs:",
    "",
    "| command | median ms | min ms | max ms |",
    "|---|---:|---:|---:|",
]
for k in cmds:
    lines.append(f"| `{k}` | {med[k]:.1f} | {min(times[k]):.1f} | {max(times[k]):.1f} |")
lines += ["", f"Target (issue 19): at most 10 ms for `filter`: {'met' if med['filter'] <= 10 else 'MISSED'}."]
if bad:
    lines += ["", "Changed beyond the added fields:"] + [f"- {b}" for b in bad[:20]]
text = "\n".join(lines) + "\n"
open(out, "w").write(text)
print(text)
sys.exit(1 if bad else 0)
PY
