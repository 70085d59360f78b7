#!/usr/bin/env bash
# Stop and restart the throwaway cluster of scripts/pg.sh WITHOUT deleting its data (pg.sh stop
# deletes it): the worker end-to-end test uses this to check 503 and recovery.
#   MEMLOOM_PG_STATE=... tests/worker/pg-ctl.sh pause|resume   stop / start the server
#   MEMLOOM_PG_STATE=... tests/worker/pg-ctl.sh freeze|thaw    SIGSTOP / SIGCONT the postmaster:
#                                                              connects are accepted, never answered
set -euo pipefail
STATE="${MEMLOOM_PG_STATE:?set MEMLOOM_PG_STATE (the state directory of scripts/pg.sh)}"
PG_BIN=/usr/lib/postgresql/15/bin
data="$(cat "$STATE/datadir")"
# postmaster.opts holds: /path/postgres "-D" "DIR" "-p" "PORT" ... (no spaces inside values).
start_options() {
  local words
  read -r -a words < "$1"
  local out=() i
  for ((i = 1; i < ${#words[@]}; i++)); do
    local w="${words[$i]//\"/}"
    if [ "$w" = "-D" ]; then i=$((i + 1)); continue; fi
    out+=("$w")
  done
  echo "${out[*]}"
}
as_owner() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case "${1:-}" in
  pause) as_owner "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null ;;
  resume)
    # The options the cluster was started with (postmaster.opts), minus the binary and -D.
    opts="$(start_options "$data/postmaster.opts")"
    as_owner "$PG_BIN/pg_ctl" -D "$data" -l "$(dirname "$data")/server.log" -w -t 60 -o "$opts" start >/dev/null ;;
  freeze) kill -STOP "$(head -n1 "$data/postmaster.pid")" ;;
  thaw) kill -CONT "$(head -n1 "$data/postmaster.pid")" ;;
  *) echo "usage: pg-ctl.sh pause|resume|freeze|thaw" >&2; exit 2 ;;
esac
