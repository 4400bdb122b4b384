#!/usr/bin/env bash
# Server CPU per request and throughput of Shoal's HTTP front against fasthttp and
# net/http serving the same API over the same store.Store (benchmark/cmd/httpbaseline),
# and of Shoal's frame front against its RESP port, all driven by shoal-load (issue 11).
#
#   benchmark/scripts/http-vs-fasthttp.sh [rounds] [seconds]
#
# For each round and pipeline depth (1, 16) it runs
#   shoal-load -proto P -c 50 -P depth -t get -d seconds
# against each server in turn (the order rotates every round) and reads the server's
# utime+stime from /proc/PID/stat before and after; then the same GETs from wrk with
# pipeline.lua (HTTP servers only; skipped without wrk). Prints one line per run and a
# median table with the ratios at the end. Needs go, curl, python3; wrk optional.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
rounds=${1:-3}
secs=${2:-3}
keys=1000
tick=$(getconf CLK_TCK)
tmp=$(mktemp -d)
go build -o "$tmp/shoal" ./cmd/shoal
go build -o "$tmp/shoal-load" ./cmd/shoal-load
go build -o "$tmp/httpbaseline" ./benchmark/cmd/httpbaseline

"$tmp/shoal" --port 16411 --http-port 16412 --frame-port 16413 --save "" --loglevel warning & shoal_pid=$!
"$tmp/httpbaseline" -engine fasthttp -addr 127.0.0.1:16414 & fast_pid=$!
"$tmp/httpbaseline" -engine nethttp -addr 127.0.0.1:16415 & net_pid=$!
# RUNS_OUT=file keeps the per-run lines (for benchmark/cmd/httpchart).
trap 'kill $shoal_pid $fast_pid $net_pid 2>/dev/null; [[ -n "${RUNS_OUT:-}" && -f "$tmp/runs" ]] && cp "$tmp/runs" "$RUNS_OUT"; rm -rf "$tmp"' EXIT
for port in 16412 16414 16415; do
  until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do sleep 0.1; done
done
until "$tmp/shoal-load" -proto frame -addr 127.0.0.1:16413 -c 1 -n 1 -t ping -progress 0 >/dev/null 2>&1; do sleep 0.1; done

# name pid proto addr
servers=("shoal-http $shoal_pid http 127.0.0.1:16412" "fasthttp $fast_pid http 127.0.0.1:16414"
  "net/http $net_pid http 127.0.0.1:16415" "shoal-frame $shoal_pid frame 127.0.0.1:16413"
  "shoal-resp $shoal_pid resp 127.0.0.1:16411")
for s in "${servers[@]}"; do # the same keys everywhere (RESP and frames share shoal's store)
  read -r name _ proto addr <<<"$s"
  [[ $name == shoal-frame || $name == shoal-resp ]] && continue
  "$tmp/shoal-load" -proto "$proto" -addr "$addr" -c 10 -P 16 -t set -n $((keys * 20)) -keyspace $keys -progress 0 >/dev/null
done


run() { # name pid proto addr depth
  local before after json n rps errs
  before=$(cpu_ticks "$2")
  json=$("$tmp/shoal-load" -proto "$3" -addr "$4" -c 50 -P "$5" -t get -keyspace $keys -d "${secs}s" -progress 0 -json 2>/dev/null)
  after=$(cpu_ticks "$2")
  n=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])' <<<"$json")
  rps=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["throughput_rps"])' <<<"$json")
  errs=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["errors"])' <<<"$json")
  awk -v s="$1" -v d="$5" -v t=$((after - before)) -v hz="$tick" -v n="$n" -v r="$rps" -v e="$errs" \
    'BEGIN { printf "%s P=%s %.0f %.3f errors=%s\n", s, d, r, t / hz * 1e6 / n, e }' | tee -a "$tmp/runs"
}

run_wrk() { # name pid addr depth
  local before after out n rps errs
  before=$(cpu_ticks "$2")
  out=$(wrk -t1 -c50 -d"${secs}s" -s benchmark/scripts/pipeline.lua "http://$3" -- "$4" $keys)
  after=$(cpu_ticks "$2")
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  errs=$(awk '/Non-2xx/ {e += $NF} /Socket errors/ {gsub(",", ""); e += $4 + $6 + $8 + $10} END {print e + 0}' <<<"$out")
  awk -v s="wrk:$1" -v d="$4" -v t=$((after - before)) -v hz="$tick" -v n="$n" -v r="$rps" -v e="$errs" \
    'BEGIN { printf "%s P=%s %.0f %.3f errors=%s\n", s, d, r, t / hz * 1e6 / n, e }' | tee -a "$tmp/runs"
}

for ((round = 0; round < rounds; round++)); do
  for depth in 1 16; do
    for ((i = 0; i < ${#servers[@]}; i++)); do
      read -r name pid proto addr <<<"${servers[$(((i + round) % ${#servers[@]}))]}"
      run "$name" "$pid" "$proto" "$addr" "$depth"
    done
    if command -v wrk >/dev/null; then
      for ((i = 0; i < 3; i++)); do
        read -r name pid proto addr <<<"${servers[$(((i + round) % 3))]}"
        run_wrk "$name" "$pid" "$addr" "$depth"
      done
    fi
  done
done

echo
echo "medians over $rounds rounds, shoal-load -c 50 -t get -d ${secs}s (server CPU µs per request; ratio to fasthttp, frame to RESP)"
python3 - "$tmp/runs" <<'PY'
import collections, statistics, sys
rps, cpu = collections.defaultdict(list), collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, depth, r, c, errs = line.split()
    rps[(name, depth)].append(float(r)); cpu[(name, depth)].append(float(c))
    if errs != "errors=0":
        print(f"ERRORS in run: {line.strip()}")
print("| server | pipeline | requests/s | CPU µs/request | CPU ratio |")
print("|---|---|---|---|---|")
for depth in ("P=1", "P=16"):
    for name in ("shoal-http", "fasthttp", "net/http", "shoal-frame", "shoal-resp", "wrk:shoal-http", "wrk:fasthttp", "wrk:net/http"):
        k = (name, depth)
        if k not in cpu:
            continue
        c = statistics.median(cpu[k])
        peer = {"shoal-frame": "shoal-resp", "wrk:shoal-http": "wrk:fasthttp", "wrk:net/http": "wrk:fasthttp"}.get(name, "fasthttp")
        ratio = c / statistics.median(cpu[(peer, depth)]) if name not in ("fasthttp", "shoal-resp", "wrk:fasthttp") else None
        rs = f"{ratio:.2f}× {peer}" if ratio else ""
        print(f"| {name} | {depth[2:]} | {statistics.median(rps[k]):,.0f} | {c:.2f} | {rs} |")
PY
