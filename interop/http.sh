#!/usr/bin/env bash
# Interop over Streamable HTTP: the official MCP SDK clients (TypeScript
# StreamableHTTPClientTransport, Python streamable_http_client) run the same session against
# @modelcontextprotocol/server-everything in its Streamable HTTP mode, directly and through
# `rpcscan gateway` on loopback: tools with progress, sampling, elicitation, resources,
# prompts, a task, concurrent calls, cancellation and session end with DELETE must end the
# same way both ways, and the gateway's --log must hold every message and every answer
# (`rpcscan pair --unanswered` finds none missing). Then hostile input
# through a gateway in front of a recording upstream (recorder.py): each is answered with
# its documented status and body, the upstream never sees any of it, and the gateway stays
# up. Then TLS (a self-signed certificate made here), SIGHUP and SIGTERM mid-session, and
# 1000 slow clients at once. Installs what it needs (npm ci, the venv of run.sh); called by
# .ci/run.
set -euo pipefail
source "$(dirname "$0")/setup.sh"

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done
  echo "nothing listening on port $1" >&2
  return 1
}

up=$(port) gw=$(port) metrics=$(port)
PORT=$up node node_modules/@modelcontextprotocol/server-everything/dist/index.js streamableHttp \
  >"$work/server.log" 2>&1 &
pids+=($!)
"$RPCSCAN" gateway --listen "127.0.0.1:$gw" --upstream "http://127.0.0.1:$up/mcp" \
  --metrics "127.0.0.1:$metrics" --log "$work/gateway.ndjson" 2>"$work/gateway.stderr" &
gateway_pid=$!
pids+=($gateway_pid)
wait_port "$up"
wait_port "$gw"
wait_port "$metrics"

for client in ts py; do
  for via in direct gateway; do
    url="http://127.0.0.1:$up/mcp"
    [ "$via" = gateway ] && url="http://127.0.0.1:$gw/mcp"
    case $client in
      ts) timeout 120 node http-client.mjs "$url" ;;
      py) timeout 120 "$py" http-client.py "$url" ;;
    esac >"$work/$client-$via.json" || fail "$client $via: the client failed"
  done
  if diff -u "$work/$client-direct.json" "$work/$client-gateway.json"; then
    echo "$client: same transcript directly and through the gateway ($(grep -c '^ \[' "$work/$client-direct.json") steps)"
  else
    fail "$client: transcripts differ"
  fi
done

# (Read whole before matching: `grep -q` stops at the first match, and under pipefail the
# curl it leaves writing into a closed pipe would fail the check.)
metrics_text=$(curl -s "http://127.0.0.1:$metrics/metrics")
grep -q '^rpcscan_messages_total{direction="server"' <<<"$metrics_text" || fail "no server messages in /metrics"
# The Python driver's ping after DELETE: the upstream's 400 and JSON-RPC error is counted.
grep -q '^rpcscan_error_responses_total{direction="server",code="-32000"}' <<<"$metrics_text" \
  || fail "the upstream's 400 after DELETE is not in /metrics"
# SIGTERM: the gateway exits 0 with its log flushed.
kill -TERM "$gateway_pid"
wait "$gateway_pid" || fail "gateway exited $?"
# The --log: every record is JSON with the documented fields; both directions are there,
# each SSE message on its own record; the sessions were ended with DELETE (by the
# transcripts above: the TS client's `terminated` is true only after the server accepted it;
# the Python driver sends its DELETE by hand, checks the answer, and that a request with the
# ended session id is refused afterwards). That refusal (the upstream's 400, "id": null) is
# an s2c record with its status and the request it answers (the driver's ping, id 99).
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
const dirs = { c2s: 0, s2c: 0, proxy: 0 };
let refused = 0;
for (const line of lines) {
  const r = JSON.parse(line);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(r.ts)) throw new Error("bad ts " + line);
  if (!(r.dir in dirs)) throw new Error("bad dir " + line);
  // An invalid client message is a c2s record holding it as a string.
  const unreadable = r.dir === "c2s" && typeof r.msg === "string";
  if (r.dir !== "proxy" && !unreadable && (typeof r.msg !== "object" || r.msg.jsonrpc !== "2.0")) throw new Error("bad msg " + line);
  if (r.origin !== undefined && r.origin !== "gateway") throw new Error("bad origin " + line);
  if (r.dir === "s2c" && r.status === 400 && r.request_id === 99) refused++;
  dirs[r.dir]++;
}
if (!dirs.c2s || !dirs.s2c) throw new Error("a direction is missing: " + JSON.stringify(dirs));
if (!refused) throw new Error("no s2c record of the refused ping after DELETE");
console.log("log ok: " + lines.length + " records " + JSON.stringify(dirs));
' "$work/gateway.ndjson" || fail "gateway --log"
# Every answer a client got is in the log: pair lists no request as never answered (exit 1:
# none; the cancelled call is reported cancelled).
status=0
"$RPCSCAN" pair --unanswered "$work/gateway.ndjson" >"$work/unanswered" || status=$?
[ "$status" = 1 ] || fail "gateway --log: pair --unanswered (exit $status): $(cat "$work/unanswered")"

# Hostile input, through a second gateway in front of a recording upstream.
rec=$(port) hgw=$(port)
: >"$work/recorded"
"$py" recorder.py "$rec" "$work/recorded" &
pids+=($!)
"$RPCSCAN" gateway --listen "127.0.0.1:$hgw" --upstream "http://127.0.0.1:$rec/mcp" \
  --max-body-size 64K --request-timeout 2s --deny-tool 'get-env*' 2>"$work/hostile.stderr" &
hostile_pid=$!
pids+=($hostile_pid)
wait_port "$rec"
wait_port "$hgw"

expect() { # name status body [curl args...]
  local name=$1 status=$2 body=$3
  shift 3
  local got
  got=$(curl -s -w '\n%{http_code}' "$@" "http://127.0.0.1:$hgw/mcp")
  if [ "$got" != "$body"$'\n'"$status" ]; then
    fail "hostile $name: got $got"
  else
    echo "hostile $name: $status"
  fi
}
json=(-H 'content-type: application/json' -H 'accept: application/json, text/event-stream')
expect duplicate-method 400 '{"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "Invalid Request"}}' \
  "${json[@]}" -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"echo"}}'
expect duplicate-id 400 '{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}}' \
  "${json[@]}" -d '{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}'
expect duplicate-name 400 '{"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "Invalid Request: duplicate routing key in params"}}' \
  "${json[@]}" -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"get-env"}}'
expect escaped-duplicate-name 400 '{"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "Invalid Request: duplicate routing key in params"}}' \
  "${json[@]}" -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","n\u0061me":"get-env"}}'
expect escaped-denied-tool 200 '{"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Unknown tool"}}' \
  "${json[@]}" -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"g\u0065t-env"}}'
expect header-says-tools-list 400 '{"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "Header mismatch: Mcp-Method header does not match the body"}}' \
  "${json[@]}" -H 'mcp-method: tools/list' -H 'mcp-name: echo' -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}'
head -c 70000 /dev/zero | tr '\0' ' ' >"$work/big.json"
expect oversized 413 '{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request: body too large"}}' \
  "${json[@]}" --data-binary "@$work/big.json"
# A slow-drip body: the head and a few bytes, then silence past the request timeout.
exec 3<>"/dev/tcp/127.0.0.1/$hgw"
printf 'POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 60\r\n\r\n{"jsonrpc":' >&3
answer=$(timeout 10 cat <&3 || true)
exec 3<&-
case $answer in
  "HTTP/1.1 408"*'"message": "Invalid Request: body not received in time"}}') echo "hostile slow-drip: 408" ;;
  *) fail "hostile slow-drip: got $answer" ;;
esac
if [ -s "$work/recorded" ]; then
  fail "the upstream saw hostile input: $(cat "$work/recorded")"
else
  echo "the upstream saw none of it"
fi
expect still-up 200 '{"jsonrpc": "2.0", "id": 2, "result": {}}' \
  "${json[@]}" -d '{"jsonrpc":"2.0","id":2,"method":"ping"}'
[ "$(wc -l <"$work/recorded")" = 1 ] || fail "the upstream should have seen the ping only"
kill -0 "$hostile_pid" 2>/dev/null || fail "the hostile-input gateway is gone"

kill -TERM "$hostile_pid"
wait "$hostile_pid" || fail "the hostile-input gateway exited $?"

# TLS: a self-signed certificate made here, trusted by the clients through
# NODE_EXTRA_CA_CERTS / SSL_CERT_FILE; both SDK clients run their session over HTTPS
# (HTTP/1.1 by ALPN) and must end as they did directly; curl checks HTTP/2 by ALPN.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
tgw=$(port)
"$RPCSCAN" gateway --listen "127.0.0.1:$tgw" --upstream "http://127.0.0.1:$up/mcp" \
  --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" 2>"$work/tls.stderr" &
tls_pid=$!
pids+=($tls_pid)
wait_port "$tgw"
NODE_EXTRA_CA_CERTS=$work/cert.pem timeout 120 node http-client.mjs "https://localhost:$tgw/mcp" \
  >"$work/ts-tls.json" || fail "ts over TLS: the client failed"
SSL_CERT_FILE=$work/cert.pem timeout 120 "$py" http-client.py "https://localhost:$tgw/mcp" \
  >"$work/py-tls.json" || fail "py over TLS: the client failed"
for client in ts py; do
  if diff -u "$work/$client-direct.json" "$work/$client-tls.json"; then
    echo "$client: same transcript through the gateway over TLS"
  else
    fail "$client: transcripts differ over TLS"
  fi
done
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
for version in 2 1.1; do
  got=$(curl -s --cacert "$work/cert.pem" "--http$version" -o /dev/null -w '%{http_code} %{http_version}' \
    "${json[@]}" -d "$init" "https://localhost:$tgw/mcp")
  [ "$got" = "200 $version" ] && echo "TLS: initialize over HTTP/$version" || fail "TLS HTTP/$version: got $got"
done
# Not trusted, no answer: a client without the certificate fails its handshake.
curl -s -o /dev/null "${json[@]}" -d "$init" "https://localhost:$tgw/mcp" && fail "TLS: an untrusted certificate was accepted"
kill -TERM "$tls_pid"
wait "$tls_pid" || fail "the TLS gateway exited $?"

# SIGHUP and SIGTERM mid-session (http-lifecycle.mjs, the TS client): a reload from
# --config denies `echo` without dropping a kept-alive connection; SIGTERM lets a tool call
# streaming its progress finish, refuses new connections, cuts the client's standalone SSE
# stream at --drain and exits 0.
lgw=$(port)
echo 'deny-tool = ["nothing"]' >"$work/gateway.toml"
"$RPCSCAN" gateway --config "$work/gateway.toml" --listen "127.0.0.1:$lgw" \
  --upstream "http://127.0.0.1:$up/mcp" --drain 4s 2>"$work/lifecycle.stderr" &
lifecycle_pid=$!
pids+=($lifecycle_pid)
wait_port "$lgw"
if timeout 60 node http-lifecycle.mjs "http://127.0.0.1:$lgw/mcp" "$lifecycle_pid" "$work/gateway.toml" \
  >"$work/lifecycle.json"; then
  echo "lifecycle: $(cat "$work/lifecycle.json")"
else
  fail "lifecycle: $(cat "$work/lifecycle.json")"
fi
for _ in $(seq 100); do kill -0 "$lifecycle_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$lifecycle_pid" 2>/dev/null && fail "the gateway did not exit within --drain after SIGTERM"
wait "$lifecycle_pid" || fail "the gateway exited $? after SIGTERM"
grep -q "rpcscan gateway: reloaded" "$work/lifecycle.stderr" || fail "no reload on SIGHUP"

# Slow clients: 500 sending their header block and 500 their body a byte a second, at once
# (slow-clients.py), must leave a normal session's median latency within 2x of an idle
# gateway's: http-latency.mjs (the TS client, 50 calls of `echo` in each session) alternates
# its calls between a session through the attacked gateway and one through a second, idle
# gateway in front of the same server, so both see the same load on the machine. Then each
# slow client is answered 408 (by --header-timeout and --request-timeout) and counted. About
# 1000 descriptors on each side: the gateway raises its own soft limit to the hard one,
# slow-clients.py its own.
sgw=$(port) smetrics=$(port) igw=$(port)
"$RPCSCAN" gateway --listen "127.0.0.1:$sgw" --upstream "http://127.0.0.1:$up/mcp" \
  --metrics "127.0.0.1:$smetrics" --max-connections 1100 --max-connections-per-client 0 \
  --header-timeout 8s --request-timeout 8s 2>"$work/slow.stderr" &
slow_pid=$!
pids+=($slow_pid)
"$RPCSCAN" gateway --listen "127.0.0.1:$igw" --upstream "http://127.0.0.1:$up/mcp" 2>/dev/null &
pids+=($!)
wait_port "$sgw"
wait_port "$smetrics"
wait_port "$igw"
python3 slow-clients.py "$sgw" 500 500 20 >"$work/slow-clients.out" &
attack_pid=$!
pids+=($attack_pid)
for _ in $(seq 300); do grep -q connected "$work/slow-clients.out" && break; sleep 0.1; done
grep -q connected "$work/slow-clients.out" || fail "slow clients: not all connected"
open=$(curl -s "http://127.0.0.1:$smetrics/metrics" | sed -n 's/^rpcscan_connections_open //p')
timeout 60 node http-latency.mjs 50 "http://127.0.0.1:$igw/mcp" "http://127.0.0.1:$sgw/mcp" >"$work/latency.json" \
  || fail "slow clients: the session failed"
still=$(curl -s "http://127.0.0.1:$smetrics/metrics" | sed -n 's/^rpcscan_connections_open //p')
read -r idle loaded < <(node -e '
const r = Object.values(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")));
console.log(r[0].median.toFixed(2), r[1].median.toFixed(2));' "$work/latency.json")
echo "slow clients: median echo round trip ${idle} ms idle, ${loaded} ms with $open connections open ($still after)"
node -e 'process.exit(+process.argv[2] <= 2 * +process.argv[1] ? 0 : 1)' "$idle" "$loaded" \
  || fail "slow clients: the session slowed from $idle ms to $loaded ms"
[ "${still:-0}" -ge 1000 ] || fail "slow clients: the session was not measured while all were open"
wait "$attack_pid" || fail "slow-clients.py failed"
summary=$(tail -1 "$work/slow-clients.out")
[ "$summary" = '{"body": {"408": 500}, "header": {"408": 500}}' ] && echo "slow clients: $summary" \
  || fail "slow clients: $summary"
metrics_text=$(curl -s "http://127.0.0.1:$smetrics/metrics")
grep -q '^rpcscan_connections_closed_total{reason="header_timeout"} 500$' <<<"$metrics_text" \
  || fail "slow clients: the header timeouts are not counted"
kill -TERM "$slow_pid"
wait "$slow_pid" || fail "the slow-clients gateway exited $?"

if [ "$failed" != 0 ]; then
  echo "interop http: FAILED"
  exit 1
fi
echo "interop http: ok"
