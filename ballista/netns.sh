#!/usr/bin/env bash
# A Ballista cluster whose scheduler, executors and client are separate hosts on one machine:
# each runs in its own network namespace with its own address on a private bridge
# (10.77.0.0/24, in a namespace of its own too, so the machine's network is not touched).
# Every host sees the logs at the same path (namespaces share the file system, as hosts
# share an NFS mount). The script starts the cluster and stops it itself (a trap kills the
# processes and deletes the namespaces on any exit), and checks:
#
#   1. one answer: `rpcscan-sql --scheduler` from the client host prints exactly what the
#      embedded `rpcscan-sql` prints for the same query over a generated log, with tasks on
#      both executors; the two timings are printed side by side;
#   2. an executor killed (SIGKILL) while a query runs never yields a partial count: the
#      query either fails (non-zero exit, an error on stderr) or, retried by Ballista on the
#      executor left, prints the embedded answer.
#
# Needs root and iproute2; when network namespaces cannot be created (no root, a container
# without CAP_NET_ADMIN) it says so loudly and exits 0 (RPCSCAN_NETNS_REQUIRED=1 makes that
# a failure). The binaries are the heavy workspace's debug build (.ci/heavy.sh builds them;
# this script runs `cargo build` for them, a no-op when warm), so timings are debug-build
# timings: they compare the two runs, not rpcscan's speed.
#
#   RPCSCAN_HEAVY_TARGET   target dir (default: $HOME/.cache/rpcscan/heavy-target)
#   RPCSCAN_NETNS_COPIES   the log is examples/mcp-traffic.ndjson this many times (default 1000:
#                          81 MB, 221,000 lines; the embedded query takes seconds in a debug build)
#   RPCSCAN_NETNS_REQUIRED 1: fail instead of skipping when namespaces are unavailable
#   RPCSCAN_NETNS_KEEP     1: keep the temporary directory (the log, every process's output)
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${RPCSCAN_HEAVY_TARGET:-$HOME/.cache/rpcscan/heavy-target}"
copies="${RPCSCAN_NETNS_COPIES:-1000}"
bin="$CARGO_TARGET_DIR/debug"

skip() {
  cat <<EOF

############################################################################################
## netns cluster test SKIPPED: $*
############################################################################################
EOF
  [ "${RPCSCAN_NETNS_REQUIRED:-0}" = 1 ] && exit 1
  exit 0
}

[ "$(id -u)" = 0 ] || skip "not root (network namespaces need CAP_NET_ADMIN)"
command -v ip >/dev/null || skip "iproute2's ip is not installed (apt-get install iproute2)"

tag="rps$$"                         # unique per run: namespaces and interface names
tmp=$(mktemp -d)
pids=()
namespaces=()
cleanup() {
  local rc=$?
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  if [ "${RPCSCAN_NETNS_KEEP:-0}" = 1 ]; then echo "netns: kept $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

lan="$tag-lan"
if ! ip netns add "$lan" 2>"$tmp/err"; then
  skip "cannot create a network namespace: $(cat "$tmp/err")"
fi
namespaces+=("$lan")
ip -n "$lan" link add br0 type bridge
ip -n "$lan" link set br0 up

# host NAME INDEX: a namespace "$tag-NAME" with eth0 = 10.77.0.INDEX/24 on the bridge.
host() {
  local ns="$tag-$1" addr="10.77.0.$2"
  ip netns add "$ns"
  namespaces+=("$ns")
  ip link add "${tag}h$2" type veth peer name "${tag}b$2"
  ip link set "${tag}h$2" netns "$ns"
  ip link set "${tag}b$2" netns "$lan"
  ip -n "$ns" link set "${tag}h$2" name eth0
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip -n "$lan" link set "${tag}b$2" master br0
  ip -n "$lan" link set "${tag}b$2" up
}
host scheduler 10
host executor1 11
host executor2 12
host client 20
echo "netns: hosts $tag-{scheduler,executor1,executor2,client} = 10.77.0.{10,11,12,20} on bridge br0 in $lan"

echo "netns: building the cluster binaries (no-op when .ci/heavy.sh built them)"
# The command .ci/heavy.sh runs: the same feature set (a `-p rpcscan-ballista --bins` build
# would unify features differently and compile a second DataFusion).
cargo build --manifest-path datafusion/Cargo.toml --workspace --all-targets --locked \
  -j "${RPCSCAN_HEAVY_JOBS:-2}"

mkdir -p "$tmp/logs"
data="$tmp/logs/traffic.ndjson"
for _ in $(seq "$copies"); do cat examples/mcp-traffic.ndjson; done >"$data"
echo "netns: log $data: $(wc -l <"$data") lines, $(wc -c <"$data") bytes"

# run NAME HOST CMD...: starts CMD in HOST's namespace, output in $tmp/NAME.log.
declare -A pid_of
run() {
  local name=$1 ns="$tag-$2"
  shift 2
  RUST_LOG=info ip netns exec "$ns" "$@" >"$tmp/$name.log" 2>&1 </dev/null &
  pids+=($!)
  pid_of[$name]=$!
}
run scheduler scheduler "$bin/rpcscan-scheduler" \
  --bind-host 10.77.0.10 --external-host 10.77.0.10 --bind-port 50050 \
  --scheduler-policy push-staged --task-distribution round-robin \
  --executor-timeout-seconds 10 --expire-dead-executor-interval-seconds 2
for e in 1 2; do
  mkdir -p "$tmp/work$e"
  run "executor$e" "executor$e" "$bin/rpcscan-executor" \
    --bind-host "10.77.0.1$e" --external-host "10.77.0.1$e" \
    --scheduler-host 10.77.0.10 --scheduler-port 50050 \
    --bind-port 50051 --bind-grpc-port 50052 --bind-health-port 50053 \
    --scheduler-connect-timeout-seconds 60 --vcores 1 --task-scheduling-policy push-staged \
    --executor-heartbeat-interval-seconds 2 --work-dir "$tmp/work$e"
done

dump_logs() {
  for f in scheduler executor1 executor2; do
    echo "--- $f.log (last 40 lines)"
    tail -n 40 "$tmp/$f.log" || true
  done
}
fail() {
  echo "netns: FAILED: $*" >&2
  dump_logs >&2
  exit 1
}
alive() { kill -0 "${pid_of[$1]}" 2>/dev/null; }

deadline=$((SECONDS + 120))
until grep -q "registration succeed" "$tmp/executor1.log" &&
  grep -q "registration succeed" "$tmp/executor2.log"; do
  for p in scheduler executor1 executor2; do alive "$p" || fail "$p exited before the executors registered"; done
  [ "$SECONDS" -lt "$deadline" ] || fail "the executors did not register within 120 s"
  sleep 0.2
done
echo "netns: both executors registered with the scheduler at 10.77.0.10:50050"

# Six partitions: the scan is six tasks, spread over both executors (one task slot each).
query="SET datafusion.execution.target_partitions = 6;
SELECT rpc_kind(line) AS kind, rpc_invalid_reason(line) AS reason, count(*) AS n
FROM logs GROUP BY 1, 2 ORDER BY 1, 2"
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# in_background CMD...: runs CMD as a child the trap can kill (bash runs a trap only after its
# foreground command ends; `wait` is interrupted at once).
in_background() {
  "$@" &
  pids+=($!)
  wait $!
}

t=$(now)
in_background "$bin/rpcscan-sql" -q --table "logs=$data" --format csv "$query" >"$tmp/embedded.csv"
embedded_s=$(elapsed "$t" "$(now)")
tasks() { grep -c "Execute task" "$tmp/$1.log" || true; }

t=$(now)
in_background ip netns exec "$tag-client" timeout 600 "$bin/rpcscan-sql" \
  --scheduler 10.77.0.10:50050 -q --table "logs=$data" --format csv "$query" \
  >"$tmp/cluster.csv" 2>"$tmp/cluster.err" ||
  fail "the cluster query failed: $(cat "$tmp/cluster.err")"
cluster_s=$(elapsed "$t" "$(now)")
echo "netns: embedded answer (${embedded_s}s):"
cat "$tmp/embedded.csv"
echo "netns: cluster answer from host 10.77.0.20 (${cluster_s}s; tasks: executor1 $(tasks executor1), executor2 $(tasks executor2)):"
cat "$tmp/cluster.csv"
cmp -s "$tmp/embedded.csv" "$tmp/cluster.csv" || fail "the cluster's answer differs from the embedded one"
total=$(awk -F, 'NR > 1 { n += $3 } END { print n }' "$tmp/cluster.csv")
[ "$total" = "$(grep -cv '^[[:space:]]*$' "$data")" ] || fail "the counts sum to $total, not the log's line count"
[ "$(tasks executor1)" -gt 0 ] && [ "$(tasks executor2)" -gt 0 ] ||
  fail "tasks ran on one executor only (executor1 $(tasks executor1), executor2 $(tasks executor2))"
echo "netns: same answer embedded (${embedded_s}s) and on 3 hosts (${cluster_s}s), debug build"

# 2. kill -9 executor2 while the query runs.
before=$(tasks executor2)
t=$(now)
ip netns exec "$tag-client" timeout 600 "$bin/rpcscan-sql" --scheduler 10.77.0.10:50050 -q \
  --table "logs=$data" --format csv "$query" >"$tmp/killed.csv" 2>"$tmp/killed.err" &
client=$!
pids+=("$client")
deadline=$((SECONDS + 120))
until [ "$(tasks executor2)" -gt "$before" ]; do
  kill -0 "$client" 2>/dev/null || fail "the query ended before executor2 got a task"
  [ "$SECONDS" -lt "$deadline" ] || fail "executor2 got no task within 120 s"
  sleep 0.05
done
kill -0 "$client" 2>/dev/null || fail "the query ended before the kill (make the log larger)"
kill -9 "${pid_of[executor2]}"
echo "netns: executor2 killed (SIGKILL) $(elapsed "$t" "$(now)")s into the query, while it ran a task"
rc=0
wait "$client" || rc=$?
killed_s=$(elapsed "$t" "$(now)")
if [ "$rc" = 0 ]; then
  echo "netns: after the kill the query succeeded (${killed_s}s; tasks on executor1: $(tasks executor1)):"
  cat "$tmp/killed.csv"
  cmp -s "$tmp/embedded.csv" "$tmp/killed.csv" ||
    fail "the query succeeded after the kill with an answer that differs from the embedded one"
  echo "netns: retried by Ballista on executor1: the embedded answer; the scheduler's account:"
  grep -E "heartbeat timed out|lost Executor" "$tmp/scheduler.log" | cut -c1-200 || true
else
  [ "$rc" = 124 ] && fail "the query hung after the kill (timeout 600 s)"
  [ -s "$tmp/killed.err" ] || fail "the query failed (exit $rc) without an error message"
  [ ! -s "$tmp/killed.csv" ] || fail "the query failed (exit $rc) but printed a result: $(cat "$tmp/killed.csv")"
  echo "netns: after the kill the query failed (exit $rc, ${killed_s}s) with:"
  cat "$tmp/killed.err"
fi
alive scheduler || fail "the scheduler died"
echo "netns: passed"
