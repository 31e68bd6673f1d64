#!/bin/sh
# ispark-two.sh MODE RUN: two applications on a cluster with room for one
# (issue 11). `allot dev --agents $AGENTS --reclaim` with agents of
# $AGENT_CPUS cpus; the first kmeans ($A_EXECS executors of 1 core + 0.1
# executor overhead each, $A_ITERS iterations) leaves no room for another
# executor; the second ($B_EXECS executors, $B_ITERS iterations) arrives
# $GAP s later. Both run under --elastic MODE (dynamic or ispark).
#
# The defaults are the setup after the change (docs/ispark.md, "Two
# applications"): agents that advertise no more task cores than the host
# has (2 agents of 1.1 cpus = 2 cores for tasks + 2 x 0.1 executor
# overhead on a 2-core host). The setup before it was
# AGENT_CPUS=3 A_EXECS=5 B_EXECS=2 A_ITERS=60 (6 cpus advertised).
#
# Prints one JSON line: the first's makespan, how long the second waited
# for its first executor, its makespan, recomputations, executors the
# first gave back and partitions moved, the first's epoch utilisations and
# U_max, and the host's 1-minute load average before and after the run
# (other work on the host shares its cores), whether the first heard an
# inverse offer, the driver's handoff timings, and $CODE (the commit the
# binaries were built from). Needs $BIN/{allot,kmeans} and $BIN/$POINTS
# (kmeans --generate 300000 --k 4). A_EXTRA adds flags to the first only
# (e.g. --ispark-force-util 0.1 to see what a give-back costs it).
#
# A_PROG chooses the first application: kmeans (the default: the same
# work every iteration) or pagerank, delta PageRank with --tol $A_TOL over
# the citation graph $BIN/$GRAPH (pagerank --generate N --citations W),
# $A_PARTS partitions, $A_MEM MB executors, --iterations $A_ITERS as a cap:
# its senders, and with them its work, fall iteration by iteration
# (docs/ispark.md, "Two applications", the pagerank rows). Needs
# $BIN/pagerank then.
set -e
MODE=$1 RUN=$2
BIN=${BIN:-/tmp/p11r}
AGENTS=${AGENTS:-2} AGENT_CPUS=${AGENT_CPUS:-1.1}
A_EXECS=${A_EXECS:-2} B_EXECS=${B_EXECS:-1} A_ITERS=${A_ITERS:-150} B_ITERS=${B_ITERS:-20} GAP=${GAP:-10}
POINTS=${POINTS:-points.txt} A_EXTRA=${A_EXTRA:-} CODE=${CODE:-}
A_PROG=${A_PROG:-kmeans} GRAPH=${GRAPH:-cites.txt} A_TOL=${A_TOL:-1e-13} A_PARTS=${A_PARTS:-4} A_MEM=${A_MEM:-1024}
D=$BIN/two-$MODE-$RUN
rm -rf $D && mkdir -p $D
LOAD0=$(cut -d' ' -f1 /proc/loadavg)
$BIN/allot dev --agents $AGENTS --reclaim --resources "cpus:$AGENT_CPUS;mem:4096;disk:20000;ports:[31000-32000]" --listen 127.0.0.1:5393 >$D/dev.out 2>$D/dev.err &
DEV=$!
sleep 3
K="$BIN/kmeans --master 127.0.0.1:5393 --input $BIN/$POINTS --k 4 --partitions 10 --cores 1 --elastic $MODE"
if [ "$A_PROG" = pagerank ]; then
	$BIN/pagerank --master 127.0.0.1:5393 --input $BIN/$GRAPH --partitions $A_PARTS --cores 1 --mem $A_MEM --elastic $MODE --tol $A_TOL \
		--iterations $A_ITERS --executors $A_EXECS --max-executors $A_EXECS $A_EXTRA --event-log-dir $D/ev1 >$D/app1.out 2>$D/app1.err &
	ASETUP="A pagerank $GRAPH tol $A_TOL, $A_PARTS parts, $A_MEM MB, $A_EXECS exec, cap $A_ITERS it"
else
	$K --iterations $A_ITERS --executors $A_EXECS --max-executors $A_EXECS $A_EXTRA --event-log-dir $D/ev1 >$D/app1.out 2>$D/app1.err &
	ASETUP="A $A_EXECS exec x $A_ITERS it"
fi
A=$!
sleep $GAP
$K --iterations $B_ITERS --executors $B_EXECS --max-executors $B_EXECS --event-log-dir $D/ev2 >$D/app2.out 2>$D/app2.err &
B=$!
wait $A $B || true
LOAD1=$(cut -d' ' -f1 /proc/loadavg)
kill $DEV
wait $DEV 2>/dev/null || true
python3 - "$D" "$MODE" "$RUN" "$LOAD0" "$LOAD1" "$CODE" "$AGENTS x cpus:$AGENT_CPUS; $POINTS; $ASETUP; B $B_EXECS exec x $B_ITERS it; gap $GAP s${A_EXTRA:+; A $A_EXTRA}" <<'PY'
import json, glob, re, sys
d, mode, run, load0, load1, code, setup = sys.argv[1:]
def read(n):
    out = {"recomputed": 0, "released": 0, "moved": 0, "util": [], "umax": {}}
    for line in open(glob.glob(d + "/ev%d/*.jsonl" % n)[0]):
        e = json.loads(line)
        k = e["event"]
        if k == "application_start": out["start"] = e["time"]
        elif k == "executor_added" and "first_exec" not in out: out["first_exec"] = e["time"]
        elif k == "executor_removed" and e["time"] < out.get("end", 1e18): out["released"] += 1
        elif k == "partitions_moved": out["moved"] += e["count"]
        elif k == "executor_utilisation":
            out["util"].append(round(max(e["cpu"], e["mem"]), 2)); out["umax"][e["executor"]] = round(e["umax"], 2)
        elif k == "application_end":
            out["end"] = e["time"]
            out["makespan"] = round(e["duration_s"], 2); out["recomputed"] = e.get("recomputed_partitions", 0); out["ok"] = e["success"]
    return out
a, b = read(1), read(2)
# the driver's "iSpark scale-down: N givers, M moves; waited X for the job boundary, handoff took Y"
err1 = open(d + "/app1.err").read()
# delta pagerank logs "iteration I: S senders, U vertices updated"
senders = [int(x) for x in re.findall(r"delta pagerank: iteration \d+: (\d+) senders", err1)]
handoffs = re.findall(r"waited (\S+) for the job boundary, handoff took (\S+)", open(d + "/app1.err").read())
heard = "inverse offers: other frameworks wait" in open(d + "/app1.err").read()
print(json.dumps({"mode": mode, "run": int(run), "code": code, "setup": setup, "inverse_offer_heard": heard, "first_makespan_s": a["makespan"], "second_wait_s": round(b["first_exec"] - b["start"], 2),
    "second_makespan_s": b["makespan"], "recomputed": a["recomputed"] + b["recomputed"], "ok": a["ok"] and b["ok"],
    "first_released": a["released"], "handoffs": handoffs, "partitions_moved": a["moved"], "first_util": a["util"], "first_umax": a["umax"],
    "load1_before": float(load0), "load1_after": float(load1),
    **({"first_iterations": len(senders), "first_senders_first_last": [senders[0], senders[-1]]} if senders else {})}))
PY
