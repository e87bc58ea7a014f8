#!/usr/bin/env bash
# The example gateway between the official MCP TypeScript SDK client (examples/client.ts)
# and @modelcontextprotocol/server-everything (both pinned in package-lock.json): the
# session through the gateway must end every step as the direct one does, every request
# must be answered with its own id byte for byte (examples/check-log.mjs), and with
# --deny get-sum exactly the steps calling that tool must end in the gateway's -32602.
# Needs `npm ci` and `npm run build` (js/ci.sh runs both first).
set -euo pipefail
cd "$(dirname "$0")/.."
node="${NODE:-node}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
everything=node_modules/.bin/mcp-server-everything

npx tsc -p tsconfig.examples.json
timeout 120 "$node" dist-examples/client.js "$everything" > "$work/direct.json"
timeout 120 "$node" dist-examples/client.js "$node" dist-examples/gateway.js --log "$work/gateway.log" \
  -- "$everything" > "$work/gateway.json"
if ! diff -u "$work/direct.json" "$work/gateway.json"; then
  echo "FAIL: the session through the gateway differs from the direct one"
  exit 1
fi
echo "same outcome for every step ($(grep -c '"ok"\|"error"' "$work/direct.json") steps), direct and through the gateway"
"$node" examples/check-log.mjs "$work/gateway.log"

timeout 120 "$node" dist-examples/client.js "$node" dist-examples/gateway.js --deny get-sum \
  --log "$work/deny.log" -- "$everything" > "$work/deny.json"
"$node" examples/check-log.mjs "$work/deny.log"
"$node" - "$work/direct.json" "$work/deny.json" <<'JS'
const fs = require("node:fs");
const [direct, deny] = process.argv.slice(2).map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
const refused = { error: -32602 };
for (const step of Object.keys(direct)) {
  const want = step === "sum" || step === "in_flight" ? refused : direct[step];
  if (JSON.stringify(deny[step]) !== JSON.stringify(want)) {
    console.log(`FAIL: with --deny get-sum, step ${step}: ${JSON.stringify(deny[step])}, expected ${JSON.stringify(want)}`);
    process.exit(1);
  }
}
console.log("--deny get-sum: the two steps calling it refused with -32602, the others unchanged");
JS
