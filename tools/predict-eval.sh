#!/usr/bin/env bash
# tools/predict-eval.sh: the demand predictor's accuracy on held-out settings,
# measured on real runs (issue 10; the paper: "mostly less than 10 %"). It
# starts `allot dev` (AGENTS agents, --throttle-io with DISK_BW/NET_BW MB/s so
# that bandwidth is what the agents advertise), runs wordcount, kmeans and
# pagerank one at a time at every setting of CORES (cores per executor) x
# four input sizes (SCALE x 1, 2, 4, 8), EXECUTORS executors each, and then
# `allot predict eval`: every run predicted by a model trained on that
# application's runs at the other settings, beside what it measured.
#
#   tools/predict-eval.sh                    # CORES="1 2 3" SCALE=1 DISK_FROM=file
#   OUT=/tmp/pe SCALE=2 tools/predict-eval.sh
#
# Output: the eval table (OUT/eval.txt, OUT/eval.json); logs under OUT/logs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
AGENTS=${AGENTS:-2}
DISK_BW=${DISK_BW:-40}
NET_BW=${NET_BW:-40}
EXECUTORS=${EXECUTORS:-2}
CORES=${CORES:-"1 2 3"}
SCALE=${SCALE:-1}
DISK_FROM=${DISK_FROM:-file} # what the throttle binds on: file I/O
OUT=${OUT:-$(mktemp -d /tmp/predict-eval-XXXX)}
mkdir -p "$OUT/bin" "$OUT/data" "$OUT/logs"
res="cpus:4;mem:4096;disk:20000;ports:[31000-32000];disk_bw:$DISK_BW;net_bw:$NET_BW"

(cd "$root" && for p in cmd/allot examples/wordcount examples/kmeans examples/pagerank; do
	go build -o "$OUT/bin/$(basename $p)" ./$p
done)
bin=$OUT/bin
for m in 1 2 4 8; do
	[ -s "$OUT/data/words$m.txt" ] || "$bin/wordcount" --generate $((m * SCALE * 4000000)) --input "$OUT/data/words$m.txt"
	[ -s "$OUT/data/points$m.txt" ] || "$bin/kmeans" --generate $((m * SCALE * 50000)) --input "$OUT/data/points$m.txt"
	[ -s "$OUT/data/edges$m.txt" ] || "$bin/pagerank" --generate $((m * SCALE * 10000)) --input "$OUT/data/edges$m.txt"
done

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin/allot" dev --agents "$AGENTS" --resources "$res" --throttle-io --listen "127.0.0.1:$port" >"$OUT/dev.log" 2>&1 &
dev=$!
trap 'kill $dev 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done

n=0
for c in $CORES; do
	for m in 1 2 4 8; do
		for a in wordcount kmeans pagerank; do
			case $a in
			wordcount) input=(--input "$OUT/data/words$m.txt") ;;
			kmeans) input=(--input "$OUT/data/points$m.txt" --iterations 5) ;;
			pagerank) input=(--input "$OUT/data/edges$m.txt" --iterations 5) ;;
			esac
			size=$(stat -c %s "${input[1]}")
			"$bin/$a" --master "127.0.0.1:$port" --executors "$EXECUTORS" --cores "$c" --mem 1536 --quiet \
				--event-log-dir "$OUT/logs" --input-bytes "$size" "${input[@]}" >/dev/null
			n=$((n + 1))
			echo "run $n: $a, $c cores, $size input bytes" >&2
		done
	done
done
kill $dev; wait $dev 2>/dev/null || true
"$bin/allot" predict eval --logs "$OUT/logs" --disk-from "$DISK_FROM" | tee "$OUT/eval.txt"
"$bin/allot" predict eval --logs "$OUT/logs" --disk-from "$DISK_FROM" --json >"$OUT/eval.json"
echo "logs and results in $OUT" >&2
