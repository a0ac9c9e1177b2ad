#!/usr/bin/env bash
# Makes sure a Chromium is on this machine for the browser test of /docs
# (cmd/jobboard/docs_browser_test.go). On Debian as root it installs Debian's
# chromium package as the project's other packages are: without the
# packages it merely recommends (which bring avahi-daemon, upower and a
# hundred more, some of them services started and enabled at boot) and
# without starting anything; otherwise it says how. JOBBOARD_CHROMIUM may
# name another Chromium or Chrome binary.
set -euo pipefail

have() {
  [ -n "${JOBBOARD_CHROMIUM:-}" ] && [ -x "$JOBBOARD_CHROMIUM" ] && return 0
  [ -x /usr/bin/chromium ]
}

have && exit 0

"$(dirname "$0")/ensure-debian-packages.sh" chromium:chromium && have && exit 0

echo "or point JOBBOARD_CHROMIUM at a Chromium or Chrome binary." >&2
exit 1
