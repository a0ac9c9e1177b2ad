#!/usr/bin/env bash
# Makes sure PgBouncer is on this machine for the tests that run the service
# behind it in transaction pooling mode (internal/pgbouncertest). On Debian as
# root it installs Debian's pgbouncer package; otherwise it says how.
# JOBBOARD_PGBOUNCER may name another pgbouncer binary.
set -euo pipefail

have() {
  [ -n "${JOBBOARD_PGBOUNCER:-}" ] && [ -x "$JOBBOARD_PGBOUNCER" ] && return 0
  [ -x /usr/sbin/pgbouncer ] && return 0
  command -v pgbouncer >/dev/null 2>&1
}

have && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "PgBouncer not found: installing Debian's pgbouncer package for the connection pooler tests" >&2
  apt-get update -qq
  # The package's own service is not used: the tests start their own PgBouncer.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends pgbouncer >&2
  have && exit 0
fi

cat >&2 <<'MSG'
The connection pooler tests need PgBouncer and none was found.
Install it, for example on Debian or Ubuntu:

    sudo apt-get install pgbouncer

or point JOBBOARD_PGBOUNCER at a pgbouncer binary.
MSG
exit 1
