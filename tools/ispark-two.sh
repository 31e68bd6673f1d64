#!/bin/sh
# ispark-two.sh MODE RUN: two applications on a cluster with room for one
# (issue 11). `allot dev --agents 2 --reclaim` with agents of 3 cpus: the
# first kmeans (5 executors of 1 core + 0.1 overhead each) leaves no room
# for another executor; the second (2 executors) arrives 10 s later.
# Prints one JSON line: the first's makespan, how long the second waited
# for its first executor, its makespan, recomputations.
set -e
MODE=$1 RUN=$2
D=/tmp/p11r/two-$MODE-$RUN
rm -rf $D && mkdir -p $D
/tmp/p11r/allot dev --agents 2 --reclaim --resources "cpus:3;mem:4096;disk:20000;ports:[31000-32000]" --listen 127.0.0.1:5393 >$D/dev.out 2>$D/dev.err &
DEV=$!
sleep 3
K="/tmp/p11r/kmeans --master 127.0.0.1:5393 --input /tmp/p11r/points.txt --k 4 --partitions 10 --cores 1 --elastic $MODE"
$K --iterations 60 --executors 5 --max-executors 5 --event-log-dir $D/ev1 >$D/app1.out 2>$D/app1.err &
A=$!
sleep 10
$K --iterations 20 --executors 2 --max-executors 2 --event-log-dir $D/ev2 >$D/app2.out 2>$D/app2.err &
B=$!
wait $A $B || true
kill $DEV
wait $DEV 2>/dev/null || true
python3 - "$D" "$MODE" "$RUN" <<'PY'
import json, glob, sys
d, mode, run = sys.argv[1:]
def read(n):
    out = {"recomputed": 0}
    for line in open(glob.glob(d + "/ev%d/*.jsonl" % n)[0]):
        e = json.loads(line)
        if e["event"] == "application_start": out["start"] = e["time"]
        if e["event"] == "executor_added" and "first_exec" not in out: out["first_exec"] = e["time"]
        if e["event"] == "application_end":
            out["makespan"] = round(e["duration_s"], 2); out["recomputed"] = e.get("recomputed_partitions", 0); out["ok"] = e["success"]
    return out
a, b = read(1), read(2)
print(json.dumps({"mode": mode, "run": int(run), "first_makespan_s": a["makespan"], "second_wait_s": round(b["first_exec"] - b["start"], 2),
    "second_makespan_s": b["makespan"], "recomputed": a["recomputed"] + b["recomputed"], "ok": a["ok"] and b["ok"]}))
PY
