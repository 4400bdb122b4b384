#!/usr/bin/env bash
# Memory and tail latency at ~7M small keys, shoal against redis-server (issue 14).
#
#   benchmark/scripts/memory-10m.sh [out-dir] [rounds] [requests]
#
# Env: DURATION (default 12s) is each latency run's measured time; SHOAL_BIN=path runs that shoal binary instead of building ./cmd/shoal (to measure
# an older commit: git archive <rev> | tar -x -C dir && go build -o bin ./cmd/shoal).
#
# 1. Starts both servers (shoal with GODEBUG=gctrace=1) and loads each with
#      redis-benchmark -t set -r 10000000 -n $requests -d 8 -P 16 -c 50
#    (13M SETs over a 10M keyspace leave ~7.27M distinct keys).
# 2. Reads DBSIZE, INFO used_memory and VmRSS from /proc/PID/status.
# 3. Runs $rounds rounds of open-loop latency, the server order flipping every round:
#      shoal-load -c 50 -rate 20000 -ratio 9:1 -keyspace 10000000 -value-size 8 -d 12s -warmup 2s
#    and counts shoal's GCs and their stop-the-world pauses (gctrace) during each run.
# 4. Writes $out/results.md (table + commands) and the raw outputs next to it.
# Needs redis-server, redis-benchmark, redis-cli, go, jq.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-benchmark/results/memory}
rounds=${2:-2}
requests=${3:-13000000}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
if [ -z "${SHOAL_BIN:-}" ]; then
  go build -o "$tmp/shoal" ./cmd/shoal
  SHOAL_BIN=$tmp/shoal
fi
go build -o "$tmp/shoal-load" ./cmd/shoal-load
shoal_port=16411 redis_port=16412

GODEBUG=gctrace=1 "$SHOAL_BIN" --port $shoal_port --save "" --loglevel warning 2>"$out/shoal.gctrace.txt" & shoal_pid=$!
redis-server --port $redis_port --save "" --appendonly no --loglevel warning >/dev/null & redis_pid=$!
# Wait for both to exit, so that a following run finds its ports free.
trap 'kill $shoal_pid $redis_pid 2>/dev/null; wait $shoal_pid $redis_pid 2>/dev/null; rm -rf "$tmp"' EXIT
for pid_port in $shoal_pid:$shoal_port $redis_pid:$redis_port; do
  until redis-cli -p ${pid_port#*:} ping >/dev/null 2>&1; do
    kill -0 ${pid_port%:*} 2>/dev/null || { echo "server on port ${pid_port#*:} exited (port in use?)" >&2; exit 1; }
    sleep 0.1
  done
  # The server that answers must be the one just started, not a leftover on the port.
  if [ "$(redis-cli -p ${pid_port#*:} info server | tr -d '\r' | awk -F: '$1 == "process_id" {print $2}')" != "${pid_port%:*}" ]; then
    echo "port ${pid_port#*:} is answered by another process" >&2
    exit 1
  fi
done

port_of() { if [ "$1" = shoal ]; then echo $shoal_port; else echo $redis_port; fi; }
pid_of() { if [ "$1" = shoal ]; then echo $shoal_pid; else echo $redis_pid; fi; }
rss_mb() { awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
info() { redis-cli -p "$1" info memory | tr -d '\r' | awk -F: -v k="$2" '$1 == k {print $2}'; }

memory() { # server label
  local port pid keys used rss
  port=$(port_of "$1") pid=$(pid_of "$1")
  keys=$(redis-cli -p "$port" dbsize)
  used=$(info "$port" used_memory)
  rss=$(rss_mb "$pid")
  echo "$2 $1 keys=$keys used_memory=$used rss_mb=$rss" | tee -a "$out/memory.txt"
}

: >"$out/memory.txt"
: >"$out/latency.txt"
for s in redis shoal; do
  echo "loading $s ..." >&2
  redis-benchmark -p "$(port_of $s)" -t set -r 10000000 -n "$requests" -d 8 -P 16 -c 50 -q \
    2>&1 | tr '\r' '\n' | grep -i "requests per second" | tail -1 | sed "s/^/$s load: /" >>"$out/memory.txt"
done
sleep 2
for s in redis shoal; do memory $s loaded; done

gc_lines() { wc -l <"$out/shoal.gctrace.txt"; }
for ((round = 1; round <= rounds; round++)); do
  if ((round % 2)); then order="redis shoal"; else order="shoal redis"; fi
  for s in $order; do
    before=$(gc_lines)
    "$tmp/shoal-load" -addr "127.0.0.1:$(port_of $s)" -c 50 -rate 20000 -ratio 9:1 \
      -keyspace 10000000 -value-size 8 -d "${DURATION:-12s}" -warmup 2s -progress 0 -json \
      >"$out/latency-$s-$round.json" 2>/dev/null
    gc="-"
    if [ $s = shoal ]; then
      # gctrace: "gc N @t s P%: a+b+c ms clock, ..." — a and c are the stop-the-world phases.
      gc=$(tail -n +$((before + 1)) "$out/shoal.gctrace.txt" | awk '/^gc / {
          split($5, p, "+"); n++; s = p[1] + p[3]; if (s > m) m = s }
        END { printf "gcs=%d max_stw_ms=%.3f", n, m }')
    fi
    jq -r --arg s $s --arg r $round --arg gc "$gc" \
      '"round=\($r) \($s) rps=\(.throughput_rps|floor) p50=\(.latency_us.p50) p99=\(.latency_us.p99) p99.9=\(.latency_us.p99_9) max=\(.latency_us.max) errors=\(.errors) \($gc)"' \
      "$out/latency-$s-$round.json" | tee -a "$out/latency.txt"
  done
done
for s in redis shoal; do memory $s after-latency; done
# Every GC of the whole run (load included): count, longest stop-the-world pause (the
# first and third clock phases), longest concurrent mark, largest heap goal.
awk '/^gc / { split($5, p, "+"); n++; s = p[1] + p[3]; if (s > m) m = s; if (p[2] + 0 > mk) mk = p[2] + 0
    for (i = 1; i < NF; i++) if ($(i + 1) == "goal," && $(i - 1) + 0 > g) g = $(i - 1) + 0 }
  END { printf "shoal GCs, whole run: gcs=%d max_stw_ms=%.2f max_mark_ms=%.1f max_heap_goal_mb=%d\n", n, m, mk, g }' \
  "$out/shoal.gctrace.txt" | tee -a "$out/memory.txt"

{
  echo "# Memory and latency at ~7M keys: shoal vs redis-server"
  echo
  echo "$(date -u +%F) · $(nproc) CPUs · $(uname -r) · $(redis-server --version | awk '{print $3}') · $(go version | awk '{print $3}') · load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "Command: \`benchmark/scripts/memory-10m.sh $*\`"
  echo
  echo '```'
  cat "$out/memory.txt"
  echo
  cat "$out/latency.txt"
  echo '```'
} >"$out/results.md"
echo "wrote $out/results.md" >&2
