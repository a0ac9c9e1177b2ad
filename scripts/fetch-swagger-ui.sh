#!/usr/bin/env bash
# Installs the pinned Swagger UI release that /docs serves into
# gateway/apidocs/swagger-ui (git-ignored; embedded in the binary at build
# time). It comes from the npm registry as the swagger-ui-dist package and is
# checked against the registry's published integrity hash before use.
set -euo pipefail

version=5.35.0
integrity=sha512-U06rpMtW9V3XPGOBeamTUSr0Z09jMX4IJuANpE/EZbAhw0G8CgwrzU4YmXkn/h0wCDNsXdGarTNNHC3sU8yVUQ==
files=(swagger-ui-bundle.js swagger-ui.css favicon-32x32.png LICENSE)

cd "$(dirname "$0")/.."
dest=gateway/apidocs/swagger-ui
if [[ -f $dest/VERSION && $(<"$dest/VERSION") == "$version" ]]; then
	exit 0
fi
command -v npm >/dev/null || { echo "fetch-swagger-ui: npm is needed (apt-get install npm)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "swagger-ui-dist@$version" >/dev/null 2>&1)
tarball=$tmp/swagger-ui-dist-$version.tgz
got=$(node -e 'const c=require("crypto"),f=require("fs");
process.stdout.write("sha512-"+c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tarball")
if [[ $got != "$integrity" ]]; then
	echo "fetch-swagger-ui: swagger-ui-dist@$version has integrity $got, want $integrity" >&2
	exit 1
fi
tar -xzf "$tarball" -C "$tmp"
mkdir -p "$dest"
for f in "${files[@]}"; do
	cp "$tmp/package/$f" "$dest/$f"
done
echo "$version" >"$dest/VERSION"
echo "Swagger UI $version installed in $dest"
