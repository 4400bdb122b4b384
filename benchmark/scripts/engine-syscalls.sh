#!/usr/bin/env bash
# What one request costs shoal on each engine, in system calls and context
# switches: shoal --engine native and shoal --engine gnet (the same binary
# and kv handler), the two alternating run by run.
#
#   benchmark/scripts/engine-syscalls.sh [rounds] [seconds]
#
# Each server is loaded with 100,000 keys; then for each pipeline depth P
# (1, 16, 128) shoal-load runs GET over 50 connections, and over a window of
# [seconds] inside the run `perf stat -p PID` counts the server's system
# calls by kind (tracepoints) and its context switches, /proc/PID/stat its
# CPU time, and INFO's total_commands_processed the requests answered. Prints
# one line per run and the medians per request. Needs perf, redis-cli, go.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
rounds=${1:-3}
secs=${2:-3}
tick=$(getconf CLK_TCK)
tmp=$(mktemp -d)
go build -o "$tmp/shoal" ./cmd/shoal
go build -o "$tmp/shoal-load" ./cmd/shoal-load

"$tmp/shoal" --port 16411 --save "" --loglevel warning --engine native & native_pid=$!
"$tmp/shoal" --port 16412 --save "" --loglevel warning --engine gnet & gnet_pid=$!
trap 'kill $native_pid $gnet_pid 2>/dev/null; rm -rf "$tmp"' EXIT
for port in 16411 16412; do
  wait_ping $port
  "$tmp/shoal-load" -addr 127.0.0.1:$port -t set -n 200000 -c 50 -P 64 -keyspace 100000 -progress 0 >/dev/null 2>&1
done

events=raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep,context-switches
commands() { redis-cli -p "$1" info stats | tr -d '\r' | awk -F: '/^total_commands_processed/ {print $2}'; }

run() { # engine pid port depth
  "$tmp/shoal-load" -addr 127.0.0.1:"$3" -t get -c 50 -P "$4" -keyspace 100000 -warmup 500ms -d $((secs + 2))s -progress 0 >/dev/null 2>&1 &
  local load=$!
  sleep 1
  # The window is perf's workload, so the counters and the samples of
  # commands and CPU cover the same interval (perf takes a while to start).
  export -f commands cpu_ticks
  perf stat -x, -e "$events" -p "$2" -o "$tmp/stat" -- bash -c \
    "commands $3 >$tmp/c0; cpu_ticks $2 >$tmp/t0; sleep $secs; commands $3 >$tmp/c1; cpu_ticks $2 >$tmp/t1" 2>/dev/null
  local c0 t0 c1 t1
  c0=$(<"$tmp/c0") t0=$(<"$tmp/t0") c1=$(<"$tmp/c1") t1=$(<"$tmp/t1")
  wait $load
  # INFO's own command is counted too; one in millions.
  awk -F, -v e="$1" -v d="$4" -v n=$((c1 - c0)) -v t=$((t1 - t0)) -v hz="$tick" '
    $3 ~ /sys_enter$/ { all = $1 } $3 ~ /epoll_p?wait/ { ep += $1 } $3 ~ /enter_read$/ { rd = $1 }
    $3 ~ /enter_writev?$/ { wr += $1 } $3 ~ /futex/ { fx = $1 } $3 ~ /nanosleep/ { ns = $1 } $3 ~ /context-switches/ { cs = $1 }
    END { printf "%s P=%s %d %.2f %.3f %.3f %.3f %.3f %.3f %.3f %.3f\n", e, d, n, t / hz * 1e6 / n,
          all / n, ep / n, rd / n, wr / n, fx / n, ns / n, cs / n }' "$tmp/stat" | tee -a "$tmp/runs"
}

echo "engine P requests cpu_us/req syscalls/req epoll_wait/req read/req write/req futex/req nanosleep/req ctxsw/req"
for ((round = 1; round <= rounds; round++)); do
  for depth in 1 16 128; do
    in_turn $round "run native $native_pid 16411 $depth" "run gnet $gnet_pid 16412 $depth"
  done
done

echo
echo "medians over $rounds rounds (GET, 50 connections, ${secs}s windows), per request:"
printf '%-7s %-5s %10s %10s %10s %10s %10s %10s %10s %10s\n' engine P cpu_us syscalls epoll_wait read write futex nanosleep ctxsw
for depth in 1 16 128; do
  for e in native gnet; do
    line="$e P=$depth"
    for col in 4 5 6 7 8 9 10 11; do
      line+=" $(grep "^$e P=$depth " "$tmp/runs" | awk "{print \$$col}" | median)"
    done
    awk -v l="$line" 'BEGIN { n = split(l, f, " "); printf "%-7s %-5s", f[1], substr(f[2], 3); for (i = 3; i <= n; i++) printf " %10s", f[i]; printf "\n" }'
  done
done
