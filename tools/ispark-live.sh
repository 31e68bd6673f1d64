#!/bin/sh
# ispark-live.sh MODE RUN: issue 11's live comparison on one machine.
# Starts `allot dev --agents 4 --reclaim` (4 agents of 4 cpus, 4 GB) on
# port 5392, launches $APPS (default 4) kmeans applications $GAP (15) s
# apart, $ITERS (80) iterations each (each asks for 4 executors of 1 core,
# up to 8 with the backlog rule; the cluster holds 12), each under --elastic MODE
# (dynamic or ispark), waits for all, and prints one JSON line: per-app
# makespans, the span from the first start to the last end, executor CPU
# from the executors' own samples over the cluster's 16 cpus, handoffs,
# partitions moved and recomputations. Needs /tmp/p11r/{allot,kmeans} and
# /tmp/p11r/points.txt (kmeans --generate 300000).
set -e
MODE=$1 RUN=$2
APPS=${APPS:-4} GAP=${GAP:-15} ITERS=${ITERS:-80}
D=/tmp/p11r/live-$MODE-$RUN
rm -rf $D && mkdir -p $D
/tmp/p11r/allot dev --agents 4 --reclaim --listen 127.0.0.1:5392 >$D/dev.out 2>$D/dev.err &
DEV=$!
sleep 3
PIDS=
for i in $(seq 1 $APPS); do
  /tmp/p11r/kmeans --master 127.0.0.1:5392 --input /tmp/p11r/points.txt --k 4 --iterations $ITERS --partitions 8 \
    --executors 4 --cores 1 --elastic $MODE --event-log-dir $D/ev >$D/app$i.out 2>$D/app$i.err &
  PIDS="$PIDS $!"
  [ $i -lt $APPS ] && sleep $GAP
done
wait $PIDS || true
# every run must compute the same centres
for i in $(seq 2 $APPS); do cmp -s $D/app1.out $D/app$i.out || echo "app$i: different centres" >&2; done
curl -s 127.0.0.1:5392/metrics | grep INVERSE_OFFERS >$D/inverse.txt || true
kill $DEV
wait $DEV 2>/dev/null || true
python3 - "$D" "$MODE" "$RUN" <<'PY'
import json, glob, sys
d, mode, run = sys.argv[1:]
apps, cpu_s, t0, t1, moved, handoffs, recomputed = [], 0.0, None, None, 0, 0, 0
for p in sorted(glob.glob(d + "/ev/*.jsonl")):
    start = end = None
    for line in open(p):
        e = json.loads(line)
        k = e["event"]
        if k == "application_start": start = e["time"]
        elif k == "application_end":
            end = e["time"]; recomputed += e.get("recomputed_partitions", 0)
            apps.append(round(e["duration_s"], 2)); ok = e["success"]
            if not ok: apps[-1] = -1
        elif k == "executor_sample": cpu_s += e["cpu"]  # one-second samples: cores busy
        elif k == "partitions_moved": moved += e["count"]; handoffs += 1
    t0 = start if t0 is None else min(t0, start)
    t1 = end if t1 is None else max(t1, end)
span = t1 - t0
import re
waits = [m.group(1) for f in sorted(glob.glob(d + "/app*.err")) for m in re.finditer(r"waited (\S+) for the job boundary, handoff took (\S+)", open(f).read())]
print(json.dumps({"mode": mode, "run": int(run), "app_makespans_s": apps, "span_s": round(span, 2),
    "executor_cpu_util": round(cpu_s / (16 * span), 4), "moves": handoffs, "partitions_moved": moved,
    "recomputed": recomputed, "boundary_waits": waits, "inverse": open(d + "/inverse.txt").read().split("\n")}))
PY
