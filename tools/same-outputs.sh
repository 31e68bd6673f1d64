#!/usr/bin/env bash
# tools/same-outputs.sh REV: shows that the allocator's outputs did not change
# since REV (a refactor's "behaviour unchanged"): builds allot at REV and at the
# work tree, runs the experiments and simulator comparisons below with each
# (a few minutes; the whole FB-2009 day under joint selection would take 20),
# and diffs the JSON. Exit 0 and "identical" when nothing changed.
# Needs ../shared/data/traces beside the checkout, or ALLOT_TRACES=DIR.
set -euo pipefail
rev=${1:?usage: tools/same-outputs.sh REV}
root=$(cd "$(dirname "$0")/.." && pwd)
traces=${ALLOT_TRACES:-$root/../shared/data/traces}
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

git -C "$root" worktree add -q --detach "$tmp/old" "$rev"
(cd "$tmp/old" && go build -o "$tmp/allot-old" ./cmd/allot)
(cd "$root" && go build -o "$tmp/allot-new" ./cmd/allot)

run() { # run BINARY OUTDIR
	local a=$1 o=$2 s="drf,tsf,psdsf,rpsdsf,fifo,capacity,tetris,random,prophet,tetris-peak"
	mkdir -p "$o"
	"$a" experiment psdsf-table1 --json >"$o/table1.json"
	"$a" experiment psdsf-online --json >"$o/online.json"
	# the traces declare no applications, so under prophet and tetris-peak
	# their jobs take the fallback path; the gangs themselves run here
	"$a" experiment prophet --json >"$o/prophet.json"
	# the cheapest runs that still go through each model: fspy's windows
	# with its probes and application masters, both co-location queues with
	# the learned and oracle rows, iSpark's every policy on a few apps
	"$a" experiment fspy --trace-dir "$traces/swim" --progress never --json >"$o/fspy.json"
	"$a" experiment colocation --seeds 3 --beyond --oracles --json >"$o/colocation.json"
	"$a" experiment ispark --seeds 1 --apps 10 --json >"$o/ispark.json"
	"$a" sim --progress never --jobs "$traces/swim/FB-2009_samples_24_times_1hr_0.tsv" --format swim --max-jobs 400 \
		--sorter $s --mode oblivious,characterized --agent-selection rrr,bestfit,joint --json >"$o/swim2009-400.json" 2>/dev/null
	"$a" sim --progress never --jobs "$traces/swim/FB-2009_samples_24_times_1hr_0.tsv" --format swim \
		--sorter drf,psdsf,tetris,fifo --mode oblivious,characterized --json >"$o/swim2009.json"
	"$a" sim --progress never --jobs "$traces/swim/FB-2010_samples_24_times_1hr_0.tsv" --format swim \
		--sorter drf,psdsf --mode characterized --json >"$o/swim2010.json"
	"$a" sim --progress never --jobs "$traces/alibaba-2017-batch/jobs.csv" --format alibaba2017 --cluster 25xcpus=96,mem=512G \
		--sorter drf,psdsf,fifo,capacity,tetris,rpsdsf --json >"$o/alibaba25.json"
	"$a" sim --progress never --generate synthetic --sorter $s --mode oblivious,characterized \
		--agent-selection rrr,bestfit,joint --json >"$o/synthetic.json" 2>/dev/null
	"$a" sim --progress never --jobs "$root/sim/trace/testdata/small_jobs.csv" --nodes "$root/sim/trace/testdata/small_nodes.csv" \
		--sorter $s --mode oblivious,characterized --agent-selection rrr,bestfit,joint --json >"$o/small.json" 2>/dev/null
}
echo "running $rev ..." >&2
run "$tmp/allot-old" "$tmp/out-old"
echo "running the work tree ..." >&2
run "$tmp/allot-new" "$tmp/out-new"
diff -r "$tmp/out-old" "$tmp/out-new"
echo identical
