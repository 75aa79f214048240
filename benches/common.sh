# Sourced by benches/compare/run.sh and benches/speed/run.sh: what both need before measuring.

BENCHES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The peers' virtual environment (fastText, Vowpal Wabbit, scikit-learn), shared by both scripts.
VENV=$BENCHES/compare/.venv

# Installs the pinned peers from PyPI into $VENV, again whenever requirements.txt changes.
ensure_peers() {
  local req=$BENCHES/compare/requirements.txt
  if ! cmp -s "$req" "$VENV/.requirements" 2>/dev/null; then
    echo "installing peers into $VENV" >&2
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$req"
    cp "$req" "$VENV/.requirements"
  fi
}

# Sets CWTEXT to this checkout's release build unless it already names a binary.
ensure_cwtext() {
  if [ -z "${CWTEXT:-}" ]; then
    (cd "$BENCHES/.." && cargo build --release)
    CWTEXT=$BENCHES/../target/release/cwtext
  fi
  if [ ! -f "$CWTEXT" ] || [ ! -x "$CWTEXT" ]; then
    echo "error: CWTEXT=$CWTEXT is not an executable file" >&2
    exit 2
  fi
}
