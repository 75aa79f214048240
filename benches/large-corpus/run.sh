#!/usr/bin/env bash
# Training memory against corpus size (issue 20): a corpus of N documents built from 20
# Newsgroups by hard links (label/rREP/file, so it needs no download and almost no disk), trained
# with train's defaults (5 epochs, the choice of stop words and η, calibration), once with the
# featurised corpus in memory (--memory-budget above its size) and once from the feature cache on
# disk (--memory-budget 0). Peak RSS and wall time from /usr/bin/time -v; documents/s = N / wall
# time of the whole process. The two models must be byte for byte the same (checked).
# Usage: bash benches/large-corpus/run.sh [N…]   (default 200000 1000000)
#        MEMORY_UP_TO=N: the in-memory path only up to N documents (default 1000000).
#        LABEL=0: skip `label` on the largest corpus (1 and 2 threads, peak RSS and wall time).
# Environment: CORPORA (default ~/.cache/cwtext-corpora; 20 Newsgroups fetched when missing),
#              CWTEXT (default: this checkout's release build), WORK (default: a temporary
#              directory on the disk of $TMPDIR, removed at the end; the cache goes there too).
# Writes benches/results/large-corpus-YYYY-MM-DD.md and prints it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CORPORA=${CORPORA:-$HOME/.cache/cwtext-corpora}
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(200000 1000000)
MEMORY_UP_TO=${MEMORY_UP_TO:-1000000}
# shellcheck source=../common.sh
source "$HERE/../common.sh"
ensure_cwtext
SRC=$CORPORA/20ng
[ -d "$SRC/sci.space" ] || bash "$ROOT/../shared/corpora/fetch.sh" "$CORPORA"
if [ -z "${WORK:-}" ]; then
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK/tmp"
TOTAL=$(find "$SRC" -type f | wc -l)

# corpus N: every label's files repeated in r0, r1, … until N documents (the last copy partial,
# the same share of each label).
build() {
  local n=$1 dir=$WORK/corpus-$1 reps rest
  [ -d "$dir" ] && return
  reps=$((n / TOTAL)) rest=$((n % TOTAL))
  for label in "$SRC"/*/; do
    label=$(basename "$label")
    mkdir -p "$dir/$label"
    for ((r = 0; r < reps; r++)); do cp -al "$SRC/$label" "$dir/$label/r$r"; done
  done
  if [ "$rest" -gt 0 ]; then
    python3 - "$SRC" "$dir" "$rest" "$TOTAL" "$reps" <<'PY'
import os, sys
src, dst, rest, total, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
labels = sorted(os.listdir(src))
files = {l: sorted(os.listdir(os.path.join(src, l))) for l in labels}
# The same share of each label, the remainder to the first labels.
take = {l: len(files[l]) * rest // total for l in labels}
short = rest - sum(take.values())
for l in labels[:short]:
    take[l] += 1
for l in labels:
    out = os.path.join(dst, l, "r" + reps)
    os.makedirs(out, exist_ok=True)
    for f in files[l][: take[l]]:
        os.link(os.path.join(src, l, f), os.path.join(out, f))
PY
  fi
  local got
  got=$(find "$dir" -type f | wc -l)
  [ "$got" -eq "$n" ] || { echo "error: built $got documents, not $n" >&2; exit 1; }
}

# seconds of a log's "Elapsed (wall clock)" line
wall_of() {
  grep 'Elapsed (wall clock)' "$1" | awk '{print $NF}' | awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }'
}

# run NAME N ARGS…: trains corpus N; prints "wall_s peak_kb cache_mb"
run() {
  local name=$1 n=$2; shift 2
  local log=$WORK/$name-$n.log
  # Exit code 1: some files skipped (20 Newsgroups has empty posts), as expected.
  TMPDIR=$WORK/tmp /usr/bin/time -v "$CWTEXT" train "$WORK/corpus-$n" -o "$WORK/$name-$n.cwm" "$@" 2>"$log" || [ $? -eq 1 ]
  local wall peak cache
  wall=$(wall_of "$log")
  peak=$(grep 'Maximum resident set size' "$log" | awk '{print $NF}')
  cache=$({ grep '^feature cache:' "$log" || true; } | awk '{s += $3} END {printf "%.0f", s}')
  echo "$wall $peak $cache"
}

rows=()
for n in "${SIZES[@]}"; do
  echo "building a corpus of $n documents" >&2
  build "$n"
  # Hard links share the 20 Newsgroups files' pages: warm in the page cache after the first read.
  cat "$SRC"/*/* >/dev/null
  if [ "$n" -le "$MEMORY_UP_TO" ]; then
    echo "training $n documents in memory" >&2
    read -r mw mp _ < <(run memory "$n" --memory-budget 1000000)
  else
    mw=- mp=-
  fi
  echo "training $n documents from the cache on disk" >&2
  read -r dw dp dc < <(run disk "$n" --memory-budget 0)
  model=$(stat -c %s "$WORK/disk-$n.cwm")
  if [ "$mw" != - ]; then
    cmp "$WORK/memory-$n.cwm" "$WORK/disk-$n.cwm" || { echo "error: the models of the two paths differ at $n documents" >&2; exit 1; }
  fi
  rows+=("$n $mw $mp $dw $dp $dc $model")
  # The phases as the summary gives them (featurising, epochs), for the linearity check.
  grep -h '^read and featurised' "$WORK"/*-"$n".log >&2 || true
  rm -f "$WORK"/memory-"$n".cwm
done

# label on the largest corpus with the last model, 1 and 2 threads: bounded memory, speed-up.
labels=()
if [ "${LABEL:-1}" != 0 ]; then
  n=${SIZES[${#SIZES[@]}-1]}
  for threads in 1 2; do
    echo "label on $n documents, $threads thread(s)" >&2
    log=$WORK/label-$threads.log
    /usr/bin/time -v "$CWTEXT" label "$WORK/corpus-$n" -m "$WORK/disk-$n.cwm" --threads "$threads" >"$WORK/label-$threads.tsv" 2>"$log" || [ $? -eq 1 ]
    labels+=("$threads $(wall_of "$log") $(grep 'Maximum resident set size' "$log" | awk '{print $NF}') $(wc -l <"$WORK/label-$threads.tsv")")
  done
  cmp "$WORK/label-1.tsv" "$WORK/label-2.tsv" || { echo "error: label's output differs between 1 and 2 threads" >&2; exit 1; }
  rm -f "$WORK"/label-*.tsv
fi

{
  echo "# Training memory against corpus size ($(date +%F))"
  echo
  echo "20 Newsgroups ($TOTAL posts) repeated by hard links to N documents in 20 labels; \`train\` with its"
  echo "defaults (5 epochs; stop words and η chosen among 4 candidates on the held-out fifth; calibration;"
  echo "the winner continued on every document). In memory: \`--memory-budget 1000000\`; on disk:"
  echo "\`--memory-budget 0\` (the feature cache in a temporary file). Whole process, /usr/bin/time -v,"
  echo "$(nproc) cores ($(uname -m)), other builds running beside. The two paths' models are byte for byte"
  echo "the same (checked). \`bash benches/large-corpus/run.sh ${SIZES[*]}\`."
  echo
  echo "| documents | in memory: peak RSS | docs/s | from disk: peak RSS | docs/s | disk / memory time | cache file | model file |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
  for row in "${rows[@]}"; do
    python3 - $row <<'PY'
import sys
n, mw, mp, dw, dp, dc, model = sys.argv[1:]
n = int(n)
mb = lambda kb: f"{int(kb) / 1024:,.0f} MB"
if mw == "-":
    mem = "– | –"
    ratio = "–"
else:
    mem = f"{mb(mp)} | {n / float(mw):,.0f}"
    ratio = f"{float(dw) / float(mw):.2f}"
print(f"| {n:,} | {mem} | {mb(dp)} | {n / float(dw):,.0f} | {ratio} | {int(dc):,} MB | {int(model) / 1e6:.0f} MB |")
PY
  done
  if [ ${#labels[@]} -gt 0 ]; then
    echo
    echo "\`label\` on the ${SIZES[${#SIZES[@]}-1]}-document corpus with the model from disk (the same output with 1 and 2 threads, checked):"
    echo
    echo "| threads | wall | documents/s | peak RSS |"
    echo "|---:|---:|---:|---:|"
    for row in "${labels[@]}"; do
      python3 - $row <<'PY'
import sys
threads, wall, peak, lines = sys.argv[1:]
print(f"| {threads} | {float(wall):.0f} s | {int(lines) / float(wall):,.0f} | {int(peak) / 1024:,.0f} MB |")
PY
    done
  fi
} | tee "$ROOT/benches/results/large-corpus-$(date +%F).md"
