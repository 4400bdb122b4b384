#!/usr/bin/env bash
# RSS per stream entry, Shoal against redis-server 7.0: one stream of N
# entries (default 1,000,000) of "sensor <i> temp <n>" added with
# generated IDs through redis-cli --pipe, the servers' RSS (VmRSS) read
# before and after. Prints bytes per entry for each and the load average.
# Usage: benchmark/scripts/stream-rss.sh [N]
set -euo pipefail
N=${1:-1000000}
cd "$(dirname "$0")/../.."
go build -o /tmp/shoal-stream-rss ./cmd/shoal
rss() { awk '/VmRSS/ {print $2*1024}' /proc/"$1"/status; }
cmds=$(mktemp)
trap 'rm -f "$cmds"; kill $spid $rpid 2>/dev/null || true' EXIT
awk -v n="$N" 'BEGIN { for (i = 0; i < n; i++) printf "XADD s * sensor %d temp %d\n", i % 1000, i % 97 }' >"$cmds"
redis-server --port 7601 --save "" --appendonly no >/dev/null & rpid=$!
/tmp/shoal-stream-rss --port 7602 --save "" >/dev/null 2>&1 & spid=$!
sleep 1
for p in 7601 7602; do until redis-cli -p $p ping >/dev/null 2>&1; do sleep 0.1; done; done
r0=$(rss $rpid); s0=$(rss $spid)
redis-cli -p 7601 --pipe <"$cmds" >/dev/null
redis-cli -p 7602 --pipe <"$cmds" >/dev/null
sleep 2
r1=$(rss $rpid); s1=$(rss $spid)
echo "entries: redis $(redis-cli -p 7601 xlen s) shoal $(redis-cli -p 7602 xlen s)"
echo "redis-server: $(( (r1 - r0) / N )) bytes/entry (RSS $r0 -> $r1)"
echo "shoal:        $(( (s1 - s0) / N )) bytes/entry (RSS $s0 -> $s1)"
uptime
