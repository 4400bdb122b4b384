#!/usr/bin/env bash
# Server CPU per request over a Unix socket vs loopback TCP at pipeline
# depth 1, for shoal and redis-server (issue 25's performance bullet: the
# socket should cost fewer kernel microseconds per request).
#
#   benchmark/scripts/unix-vs-tcp.sh [rounds] [requests]
#
# Each server listens on a TCP port and a Unix socket at once (shoal on its
# native engine). For each round and command (get, set) it runs
#   redis-benchmark -c 50 -P 1 -t cmd -n requests -r 100000 -q  (-p port | -s socket)
# on both transports of both servers; the server order and, within a
# server, the transport order flip every round. Before and after each run
# it reads the server's utime and stime from /proc/PID/stat. Prints one line
# per run (cmd server transport req/s cpu_us/req sys_us/req) and a median
# table with each server's unix/tcp ratios. Needs redis-server,
# redis-benchmark, go. Run it on a quiet machine: the figures are ratios
# within one run, nothing else.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cmds=${CMDS:-get set}
cd "$(dirname "$0")/../.."
rounds=${1:-5}
requests=${2:-200000}
tick=$(getconf CLK_TCK)
tmp=$(mktemp -d)
go build -o "$tmp/shoal" ./cmd/shoal

"$tmp/shoal" --port 16421 --unixsocket "$tmp/shoal.sock" --loglevel warning & shoal_pid=$!
redis-server --port 16422 --unixsocket "$tmp/redis.sock" --save "" --appendonly no --loglevel warning & redis_pid=$!
trap 'kill $shoal_pid $redis_pid 2>/dev/null; rm -rf "$tmp"' EXIT
wait_ping 16421 16422
until redis-cli -s "$tmp/shoal.sock" ping >/dev/null 2>&1 && redis-cli -s "$tmp/redis.sock" ping >/dev/null 2>&1; do sleep 0.1; done

# sys_ticks PID prints the process's system CPU time so far, in clock ticks.
sys_ticks() { awk '{print $15}' "/proc/$1/stat"; }

run() { # server transport cmd
  local pid=$shoal_pid port=16421 sock=$tmp/shoal.sock where before sys_before after sys_after out rps
  if [ "$1" = redis ]; then pid=$redis_pid port=16422 sock=$tmp/redis.sock; fi
  if [ "$2" = unix ]; then where=(-s "$sock"); else where=(-p "$port"); fi
  before=$(cpu_ticks "$pid") sys_before=$(sys_ticks "$pid")
  out=$(redis-benchmark "${where[@]}" -c 50 -P 1 -n "$requests" -r 100000 -t "$3" -q 2>&1 | tr '\r' '\n' | grep -i "requests per second" | tail -1)
  after=$(cpu_ticks "$pid") sys_after=$(sys_ticks "$pid")
  rps=$(sed -E 's/.*: ([0-9.]+) requests per second.*/\1/' <<<"$out")
  awk -v s="$1" -v tr="$2" -v c="$3" -v t=$((after - before)) -v st=$((sys_after - sys_before)) -v hz="$tick" -v n="$requests" -v r="$rps" \
    'BEGIN { printf "%s %s %s %.0f %.2f %.2f\n", c, s, tr, r, t / hz * 1e6 / n, st / hz * 1e6 / n }' | tee -a "$tmp/runs"
}

# both SERVER ROUND runs the server's two transports, in the round's order.
both() { in_turn "$2" "run $1 tcp $3" "run $1 unix $3"; }

for ((round = 1; round <= rounds; round++)); do
  for cmd in $cmds; do
    in_turn $round "both shoal $round $cmd" "both redis $round $cmd"
  done
done

echo
echo "medians over $rounds rounds (redis-benchmark -c 50 -P 1 -n $requests -r 100000):"
printf '%-4s %-6s %-5s %12s %12s %12s\n' cmd server via req/s cpu_us/req sys_us/req
for cmd in $cmds; do
  for server in shoal redis; do
    for via in tcp unix; do
      med() { grep "^$cmd $server $via " "$tmp/runs" | awk "{print \$$1}" | median; }
      printf '%-4s %-6s %-5s %12.0f %12.2f %12.2f\n' "$cmd" "$server" "$via" "$(med 4)" "$(med 5)" "$(med 6)"
    done
  done
done
echo
echo "unix/tcp ratios of the medians (below 1: the socket is cheaper):"
printf '%-4s %-6s %10s %10s %10s\n' cmd server req/s cpu/req sys/req
for cmd in $cmds; do
  for server in shoal redis; do
    med() { grep "^$cmd $server $1 " "$tmp/runs" | awk "{print \$$2}" | median; }
    awk -v c="$cmd" -v s="$server" -v ur="$(med unix 4)" -v tr="$(med tcp 4)" -v uc="$(med unix 5)" -v tc="$(med tcp 5)" -v us="$(med unix 6)" -v ts="$(med tcp 6)" \
      'function ratio(a, b) { return b > 0 ? sprintf("%.2fx", a / b) : "-" }
       BEGIN { printf "%-4s %-6s %10s %10s %10s\n", c, s, ratio(ur, tr), ratio(uc, tc), ratio(us, ts) }'
  done
done
