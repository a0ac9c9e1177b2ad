#!/usr/bin/env bash
# Writes gateway/testdata/previous-release/: a database filled by an
# earlier release of the service (COMMIT), through its own API and commands,
# dumped with pg_dump, and the REST answers that release gave about it.
# TestPreviousReleaseData restores the dump, lets the current code migrate
# it, and asks the same questions: the answers must be the same bytes.
#
# Usage: scripts/previous-release-data.sh COMMIT
# Run from the repository root; it builds COMMIT in a worktree of its own
# and starts its `jobboard dev` on free loopback ports. Needs curl and the
# PostgreSQL 15 binaries (pg_dump), as make run does.
set -euo pipefail
commit=${1:?usage: scripts/previous-release-data.sh COMMIT}
out=gateway/testdata/previous-release
pgbin=${PG_BIN:-/usr/lib/postgresql/15/bin}
public=http://jobboard.test

work=$(mktemp -d)
chmod o+x "$work" # the cluster's postgres user must reach the data folder
dev_pid=
cleanup() {
	if [ -n "$dev_pid" ]; then kill "$dev_pid" 2>/dev/null || true; wait "$dev_pid" 2>/dev/null || true; fi
	git worktree remove --force "$work/src" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

echo "building $commit"
git worktree add --detach "$work/src" "$commit" >/dev/null
(cd "$work/src" && scripts/fetch-swagger-ui.sh >/dev/null && go build -o "$work/jobboard" ./cmd/jobboard)

# A loopback port nothing answers on.
free_port() {
	while :; do
		local p=$((20000 + RANDOM % 12000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}
http=127.0.0.1:$(free_port)
JOBBOARD_HTTP_ADDR=$http JOBBOARD_GRPC_ADDR=127.0.0.1:$(free_port) JOBBOARD_METRICS_ADDR=127.0.0.1:$(free_port) \
	JOBBOARD_PUBLIC_URL=$public "$work/jobboard" dev --data "$work/data" >"$work/dev.out" 2>"$work/dev.err" &
dev_pid=$!
for _ in $(seq 600); do
	curl -sf "http://$http/readyz" >/dev/null 2>&1 && break
	kill -0 "$dev_pid" 2>/dev/null || { cat "$work/dev.err" >&2; exit 1; }
	sleep 0.1
done
key=$(cat "$work/data/demo-api-key")
database=$(sed -n "s/^ *export DATABASE_URL='\(.*\)'$/\1/p" "$work/dev.out")
[ -n "$database" ] || { echo "no DATABASE_URL in dev's banner" >&2; cat "$work/dev.out" >&2; exit 1; }
api() { curl -sS -u "$key:" "$@"; }
base=http://$http/api/v2.0

echo "writing through $commit's API"
# A post that updates one demo job, adds one and refuses one, and a delete.
api -d '[{"referenceNumber":"DEMO1001","title":"OTR Company Driver - Dry Van","city":"Dallas","state":"TX",
  "postalCode":"75201-1234","driverType":"Company Driver","freightType":"Dry Van","payAmountMin":"0.6",
  "payAmountMax":"0.7","payFrequency":"Per Mile","employmentType":["Full-Time","Temporary"],"routeType":"OTR",
  "description":"<p>Home <em>weekly</em> <script>x</script></p>","twicOnly":"1","licenseClass":"A","benefits":"dental"},
  {"referenceNumber":"REL2001","title":"Local Tanker","state":"oh","driverType":"company driver","freightType":"Tanker",
  "description":"Hazmat tanker, home daily","payAmountMin":"28","payFrequency":"Hourly"},
  {"referenceNumber":"REL2002","title":"No state"}]' "$base/jobs.json" >/dev/null
api -X DELETE "$base/jobs.json/reference/DEMO1003" >/dev/null
# An import with a job updated, one added, two refused and an ignored value.
import=$(api -H 'Content-Type: application/json' -d '{"jobs":[
  {"referenceNumber":"REL3001","title":"Regional Reefer","state":"GA","driverType":"Owner Operator",
   "freightType":"Refrigerated","description":"Southeast lanes","payAmountMax":"4200","payFrequency":"Weekly","perks":"fuel card"},
  {"referenceNumber":"REL2001","title":"Local Tanker Driver","state":"OH","driverType":"Company Driver",
   "freightType":"Tanker","description":"Hazmat tanker, home daily"},
  {"referenceNumber":"REL3002","title":"x","state":"ZZ"},{"title":"no reference"}]}' "$base/job-imports")
import_id=$(printf '%s' "$import" | sed -n 's/.*"id":"\([0-9a-f-]*\)".*/\1/p')
for _ in $(seq 300); do
	api "$base/job-imports/$import_id" | grep -q '"status":"complete"' && break
	sleep 0.1
done
# A webhook endpoint for new applications, tested once (its receiver is
# never up: the attempts are refused and recorded).
endpoint=$(api -d '{"url":"http://127.0.0.1:9/hooks","events":["driver.application.received"],"description":"dispatch"}' "$base/webhooks")
endpoint_id=$(printf '%s' "$endpoint" | sed -n 's/.*"id":"\(we_[0-9a-f]*\)".*/\1/p')
api -X POST "$base/webhooks/$endpoint_id/test" >/dev/null
# Two applications through the intake's path, with their events.
cat >"$work/drivers.json" <<'JSON'
[{"first_name":"Dana","last_name":"Lead","address":"9 Dock St","city":"Joliet","state":"IL","zip":"60431",
  "email":"dana.lead@example.com","phone":"815-555-0188","driver_type":"Company Driver","experience":"3",
  "sent":"2026-11-20T15:04:05Z","job_applications":[{"reference":"DEMO1001"}]},
 {"first_name":"Eli","last_name":"Ortiz","address":"4 Rail Rd","city":"Laredo","state":"TX","zip":"78040",
  "email":"eli.ortiz@example.com","phone":"956-555-0102","driver_type":"Owner Operator","experience":"12",
  "endorsements":["HAZMAT (H)"],"sent":"2026-11-21T08:00:00Z"}]
JSON
DATABASE_URL=$database "$work/jobboard" drivers import --account 1 "$work/drivers.json" >/dev/null
sleep 1 # the test delivery's first attempts

echo "asking $commit's API"
rm -rf "$out"
mkdir -p "$out/answers"
first_job=$(api "$base/jobs.json" | sed -n 's/^\[{"id":\([0-9]*\).*/\1/p')
dana=$(api "$base/drivers.json?email=dana.lead@example.com" | sed -n 's/^\[{"id":\([0-9]*\).*/\1/p')
# What the test asks, with the ids of this database: a file name and a path.
cat >"$out/requests" <<EOF
jobs.json jobs.json
jobs.xml jobs.xml
job.json jobs.json/$first_job
drivers.json drivers.json?max=5
drivers-page-2.xml drivers.xml?max=3&page=2
drivers-tx.json drivers.json?state=TX&max=10
driver.json drivers.json/$dana
driver.xml drivers.xml/$dana
import.json job-imports/$import_id
events.json events?limit=10
webhooks.json webhooks
deliveries.json webhooks/$endpoint_id/deliveries
EOF
while read -r name path; do
	api "$base/$path" >"$out/answers/$name"
done <"$out/requests"
printf '%s\n' "$key" >"$out/api-key"
printf '%s\n' "$commit" >"$out/commit"
printf '%s\n' "$public" >"$out/public-url"
date -u +%Y-%m-%dT%H:%M:%SZ >"$out/written-at"
"$pgbin/pg_dump" --no-owner --no-privileges --dbname="$database" | gzip -9n >"$out/dump.sql.gz"
echo "wrote $out: $(ls "$out/answers" | wc -l) answers, a dump of $(stat -c %s "$out/dump.sql.gz") bytes"
