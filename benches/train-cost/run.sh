#!/usr/bin/env bash
# What plain `cwtext train` costs against training once: the automatic choice of settings and the
# calibration, as whole-process wall-time ratios measured in one run, commands alternating; and
# what the character n-grams cost the short-text corpora that get them (plain `train` against
# `train --char-ngrams none`).
# Usage: bash benches/train-cost/run.sh [RUNS]   (default 5 pairs per row)
# Environment: CORPORA (default ~/.cache/cwtext-corpora; 20 Newsgroups fetched when missing; the
#              short-text rows for those of questions, tweet_sentiment, movie_sentiment,
#              sms_spam and fortunes_category that are there),
#              CWTEXT (default: this checkout's release build).
# Writes benches/results/train-cost-YYYY-MM-DD.md and prints it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CORPORA=${CORPORA:-$HOME/.cache/cwtext-corpora}
RUNS=${1:-5}
# shellcheck source=../common.sh
source "$HERE/../common.sh"
ensure_cwtext
[ -d "$CORPORA/20ng" ] || bash "$ROOT/benches/compare/corpora/fetch.sh" "$CORPORA"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# The by-date training posts only, as a user would train.
mkdir -p "$WORK/train"
for d in "$CORPORA/20ng"/*/; do
  l=$(basename "$d"); mkdir -p "$WORK/train/$l"
  find "$d" -maxdepth 1 -name 'train-*' -exec ln -s {} "$WORK/train/$l/" \;
done

# today: what `train --no-calibrate` did before the choice (english stop words, eta 0.99, words
# only, one training from the prior).
TODAY="--no-symbols --stopwords english --eta 0.99 --prior flat --no-calibrate"
FIXED="--stopwords english --eta 0.99 --prior flat"

# Median wall seconds of A and of B, and the median of the pairwise ratios A/B.
pair() { # threads name_a name_b "args of A" "args of B" (split on spaces) [corpus]
  local threads=$1 na=$2 nb=$3 corpus=${6:-$WORK/train}
  local a b
  read -r -a a <<<"$4"
  read -r -a b <<<"$5"
  local ta=() tb=()
  for ((i = 0; i <= RUNS; i++)); do # run 0 warms the page cache
    local s e
    s=$(date +%s.%N); RAYON_NUM_THREADS=$threads "$CWTEXT" train "$corpus" -o "$WORK/a.cwm" -q ${a[@]+"${a[@]}"} 2>/dev/null || true; e=$(date +%s.%N)
    [ $i -gt 0 ] && ta+=("$(echo "$e - $s" | bc)")
    s=$(date +%s.%N); RAYON_NUM_THREADS=$threads "$CWTEXT" train "$corpus" -o "$WORK/b.cwm" -q "${b[@]}" 2>/dev/null || true; e=$(date +%s.%N)
    [ $i -gt 0 ] && tb+=("$(echo "$e - $s" | bc)")
  done
  python3 - "$threads" "$na" "$nb" "${ta[*]}" "${tb[*]}" <<'PY'
import statistics, sys
threads, na, nb, ta, tb = sys.argv[1:]
ta = [float(x) for x in ta.split()]; tb = [float(x) for x in tb.split()]
r = statistics.median(a / b for a, b in zip(ta, tb))
print(f"| {threads} | {na} | {nb} | {statistics.median(ta):.2f} | {statistics.median(tb):.2f} | **{r:.2f}×** |")
PY
}

threads=$(nproc)
{
  echo "# What plain train costs ($(date +%F))"
  echo
  echo "20 Newsgroups, the $(find "$WORK/train" -type l | wc -l) by-date training posts; whole-process wall time, median of $RUNS"
  echo "alternating pairs on $(nproc) cores ($(uname -m)); ratio = median of the pairwise ratios A/B. \`bash benches/train-cost/run.sh\`."
  echo
  echo "| threads | A | B | A s | B s | A / B |"
  echo "|---:|---|---|---:|---:|---:|"
  pair "$threads" "\`train\` (chooses, calibrates)" "today's \`train --no-calibrate\`" "" "$TODAY"
  pair "$threads" "\`train $FIXED\` (calibrates)" "the same with \`--no-calibrate\`" "$FIXED" "$FIXED --no-calibrate"
  pair 1 "\`train $FIXED\` (calibrates)" "the same with \`--no-calibrate\`" "$FIXED" "$FIXED --no-calibrate"
  pair "$threads" "\`train\` (20 Newsgroups: reads 200 posts, gives no character n-grams)" "\`train --char-ngrams none\`" "" "--char-ngrams none"
  echo
  echo "Short texts: every file of each corpus, plain \`train\` (character n-grams beside the words) against"
  echo "\`train --char-ngrams none\`, the same pairs."
  echo
  echo "| threads | corpus | files | train s | \`--char-ngrams none\` s | ratio |"
  echo "|---:|---|---:|---:|---:|---:|"
  for c in questions tweet_sentiment movie_sentiment sms_spam fortunes_category; do
    [ -d "$CORPORA/$c" ] || continue
    pair "$threads" "$c" "$(find "$CORPORA/$c" -type f | wc -l)" "" "--char-ngrams none" "$CORPORA/$c"
  done
  echo
  echo "Targets (issues 15 and 17): plain \`train\` at most 2× today's \`--no-calibrate\`; calibration at"
  echo "most 1.3× training without it."
} | tee "$ROOT/benches/results/train-cost-$(date +%F).md"
