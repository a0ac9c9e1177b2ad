#!/usr/bin/env bash
# Runs every fuzz target for the given budget each, one after another: go
# test -fuzz takes one target per run. The budget is a time (2m) or a count of
# inputs (1000x); make test uses a count, which no clock can cut short. The
# drivers-query target needs a database; run this under internal/cmd/withpg
# (make fuzz does). A failing input is written to the package's
# testdata/fuzz/ by go test; commit it with the fix so it stays a seed.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-3s}
targets=(
	"./gateway FuzzDecodeJSON"
	"./gateway FuzzDecodeXML"
	"./gateway FuzzDriversQuery"
	"./server/jobs FuzzJobValidator"
	"./server/jobs FuzzPlainlyClean"
	"./server/jobs FuzzReadsLikeTheRules"
	"./internal/rules FuzzReadZIP"
	"./internal/jsonlog FuzzSameAsJSONHandler"
	"./server/grpcapi FuzzRequestDecode"
	"./gateway/wire FuzzJSONString"
	"./gateway/wire FuzzXMLText"
)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
n=0
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	n=$((n + 1))
	echo "fuzz ${n}/${#targets[@]}: $name ($pkg) for $fuzztime"
	# -parallel 2: the machines this runs on have two cores.
	if "${GO:-go}" test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel 2 "$pkg" 2>&1 | tee "$log"; then
		continue
	fi
	# Go 1.26's fuzzing coordinator can report its own time limit as a
	# failure, "context deadline exceeded", when a worker is still busy as
	# the time runs out (go.dev/issue/75804, fixed in Go 1.27). A real
	# failure always writes its input ("Failing input written to"), so only
	# that bare report at the end of a timed run is taken as the end of time.
	if [[ $fuzztime != *x ]] && grep -q '^    context deadline exceeded$' "$log" &&
		! grep -q 'Failing input written to' "$log"; then
		echo "fuzz ${n}/${#targets[@]}: $name ran its $fuzztime; its end was reported as a failure by go.dev/issue/75804, not by an input"
		continue
	fi
	exit 1
done
