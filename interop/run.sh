#!/usr/bin/env bash
# Interop: the official MCP SDK clients (TypeScript, Python), each against two real servers
# (@modelcontextprotocol/server-everything, a server on the Python SDK), each pair run
# directly and through `rpcscan proxy`. Checks that every step ends the same way both ways, that
# cancelled requests get no answer and every other request one (from the proxy's --log, with
# `rpcscan pair --unanswered`), that an oversized response is
# answered at once, and that no server process is left running, including one that ignores
# the end of its stdin and SIGTERM. Installs what it needs (npm ci, a venv); called by .ci/run.
set -euo pipefail
source "$(dirname "$0")/setup.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
everything=("$here/node_modules/.bin/mcp-server-everything")
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# Servers this suite started and that are still running (a check: nothing is killed here).
leftovers() { pgrep -f -- "$here/(node_modules/.bin/mcp-server-everything|server.py)" || true; }

# compare NAME CLIENT... -- SERVER...: the client directly, then through the proxy.
compare() {
  local name=$1; shift
  local client=() server=()
  while [ "$1" != "--" ]; do client+=("$1"); shift; done
  shift; server=("$@")
  echo "--- $name"
  timeout 120 "${client[@]}" "${server[@]}" > "$work/$name.direct.json" || fail "$name: direct run"
  timeout 120 "${client[@]}" "$RPCSCAN" proxy --log "$work/$name.log" -- "${server[@]}" \
    > "$work/$name.proxied.json" || fail "$name: proxied run"
  if diff -u "$work/$name.direct.json" "$work/$name.proxied.json"; then
    echo "same outcome for every step ($(grep -c '"ok"\|"error"' "$work/$name.direct.json") steps)"
  else
    fail "$name: outcomes differ"
  fi
  node check-log.mjs "$work/$name.log" || fail "$name: log check"
  # Every answer the client got is in the log: pair lists no request as never answered
  # (exit 1: none; cancelled requests are reported cancelled, not unanswered).
  local status=0
  "$RPCSCAN" pair --unanswered "$work/$name.log" >"$work/$name.unanswered" || status=$?
  [ "$status" = 1 ] || fail "$name: pair --unanswered (exit $status): $(cat "$work/$name.unanswered")"
  sleep 0.5
  [ -z "$(leftovers)" ] || fail "$name: processes left running: $(leftovers)"
}

compare ts-everything node client.mjs -- "${everything[@]}"
compare ts-python node client.mjs -- "$py" "$here/server.py"
compare py-everything "$py" client.py -- "${everything[@]}"
compare py-python "$py" client.py -- "$py" "$here/server.py"

echo "--- oversized response (--max-message-size 3K: the initialize result fits, the image does not)"
out=$(INTEROP_ONLY=oversized timeout 60 node client.mjs "$RPCSCAN" proxy --max-message-size 3K -- "${everything[@]}")
echo "$out"
[ "$out" = '{"server":"mcp-servers/everything","oversized":{"error":-32603},"answered_at_once":true}' ] \
  || fail "oversized response"

echo "--- a server that ignores the end of its stdin and SIGTERM"
start=$SECONDS
out=$(INTEROP_ONLY=oversized timeout 60 node client.mjs "$RPCSCAN" proxy --grace 1s -- \
  sh -c 'trap "" TERM; exec "$0"' "${everything[@]}")
echo "$out (closed in $((SECONDS - start))s)"
sleep 0.5
[ -z "$(leftovers)" ] || fail "stubborn server left running: $(leftovers)"

if [ "$failed" != 0 ]; then
  echo "interop: FAILED"
  exit 1
fi
echo "interop: ok"
