#!/usr/bin/env bash
# appendfsync always (and everysec), two shoal binaries and redis-server 7
# side by side, alternating run by run: the before/after check of a change
# to how Shoal syncs its append-only file (issue 27, item 1).
#
#   benchmark/scripts/aof-groupcommit-ab.sh BEFORE_BIN AFTER_BIN [rounds] [requests] [dir]
#
# Build the binaries with `go build -o /tmp/shoal-before ./cmd/shoal` in a
# worktree of the old commit and `go build -o /tmp/shoal-after ./cmd/shoal`
# here. For each round, policy (always, then everysec), client count
# (1, 10, 50; everysec: 50) and pipeline depth (1, 16) it runs
#   redis-benchmark -c clients -P depth -t set -n requests -r 100000 -q
# (requests/5 with one client)
# against the three servers, the order rotating every round, and records
# SET/s, the server's CPU µs per request (utime+stime from /proc/PID/stat)
# and, if `perf` can count the syscalls:sys_enter_fdatasync tracepoint,
# requests per fdatasync (how many writes each sync carried). dir must be
# on a real disk (not tmpfs); default a directory under the repository.
# Prints one line per run and the medians with after/before and
# after/redis ratios. Record `uptime` with the figures: on a shared
# machine single runs swing 2x; only the ratios of medians mean much.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
before=$1 after=$2 rounds=${3:-3} requests=${4:-50000}
base=${5:-$PWD/.aof-bench}
tick=$(getconf CLK_TCK)
mkdir -p "$base"
tmp=$(mktemp -d -p "$base")
mkdir -p "$tmp/before" "$tmp/after" "$tmp/redis"
pb=16421 pa=16422 pr=16423
"$before" --port $pb --save "" --loglevel warning --appendonly yes --appendfsync always --dir "$tmp/before" & pid_before=$!
"$after" --port $pa --save "" --loglevel warning --appendonly yes --appendfsync always --dir "$tmp/after" & pid_after=$!
redis-server --port $pr --save "" --appendonly yes --appendfsync always --dir "$tmp/redis" --loglevel warning & pid_redis=$!
trap 'kill $pid_before $pid_after $pid_redis 2>/dev/null; sleep 0.5; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
wait_ping $pb $pa $pr
for pair in "$pb $pid_before" "$pa $pid_after" "$pr $pid_redis"; do
  set -- $pair
  pid=$(redis-cli -p "$1" info server | tr -d '\r' | awk -F: '$1 == "process_id" {print $2}')
  if [ "$pid" != "$2" ]; then
    echo "port $1 answers with pid $pid, not our server $2" >&2
    exit 1
  fi
done
can_count=0
if perf stat -e syscalls:sys_enter_fdatasync -p $pid_redis -o /dev/null -- sleep 0.1 >/dev/null 2>&1; then
  can_count=1
fi

run() { # name pid port policy clients depth
  local t0 t1 out rps syncs=0 perf_pid= n=$requests
  if (($5 == 1)); then n=$((requests / 5)); fi # one client waits for every sync: fewer requests
  if ((can_count)); then
    perf stat -e syscalls:sys_enter_fdatasync -x, -p "$2" -o "$tmp/perf.$1" &
    perf_pid=$!
    sleep 0.2
  fi
  t0=$(cpu_ticks "$2")
  out=$(redis-benchmark -p "$3" -c "$5" -P "$6" -t set -n "$n" -r 100000 -q 2>&1 | tr '\r' '\n' | grep -i "requests per second" | tail -1)
  t1=$(cpu_ticks "$2")
  if [ -n "$perf_pid" ]; then
    kill -INT "$perf_pid"
    wait "$perf_pid" || true
    syncs=$(awk -F, '/fdatasync/ {print $1}' "$tmp/perf.$1")
  fi
  rps=$(sed -E 's/.*: ([0-9.]+) requests per second.*/\1/' <<<"$out")
  awk -v s="$1" -v p="$4" -v c="$5" -v d="$6" -v r="$rps" -v t=$((t1 - t0)) -v hz="$tick" -v n="$n" -v f="${syncs:-0}" \
    'BEGIN { printf "%s %s c=%s P=%s %.0f %.2f %.1f\n", s, p, c, d, r, t / hz * 1e6 / n, (f > 0 ? n / f : 0) }' | tee -a "$tmp/runs"
}
rotate() { # round cmd1 cmd2 cmd3
  case $(($1 % 3)) in
    1) $2; $3; $4 ;;
    2) $3; $4; $2 ;;
    0) $4; $2; $3 ;;
  esac
}
echo "columns: server policy clients depth SET/s cpu_us_per_request requests_per_fdatasync"
for policy in always everysec; do
  for port in $pb $pa $pr; do redis-cli -p $port config set appendfsync $policy >/dev/null; done
  if [ $policy = always ]; then clients="1 10 50"; else clients="50"; fi
  for ((round = 1; round <= rounds; round++)); do
    for c in $clients; do
      for depth in 1 16; do
        rotate $round "run before $pid_before $pb $policy $c $depth" "run after $pid_after $pa $policy $c $depth" \
          "run redis $pid_redis $pr $policy $c $depth"
      done
    done
  done
done

echo
echo "medians over $rounds rounds (redis-benchmark -t set -n $requests -r 100000):"
printf '%-8s %-4s %-3s %9s %9s %9s %7s %7s %7s %7s %7s %7s %6s %6s %6s\n' policy c P before after redis 'a/b' 'a/r' cpu_b cpu_a cpu_r 'cpu a/r' rq/fs_b rq/fs_a rq/fs_r
for policy in always everysec; do
  if [ $policy = always ]; then clients="1 10 50"; else clients="50"; fi
  for c in $clients; do
    for depth in 1 16; do
      med() { awk -v s="$1" -v p="$policy" -v c="c=$c" -v d="P=$depth" -v f="$2" '$1 == s && $2 == p && $3 == c && $4 == d {print $f}' "$tmp/runs" | median; }
      b=$(med before 5) a=$(med after 5) r=$(med redis 5)
      cb=$(med before 6) ca=$(med after 6) cr=$(med redis 6)
      fb=$(med before 7) fa=$(med after 7) fr=$(med redis 7)
      awk -v p=$policy -v c=$c -v d=$depth -v b="$b" -v a="$a" -v r="$r" -v cb="$cb" -v ca="$ca" -v cr="$cr" -v fb="$fb" -v fa="$fa" -v fr="$fr" \
        'BEGIN { printf "%-8s %-4s %-3s %9.0f %9.0f %9.0f %6.2fx %6.2fx %7.2f %7.2f %7.2f %6.2fx %6.1f %6.1f %6.1f\n", p, c, d, b, a, r, a / b, a / r, cb, ca, cr, ca / cr, fb, fa, fr }'
    done
  done
done
