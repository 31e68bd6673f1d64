#!/bin/sh
# chaos.sh: the chaos test (integration TestChaos) on loopback.
#
# Three masters, three agents and a framework (framework/sched) running
# short tasks while a nemesis kills -9 leaders and agents, keeps one agent
# down past a 4 s --agent-ping-timeout and pauses a master with SIGSTOP;
# then a checker holds the framework's record against the ledger the tasks
# write, and compares the three masters' registries. It prints the figures
# (tasks, relaunches, kills, stops, violations, longest time without
# progress) and fails on any violation.
#
# Usage: tools/chaos.sh [long] [SEED]
#   (no argument) the short run CI makes: 60 tasks, five faults, under a minute
#   long          300 tasks, faults until they are done (a few minutes)
#   SEED          replays the nemesis's choices of an earlier run (its log says the seed)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ARGS=""
TIMEOUT=5m
if [ "${1:-}" = long ]; then
	ARGS="-chaos.long"
	TIMEOUT=20m
	shift
fi
if [ -n "${1:-}" ]; then
	ARGS="$ARGS -chaos.seed $1"
fi
LOG=$(mktemp /tmp/chaos-XXXXXX.log)
cd "$ROOT"
status=0
# shellcheck disable=SC2086 # ARGS is a list of flags
go test -count=1 -timeout "$TIMEOUT" -run '^TestChaos$' -v ./integration -args $ARGS >"$LOG" 2>&1 || status=$?
grep -E '^(--- (PASS|FAIL)|ok|FAIL)|chaos_test\.go:[0-9]+: (chaos|[0-9:.]+ nemesis)' "$LOG" || true
echo "full log (processes' output included): $LOG"
exit $status
