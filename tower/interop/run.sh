#!/usr/bin/env bash
# The official MCP SDK clients (TypeScript StreamableHTTPClientTransport, Python
# streamable_http_client) run the same session against server-everything in its Streamable
# HTTP mode, directly and through the rpcscan-tower gateway on loopback: tools with
# progress, sampling, elicitation, resources, prompts, concurrent calls, cancellation and
# session end with DELETE must end the same way both ways. Then hostile input through the
# gateway: each answered with its documented status and body, and the gateway stays up.
#
# Needs node + npm, python3 and the registries; installs into $INTEROP_CACHE
# (default ~/.cache/rpcscan/interop). Usage: tower/interop/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${INTEROP_CACHE:-$HOME/.cache/rpcscan/interop}"
mkdir -p "$cache"
# The ESM client resolves the SDK from its own folder: it runs from the cache.
cp "$here/package.json" "$here/client.mjs" "$cache/"
(cd "$cache" && npm install --no-audit --no-fund --silent)
[ -x "$cache/venv/bin/python" ] || python3 -m venv "$cache/venv"
"$cache/venv/bin/pip" install -q -r "$here/requirements.txt"
gateway=$(cd "$root" && cargo build -q -p rpcscan-tower --features gateway --example gateway \
    --message-format=json-render-diagnostics \
    | python3 -c 'import json, sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
up=$(port); gw=$(port); metrics=$(port)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "nothing on port $1" >&2; return 1; }

PORT=$up node "$cache/node_modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp >"$cache/server.log" 2>&1 &
pids+=($!)
"$gateway" --listen "127.0.0.1:$gw" --upstream "http://127.0.0.1:$up/mcp" --metrics "127.0.0.1:$metrics" \
    --max-body 65536 --request-timeout-ms 2000 2>"$cache/gateway.log" &
pids+=($!)
wait_port "$up"; wait_port "$gw"; wait_port "$metrics"

fail=0
for client in ts py; do
    for via in direct gateway; do
        url="http://127.0.0.1:$up/mcp"; [ "$via" = gateway ] && url="http://127.0.0.1:$gw/mcp"
        case $client in
            ts) node "$cache/client.mjs" "$url" ;;
            py) "$cache/venv/bin/python" "$here/client.py" "$url" ;;
        esac >"$cache/$client-$via.json"
    done
    if diff -u "$cache/$client-direct.json" "$cache/$client-gateway.json"; then
        echo "interop $client: same transcript directly and through the gateway"
    else
        echo "interop $client: transcripts differ" >&2; fail=1
    fi
done

# Hostile input: expected status and body.
expect() { # name status body [curl args...]
    local name=$1 status=$2 body=$3; shift 3
    local got
    got=$(curl -s -w '\n%{http_code}' "$@" "http://127.0.0.1:$gw/mcp")
    if [ "$got" != "$body"$'\n'"$status" ]; then
        echo "hostile $name: got $got" >&2; fail=1
    else
        echo "hostile $name: $status"
    fi
}
json=(-H 'content-type: application/json' -H 'accept: application/json, text/event-stream')
expect duplicate-method 400 '{"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "Invalid Request"}}' \
    "${json[@]}" -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"echo"}}'
expect duplicate-id 400 '{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}}' \
    "${json[@]}" -d '{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}'
expect escaped-duplicate-name 400 '{"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "Invalid Request: duplicate routing key in params"}}' \
    "${json[@]}" -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","n\u0061me":"get-env"}}'
expect header-says-tools-list 400 '{"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "Header mismatch: Mcp-Method header does not match the body"}}' \
    "${json[@]}" -H 'mcp-method: tools/list' -H 'mcp-name: echo' -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}'
head -c 70000 /dev/zero | tr '\0' ' ' >"$cache/big.json"
expect oversized 413 '{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request: body too large"}}' \
    "${json[@]}" --data-binary "@$cache/big.json"
# A slow-drip body: the head and a few bytes, then silence past the request timeout.
exec 3<>"/dev/tcp/127.0.0.1/$gw"
printf 'POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 60\r\n\r\n{"jsonrpc":' >&3
answer=$(timeout 10 cat <&3 || true)
exec 3<&-
case $answer in
    "HTTP/1.1 408"*'"message": "Invalid Request: body not received in time"}}') echo "hostile slow-drip: 408" ;;
    *) echo "hostile slow-drip: got $answer" >&2; fail=1 ;;
esac

# The gateway is still up, and counted what it turned away.
node "$cache/client.mjs" "http://127.0.0.1:$gw/mcp" >/dev/null || fail=1
curl -s "http://127.0.0.1:$metrics/metrics" | grep '^rpcscan_rejections_total' || fail=1
exit $fail
