// Merges Census ZCTA centroids with GeoNames postal codes into one CSV:
// zip,latitude,longitude sorted by ZIP. Census wins where both have a ZIP.
const fs = require('fs');
const [censusModule, geonamesFile] = process.argv.slice(2);

const census = require(require('path').resolve(censusModule));
const out = new Map();
for (const [zip, c] of Object.entries(census)) {
  out.set(zip, [c.latitude, c.longitude]);
}
for (const line of fs.readFileSync(geonamesFile, 'utf8').split('\n')) {
  // country, postal code, place, state, state code, county, county code, ..., lat, lon, accuracy
  const f = line.split('\t');
  if (f.length < 11 || !/^\d{5}$/.test(f[1]) || out.has(f[1])) continue;
  const lat = Number(f[9]), lon = Number(f[10]);
  if (Number.isFinite(lat) && Number.isFinite(lon) && f[9] !== '' && f[10] !== '') out.set(f[1], [lat, lon]);
}
const rows = ['zip,latitude,longitude'];
for (const zip of [...out.keys()].sort()) {
  const [lat, lon] = out.get(zip);
  rows.push(`${zip},${lat},${lon}`);
}
process.stdout.write(rows.join('\n') + '\n');
