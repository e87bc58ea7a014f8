#!/usr/bin/env bash
# Tracing: `rpcscan gateway --otlp-endpoint` exporting to a real OTLP/HTTP receiver (otlp.py,
# decoding with the official opentelemetry-proto package) while the official Python SDK
# client runs its Streamable HTTP session (http-client.py) through the gateway in front of
# @modelcontextprotocol/server-everything, and a denied tool call is sent by hand. The
# spans are checked after the gateway's SIGTERM (it flushes on exit): tools/call with its
# tool, a client notification, an error answer, the layer's own rejection, server
# notifications and requests inside their POST's span, the trace context a message carries
# in params._meta as its span's parent. Called by .ci/run.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r otlp-requirements.txt

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done
  echo "nothing listening on port $1" >&2
  return 1
}

up=$(port) gw=$(port) otlp=$(port)
: >"$work/spans.ndjson"
"$py" otlp.py serve "$otlp" "$work/spans.ndjson" &
pids+=($!)
PORT=$up node node_modules/@modelcontextprotocol/server-everything/dist/index.js streamableHttp \
  >"$work/server.log" 2>&1 &
pids+=($!)
wait_port "$otlp"
wait_port "$up"
"$RPCSCAN" gateway --listen "127.0.0.1:$gw" --upstream "http://127.0.0.1:$up/mcp" \
  --deny-tool 'get-env*' --otlp-endpoint "http://127.0.0.1:$otlp/v1/traces" 2>"$work/gateway.stderr" &
gateway_pid=$!
pids+=($gateway_pid)
wait_port "$gw"

timeout 120 "$py" http-client.py "http://127.0.0.1:$gw/mcp" >"$work/session.json"
denied=$(curl -s -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get-env","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}' \
  "http://127.0.0.1:$gw/mcp")
[ "$denied" = '{"jsonrpc": "2.0", "id": 5, "error": {"code": -32602, "message": "Unknown tool"}}' ] ||
  { echo "FAIL: the denied call got $denied"; exit 1; }
kill -TERM "$gateway_pid"
wait "$gateway_pid" || { echo "FAIL: the gateway exited $?"; cat "$work/gateway.stderr"; exit 1; }

"$py" otlp.py check "$work/spans.ndjson"
echo "interop otlp: ok"
