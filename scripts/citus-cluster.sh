#!/usr/bin/env bash
# A Citus cluster on this machine for charter's tests and benchmarks: a coordinator and two
# workers on 127.0.0.1 (loopback only), built from the Citus source once into a cache folder.
#
#   scripts/citus-cluster.sh build     build Citus into the cache (done by start if needed)
#   scripts/citus-cluster.sh start     start the three nodes, register the workers, print the URL
#   scripts/citus-cluster.sh url       print the coordinator's URL
#   scripts/citus-cluster.sh status    which nodes run
#   scripts/citus-cluster.sh restart NODE  restart one node (coordinator, worker1, worker2)
#   scripts/citus-cluster.sh stop      stop the nodes (their data stays)
#   scripts/citus-cluster.sh destroy   stop the nodes and delete their data (the build stays)
#
# Citus (AGPL-3.0) is a test dependency only: charter never ships or links it. The build
# needs PostgreSQL 15's server headers and Citus's build dependencies (Debian:
# postgresql-server-dev-15 libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev
# libselinux1-dev libxslt1-dev libpam0g-dev libreadline-dev libssl-dev).
#
# Settings (environment):
#   CHARTER_CITUS_SOURCE  the Citus 13.2.2 source tarball (default: found in ../shared/vendor)
#   CHARTER_CITUS_PATCH   a patch applied to it with -p1 (default: the one beside the tarball)
#   CHARTER_CITUS_CACHE   where the build and the nodes' data live
#                         (default: /var/cache/charter-citus as root, ~/.cache/charter-citus)
#   CHARTER_CITUS_PORT    the coordinator's port; the workers take the next two (default 9700)
#   PG_CONFIG             the pg_config of the PostgreSQL to build against
#                         (default: /usr/lib/postgresql/15/bin/pg_config)
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
version=13.2.2
if [ "$(id -u)" = 0 ]; then default_cache=/var/cache/charter-citus; else default_cache="$HOME/.cache/charter-citus"; fi
cache="${CHARTER_CITUS_CACHE:-$default_cache}"
port="${CHARTER_CITUS_PORT:-9700}"
pg_config="${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}"
install="$cache/pg"          # a private copy of PostgreSQL with Citus installed into it
data="$cache/cluster"
nodes=(coordinator worker1 worker2)
database=charter

find_source() {
    local candidate
    for candidate in "${CHARTER_CITUS_SOURCE:-}" "$here/../shared/vendor/citus-$version.tar.gz" \
        "/work/shared/vendor/citus-$version.tar.gz"; do
        if [ -n "$candidate" ] && [ -f "$candidate" ]; then echo "$candidate"; return; fi
    done
    echo "no Citus $version source: set CHARTER_CITUS_SOURCE to citus-$version.tar.gz" >&2
    return 1
}

# PostgreSQL runs as an ordinary user: as root, the system's postgres user.
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

bin() { echo "$install/usr/lib/postgresql/15/bin/$1"; }

build() {
    if [ -f "$cache/built-$version" ]; then return; fi
    local source patch work pkglib share
    source="$(find_source)"
    patch="${CHARTER_CITUS_PATCH:-${source%.tar.gz}-pg15.20.patch}"
    [ -f "$pg_config" ] || { echo "no $pg_config: install postgresql-server-dev-15" >&2; exit 1; }
    work="$cache/build"
    rm -rf "$work" "$install"
    mkdir -p "$work"
    tar -xzf "$source" -C "$work"
    if [ -f "$patch" ]; then (cd "$work/citus-$version" && patch -p1 -s < "$patch"); fi
    # A private copy of the server, laid out as Debian lays it out, so the PostgreSQL
    # binaries find their relocated share folder and the system's install stays untouched.
    pkglib="$("$pg_config" --pkglibdir)"
    share="$("$pg_config" --sharedir)"
    mkdir -p "$install$(dirname "$pkglib")" "$install$(dirname "$share")"
    cp -a "$(dirname "$pkglib")/." "$install$(dirname "$pkglib")/"
    cp -a "$share" "$install$(dirname "$share")/"
    echo "building Citus $version (a few minutes, once) into $cache" >&2
    (cd "$work/citus-$version" && ./configure -q --with-pg-config="$pg_config" >/dev/null \
        && make -s -j"$(nproc)" >/dev/null 2>&1 && make -s install DESTDIR="$install" >/dev/null)
    rm -rf "$work"
    touch "$cache/built-$version"
}

node_port() { echo $((port + $1)); }

psql_node() {  # psql_node INDEX DATABASE SQL
    "$(bin psql)" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(node_port "$1")" -U postgres -d "$2" -c "$3"
}

start() {
    build
    mkdir -p "$data"
    if [ "$(id -u)" = 0 ]; then chown postgres "$data"; chmod o+x "$cache"; fi
    local i fresh=()
    for i in 0 1 2; do
        local dir="$data/${nodes[$i]}"
        if [ ! -d "$dir" ]; then
            as_owner "$(bin initdb)" -D "$dir" -A trust -U postgres >/dev/null
            cat >> "$dir/postgresql.conf" <<CONF
shared_preload_libraries = 'citus'
listen_addresses = '127.0.0.1'
unix_socket_directories = '$data'
max_connections = 300
max_prepared_transactions = 300
citus.shard_count = 8
CONF
            fresh+=("$i")
        fi
        if ! as_owner "$(bin pg_ctl)" -D "$dir" status >/dev/null 2>&1; then
            as_owner "$(bin pg_ctl)" -D "$dir" -o "-p $(node_port "$i")" -l "$data/${nodes[$i]}.log" -w start >/dev/null
        fi
    done
    for i in "${fresh[@]}"; do
        psql_node "$i" postgres "CREATE DATABASE $database"
        psql_node "$i" "$database" "CREATE EXTENSION citus"
    done
    if [ "${#fresh[@]}" -gt 0 ]; then
        psql_node 0 "$database" "SELECT citus_set_coordinator_host('127.0.0.1', $(node_port 0))" >/dev/null
        for i in 1 2; do
            psql_node 0 "$database" "SELECT citus_add_node('127.0.0.1', $(node_port "$i"))" >/dev/null
        done
    fi
    url
}

url() { echo "postgresql://postgres@127.0.0.1:$(node_port 0)/$database"; }

status() {
    local i
    for i in 0 1 2; do
        if as_owner "$(bin pg_ctl)" -D "$data/${nodes[$i]}" status >/dev/null 2>&1; then
            echo "${nodes[$i]}: running on 127.0.0.1:$(node_port "$i")"
        else
            echo "${nodes[$i]}: stopped"
        fi
    done
}

stop() {
    local i
    for i in 0 1 2; do
        if [ -d "$data/${nodes[$i]}" ]; then
            as_owner "$(bin pg_ctl)" -D "$data/${nodes[$i]}" -m fast -w stop >/dev/null 2>&1 || true
        fi
    done
}

destroy() { stop; rm -rf "$data"; }

restart() {  # restart NODE: a fast shutdown (sessions cut, nothing committed lost) and start
    local i
    for i in 0 1 2; do
        if [ "${nodes[$i]}" = "${1:-}" ]; then
            as_owner "$(bin pg_ctl)" -D "$data/${nodes[$i]}" -m fast -w restart \
                -o "-p $(node_port "$i")" -l "$data/${nodes[$i]}.log" >/dev/null
            return
        fi
    done
    echo "restart which node: ${nodes[*]}" >&2
    return 2
}

case "${1:-}" in
    build) build ;;
    start) start ;;
    url) url ;;
    status) status ;;
    restart) restart "${2:-}" ;;
    stop) stop ;;
    destroy) destroy ;;
    *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
