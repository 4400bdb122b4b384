#!/usr/bin/env bash
# Server CPU per request and throughput of shoal and redis-server under
# redis-benchmark, the two servers alternating run by run (issue 5's check).
#
#   benchmark/scripts/redis-benchmark-cpu.sh [rounds] [requests]
#
# For each round, pipeline depth (1, 16) and command (get, set) it runs
#   redis-benchmark -c 50 -P depth -t cmd -n requests -r 100000 -q
# against each server in turn (the order flips every round) and reads the
# server's utime+stime from /proc/PID/stat before and after. Prints one line
# per run and a median table at the end. Needs redis-server, redis-benchmark, go.
#
# CMDS picks the commands (default "get set"); "evalsha" runs a rate limiter's
# script, INCR then EXPIRE of one key, loaded with SCRIPT LOAD on both servers:
#   CMDS=evalsha benchmark/scripts/redis-benchmark-cpu.sh 3 200000
# Issue 26's rows: xadd (XADD to random streams), setbit and bitcount (random
# bitmaps of 513 bytes), pfadd and pfcount (one HyperLogLog), geoadd (to one
# geo set) and geosearch (the 10 nearest within 20 km of 500 points about 50 km
# around Palermo, written first); run the writes before the reads that read
# what they wrote:
#   CMDS="xadd setbit bitcount pfadd pfcount geoadd geosearch" benchmark/scripts/redis-benchmark-cpu.sh 3 200000
#
# NOTIFY sets notify-keyspace-events on both servers and keeps one
# PSUBSCRIBE __key*__:* subscriber on each reading every event:
#   NOTIFY=KEA CMDS=set benchmark/scripts/redis-benchmark-cpu.sh 3 300000
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cmds=${CMDS:-get set}
limiter="local n = redis.call('INCR', KEYS[1]) redis.call('EXPIRE', KEYS[1], ARGV[1]) return n"
cd "$(dirname "$0")/../.."
rounds=${1:-3}
requests=${2:-200000}
tick=$(getconf CLK_TCK)
tmp=$(mktemp -d)
go build -o "$tmp/shoal" ./cmd/shoal

"$tmp/shoal" --port 16401 --save "" --loglevel warning & shoal_pid=$!
redis-server --port 16402 --save "" --appendonly no --loglevel warning & redis_pid=$!
trap 'kill $shoal_pid $redis_pid $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
wait_ping 16401 16402

if [ -n "${NOTIFY:-}" ]; then
  for port in 16401 16402; do
    redis-cli -p $port config set notify-keyspace-events "$NOTIFY" >/dev/null
    redis-cli -p $port psubscribe '__key*__:*' >/dev/null &
  done
fi
sha=$(redis-cli -p 16401 script load "$limiter")
if [ "$(redis-cli -p 16402 script load "$limiter")" != "$sha" ]; then
  echo "the servers disagree on the script's SHA1" >&2
  exit 1
fi

if [[ " $cmds " == *" geosearch "* ]]; then
  pts=()
  for ((i = 0; i < 500; i++)); do
    pts+=("$(awk -v i=$i 'BEGIN { printf "%.2f %.2f", 13.0 + (i % 25) * 0.03, 37.9 + int(i / 25) * 0.02 }')" "p$i")
  done
  for port in 16401 16402; do
    # shellcheck disable=SC2086
    redis-cli -p $port GEOADD geo ${pts[*]} >/dev/null
  done
fi

run() { # server pid port depth cmd
  local before after out rps
  before=$(cpu_ticks "$2")
  case "$5" in
  evalsha) set -- "$@" evalsha "$sha" 1 "rl:__rand_int__" 60 ;;
  xadd) set -- "$@" XADD "st:__rand_int__" '*' field value ;;
  setbit) set -- "$@" SETBIT "bm:__rand_int__" 4097 1 ;;
  bitcount) set -- "$@" BITCOUNT "bm:__rand_int__" ;;
  pfadd) set -- "$@" PFADD hll "el:__rand_int__" ;;
  pfcount) set -- "$@" PFCOUNT hll ;;
  geoadd) set -- "$@" GEOADD geow 13.361389 38.115556 "m:__rand_int__" ;;
  geosearch) set -- "$@" GEOSEARCH geo FROMLONLAT 13.3 38.1 BYRADIUS 20 km ASC COUNT 10 ;;
  *) set -- "$@" -t "$5" ;;
  esac
  out=$(redis-benchmark -p "$3" -c 50 -P "$4" -n "$requests" -r 100000 -q "${@:6}" 2>&1 | tr '\r' '\n' | grep -i "requests per second" | tail -1)
  after=$(cpu_ticks "$2")
  rps=$(sed -E 's/.*: ([0-9.]+) requests per second.*/\1/' <<<"$out")
  awk -v s="$1" -v d="$4" -v c="$5" -v t=$((after - before)) -v hz="$tick" -v n="$requests" -v r="$rps" \
    'BEGIN { printf "%s %s P=%s %.0f %.2f\n", c, s, d, r, t / hz * 1e6 / n }' | tee -a "$tmp/runs"
}

for ((round = 1; round <= rounds; round++)); do
  for depth in 1 16; do
    for cmd in $cmds; do
      in_turn $round "run shoal $shoal_pid 16401 $depth $cmd" "run redis $redis_pid 16402 $depth $cmd"
    done
  done
done

echo
echo "medians over $rounds rounds (redis-benchmark -c 50 -n $requests -r 100000):"
printf '%-6s %-4s %14s %14s %14s %14s %8s\n' cmd P shoal_req/s redis_req/s shoal_cpu_us redis_cpu_us cpu_ratio
for depth in 1 16; do
  for cmd in $cmds; do
    med() { grep "^$cmd $1 P=$depth " "$tmp/runs" | awk "{print \$$2}" | median; }
    sr=$(med shoal 4); rr=$(med redis 4); sc=$(med shoal 5); rc=$(med redis 5)
    awk -v c=$cmd -v d=$depth -v sr=$sr -v rr=$rr -v sc=$sc -v rc=$rc \
      'BEGIN { printf "%-6s %-4s %14.0f %14.0f %14.2f %14.2f %7.2fx\n", c, d, sr, rr, sc, rc, sc / rc }'
  done
done
