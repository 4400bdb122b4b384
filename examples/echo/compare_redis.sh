#!/bin/bash
# Server CPU per request of examples/echo builds against redis-server, measured
# alternately in one run (A B redis, then redis B A, ...), from utime+stime in
# /proc/PID/stat around each redis-benchmark run. Ports 7100-7102.
#
#   go build -o /tmp/echo-a ./examples/echo   # e.g. before a change
#   go build -o /tmp/echo-b ./examples/echo   # after it
#   P=1 examples/echo/compare_redis.sh ROUNDS N /tmp/echo-a /tmp/echo-b [echo flags]
ROUNDS=$1; N=$2; A=$3; B=$4; shift 4
$A -addr 127.0.0.1:7100 "$@" 2>/dev/null & AP=$!
$B -addr 127.0.0.1:7102 "$@" 2>/dev/null & BP=$!
redis-server --port 7101 --save '' --appendonly no >/dev/null 2>&1 & RP=$!
trap 'kill $AP $BP $RP 2>/dev/null' EXIT INT TERM
sleep 0.5
tck=$(getconf CLK_TCK)
declare -A sum
run() {
  local c0=$(awk '{print $14+$15}' /proc/$2/stat)
  redis-benchmark -p $3 -t ping_mbulk -c 50 -n $N -P ${P:-1} -q >/dev/null 2>&1
  local c1=$(awk '{print $14+$15}' /proc/$2/stat)
  local v=$(echo "($c1-$c0)*1000000/$tck/$N" | bc -l)
  printf "%s=%.2f " $1 $v; sum[$1]=$(echo "${sum[$1]:-0}+$v" | bc -l)
}
for i in $(seq $ROUNDS); do
  if (( i % 2 )); then run A $AP 7100; run B $BP 7102; run redis $RP 7101
  else run redis $RP 7101; run B $BP 7102; run A $AP 7100; fi; echo
done
for k in A B redis; do printf "mean %s=%.2f us/req " $k $(echo "${sum[$k]}/$ROUNDS" | bc -l); done; echo
kill $AP $BP $RP; wait 2>/dev/null
