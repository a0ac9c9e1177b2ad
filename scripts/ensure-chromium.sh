#!/usr/bin/env bash
# Makes sure a Chromium is on this machine for the browser test of /docs
# (cmd/jobboard/docs_browser_test.go). On Debian as root it installs Debian's
# chromium package; otherwise it says how. JOBBOARD_CHROMIUM may name another
# Chromium or Chrome binary.
set -euo pipefail

have() {
  [ -n "${JOBBOARD_CHROMIUM:-}" ] && [ -x "$JOBBOARD_CHROMIUM" ] && return 0
  [ -x /usr/bin/chromium ]
}

have && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Chromium not found: installing Debian's chromium package for the browser test" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
  have && exit 0
fi

cat >&2 <<'MSG'
The browser test of /docs needs Chromium and none was found.
Install it, for example on Debian:

    sudo apt-get install chromium

or point JOBBOARD_CHROMIUM at a Chromium or Chrome binary.
MSG
exit 1
