#!/bin/bash
# System calls and context switches per request (perf stat tracepoints) and
# server CPU per request, for an examples/echo build and then redis-server under
# the same redis-benchmark ping_mbulk load, twice. Needs perf with tracepoints.
#
#   go build -o /tmp/echo ./examples/echo
#   ECHO=/tmp/echo P=1 examples/echo/syscalls_per_request.sh 100000 [echo flags]
N=${1:-100000}; shift
ECHO=${ECHO:?set ECHO to an examples/echo binary}
$ECHO -addr 127.0.0.1:7100 "$@" 2>/dev/null & EP=$!
trap 'kill $EP $RP 2>/dev/null' EXIT INT TERM
redis-server --port 7101 --save '' --appendonly no >/dev/null 2>&1 & RP=$!
sleep 0.5
EV=syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_ctl,syscalls:sys_enter_sched_yield,raw_syscalls:sys_enter,context-switches
tck=$(getconf CLK_TCK)
for r in 1 2; do for pp in "shoal $EP 7100" "redis $RP 7101"; do set -- $pp
  c0=$(awk '{print $14+$15}' /proc/$2/stat)
  perf stat -x, -e $EV -p $2 -o /tmp/ev/pstat.$1 & SP=$!; sleep 0.2
  out=$(redis-benchmark -p $3 -t ping_mbulk -c 50 -n $N -P ${P:-1} -q 2>/dev/null | tr '\r' '\n' | grep -a 'requests per second' | tail -1)
  kill -INT $SP; wait $SP
  c1=$(awk '{print $14+$15}' /proc/$2/stat)
  printf "%-6s %s  cpu/req=%.2fus |" $1 "$(echo $out | awk '{print $2}')rps" $(echo "($c1-$c0)*1000000/$tck/$N" | bc -l)
  awk -F, -v n=$N '$1 ~ /^[0-9]+$/ {sub("syscalls:sys_enter_","",$3); sub("raw_syscalls:sys_enter","ALL",$3); printf " %s=%.3f", $3, $1/n}' /tmp/ev/pstat.$1; echo
done; done
kill $EP $RP; wait 2>/dev/null
