#!/usr/bin/env bash
# tools/prophet-live.sh: issue 10's live comparison on one machine. For each
# seed and policy (capacity, drf, prophet) it starts `allot dev` with AGENTS
# agents that advertise DISK_BW/NET_BW MB/s and make them real
# (--throttle-io: the framework library's executors on an agent share one
# token bucket per device), then runs wordcount, kmeans and pagerank at once
# (order and start offsets drawn from the seed) and reports the makespan:
# first start to last finish. Under prophet the applications declare the
# profile `allot predict` learned from a training pass (one run of each
# under drf), and every offer reason is kept. Output: OUT/results.tsv
# (seed, policy, makespan_s) and a summary; logs under OUT.
#
#   tools/prophet-live.sh            # SEEDS=3 AGENTS=4 DISK_BW=8 NET_BW=8
#   WORDS_BYTES=120000000 POINTS=1500000 NODES=150000 tools/prophet-live.sh
#
# The seed varies what a live run can vary: the applications' order and
# their start offsets (0-3 s); the master has no allocation seed flag.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SEEDS=${SEEDS:-3}
AGENTS=${AGENTS:-4}
DISK_BW=${DISK_BW:-8}
NET_BW=${NET_BW:-8}
EXECUTORS=${EXECUTORS:-2}
WORDS_BYTES=${WORDS_BYTES:-24000000} # wordcount input
POINTS=${POINTS:-300000}             # kmeans points
NODES=${NODES:-30000}                # pagerank graph nodes
DISK_FROM=${DISK_FROM:-device}       # allot predict train --disk-from: device or file
OUT=${OUT:-$(mktemp -d /tmp/prophet-live-XXXX)}
mkdir -p "$OUT/bin" "$OUT/data" "$OUT/train"
res="cpus:4;mem:4096;disk:20000;ports:[31000-32000];disk_bw:$DISK_BW;net_bw:$NET_BW"

(cd "$root" && for p in cmd/allot examples/wordcount examples/kmeans examples/pagerank; do
	go build -o "$OUT/bin/$(basename $p)" ./$p
done)
bin=$OUT/bin
[ -s "$OUT/data/words.txt" ] || "$bin/wordcount" --generate "$WORDS_BYTES" --input "$OUT/data/words.txt"
[ -s "$OUT/data/points.txt" ] || "$bin/kmeans" --generate "$POINTS" --input "$OUT/data/points.txt"
[ -s "$OUT/data/edges.txt" ] || "$bin/pagerank" --generate "$NODES" --input "$OUT/data/edges.txt"

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# app NAME MASTER LOGDIR [extra flags]: runs one application to completion.
app() {
	local name=$1 master=$2 logs=$3
	shift 3
	local input
	case $name in
	wordcount) input=(--input "$OUT/data/words.txt") ;;
	kmeans) input=(--input "$OUT/data/points.txt" --iterations 5) ;;
	pagerank) input=(--input "$OUT/data/edges.txt" --iterations 5) ;;
	esac
	local size
	size=$(stat -c %s "${input[1]}")
	"$bin/$name" --master "$master" --executors "$EXECUTORS" --cores 1 --mem 512 --quiet \
		--event-log-dir "$logs" --input-bytes "$size" "${input[@]}" "$@" >/dev/null
}

# cluster POLICY LOG: starts allot dev, prints its address.
cluster() {
	local port
	port=$(freeport)
	"$bin/allot" dev --agents "$AGENTS" --resources "$res" --throttle-io --sorter "$1" --mode characterized \
		--listen "127.0.0.1:$port" --log-level debug >"$2" 2>&1 &
	echo "$! 127.0.0.1:$port"
}

wait_up() {
	for _ in $(seq 100); do
		curl -sf "http://$1/health" >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# training pass: each application once, alone, under drf
read -r pid addr < <(cluster drf "$OUT/train/dev.log")
wait_up "$addr"
for a in wordcount kmeans pagerank; do app $a "$addr" "$OUT/train"; done
kill "$pid"; wait "$pid" 2>/dev/null || true
"$bin/allot" predict train --logs "$OUT/train" --out "$OUT/model.json" --disk-from "$DISK_FROM"

printf 'seed\tpolicy\tmakespan_s\n' >"$OUT/results.tsv"
for seed in $(seq "$SEEDS"); do
	order=$(python3 -c "import random; r=random.Random($seed); a=['wordcount','kmeans','pagerank']; r.shuffle(a); print(' '.join(f'{x}:{r.uniform(0,3):.2f}' for x in a))")
	for policy in capacity drf prophet; do
		run=$OUT/$policy-$seed
		mkdir -p "$run"
		read -r pid addr < <(cluster "$policy" "$run/dev.log")
		wait_up "$addr"
		extra=()
		[ "$policy" = prophet ] && extra=(--demand-model "$OUT/model.json")
		start=$(date +%s.%N)
		pids=()
		for item in $order; do
			(sleep "${item#*:}"; app "${item%%:*}" "$addr" "$run" "${extra[@]}") &
			pids+=($!)
		done
		ok=1
		for p in "${pids[@]}"; do wait "$p" || ok=0; done
		end=$(date +%s.%N)
		kill "$pid"; wait "$pid" 2>/dev/null || true
		ms=$(python3 -c "print(f'{$end-$start:.1f}')")
		[ $ok = 1 ] || ms="failed"
		printf '%s\t%s\t%s\n' "$seed" "$policy" "$ms" | tee -a "$OUT/results.tsv"
	done
done
python3 - "$OUT/results.tsv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
for p in ["capacity", "drf", "prophet"]:
    v = [float(r["makespan_s"]) for r in rows if r["policy"] == p and r["makespan_s"] != "failed"]
    if v:
        print(f"{p}\tmean {statistics.mean(v):.1f} s\tsd {statistics.pstdev(v):.1f}\truns {len(v)}")
PY
echo "logs and results in $OUT"
