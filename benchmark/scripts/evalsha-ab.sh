#!/usr/bin/env bash
# EVALSHA, two shoal binaries and redis-server 7 side by side, the order
# rotating run by run: the before/after check of a change to scripting
# (issues 23 and 27: server CPU per call at most redis-server's).
#
#   benchmark/scripts/evalsha-ab.sh BEFORE_BIN AFTER_BIN [rounds] [requests]
#
# Build the binaries with `go build -o /tmp/shoal-before ./cmd/shoal` from
# the old commit (e.g. `git archive OLD | tar -x -C /tmp/old`) and
# `go build -o /tmp/shoal-after ./cmd/shoal` here. SCRIPTS picks the
# scripts (default all three):
#   limiter  INCR then EXPIRE of one key, a rate limiter (issue 23's)
#   set      SET KEYS[1] ARGV[1]
#   getincr  GET then INCR of one key
# For each round, pipeline depth (1, 16) and script it runs
#   redis-benchmark -c 50 -P depth -n requests -r 100000 -q \
#     evalsha SHA 1 key:__rand_int__ ARG
# against the three servers, the order rotating every round, and reads each
# server's utime and stime from /proc/PID/stat before and after. Prints one
# line per run (calls/s, CPU µs per call, of which user) and the medians with
# after/before and after/redis ratios. Record `uptime` with the figures: on
# a shared machine single runs swing 2x; only ratios of medians mean much.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
before=$1 after=$2 rounds=${3:-3} requests=${4:-200000}
scripts=${SCRIPTS:-limiter set getincr}
tick=$(getconf CLK_TCK)
tmp=$(mktemp -d)
declare -A body=(
  [limiter]="local n = redis.call('INCR', KEYS[1]) redis.call('EXPIRE', KEYS[1], ARGV[1]) return n"
  [set]="return redis.call('SET', KEYS[1], ARGV[1])"
  [getincr]="local v = redis.call('GET', KEYS[1]) redis.call('INCR', KEYS[1]) return v"
)
declare -A arg=([limiter]=60 [set]=value [getincr]=1)
pb=16431 pa=16432 pr=16433
(cd "$tmp" && exec "$before" --port $pb --save "" --loglevel warning >before.log 2>&1) & pid_before=$!
(cd "$tmp" && exec "$after" --port $pa --save "" --loglevel warning >after.log 2>&1) & pid_after=$!
(cd "$tmp" && exec redis-server --port $pr --save "" --appendonly no --loglevel warning >redis.log 2>&1) & pid_redis=$!
trap 'kill $pid_before $pid_after $pid_redis 2>/dev/null; rm -rf "$tmp"' EXIT
wait_ping $pb $pa $pr
for pair in "$pb $pid_before" "$pa $pid_after" "$pr $pid_redis"; do
  set -- $pair
  pid=$(redis-cli -p "$1" info server | tr -d '\r' | awk -F: '$1 == "process_id" {print $2}')
  if [ "$pid" != "$2" ]; then
    echo "port $1 answers with pid $pid, not our server $2" >&2
    exit 1
  fi
done
declare -A sha
for s in $scripts; do
  for port in $pb $pa $pr; do
    got=$(redis-cli -p $port script load "${body[$s]}")
    if [ -n "${sha[$s]:-}" ] && [ "${sha[$s]}" != "$got" ]; then
      echo "the servers disagree on the SHA1 of $s" >&2
      exit 1
    fi
    sha[$s]=$got
  done
done

run() { # name pid port depth script
  local u0 s0 u1 s1 out rps
  read -r u0 s0 < <(cpu_user_sys "$2")
  out=$(redis-benchmark -p "$3" -c 50 -P "$4" -n "$requests" -r 100000 -q \
    evalsha "${sha[$5]}" 1 "$5:__rand_int__" "${arg[$5]}" 2>&1 | tr '\r' '\n' | grep -i "requests per second" | tail -1)
  read -r u1 s1 < <(cpu_user_sys "$2")
  rps=$(sed -E 's/.*: ([0-9.]+) requests per second.*/\1/' <<<"$out")
  awk -v name="$1" -v d="$4" -v s="$5" -v u=$((u1 - u0)) -v k=$((s1 - s0)) -v hz="$tick" -v n="$requests" -v r="$rps" \
    'BEGIN { printf "%s %s P=%s %.0f %.2f %.2f\n", s, name, d, r, (u + k) / hz * 1e6 / n, u / hz * 1e6 / n }' | tee -a "$tmp/runs"
}

servers=("before $pid_before $pb" "after $pid_after $pa" "redis $pid_redis $pr")
for ((round = 1; round <= rounds; round++)); do
  for depth in 1 16; do
    for s in $scripts; do
      for ((i = 0; i < 3; i++)); do
        run ${servers[(i + round) % 3]} $depth $s
      done
    done
  done
done

echo
echo "medians over $rounds rounds (redis-benchmark -c 50 -n $requests -r 100000, EVALSHA; CPU µs per call, user in brackets):"
printf '%-8s %-3s %12s %12s %12s %16s %16s %16s %9s %9s\n' script P before/s after/s redis/s before_cpu after_cpu redis_cpu aft/bef aft/redis
for depth in 1 16; do
  for s in $scripts; do
    med() { grep "^$s $1 P=$depth " "$tmp/runs" | awk "{print \$$2}" | median; }
    awk -v s=$s -v d=$depth -v rb="$(med before 4)" -v ra="$(med after 4)" -v rr="$(med redis 4)" \
      -v cb="$(med before 5)" -v ca="$(med after 5)" -v cr="$(med redis 5)" \
      -v ub="$(med before 6)" -v ua="$(med after 6)" -v ur="$(med redis 6)" \
      'BEGIN { printf "%-8s %-3s %12.0f %12.0f %12.0f %9.2f (%4.2f) %9.2f (%4.2f) %9.2f (%4.2f) %8.2fx %8.2fx\n",
        s, d, rb, ra, rr, cb, ub, ca, ua, cr, ur, ca / cb, ca / cr }'
  done
done
