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

# Installed as the topology's packages are, without starting the package's
# own service: the tests start their own PgBouncer.
"$(dirname "$0")/ensure-debian-packages.sh" pgbouncer:pgbouncer && have && exit 0

echo "or point JOBBOARD_PGBOUNCER at a pgbouncer binary." >&2
exit 1
