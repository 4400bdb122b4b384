#!/usr/bin/env bash
# Failover by Redis Sentinel in containers (docker-compose.yml beside this script): builds
# the FROM-scratch images (shoal static, the host's redis-server with its libraries as
# redis-sentinel), starts a shoal primary, two shoal replicas and three sentinels, kills the
# primary with SIGKILL, checks that a replica is promoted and that the old primary, started
# again, becomes its replica with the data, and always tears everything down. Needs docker,
# docker-compose or `docker compose`, redis-server and redis-cli on the host, and a route to
# the containers' network (10.213.7.0/24, the host's docker bridge).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
ctx=$(mktemp -d)
project=shoalsentinel$$
export SENTINEL_RIG_CONTEXT=$ctx SENTINEL_RIG_DATA=$ctx/data

compose() {
  if command -v docker-compose >/dev/null; then
    docker-compose -p "$project" -f "$ctx/docker-compose.yml" "$@"
  else
    docker compose -p "$project" -f "$ctx/docker-compose.yml" "$@"
  fi
}
cleanup() {
  compose down -v --rmi all >/dev/null 2>&1 || true
  rm -rf "$ctx"
}
trap cleanup EXIT

# wait_for SECONDS WHAT COMMAND...: runs COMMAND every 200 ms until it succeeds.
wait_for() {
  local limit=$1 what=$2 start=$SECONDS
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS - start > limit)); then
      echo "FAIL: $what: not within ${limit} s" >&2
      compose logs --no-color >&2 || true
      exit 1
    fi
    sleep 0.2
  done
}

echo "--- building the images in $ctx"
(cd "$root" && CGO_ENABLED=0 go build -o "$ctx/shoal" ./cmd/shoal)
redis=$(readlink -f "$(command -v redis-server)")
mkdir -p "$ctx/rootfs/usr/bin"
cp "$redis" "$ctx/rootfs/usr/bin/redis-server"
for lib in $(ldd "$redis" | grep -o '/[^ ]*'); do
  mkdir -p "$ctx/rootfs$(dirname "$lib")"
  cp -L "$lib" "$ctx/rootfs$lib"
done
cp "$here/docker-compose.yml" "$here/Dockerfile.shoal" "$here/Dockerfile.sentinel" "$ctx/"

# Each node's configuration file, in its bind-mounted /data: shoal's CONFIG REWRITE and
# Sentinel's own rewrites write there.
for i in 0 1 2; do
  mkdir -p "$ctx/data/shoal-$i" "$ctx/data/sentinel-$i"
  echo "dir /data" >"$ctx/data/shoal-$i/shoal.conf"
  cat >"$ctx/data/sentinel-$i/sentinel.conf" <<CONF
port 26379
dir /data
sentinel monitor mymaster 10.213.7.10 6379 2
sentinel down-after-milliseconds mymaster 1000
sentinel failover-timeout mymaster 10000
sentinel parallel-syncs mymaster 1
CONF
done

echo "--- starting 3 shoal nodes and 3 sentinels"
compose up -d --build >"$ctx/up.log" 2>&1 || { cat "$ctx/up.log" >&2; exit 1; }

sentinels_see_all() {
  for s in 20 21 22; do
    [ "$(redis-cli -h 10.213.7.$s -p 26379 sentinel replicas mymaster | grep -cx name)" = 2 ] || return 1
    [ "$(redis-cli -h 10.213.7.$s -p 26379 sentinel sentinels mymaster | grep -cx name)" = 2 ] || return 1
  done
}
wait_for 60 "every sentinel sees 2 replicas and 2 other sentinels" sentinels_see_all

redis-cli -h 10.213.7.10 set failover-key before >/dev/null
acked=$(redis-cli -h 10.213.7.10 wait 1 1000)
[ "$acked" -ge 1 ] || { echo "FAIL: WAIT 1 saw $acked replicas" >&2; exit 1; }

echo "--- SIGKILL to the primary"
compose kill -s SIGKILL shoal-0 >/dev/null
killed=$SECONDS
promoted() {
  local addr
  addr=$(redis-cli -h 10.213.7.20 -p 26379 sentinel get-master-addr-by-name mymaster | head -1)
  [ "$addr" != 10.213.7.10 ] && [ "$(redis-cli -h "$addr" role | head -1)" = master ]
}
wait_for 30 "a replica promoted" promoted
new=$(redis-cli -h 10.213.7.20 -p 26379 sentinel get-master-addr-by-name mymaster | head -1)
echo "promoted $new within $((SECONDS - killed + 1)) s"
[ "$(redis-cli -h "$new" get failover-key)" = before ] || { echo "FAIL: the acknowledged write is not on $new" >&2; exit 1; }

echo "--- the old primary starts again"
compose start shoal-0 >/dev/null
follows() {
  local r
  r=$(redis-cli -h 10.213.7.10 role | head -4 | tr '\n' ' ')
  [ "$r" = "slave $new 6379 connected " ] && [ "$(redis-cli -h 10.213.7.10 get failover-key)" = before ]
}
wait_for 60 "the old primary replicates $new" follows
grep -q "^replicaof $new 6379" "$ctx/data/shoal-0/shoal.conf" || { echo "FAIL: no replicaof line in the old primary's config file" >&2; exit 1; }
echo "PASS: $new promoted; the old primary is its replica, with the data"
