#!/usr/bin/env bash
# End-to-end speed of cwtext against fastText and Vowpal Wabbit on 20 Newsgroups (one thread, 5 epochs).
# Usage: bash benches/speed/run.sh [--out FILE] [--repeats N] [--classify-runs N] [--label-files N]
#   --out FILE           where to write the table (default benches/results/speed-YYYY-MM-DD.md)
#   --repeats N          runs of every timed train / test / label step, medians reported (default 3)
#   --classify-runs N    `cwtext classify < email` runs per model, median reported (default 50)
#   --label-files N      files in the `cwtext label --threads 1|2` directory (default 20000)
# Environment:
#   CORPORA  corpora folder (default ~/.cache/cwtext-corpora; 20ng fetched there when missing)
#   CWTEXT   cwtext binary to measure (default: `cargo build --release` of this checkout)
#   WORK     models, outputs and logs (default benches/speed/work, git-ignored)
# Prints one Markdown table and writes it to the --out file. About 3 to 5 minutes on 2 cores.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
COMPARE=$ROOT/benches/compare
CORPORA=${CORPORA:-$HOME/.cache/cwtext-corpora}
WORK=${WORK:-$HERE/work}
# shellcheck source=../common.sh
source "$HERE/../common.sh" # VENV, ensure_peers, ensure_cwtext

die() { echo "error: $*" >&2; exit 2; }

out="$ROOT/benches/results/speed-$(date +%F).md"
pass=()
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --out) [ $# -ge 2 ] || die "--out needs a file"; out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --repeats | --classify-runs | --label-files)
      [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 needs a positive whole number"
      pass+=("$1" "$2"); shift 2 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case $out in /*) ;; *) out=$PWD/$out ;; esac

[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is needed for peak RSS: apt-get install time"
command -v python3 >/dev/null || die "python3 is needed"

# 1. The corpus: benches/compare's fetching script, only when missing.
if [ ! -d "$CORPORA/20ng" ]; then
  echo "fetching corpora into $CORPORA" >&2
  bash "$COMPARE/corpora/fetch.sh" "$CORPORA"
fi
[ -d "$CORPORA/20ng" ] || die "$CORPORA/20ng is missing after fetching"
ls "$CORPORA"/20ng/*/train-* >/dev/null 2>&1 || die "no train-* files below $CORPORA/20ng/<label>/"

# 2. Peers: benches/compare's virtual environment, shared.
ensure_peers

# 3. cwtext: this checkout's release build unless CWTEXT names a binary. Measured from a copy in
# WORK, so that a rebuild during the run cannot swap the binary between steps.
ensure_cwtext
mkdir -p "$WORK/bin"
cp "$CWTEXT" "$WORK/bin/cwtext.tmp" && mv "$WORK/bin/cwtext.tmp" "$WORK/bin/cwtext"
"$WORK/bin/cwtext" train --help | grep -q -- '--threads' || die "$CWTEXT train has no --threads option"

# 4. The benchmark itself.
exec "$VENV/bin/python" "$HERE/speed.py" --corpora-dir "$CORPORA" --cwtext "$WORK/bin/cwtext" \
  --work "$WORK" --out "$out" "${pass[@]}"
