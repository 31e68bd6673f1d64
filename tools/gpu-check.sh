#!/bin/sh
# gpu-check.sh: the real-GPU check of allot's GPU support (docs/gpus.md).
# It builds nothing: give it an allot binary built elsewhere.
#
#   tools/gpu-check.sh /path/to/allot          on a host with an NVIDIA GPU
#                                              and its driver (nvidia-smi on PATH)
#   tools/gpu-check.sh --fake /path/to/allot   anywhere, as root: a fake driver
#                                              (two GPUs as mknod-made device
#                                              files of an unused major, and an
#                                              nvidia-smi script that lists the
#                                              ones the caller may open, as NVML
#                                              does inside a devices cgroup)
#
# It runs `allot dev --agents 1 --isolation auto,gpu/nvidia` on loopback
# (port DEV_PORT, default 15050), prints everything it sees, and then one
# PASS or FAIL line per check:
#   advertise      the agent advertises as many gpus as nvidia-smi -L lists
#                  on the host;
#   task-env       `allot run --gpus 1` (a mesos-go framework declaring
#                  GPU_RESOURCES) runs a task whose CUDA_VISIBLE_DEVICES and
#                  NVIDIA_VISIBLE_DEVICES name one GPU;
#   task-sees-one  nvidia-smi -L inside that task lists exactly one GPU (the
#                  devices cgroup hides the others; cgroup v1 only);
#   filter         `allot run` without --gpus (no GPU_RESOURCES) is offered
#                  nothing of the GPU agent and gives up after --timeout 8s.
# Exit status 0 when every check passed. Takes under a minute.
set -u
fake=0
[ "${1:-}" = --fake ] && { fake=1; shift; }
ALLOT=${1:-${ALLOT:-}}
[ -n "$ALLOT" ] && [ -x "$ALLOT" ] || { echo "usage: $0 [--fake] /path/to/allot" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/allot-gpu-check.XXXXXX")
chmod 755 "$dir"
m=127.0.0.1:${DEV_PORT:-15050}
fail=0
cleanup() {
	[ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	echo "gpu-check: logs in $dir"
}
trap cleanup EXIT
check() { # check NAME STATUS DETAIL
	if [ "$2" = 0 ]; then echo "PASS $1: $3"; else echo "FAIL $1: $3"; fail=1; fi
}

# fake_driver makes $dir/root/dev/nvidia{0,1}, nvidiactl and nvidia-uvm
# (a character major no driver of this host registered) and
# $dir/bin/nvidia-smi answering --query-gpu and -L over them.
fake_driver() {
	major=
	for c in 60 61 62 63 120 121 122 123 240 241 242; do
		awk '/^Block/{exit} $1=='$c'{f=1} END{exit !f}' /proc/devices || { major=$c; break; }
	done
	[ -n "$major" ] || { echo "gpu-check --fake: no unused character major" >&2; exit 2; }
	mkdir -p "$dir/root/dev" "$dir/bin"
	for i in 0 1; do mknod -m 666 "$dir/root/dev/nvidia$i" c "$major" "$i" || exit 2; done
	mknod -m 666 "$dir/root/dev/nvidiactl" c "$major" 255 && mknod -m 666 "$dir/root/dev/nvidia-uvm" c $((major + 1)) 0 || exit 2
	cat >"$dir/bin/nvidia-smi" <<EOF
#!/bin/sh
root='$dir/root'
EOF
	cat >>"$dir/bin/nvidia-smi" <<'EOF'
if [ "$1" = -L ]; then
	for f in "$root"/dev/nvidia[0-9]*; do
		n=${f##*nvidia}
		case "$( (exec 3<"$f") 2>&1 )" in
		*"not permitted"*) ;;
		*) echo "GPU $n: Fake GPU (UUID: GPU-fake-$n)" ;;
		esac
	done
	exit 0
fi
for f in "$root"/dev/nvidia[0-9]*; do n=${f##*nvidia}; echo "$n, GPU-fake-$n, Fake GPU, 1024"; done
EOF
	chmod 755 "$dir/bin/nvidia-smi"
	PATH=$dir/bin:$PATH # the agent's, and so the tasks'
	export PATH
	echo "fake driver: major $major, device files in $dir/root/dev, nvidia-smi at $dir/bin/nvidia-smi"
}

gpuflags=
if [ $fake = 1 ]; then
	fake_driver
	gpuflags="--gpu-device-root $dir/root --nvidia-smi $dir/bin/nvidia-smi"
else
	command -v nvidia-smi >/dev/null || { echo "gpu-check: no nvidia-smi on PATH: not a GPU host (try --fake)" >&2; exit 2; }
fi
host_gpus=$(nvidia-smi -L | grep -c '^GPU ')
echo "host: nvidia-smi -L lists $host_gpus GPU(s):"
nvidia-smi -L
# shellcheck disable=SC2086 # gpuflags is two flags or none
"$ALLOT" dev --agents 1 --isolation auto,gpu/nvidia --listen "$m" --log-level info --work-dir "$dir/dev" \
	--resources 'cpus:2;mem:1024;disk:1024' $gpuflags >"$dir/dev.log" 2>&1 &
dpid=$!
i=0
until "$ALLOT" agents --master "$m" 2>/dev/null | grep -q ' 127\.0\.0\.1:'; do
	i=$((i + 1))
	[ $i -gt 120 ] || kill -0 "$dpid" 2>/dev/null || i=999
	[ $i -gt 120 ] && { echo "FAIL allot dev: no agent registered; $dir/dev.log says:"; tail -20 "$dir/dev.log"; exit 1; }
	sleep 0.5
done
"$ALLOT" agents --master "$m"
grep -E 'GPUs|isolation' "$dir/dev.log" | grep -v '^$' | head -5
adv=$("$ALLOT" agents --master "$m" --json | tr -d ' \n' | grep -o '"resources":{[^}]*}' | grep -o '"gpus":[0-9.]*' | head -1 | cut -d: -f2)
[ "$adv" = "$host_gpus" ]
check advertise $? "allot dev's agent advertises gpus ${adv:-none}, nvidia-smi -L lists $host_gpus"

echo "\$ allot run --gpus 1 --shell -- 'echo CUDA_VISIBLE_DEVICES=... NVIDIA_VISIBLE_DEVICES=...; nvidia-smi -L'"
out=$(timeout 120 "$ALLOT" run --master "$m" --gpus 1 --shell --name gpu-check -- \
	'echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES=$NVIDIA_VISIBLE_DEVICES"; nvidia-smi -L' 2>&1)
rc=$?
echo "$out"
env_line=$(echo "$out" | grep '^CUDA_VISIBLE_DEVICES=')
listed=$(echo "$out" | grep -c '^GPU ')
[ $rc = 0 ] && echo "$env_line" | grep -Eq '^CUDA_VISIBLE_DEVICES=[^ ,]+ NVIDIA_VISIBLE_DEVICES=[0-9]+$'
check task-env $? "allot run --gpus 1 exited $rc; the task saw: ${env_line:-nothing}"
[ "$listed" = 1 ]
check task-sees-one $? "nvidia-smi -L inside the task lists $listed GPU(s)"

echo "\$ allot run --timeout 8s -- echo ran   (no --gpus: no GPU_RESOURCES)"
out=$(timeout 60 "$ALLOT" run --master "$m" --timeout 8s --name no-gpu-capability -- echo ran 2>&1)
rc=$?
echo "$out" | tail -4
! echo "$out" | grep -q '^ran$' && [ $rc != 0 ]
check filter $? "allot run without --gpus exited $rc without running"
exit $fail
