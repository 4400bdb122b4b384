#!/usr/bin/env bash
# Server CPU per request of Shoal's HTTP front over HTTP/2 (h2c with prior knowledge)
# against Go's net/http HTTP/2 server with the same API over the same store.Store
# (benchmark/cmd/httpbaseline -engine nethttp-h2), driven by h2load (issue 25: goal 0.5x).
#
#   benchmark/scripts/h2-vs-nethttp.sh [rounds] [requests]
#
# Each round runs `h2load -c 50 -m 16 -n requests http://addr/kv/key` against each
# server, alternating which goes first, and reads the server's utime+stime from
# /proc/PID/stat before and after. Prints one line per run (name, requests/s, CPU us per
# request) and the medians with the ratio at the end, with the load average. Needs go,
# curl, h2load (apt-get install nghttp2-client).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
rounds=${1:-5}
requests=${2:-400000}
tick=$(getconf CLK_TCK)
tmp=$(mktemp -d)
go build -o "$tmp/shoal" ./cmd/shoal
(cd benchmark && go build -o "$tmp/httpbaseline" ./cmd/httpbaseline)

"$tmp/shoal" --port 16421 --http-port 16422 --save "" --loglevel warning & shoal_pid=$!
"$tmp/httpbaseline" -engine nethttp-h2 -addr 127.0.0.1:16423 & net_pid=$!
trap 'kill $shoal_pid $net_pid 2>/dev/null; rm -rf "$tmp"' EXIT
for port in 16422 16423; do
  until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do sleep 0.1; done
  curl -sf -X PUT --data-binary 'a value of 32 bytes, like a key.' "http://127.0.0.1:$port/kv/key" >/dev/null
done

run() { # name pid port
  local before after out rps done_
  before=$(cpu_ticks "$2")
  out=$(h2load -c 50 -m 16 -n "$requests" "http://127.0.0.1:$3/kv/key")
  after=$(cpu_ticks "$2")
  done_=$(awk '/^status codes:/ {print $3}' <<<"$out") # 2xx responses only
  rps=$(awk '/^finished in/ {gsub(",", ""); print $4}' <<<"$out")
  awk -v s="$1" -v t=$((after - before)) -v hz="$tick" -v n="$done_" -v r="$rps" \
    'BEGIN { printf "%s %.0f req/s %.3f us/req (%d 2xx)\n", s, r, t / hz * 1e6 / n, n }' | tee -a "$tmp/runs"
}
shoal() { run shoal-h2 "$shoal_pid" 16422; }
nethttp() { run net/http-h2 "$net_pid" 16423; }

uptime
for ((round = 0; round < rounds; round++)); do
  in_turn "$round" shoal nethttp
done
uptime
s=$(awk '$1 == "shoal-h2" {print $4}' "$tmp/runs" | median)
n=$(awk '$1 == "net/http-h2" {print $4}' "$tmp/runs" | median)
awk -v s="$s" -v n="$n" 'BEGIN { printf "median CPU us/request: shoal %s, net/http %s, ratio %.2f\n", s, n, s / n }'
