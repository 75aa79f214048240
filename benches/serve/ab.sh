#!/usr/bin/env bash
# Two builds of cwtext served in alternating pairs under the same load, so that the machine's
# drift (its rate moves 10–20% from hour to hour on shared cores) falls on both alike. Each turn
# serves the fixture mail model with one build, sends the typical mail (the median-sized fixture)
# from wrk (1 thread, 32 keep-alive connections) for RUNS runs of SECONDS each, and reads the
# server's CPU time from /proc before and after each run. Prints every run and the medians.
#
#   bash benches/serve/ab.sh OLD_CWTEXT NEW_CWTEXT [PAIRS]     # about PAIRS × 40 s
#
# Needs wrk (Debian: apt-get install wrk). Loopback only; each run is bounded by its seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
source benches/serve/lib.sh
[ $# -ge 2 ] || { echo "usage: $0 OLD_CWTEXT NEW_CWTEXT [PAIRS]" >&2; exit 2; }
OLD=$(realpath "$1")
NEW=$(realpath "$2")
PAIRS=${3:-6}
RUNS=${RUNS:-3}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-6}
PORT=${PORT:-18480}
command -v wrk > /dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
CORPUS=$PWD/tests/fixtures/mail
MEDIAN=$(typical_mail "$CORPUS")
WORK=$(mktemp -d)
SERVER=
cleanup() { [ -n "$SERVER" ] && kill -9 "$SERVER" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
"$NEW" train "$CORPUS" -o "$WORK/trained.cwm" -q --seed 1
TICKS=$(getconf CLK_TCK)

# One turn: BIN NAME; prints "NAME rate p99_ms cpu_us_per_request" per run.
turn() {
  cp "$WORK/trained.cwm" "$WORK/served.cwm"
  serve_model "$1" "$WORK/served.cwm"
  for _ in $(seq "$RUNS"); do
    local before after out
    before=$(awk '{ print $14 + $15 }' "/proc/$SERVER/stat")
    out=$(wrk -t1 -c32 -d"${SECONDS_PER_RUN}s" --latency -s benches/serve/one.lua \
      "http://127.0.0.1:$PORT/classify" -- "$MEDIAN")
    after=$(awk '{ print $14 + $15 }' "/proc/$SERVER/stat")
    echo "$out" | awk -v name="$2" -v ticks=$((after - before)) -v hz="$TICKS" '
      / requests in / { n = $1 }
      /^Requests\/sec/ { rate = $2 }
      $1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else { sub(/s$/, "", v); v *= 1000 }; p99 = v }
      END { printf "%s %.0f %.2f %.1f\n", name, rate, p99, ticks / hz / n * 1e6 }'
  done
  stop_server
}

echo "old: $OLD ($("$OLD" --version))"
echo "new: $NEW ($("$NEW" --version))"
echo "typical mail: $MEDIAN ($(stat -c %s "$MEDIAN") bytes); $PAIRS pairs of $RUNS runs × ${SECONDS_PER_RUN} s"
echo
echo "build rate/s p99_ms server_cpu_us_per_request"
for _ in $(seq "$PAIRS"); do
  turn "$OLD" old
  turn "$NEW" new
done | tee "$WORK/runs"
# The median of the numbers on standard input.
med() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
echo
echo "| build | runs | rate (median) | p99 (median) | p99 ≤ 5 ms | p99 max | server CPU per request (median) |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for name in old new; do
  awk -v name="$name" '$1 == name' "$WORK/runs" | sort -k2,2n > "$WORK/r"
  n=$(wc -l < "$WORK/r")
  printf "| %s | %d | %.0f/s | %.2f ms | %d of %d | %.2f ms | %.1f µs |\n" "$name" "$n" \
    "$(cut -d' ' -f2 "$WORK/r" | med)" "$(cut -d' ' -f3 "$WORK/r" | med)" \
    "$(awk '$3 <= 5' "$WORK/r" | wc -l)" "$n" "$(cut -d' ' -f3 "$WORK/r" | sort -n | tail -1)" \
    "$(cut -d' ' -f4 "$WORK/r" | med)"
done
