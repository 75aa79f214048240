#!/usr/bin/env bash
# Training from mbox files against training from the same messages as files (issue 19's target:
# from mbox at least 80% of the speed of files, i.e. a time ratio mbox / files of at most 1.25).
# The SpamAssassin ham and spam folders, each written once as one mboxrd file (`From ` lines in
# bodies quoted); whole-process wall time of `train` with fixed settings, commands alternating.
# Usage: bash benches/mbox/run.sh [RUNS]   (default 5 pairs)
#        REPEAT=16 bash benches/mbox/run.sh 3   (every message 16 times: two mbox files of ~500 MB
#                                               together, the issue's scale)
# Environment: CORPORA (default ~/.cache/cwtext-corpora; fetched when missing),
#              CWTEXT (default: this checkout's release build).
# Writes benches/results/mbox-YYYY-MM-DD.md and prints it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CORPORA=${CORPORA:-$HOME/.cache/cwtext-corpora}
RUNS=${1:-5}
REPEAT=${REPEAT:-1}
# shellcheck source=../common.sh
source "$HERE/../common.sh"
ensure_cwtext
[ -d "$CORPORA/spamassassin/binary" ] || bash "$ROOT/benches/compare/corpora/fetch.sh" "$CORPORA"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/files" "$WORK/mbox"
python3 - "$CORPORA/spamassassin/binary" "$WORK" "$REPEAT" <<'PY'
import os, sys
src, work, repeat = sys.argv[1:]
repeat = int(repeat)
for label in sorted(os.listdir(src)):
    os.makedirs(os.path.join(work, "files", label))
    with open(os.path.join(work, "mbox", label), "wb") as out:
        for name in sorted(os.listdir(os.path.join(src, label))):
            data = open(os.path.join(src, label, name), "rb").read()
            # Both corpora hold the same bytes: a message without a separator gets one in both.
            if not data.startswith(b"From "):
                data = b"From bench@example.com  Sat Jan  3 01:05:34 2004\n" + data
            sep, _, body = data.partition(b"\n")
            lines = [b">" + l if l.lstrip(b">").startswith(b"From ") else l for l in body.split(b"\n")]
            body = b"\n".join(lines)
            for r in range(repeat):
                copy = name if r == 0 else f"{name}-{r}"
                open(os.path.join(work, "files", label, copy), "wb").write(data)
                out.write(sep + b"\n" + body + (b"" if body.endswith(b"\n") else b"\n") + b"\n")
PY
FIXED=(--stopwords english --eta 0.99 -q)
tf=() tm=()
for ((i = 0; i <= RUNS; i++)); do # run 0 warms the page cache
  s=$(date +%s.%N); "$CWTEXT" train "$WORK/files" -o "$WORK/f.cwm" "${FIXED[@]}"; e=$(date +%s.%N)
  [ $i -gt 0 ] && tf+=("$(echo "$e - $s" | bc)")
  s=$(date +%s.%N); "$CWTEXT" train "$WORK/mbox" -o "$WORK/m.cwm" "${FIXED[@]}"; e=$(date +%s.%N)
  [ $i -gt 0 ] && tm+=("$(echo "$e - $s" | bc)")
done
docs_f=$("$CWTEXT" inspect "$WORK/f.cwm" --format json | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["training"]["documents"])')
docs_m=$("$CWTEXT" inspect "$WORK/m.cwm" --format json | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["training"]["documents"])')
{
  echo "# Training from mbox files against the same messages as files ($(date +%F))"
  echo
  echo "The SpamAssassin ham and spam folders ($(find "$WORK/files" -type f | wc -l) messages$([ "$REPEAT" -gt 1 ] && echo ", each of the 6,046 $REPEAT times"), $(du -sh "$WORK/mbox" | cut -f1) as two mboxrd files);"
  echo "\`train ${FIXED[*]}\`, whole-process wall time, median of $RUNS alternating pairs on $(nproc) cores"
  echo "($(uname -m)); ratio = median of the pairwise ratios. \`bash benches/mbox/run.sh\`."
  echo
  python3 - "${tf[*]}" "${tm[*]}" "$docs_f" "$docs_m" <<'PY'
import statistics, sys
tf, tm, df, dm = sys.argv[1:]
tf = [float(x) for x in tf.split()]; tm = [float(x) for x in tm.split()]
r = statistics.median(m / f for f, m in zip(tf, tm))
print("| corpus | documents trained | seconds | speed against files |")
print("|---|---:|---:|---:|")
print(f"| files, `ROOT/<label>/<file>` | {df} | {statistics.median(tf):.2f} | 100% |")
print(f"| mbox, `ROOT/<label>` (one file each) | {dm} | {statistics.median(tm):.2f} | **{100 / r:.0f}%** |")
PY
  echo
  echo "Target (issue 19): from mbox at least 80% of the speed of files."
} | tee "$ROOT/benches/results/mbox-$(date +%F)$([ "$REPEAT" -gt 1 ] && echo "-x$REPEAT").md"
