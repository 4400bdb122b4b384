#!/usr/bin/env bash
# Acknowledged writes per second with appendfsync always: shoal against
# redis-server 7, both logging to the same disk, alternating run by run
# (issue 15's check).
#
#   benchmark/scripts/aof-always.sh [rounds] [requests] [dir]
#
# For each round and pipeline depth (16, 1) it runs
#   redis-benchmark -c 50 -P depth -t set -n requests -r 100000 -q
# against each server in turn (the order flips every round). Both servers
# answer a SET only after its record is written and fdatasync'ed (redis:
# in beforeSleep, one fsync per event-loop iteration; shoal: one fsync per
# writer round, grouping every loop's batches). dir must be on a real disk
# (not tmpfs, where fsync costs nothing); default: a directory under the
# repository. Prints one line per run, the median table, and each file's
# size, which shows both logged the same writes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
rounds=${1:-3}
requests=${2:-200000}
base=${3:-$PWD/.aof-bench}
mkdir -p "$base"
tmp=$(mktemp -d -p "$base")
mkdir -p "$tmp/shoal" "$tmp/redis"
go build -o "$tmp/shoal-bin" ./cmd/shoal

"$tmp/shoal-bin" --port 16411 --save "" --loglevel warning --appendonly yes --appendfsync always --dir "$tmp/shoal" & shoal_pid=$!
redis-server --port 16412 --save "" --appendonly yes --appendfsync always --dir "$tmp/redis" --loglevel warning & redis_pid=$!
trap 'kill $shoal_pid $redis_pid 2>/dev/null; sleep 0.5; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
wait_ping 16411 16412
# The machine is shared: make sure the ports answer with our two servers,
# both logging.
for pair in "16411 $shoal_pid" "16412 $redis_pid"; do
  set -- $pair
  pid=$(redis-cli -p "$1" info server | tr -d '\r' | awk -F: '$1 == "process_id" {print $2}')
  aof=$(redis-cli -p "$1" info persistence | tr -d '\r' | awk -F: '$1 == "aof_enabled" {print $2}')
  if [ "$pid" != "$2" ] || [ "$aof" != 1 ]; then
    echo "port $1 answers with pid $pid aof_enabled $aof, not our server $2" >&2
    exit 1
  fi
done
echo "shoal: $(redis-cli -p 16411 config get appendfsync | tr '\n' ' ')  redis: $(redis-cli -p 16412 config get appendfsync | tr '\n' ' ')"

run() { # server port depth
  local out rps
  out=$(redis-benchmark -p "$2" -c 50 -P "$3" -t set -n "$requests" -r 100000 -q 2>&1 | tr '\r' '\n' | grep -i "requests per second" | tail -1)
  rps=$(sed -E 's/.*: ([0-9.]+) requests per second.*/\1/' <<<"$out")
  echo "$1 P=$3 $rps" | tee -a "$tmp/runs"
}

for ((round = 1; round <= rounds; round++)); do
  for depth in 16 1; do
    in_turn $round "run shoal 16411 $depth" "run redis 16412 $depth"
  done
done

echo
echo "medians over $rounds rounds (redis-benchmark -t set -c 50 -n $requests -r 100000, appendfsync always):"
printf '%-4s %14s %14s %8s\n' P shoal_req/s redis_req/s ratio
for depth in 16 1; do
  med() { grep "^$1 P=$depth " "$tmp/runs" | awk '{print $3}' | median; }
  sr=$(med shoal); rr=$(med redis)
  awk -v d=$depth -v sr="$sr" -v rr="$rr" 'BEGIN { printf "%-4s %14.0f %14.0f %7.2fx\n", d, sr, rr, sr / rr }'
done
echo "file sizes: shoal $(stat -c %s "$tmp/shoal/appendonly.aof") bytes, redis $(du -sb "$tmp/redis" | cut -f1) bytes"
