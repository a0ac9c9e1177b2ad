#!/usr/bin/env bash
# Makes sure podman and runc are on this machine for make image and the
# topology's replicas (runc: crun, podman's default runtime, cannot start
# containers on every host; see docs/deploy.md).
exec "$(dirname "$0")/ensure-debian-packages.sh" podman:podman runc:runc
