#!/usr/bin/env bash
# Builds the container image of an earlier commit, as that commit's own
# `make image` builds it, in a worktree of its own; make test-topology's
# upgrade scenario starts from it. An image of that name already there is
# kept (the commit does not change).
#
# Usage: scripts/image-at.sh COMMIT IMAGE
set -euo pipefail
commit=${1:?usage: scripts/image-at.sh COMMIT IMAGE}
image=${2:?usage: scripts/image-at.sh COMMIT IMAGE}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/deploy/image/containers.conf}
if podman --runtime runc image exists "$image"; then
  exit 0
fi
work=$(mktemp -d)
cleanup() {
  git worktree remove --force "$work/src" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
echo "building $image from $commit" >&2
git worktree add --detach "$work/src" "$commit" >/dev/null
make -C "$work/src" --no-print-directory image IMAGE="$image" >&2
