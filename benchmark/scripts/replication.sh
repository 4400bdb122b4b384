#!/usr/bin/env bash
# Replication side by side (issue 24's performance section): shoal against
# redis-server, the two alternating run by run.
#
#   benchmark/scripts/replication.sh [rounds] [keyspace] [requests]
#
# 1. SET with one replica attached: redis-benchmark -c 50 -P 1|16 -t set
#    -n $requests -r 100000 on each primary, whose replica follows over
#    loopback; the primary's and the replica's CPU per request
#    (utime+stime from /proc/PID/stat).
# 2. Full sync: both primaries are loaded with
#    redis-benchmark -t set -r $keyspace -n 2*$keyspace -P 16 -c 50 -d 16
#    (~86% of the keyspace distinct); then, each round, a fresh replica of
#    each runs REPLICAOF and the script times it until the link is up and no
#    sync is in progress, with the primary's CPU for it; the replica's DBSIZE
#    must equal the primary's.
# 3. BGSAVE under load: shoal-load -c 50 -rate 20000 -ratio 9:1 over the
#    loaded keyspace for 10 s, once quiet and once with a BGSAVE issued 2 s in;
#    p99.9 and max of each, and how long the BGSAVE took.
# Prints one line per run and a median table per part. Needs redis-server,
# redis-benchmark, redis-cli, go, jq. Defaults: 3 rounds, 5,000,000 keys,
# 300,000 requests.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
rounds=${1:-3}
keyspace=${2:-5000000}
requests=${3:-300000}
tick=$(getconf CLK_TCK)
tmp=$(mktemp -d)
go build -o "$tmp/shoal" ./cmd/shoal
go build -o "$tmp/shoal-load" ./cmd/shoal-load
mkdir -p "$tmp/s1" "$tmp/s2" "$tmp/r1" "$tmp/r2"

# Ports: shoal primary 16431, its replica 16432; redis primary 16433, its replica 16434.
pids=()
shoal_at() { # port dir [args...]
  "$tmp/shoal" --port "$1" --dir "$2" --save "" --repl-diskless-sync-delay 0 --loglevel warning "${@:3}" &
  pids+=($!)
  last_pid=$!
}
redis_at() {
  redis-server --port "$1" --dir "$2" --save "" --appendonly no --repl-diskless-sync-delay 0 --loglevel warning "${@:3}" &
  pids+=($!)
  last_pid=$!
}
trap 'kill ${pids[@]} 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
shoal_at 16431 "$tmp/s1"; shoal_primary=$last_pid
redis_at 16433 "$tmp/r1"; redis_primary=$last_pid
wait_ping 16431 16433

field() { redis-cli -p "$1" info "$2" | tr -d '\r' | awk -F: -v f="$3" '$1 == f {print $2}'; }
synced() { # replica port: the link is up and no sync in progress
  [ "$(field "$1" replication master_link_status)" = up ] && [ "$(field "$1" replication master_sync_in_progress)" = 0 ]
}
until_synced() { until synced "$1"; do sleep 0.05; done; }

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# --- 1. SET with one replica attached
shoal_at 16432 "$tmp/s2" --replicaof "127.0.0.1 16431"; shoal_replica=$last_pid
redis_at 16434 "$tmp/r2" --replicaof 127.0.0.1 16433; redis_replica=$last_pid
wait_ping 16432 16434
until_synced 16432; until_synced 16434

set_run() { # server primary_pid port replica_pid depth
  local b1 b2 a1 a2 out rps
  b1=$(cpu_ticks "$2"); b2=$(cpu_ticks "$4")
  out=$(redis-benchmark -p "$3" -c 50 -P "$5" -n "$requests" -r 100000 -q -t set 2>&1 | tr '\r' '\n' | grep -i "requests per second" | tail -1)
  a1=$(cpu_ticks "$2"); a2=$(cpu_ticks "$4")
  rps=$(sed -E 's/.*: ([0-9.]+) requests per second.*/\1/' <<<"$out")
  awk -v s="$1" -v d="$5" -v p=$((a1 - b1)) -v r=$((a2 - b2)) -v hz="$tick" -v n="$requests" -v q="$rps" \
    'BEGIN { printf "set %s P=%s %.0f %.2f %.2f\n", s, d, q, p / hz * 1e6 / n, r / hz * 1e6 / n }' | tee -a "$tmp/set"
}
for ((round = 1; round <= rounds; round++)); do
  for depth in 1 16; do
    in_turn $round "set_run shoal $shoal_primary 16431 $shoal_replica $depth" "set_run redis $redis_primary 16433 $redis_replica $depth"
  done
done
kill "$shoal_replica" "$redis_replica"
wait "$shoal_replica" "$redis_replica" 2>/dev/null || true

# --- 2. Full sync of the loaded keyspace
for port in 16431 16433; do
  redis-benchmark -p $port -t set -r "$keyspace" -n $((2 * keyspace)) -P 16 -c 50 -d 16 -q >/dev/null
done
keys_shoal=$(redis-cli -p 16431 dbsize); keys_redis=$(redis-cli -p 16433 dbsize)
echo "loaded: shoal $keys_shoal keys, redis $keys_redis keys"

sync_run() { # server primary_pid primary_port start_fn
  local start b a took keys
  rm -rf "$tmp/sync" && mkdir -p "$tmp/sync"
  $4 16435 "$tmp/sync"
  local rpid=$last_pid
  wait_ping 16435
  b=$(cpu_ticks "$2")
  start=$(date +%s.%N)
  redis-cli -p 16435 replicaof 127.0.0.1 "$3" >/dev/null
  sleep 0.2 # the link goes down first
  until_synced 16435
  took=$(echo "$(date +%s.%N) - $start" | bc)
  a=$(cpu_ticks "$2")
  keys=$(redis-cli -p 16435 dbsize)
  kill "$rpid"; wait "$rpid" 2>/dev/null || true
  if [ "$keys" != "$(redis-cli -p "$3" dbsize)" ]; then
    echo "$1: the replica has $keys keys, its primary $(redis-cli -p "$3" dbsize)" >&2
    exit 1
  fi
  awk -v s="$1" -v t="$took" -v c=$((a - b)) -v hz="$tick" -v k="$keys" \
    'BEGIN { printf "sync %s %.2f %.2f %d\n", s, t, c / hz, k }' | tee -a "$tmp/sync.txt"
}
for ((round = 1; round <= rounds; round++)); do
  in_turn $round "sync_run shoal $shoal_primary 16431 shoal_at" "sync_run redis $redis_primary 16433 redis_at"
done

# --- 3. BGSAVE under open-loop load
bgsave_run() { # server port with_bgsave
  local out took=""
  "$tmp/shoal-load" -addr "127.0.0.1:$2" -c 50 -rate 20000 -ratio 9:1 -keyspace "$keyspace" -value-size 16 \
    -d 10s -warmup 1s -progress 0 -json >"$tmp/load.json" 2>/dev/null &
  local lpid=$!
  if [ "$3" = yes ]; then
    sleep 3
    local start; start=$(date +%s.%N)
    redis-cli -p "$2" bgsave >/dev/null
    until [ "$(field "$2" persistence rdb_bgsave_in_progress)" = 0 ]; do sleep 0.05; done
    took=$(echo "$(date +%s.%N) - $start" | bc)
  fi
  wait $lpid
  jq -r --arg s "$1" --arg b "$3" --arg t "${took:-0}" \
    '"bgsave \($s) \($b) \(.latency_us.p99_9) \(.latency_us.max) \($t) \(.errors)"' "$tmp/load.json" | tee -a "$tmp/bgsave"
}
for ((round = 1; round <= rounds; round++)); do
  for with in no yes; do
    in_turn $round "bgsave_run shoal 16431 $with" "bgsave_run redis 16433 $with"
  done
done

echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "medians over $rounds rounds"
echo
echo "1. SET with one replica (redis-benchmark -c 50 -n $requests -r 100000):"
printf '%-4s %12s %12s %16s %16s %16s %16s %9s\n' P shoal_req/s redis_req/s shoal_prim_us redis_prim_us shoal_repl_us redis_repl_us prim_ratio
for depth in 1 16; do
  med() { grep "^set $1 P=$depth " "$tmp/set" | awk "{print \$$2}" | median; }
  awk -v d=$depth -v a="$(med shoal 4)" -v b="$(med redis 4)" -v c="$(med shoal 5)" -v e="$(med redis 5)" \
    -v f="$(med shoal 6)" -v g="$(med redis 6)" \
    'BEGIN { printf "%-4s %12.0f %12.0f %16.2f %16.2f %16.2f %16.2f %8.2fx\n", d, a, b, c, e, f, g, c / e }'
done
echo
echo "2. Full sync (shoal $keys_shoal keys, redis $keys_redis keys):"
printf '%-6s %10s %18s\n' server seconds primary_cpu_s
for s in shoal redis; do
  printf '%-6s %10s %18s\n' $s "$(grep "^sync $s " "$tmp/sync.txt" | awk '{print $3}' | median)" \
    "$(grep "^sync $s " "$tmp/sync.txt" | awk '{print $4}' | median)"
done
echo
echo "3. Open loop 20,000 req/s 9:1 for 10 s, quiet and with a BGSAVE 2 s in (latency in µs):"
printf '%-6s %-7s %10s %10s %12s\n' server bgsave p99.9 max bgsave_s
for s in shoal redis; do
  for with in no yes; do
    med() { grep "^bgsave $s $with " "$tmp/bgsave" | awk "{print \$$1}" | median; }
    printf '%-6s %-7s %10.0f %10.0f %12.2f\n' $s $with "$(med 4)" "$(med 5)" "$(med 6)"
  done
done
