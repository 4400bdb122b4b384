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
# against each binary and reads the server's utime+stime from /proc/PID/stat.
# Prints one line per run and a table of medians with after/before ratios.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
before=$1 after=$2 rounds=${3:-3} requests=${4:-400000}
tick=$(getconf CLK_TCK)
tmp=$(mktemp -d)
"$before" --port 16411 --loglevel warning & pid_before=$!
"$after" --port 16412 --loglevel warning & pid_after=$!
trap 'kill $pid_before $pid_after 2>/dev/null; rm -rf "$tmp"' EXIT
wait_ping 16411 16412
run() { # name pid port depth cmd
  local t0 t1
  t0=$(cpu_ticks "$2")
  redis-benchmark -p "$3" -c 50 -P "$4" -t "$5" -n "$requests" -r 100000 -q >/dev/null 2>&1
  t1=$(cpu_ticks "$2")
  awk -v s="$1" -v d="$4" -v c="$5" -v t=$((t1 - t0)) -v hz="$tick" -v n="$requests" \
    'BEGIN { printf "%s %s P=%s %.3f\n", c, s, d, t / hz * 1e6 / n }' | tee -a "$tmp/runs"
}
for ((round = 1; round <= rounds; round++)); do
  for depth in 1 16 128; do
    for cmd in get set; do
      in_turn $round "run before $pid_before 16411 $depth $cmd" "run after $pid_after 16412 $depth $cmd"
    done
  done
done
echo
echo "medians over $rounds rounds (µs of server CPU per request; redis-benchmark -c 50 -n $requests -r 100000):"
printf '%-4s %-5s %10s %10s %8s\n' cmd P before after ratio
for depth in 1 16 128; do
  for cmd in get set; do
    b=$(awk -v c="$cmd" -v d="P=$depth" '$1 == c && $2 == "before" && $3 == d {print $4}' "$tmp/runs" | median)
    a=$(awk -v c="$cmd" -v d="P=$depth" '$1 == c && $2 == "after" && $3 == d {print $4}' "$tmp/runs" | median)
    awk -v c="$cmd" -v d="$depth" -v b="$b" -v a="$a" 'BEGIN { printf "%-4s %-5s %10.3f %10.3f %7.2fx\n", c, d, b, a, a / b }'
  done
done
