#!/usr/bin/env bash
# Makes sure the PostgreSQL server binaries (initdb, pg_ctl, postgres) are on
# this machine. The project starts its own private server with them; nothing
# needs to be running. On Debian as root it installs them; otherwise it says how.
set -euo pipefail

have() {
  [ -n "${PG_BIN:-}" ] && [ -x "$PG_BIN/initdb" ] && return 0
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && return 0
  command -v initdb >/dev/null 2>&1
}

have && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "PostgreSQL server binaries not found: installing Debian's postgresql package" >&2
  apt-get update -qq
  # policy-rc.d-style start-up is not wanted: the project runs its own server.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >&2
  have && exit 0
fi

cat >&2 <<'MSG'
PostgreSQL server binaries (initdb, pg_ctl) are needed and were not found.
Install them, for example on Debian or Ubuntu:

    sudo apt-get install postgresql

or point PG_BIN at the folder holding initdb.
MSG
exit 1
