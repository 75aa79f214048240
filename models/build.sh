#!/usr/bin/env bash
# Rebuilds the shelf models and prints their held-out accuracy:
#   bash models/build.sh [topics] [spam] [sentiment]     (default: all three)
# CORPORA: where ../shared/corpora/fetch.sh put the corpora (default ~/.cache/cwtext-corpora;
# fetched when missing). The same corpora give the same bytes. Rebuild the binary afterwards
# (`cargo build --release`) to embed the new files.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPORA=${CORPORA:-$HOME/.cache/cwtext-corpora}
if [[ ! -d $CORPORA/20ng || ! -d $CORPORA/spamassassin || ! -d $CORPORA/movie_sentiment ]]; then
  bash ../shared/corpora/fetch.sh "$CORPORA"
fi
cargo build --release --quiet
bin=./target/release/cwtext
# name | corpus | training files | test files | settings (everything else is the default)
specs=(
  "topics|20ng|--include train-*|--include test-*|--hash-bits 16 --encoding f16 --keep-vocabulary 1"
  "spam|spamassassin/binary|--exclude *[05].txt|--include *[05].txt|--hash-bits 17 --encoding f16 --keep-vocabulary 1"
  "sentiment|movie_sentiment|--exclude *[05].txt|--include *[05].txt|--hash-bits 17 --encoding f16 --keep-vocabulary 1"
)
wanted=" ${*:-topics spam sentiment} "
printf '| model | corpus | file | test documents | accuracy | macro-F1 | ECE | Brier |\n|---|---|---|---|---|---|---|---|\n'
for spec in "${specs[@]}"; do
  IFS='|' read -r name corpus train test settings <<<"$spec"
  [[ $wanted == *" $name "* ]] || continue
  set -f  # the globs are for cwtext, not the shell
  # shellcheck disable=SC2086
  $bin -q train "$CORPORA/$corpus" $train $settings -o "models/$name.cwm"
  # shellcheck disable=SC2086
  # Exit code 1 means some test files were skipped (e.g. one 20NG post of stop words only).
  $bin -q eval -m "models/$name.cwm" "$CORPORA/$corpus" $test --format json >"/tmp/cwtext-$name-eval.json" || [[ $? == 1 ]]
  set +f
  python3 - "$name" "$corpus" "models/$name.cwm" "/tmp/cwtext-$name-eval.json" <<'PY'
import json, os, sys
name, corpus, model, report = sys.argv[1:]
r = json.load(open(report))
print(f"| {name} | {corpus} | {os.path.getsize(model) / 1e6:.1f} MB | {r['documents']} | "
      f"{r['accuracy']:.3f} | {r['macro_f1']:.3f} | {r['ece']:.3f} | {r['brier']:.3f} |")
PY
done
rm -f models/*.cwm.lock
