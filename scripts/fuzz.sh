#!/usr/bin/env bash
# Runs every fuzz target for the given time each (default 3s), one after
# another: go test -fuzz takes one target per run. The drivers-query target
# needs a database; run this under internal/cmd/withpg (make fuzz does).
# A failing input is written to the package's testdata/fuzz/ by go test;
# commit it with the fix so it stays a seed.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-3s}
targets=(
	"./gateway FuzzDecodeJSON"
	"./gateway FuzzDecodeXML"
	"./gateway FuzzDriversQuery"
	"./server FuzzJobValidator"
	"./server FuzzPlainlyClean"
	"./server FuzzRequestDecode"
)
n=0
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	n=$((n + 1))
	echo "fuzz ${n}/${#targets[@]}: $name ($pkg) for $fuzztime"
	# -parallel 2: the machines this runs on have two cores.
	"${GO:-go}" test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel 2 "$pkg"
done
