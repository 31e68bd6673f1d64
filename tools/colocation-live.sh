#!/bin/sh
# colocation-live.sh: the co-location bandit live on one machine (issue 13).
#
# For each sorter (fifo and bandit) it starts `allot dev --agents 1` (one
# agent of 2 cpus that advertises disk_bw, usage reported every second), and
# runs the same queue RUNS times on each, alternating between them (the
# bandit keeps learning from one run to the next, as the paper's RA then
# RA*): 16 jobs of one
# task each from examples/colojob, submitted in blocks of 4
# (cpu, disk, cpu, disk), so FIFO mostly pairs like with like. It prints
# each run's makespan, the agent's usage_rates (iowait included) from
# /state in the middle of a run, and at the end the bandit's learned
# preferences (`allot operator policy show`).
#
# Usage: tools/colocation-live.sh [RUNS]   (default 3; about 1-2 min a run)
# Environment: PORT (default 5071), CPU_UNITS, DISK_MB (work per task),
# SORTERS (default "fifo bandit"), USAGE (usage interval, default 1s),
# OUT (a directory for the raw lines; default a temporary one).
set -eu
RUNS=${1:-3}
PORT=${PORT:-5071}
CPU_UNITS=${CPU_UNITS:-150}
DISK_MB=${DISK_MB:-800}
SORTERS=${SORTERS:-fifo bandit}
USAGE=${USAGE:-1s}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$(mktemp -d /tmp/colocation-live-XXXXXX)}
BIN=$OUT/bin
mkdir -p "$BIN"
(cd "$ROOT" && go build -o "$BIN/allot" ./cmd/allot && go build -o "$BIN/colojob" ./examples/colojob)
RES='cpus:2;mem:2048;disk:10000;disk_bw:200;net_bw:100;ports:[31000-31100]'

PIDS=
stop_devs() {
	for p in $PIDS; do
		kill -INT "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	PIDS=
}
trap stop_devs EXIT INT TERM

# wait_master ADDR
wait_master() {
	i=0
	until curl -sf "http://$1/state" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 100 ] && { echo "master $1 did not come up" >&2; exit 1; }
		sleep 0.2
	done
	sleep 2 # the agent registers
}

# run_queue SORTER RUN MASTER: 16 jobs in blocks, prints the makespan.
run_queue() {
	sorter=$1 run=$2 MASTER=$3
	lines=$OUT/$sorter-run$run.jsonl
	: >"$lines"
	pids=
	n=0
	for typ in cpu disk cpu disk; do
		for k in 1 2 3 4; do
			n=$((n + 1))
			units=$CPU_UNITS
			[ "$typ" = disk ] && units=$DISK_MB
			"$BIN/colojob" submit --master "$MASTER" --type "$typ" --units "$units" \
				--name "$sorter-r$run-j$n-$typ" >>"$lines" &
			pids="$pids $!"
			sleep 0.05 # registration order is the queue's order; all 16 queue up within a second
		done
	done
	sleep 5
	curl -s "http://$MASTER/state" | python3 -c '
import json, sys
s = json.load(sys.stdin)
for a in s.get("slaves", s.get("agents", [])):
    print("    /state usage_rates:", json.dumps(a.get("usage_rates")))' || true
	for p in $pids; do wait "$p"; done
	python3 - "$lines" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
start = min(r["submitted"] for r in rows)
end = max(r["finished"] for r in rows)
order = "".join(r["type"][0] for r in sorted(rows, key=lambda r: r["started"]))
print("    jobs %d, makespan %.1f s, start order %s" % (len(rows), end - start, order))
EOF
}

# Both clusters run side by side (ports PORT and PORT+1) and their queues
# alternate, run by run, so that the load the rest of the machine puts on
# them (a shared machine) falls on both alike.
port=$PORT
for sorter in $SORTERS; do
	"$BIN/allot" dev --agents 1 --listen "127.0.0.1:$port" --sorter "$sorter" --mode characterized \
		--resources "$RES" --usage-interval "$USAGE" >"$OUT/dev-$sorter.log" 2>&1 &
	PIDS="$PIDS $!"
	wait_master "127.0.0.1:$port"
	port=$((port + 1))
done
r=1
while [ $r -le "$RUNS" ]; do
	port=$PORT
	for sorter in $SORTERS; do
		echo "  run $r --sorter $sorter"
		run_queue "$sorter" "$r" "127.0.0.1:$port"
		port=$((port + 1))
	done
	r=$((r + 1))
done
port=$PORT
for sorter in $SORTERS; do
	if [ "$sorter" = bandit ]; then
		"$BIN/allot" operator policy show --master "127.0.0.1:$port"
	fi
	port=$((port + 1))
done
stop_devs
echo "raw lines in $OUT"
