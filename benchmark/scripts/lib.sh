# Helpers the benchmark scripts share. Source it first thing:
#   . "$(dirname "$0")/lib.sh"

# cpu_ticks PID prints the process's user+system CPU time so far, in clock
# ticks (getconf CLK_TCK of them a second), from /proc/PID/stat.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# cpu_user_sys PID prints the process's user and system CPU time so far, in
# clock ticks, separated by a space.
cpu_user_sys() { awk '{print $14, $15}' "/proc/$1/stat"; }

# wait_ping PORT... waits until a RESP server answers PING on each port.
wait_ping() {
  local port
  for port in "$@"; do
    until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
  done
}

# median prints the median of the numbers on stdin, one a line (of an even
# count, the lower of the middle two).
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# in_turn ROUND A B runs the command A then B in odd rounds and B then A in
# even ones, so that on a noisy machine neither side always goes first. A
# and B are split into words; they take no quoting.
in_turn() {
  if (($1 % 2)); then $2; $3; else $3; $2; fi
}
