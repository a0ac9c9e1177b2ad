#!/usr/bin/env bash
# Makes sure the named commands are on this machine, each from the Debian
# package named after its colon: ensure-debian-packages.sh podman:podman runc:runc.
# On Debian as root it installs the missing ones in one apt-get run; otherwise
# it says how. Nothing installed is started or enabled at boot (see
# policy-rc.d and enabled_units below): the topology and the tests run their
# own.
set -euo pipefail

missing() {
  local spec
  missing_cmds=() missing_pkgs=()
  for spec in "$@"; do
    # Debian keeps some daemons (runc, haproxy, pgbouncer) in /usr/sbin,
    # which is not on every PATH.
    if ! command -v "${spec%%:*}" >/dev/null 2>&1 && [ ! -x "/usr/sbin/${spec%%:*}" ]; then
      missing_cmds+=("${spec%%:*}")
      missing_pkgs+=("${spec#*:}")
    fi
  done
  [ ${#missing_cmds[@]} -gt 0 ]
}

missing "$@" || exit 0

# enabled_units lists the systemd units enabled at boot, as the symbolic
# links systemctl enable (and Debian's deb-systemd-helper) make.
enabled_units() {
  find /etc/systemd/system -mindepth 2 -maxdepth 2 -path '*.wants/*' -printf '%f\n' 2>/dev/null | sort -u
}

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "not found: ${missing_cmds[*]}: installing Debian's ${missing_pkgs[*]}" >&2
  apt-get update -qq
  # Debian's packages of daemons (pgbouncer, haproxy) start and enable their
  # system service when installed; a policy-rc.d answering 101 ("action
  # forbidden") stops the start, so nothing is left listening.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  before=$(enabled_units)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing_pkgs[@]}" >&2
  # policy-rc.d stops a package's postinst from starting its service, not
  # from enabling it at boot: what the install enabled is disabled again,
  # by systemctl, which works on the unit files without a running systemd.
  for unit in $(comm -13 <(echo "$before") <(enabled_units)); do
    echo "disabling $unit, which the install enabled at boot" >&2
    systemctl disable "$unit" >&2
  done
  missing "$@" || exit 0
fi

cat >&2 <<MSG
These commands are needed and were not found: ${missing_cmds[*]}
Install them, for example on Debian:

    sudo apt-get install ${missing_pkgs[*]}
MSG
exit 1
