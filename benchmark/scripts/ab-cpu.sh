#!/usr/bin/env bash
# Server CPU per request of two shoal binaries under redis-benchmark, the two
# alternating run by run (A B, then B A), for a before/after check of a change:
#
#   benchmark/scripts/ab-cpu.sh BEFORE_BIN AFTER_BIN [rounds] [requests]
#
# e.g. build each tree's ./cmd/shoal with `go build -o /tmp/shoal-before` in a
# worktree of the old commit and `go build -o /tmp/shoal-after` here. For each
# round, pipeline depth (1, 16, 128) and command (get, set) it runs
#   redis-benchmark -c 50 -P depth -t cmd -n requests -r 100000 -q
# against each binary and reads the server's utime and stime from /proc/PID/stat.
# KEYSPACE=n in the environment replaces -r 100000 with -r n and first fills
# each server with 2n SETs of those keys (-P 16), so GETs hit from the start
# (a keyspace larger than the CPU caches shows the lookup's cache misses).
# Prints one line per run and a table of medians with after/before ratios, of
# the total and of the user and system parts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
before=$1 after=$2 rounds=${3:-3} requests=${4:-400000}
tick=$(getconf CLK_TCK)
tmp=$(mktemp -d)
"$before" --port 16411 --loglevel warning & pid_before=$!
"$after" --port 16412 --loglevel warning & pid_after=$!
trap 'kill $pid_before $pid_after 2>/dev/null; rm -rf "$tmp"' EXIT
wait_ping 16411 16412
keyspace=${KEYSPACE:-100000}
if [[ -n ${KEYSPACE:-} ]]; then
  for port in 16411 16412; do
    redis-benchmark -p $port -c 50 -P 16 -t set -n $((2 * keyspace)) -r "$keyspace" -q >/dev/null 2>&1
  done
fi
run() { # name pid port depth cmd
  local u0 s0 u1 s1
  read -r u0 s0 < <(cpu_user_sys "$2")
  redis-benchmark -p "$3" -c 50 -P "$4" -t "$5" -n "$requests" -r "$keyspace" -q >/dev/null 2>&1
  read -r u1 s1 < <(cpu_user_sys "$2")
  awk -v s="$1" -v d="$4" -v c="$5" -v u=$((u1 - u0)) -v y=$((s1 - s0)) -v hz="$tick" -v n="$requests" \
    'BEGIN { k = 1e6 / hz / n; printf "%s %s P=%s %.3f %.3f %.3f\n", c, s, d, (u + y) * k, u * k, y * k }' | tee -a "$tmp/runs"
}
for ((round = 1; round <= rounds; round++)); do
  for depth in 1 16 128; do
    for cmd in get set; do
      in_turn $round "run before $pid_before 16411 $depth $cmd" "run after $pid_after 16412 $depth $cmd"
    done
  done
done
echo
echo "medians over $rounds rounds (µs of server CPU per request, total = user + system; redis-benchmark -c 50 -n $requests -r $keyspace):"
printf '%-4s %-5s %10s %10s %8s %9s %9s %8s %9s %9s %8s\n' cmd P before after ratio user-b user-a ratio sys-b sys-a ratio
col() { awk -v c="$1" -v s="$2" -v d="P=$3" -v f="$4" '$1 == c && $2 == s && $3 == d {print $f}' "$tmp/runs" | median; }
for depth in 1 16 128; do
  for cmd in get set; do
    line="$cmd $depth"
    for f in 4 5 6; do
      line="$line $(col "$cmd" before "$depth" $f) $(col "$cmd" after "$depth" $f)"
    done
    awk -v l="$line" 'BEGIN { split(l, a, " ")
      printf "%-4s %-5s %10.3f %10.3f %7.2fx %9.3f %9.3f %7.2fx %9.3f %9.3f %7.2fx\n", a[1], a[2],
        a[3], a[4], a[4] / a[3], a[5], a[6], a[6] / a[5], a[7], a[8], a[8] / a[7] }'
  done
done
