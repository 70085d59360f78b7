#!/usr/bin/env bash
# PostgreSQL 15 + pgvector for memloom's tests and benchmarks.
#
#   scripts/pg.sh install   install PostgreSQL 15 and build pgvector 0.8 from Debian's trixie
#                           source package (idempotent: skipped when vector.control exists)
#   scripts/pg.sh install-plproxy   the above, plus PL/Proxy (Debian's postgresql-15-plproxy,
#                           for the sharded deployment: docs/SCALING.md; skipped when installed)
#   scripts/pg.sh start     start a throwaway cluster on a free 127.0.0.1 port (trust auth),
#                           print its URL and write it to $MEMLOOM_PG_STATE/url
#   scripts/pg.sh stop      stop that cluster and delete its data directory
#   scripts/pg.sh url       print the running cluster's URL
#
# MEMLOOM_PG_STATE (default: target/pg) holds the url, port and data directory path, so several
# runs can use separate clusters side by side. Diagnostics go to stderr, the URL to stdout.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PG_VERSION=15
PG_BIN="/usr/lib/postgresql/${PG_VERSION}/bin"
PG_EXT_DIR="/usr/share/postgresql/${PG_VERSION}/extension"
STATE="${MEMLOOM_PG_STATE:-$ROOT/target/pg}"
DB_NAME="${MEMLOOM_PG_DB:-memloom}"

log() { echo "pg.sh: $*" >&2; }
die() { echo "pg.sh: error: $*" >&2; exit 2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "need root (or sudo) to run: $*"
  fi
}

# Run a server binary as the cluster owner: initdb refuses root, so root runs it as postgres.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

cmd_install() {
  if [ -f "$PG_EXT_DIR/vector.control" ] && [ -x "$PG_BIN/initdb" ]; then
    log "PostgreSQL $PG_VERSION with pgvector already installed; skipping"
    return 0
  fi
  export DEBIAN_FRONTEND=noninteractive
  # Source packages only from trixie (bookworm has no pgvector); never a trixie binary.
  as_root tee /etc/apt/sources.list.d/memloom-trixie-src.sources >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  as_root tee /etc/apt/preferences.d/memloom-no-trixie-binaries >/dev/null <<'PIN'
Package: *
Pin: release n=trixie
Pin-Priority: -1
PIN
  log "apt-get update"
  as_root apt-get update -q >&2
  log "installing postgresql-$PG_VERSION and build tools"
  as_root apt-get install -y -q --no-install-recommends \
    "postgresql-$PG_VERSION" "postgresql-server-dev-$PG_VERSION" postgresql-client-$PG_VERSION \
    build-essential dpkg-dev >&2
  if [ ! -f "$PG_EXT_DIR/vector.control" ]; then
    local src
    src="$(mktemp -d)"
    chmod 755 "$src"
    log "building pgvector from Debian's source package in $src"
    # apt-get source must not run as root in a dir _apt cannot read; a world-readable tmp works.
    (cd "$src" && apt-get source -q pgvector >&2)
    local dir
    dir="$(find "$src" -maxdepth 1 -mindepth 1 -type d -name 'pgvector-*' | head -n1)"
    [ -n "$dir" ] || die "apt-get source pgvector produced no source tree in $src"
    make -C "$dir" -j"$(nproc)" PG_CONFIG="$PG_BIN/pg_config" >&2
    as_root make -C "$dir" install PG_CONFIG="$PG_BIN/pg_config" >&2
    rm -rf "$src"
  fi
  [ -f "$PG_EXT_DIR/vector.control" ] || die "pgvector did not install into $PG_EXT_DIR"
  log "installed: $(grep default_version "$PG_EXT_DIR/vector.control")"
}

cmd_install_plproxy() {
  cmd_install
  if [ -f "$PG_EXT_DIR/plproxy.control" ]; then
    log "PL/Proxy already installed; skipping"
    return 0
  fi
  export DEBIAN_FRONTEND=noninteractive
  log "installing postgresql-$PG_VERSION-plproxy (Debian)"
  as_root apt-get install -y -q --no-install-recommends "postgresql-$PG_VERSION-plproxy" >&2 || {
    as_root apt-get update -q >&2
    as_root apt-get install -y -q --no-install-recommends "postgresql-$PG_VERSION-plproxy" >&2
  }
  [ -f "$PG_EXT_DIR/plproxy.control" ] || die "PL/Proxy did not install into $PG_EXT_DIR"
  log "installed: PL/Proxy $(grep default_version "$PG_EXT_DIR/plproxy.control")"
}

is_running() {
  [ -f "$STATE/datadir" ] && as_owner "$PG_BIN/pg_ctl" -D "$(cat "$STATE/datadir")" status >/dev/null 2>&1
}

# shellcheck source=scripts/free-port.sh
source "$(dirname "${BASH_SOURCE[0]}")/free-port.sh"

cmd_start() {
  [ -x "$PG_BIN/initdb" ] || die "PostgreSQL $PG_VERSION is not installed: run scripts/pg.sh install"
  [ -f "$PG_EXT_DIR/vector.control" ] || die "pgvector is not installed: run scripts/pg.sh install"
  if is_running; then
    log "cluster already running"
    cat "$STATE/url"
    return 0
  fi
  mkdir -p "$STATE"
  local dir port
  dir="$(mktemp -d /tmp/memloom-pg.XXXXXX)"
  chmod 755 "$dir"
  mkdir -p "$dir/data" "$dir/sock"
  [ "$(id -u)" -eq 0 ] && chown -R postgres:postgres "$dir"
  as_owner "$PG_BIN/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
    --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  port="$(free_port)"
  # Throwaway cluster: durability off for speed; it is deleted on stop.
  as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir/sock -c listen_addresses=127.0.0.1 -c fsync=off \
        -c synchronous_commit=off -c full_page_writes=off -c max_connections=100" \
    start >/dev/null || { cat "$dir/server.log" >&2; die "pg_ctl start failed"; }
  echo "$dir/data" >"$STATE/datadir"
  echo "$port" >"$STATE/port"
  "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres \
    -c "CREATE DATABASE $DB_NAME" >&2
  local url="postgres://postgres@127.0.0.1:$port/$DB_NAME"
  echo "$url" >"$STATE/url"
  log "started PostgreSQL $PG_VERSION at $url (data $dir/data, log $dir/server.log)"
  echo "$url"
}

cmd_stop() {
  if [ ! -f "$STATE/datadir" ]; then log "no cluster recorded in $STATE"; return 0; fi
  local data
  data="$(cat "$STATE/datadir")"
  if is_running; then
    as_owner "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null || log "pg_ctl stop failed"
  fi
  case "$data" in /tmp/memloom-pg.*/data) rm -rf "$(dirname "$data")" ;; esac
  rm -f "$STATE/datadir" "$STATE/port" "$STATE/url"
  log "stopped"
}

cmd_url() {
  is_running || die "no running cluster in $STATE: run scripts/pg.sh start"
  cat "$STATE/url"
}

case "${1:-}" in
  install) cmd_install ;;
  install-plproxy) cmd_install_plproxy ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  url) cmd_url ;;
  *) echo "usage: scripts/pg.sh install|install-plproxy|start|stop|url" >&2; exit 2 ;;
esac
