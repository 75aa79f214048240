# Sourced by benches/serve/run.sh and benches/serve/ab.sh: the typical mail and one server's
# start and stop. Both scripts set WORK and PORT and kill $SERVER in their exit trap.

# The median-sized file below DIR: the typical mail.
typical_mail() {
  find "$1" -type f -printf '%s %p\n' | sort -n | awk '{ a[NR] = $2 } END { print a[int(NR / 2)] }'
}

# serve_model BIN MODEL: BIN serves MODEL as "m" on 127.0.0.1:$PORT in the background ($SERVER
# its pid); returns once /health answers, or exits the script when it never does (10 s).
serve_model() {
  "$1" serve -q -m "m=$2" --listen "127.0.0.1:$PORT" > /dev/null &
  SERVER=$!
  for _ in $(seq 200); do curl -sf "http://127.0.0.1:$PORT/health" > /dev/null && return; sleep 0.05; done
  echo "the server did not start" >&2
  exit 1
}

# Stops the server with SIGTERM, as systemd does; it finishes in-flight requests and exits 0.
stop_server() { kill -TERM "$SERVER"; wait "$SERVER"; SERVER=; }
