#!/usr/bin/env bash
# Reruns the fuzzers: `bash fuzz/run.sh [RUNS]` (default 10,000,000 executions per target);
# TARGETS="document" runs only the named targets.
# SANITIZER=none skips AddressSanitizer (several times faster; Rust code is memory-safe, the
# sanitizer matters for the C in dependencies, of which cwtext has none on these paths).
# cargo-fuzz needs nightly compiler features; on a stable toolchain RUSTC_BOOTSTRAP=1 enables
# them. Crashes land in fuzz/artifacts/<target>/ and become regression tests in tests/.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-10000000}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
# Documents up to 16 KiB; models by their first 8 KiB (magic, version, lengths and the JSON
# header, where the parsing and the size arithmetic are; the weights behind a CRC are not worth
# mutating).
for spec in document:16384 model:8192 mbox:16384 rows:16384; do
  target=${spec%%:*}
  max_len=${spec##*:}
  [[ " ${TARGETS:-document model mbox rows} " == *" $target "* ]] || continue
  mkdir -p "fuzz/corpus/$target"
  # Work on a copy so the committed seeds stay small; -timeout catches hangs, -rss_limit_mb
  # unbounded allocation.
  work=$(mktemp -d)
  cp -r "fuzz/corpus/$target/." "$work/"
  # The HTML fixture pages seed the document target too (kept once, under tests/).
  if [[ $target == document ]]; then cp tests/fixtures/html/*.html "$work/"; fi
  cargo fuzz run --sanitizer "${SANITIZER:-address}" "$target" "$work" -- -runs="$RUNS" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$max_len" -print_final_stats=1 2>&1 | tail -n 25
  rm -rf "$work"
done
