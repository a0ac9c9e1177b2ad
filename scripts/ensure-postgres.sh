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
  # Installed as the project's other packages are, neither started nor
  # enabled at boot: the project runs its own server. (pg_ctlcluster comes
  # with the server package, so its absence is what asks for it.)
  "$(dirname "$0")/ensure-debian-packages.sh" pg_ctlcluster:postgresql && have && exit 0
fi

cat >&2 <<'MSG'
PostgreSQL server binaries (initdb, pg_ctl) are needed and were not found.
Install them, for example on Debian or Ubuntu:

    sudo apt-get install postgresql

or point PG_BIN at the folder holding initdb.
MSG
exit 1
