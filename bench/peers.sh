#!/usr/bin/env bash
# charter beside pgqueuer and pgbench on one throwaway PostgreSQL 15, with the side-by-side
# peers harness, then the goals read off that one run (bench/peers_goals.py).
#
#   bench/peers.sh                      # REPS=3 by default, ~6 minutes
#   PEERS_HARNESS=/path/to/bench-peers REPS=1 PEERS="pgbench charter pgqueuer dbos" bench/peers.sh
#
# The harness is copied to a scratch folder first, so its own results stay as they were.
set -euo pipefail
PROJECT=$(cd "$(dirname "$0")/.." && pwd)
HARNESS=${PEERS_HARNESS:-$(dirname "$PROJECT")/shared/bench-peers}
[ -f "$HARNESS/run_all.sh" ] || { echo "no peers harness at $HARNESS; set PEERS_HARNESS" >&2; exit 2; }
WORK=$(mktemp -d /tmp/charter-peers.XXXXXX)
cp -r "$HARNESS"/. "$WORK"/
rm -rf "$WORK/raw"
(
  cd "$WORK"
  CHARTER_PROJECT="$PROJECT" REPS="${REPS:-3}" PROFILES="${PROFILES:-sync_on}" \
    PGBENCH_T="${PGBENCH_T:-5}" PGBENCH_CLIENTS="${PGBENCH_CLIENTS:-4}" \
    PEERS="${PEERS:-pgbench charter pgqueuer}" ./run_all.sh
)
echo
echo "== goals (harness output in $WORK)"
"$PROJECT/.venv/bin/python" "$PROJECT/bench/peers_goals.py" "$WORK/raw"
