#!/usr/bin/env bash
# A throwaway PostgreSQL server for tests: Debian's postgresql-15, a cluster in
# a folder of its own, listening only on a Unix socket in that folder (no TCP
# port, so tests never collide), run as an unprivileged user.
#
#   postgres.sh start DIR [--durable]   creates DIR (it must not exist), starts the
#                                       server, prints its connection string
#   postgres.sh createdb DIR NAME       a new, empty database; prints its string
#   postgres.sh stop DIR                stops the server (immediately) and removes DIR
#   postgres.sh pause DIR               stops the server (immediately), keeps DIR
#   postgres.sh resume DIR              starts a paused server again, same options
#   postgres.sh conninfo DIR [NAME]     the connection string, database NAME
#                                       (default postgres)
#
# The connection string is libpq's key=value form: host=DIR (the socket's
# folder) port=5432 user=toolmux dbname=NAME. The server runs as the user
# `nobody` when this runs as root (PostgreSQL refuses root), else as the
# caller; DIR is made theirs. Without --durable, fsync is off: tests kill
# toolmux, never the server, and need no power-cut safety. The first start
# keeps the cluster initdb made in /tmp/toolmux-pg-template-UID-VERSION and
# later starts copy it (a third of the time).
set -euo pipefail

pg_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [[ -z $dir || ! -x $dir/initdb ]]; then
    echo "postgres.sh: PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin/initdb);" \
      "run: bash scripts/setup.sh --tests" >&2
    exit 1
  fi
  echo "$dir"
}

as_owner() {
  if ((EUID == 0)); then
    setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
  else
    "$@"
  fi
}

conninfo() { echo "host=$1 port=5432 user=toolmux dbname=${2:-postgres}"; }

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

cmd=${1:-}
dir=${2:-}
[[ -n $cmd && -n $dir ]] || usage
case $dir in /*) ;; *) dir=$(pwd)/$dir ;; esac

case $cmd in
  start)
    durable=0
    [[ ${3:-} == --durable ]] && durable=1
    if [[ -e $dir ]]; then
      echo "postgres.sh: $dir exists; start makes a new folder" >&2
      exit 1
    fi
    # A socket's path is at most 107 bytes: DIR/.s.PGSQL.5432.
    if ((${#dir} > 90)); then
      echo "postgres.sh: $dir is too long for a Unix socket's folder (at most 90 bytes)" >&2
      exit 1
    fi
    bin=$(pg_bin)
    mkdir -p "$dir"
    chmod 755 "$dir"
    ((EUID == 0)) && chown nobody:nogroup "$dir"
    # initdb takes a second or two of CPU; every test case starts a server of
    # its own, so one cluster made by initdb is kept as a template (per user
    # and PostgreSQL version, in /tmp) and copied. Made aside and renamed into
    # place, so a concurrent start never copies half of one.
    template="/tmp/toolmux-pg-template-$EUID-$(basename "$(dirname "$bin")")"
    if [[ ! -f $template/data/PG_VERSION ]]; then
      staging=$(mktemp -d "$template.XXXXXX")
      chmod 755 "$staging"
      ((EUID == 0)) && chown nobody:nogroup "$staging"
      as_owner "$bin/initdb" -D "$staging/data" -U toolmux -A trust -E UTF8 --locale=C \
        --no-sync >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        rm -rf "$staging"
        exit 1
      }
      mv -T "$staging" "$template" 2>/dev/null || rm -rf "$staging"
    fi
    as_owner cp -a "$template/data" "$dir/data"
    options="-k $dir -p 5432 -c listen_addresses= -c max_connections=200"
    ((durable)) || options+=" -c fsync=off -c full_page_writes=off"
    echo "$options" >"$dir/options"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$options" start \
      >/dev/null || {
      cat "$dir/server.log" >&2
      exit 1
    }
    conninfo "$dir"
    ;;
  pause)
    as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    ;;
  resume)
    as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "$(cat "$dir/options")" start >/dev/null || {
      cat "$dir/server.log" >&2
      exit 1
    }
    ;;
  createdb)
    name=${3:-}
    [[ $name =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || {
      echo "postgres.sh: a database name is [a-z_][a-z0-9_]*, at most 63 bytes" >&2
      exit 2
    }
    as_owner "$(pg_bin)/createdb" -h "$dir" -p 5432 -U toolmux "$name"
    conninfo "$dir" "$name"
    ;;
  conninfo)
    conninfo "$dir" "${3:-}"
    ;;
  stop)
    if [[ -f $dir/data/postmaster.pid ]]; then
      as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  *) usage ;;
esac
