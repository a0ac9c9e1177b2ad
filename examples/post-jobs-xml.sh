#!/usr/bin/env bash
# Posts a jobs feed in XML to the job board and prints the answer: the XML
# batch summary, then its counts on one line.
#
#   JOBBOARD_API_KEY=jb_live_... examples/post-jobs-xml.sh [FEED]
#
# FEED defaults to jobs-feed.xml beside this script. JOBBOARD_URL is the
# service's base address (default http://localhost:8080).
#
# The script exits non-zero when the request fails (bad key, malformed feed:
# any HTTP error), after printing the service's error body. Problems with
# single jobs are not HTTP errors: the post answers 200, saves the valid jobs
# and lists each problem in the summary's errorMessages.
set -euo pipefail

key=${JOBBOARD_API_KEY:?set JOBBOARD_API_KEY to the account API key}
base=${JOBBOARD_URL:-http://localhost:8080}
feed=${1:-"$(dirname "$0")/jobs-feed.xml"}

# The key is the Basic user name with an empty password. The .xml suffix of
# the path, not Content-Type, makes the service read the body as XML.
# --data-binary sends the file unchanged (-d would drop its newlines).
if ! summary=$(curl -sS --fail-with-body -u "$key:" --data-binary @"$feed" "$base/api/v2.0/jobs.xml"); then
	echo "$summary" >&2
	exit 1
fi
echo "$summary"

count() { sed -n "s:.*<$1>\([0-9]*\)</$1>.*:\1:p" <<<"$summary"; }
echo "added $(count added), updated $(count updated), unchanged $(count unchanged), errors $(count errors)"
