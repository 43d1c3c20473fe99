#!/bin/bash
# gpu-node.sh OCIDEC OUTDIR: on a machine with a real NVIDIA GPU and driver
# (run as root), what ocidec gives a container there. No GPU is needed
# anywhere else in the suite; this is the check for a node that has one.
#
# It installs NVIDIA's vendor file in /etc/ocidec/ocidec.d, builds a CUDA
# program with the node's nvcc into a rootfs of busybox and the node's own
# glibc (an image with no NVIDIA file in it), and runs, with runc:
#   1. the prestart hook, NVIDIA_VISIBLE_DEVICES=all: nvidia-smi, the CUDA
#      program, the container's ld.so.cache and mounts;
#   2. the shim (ocidec runtime) with no hook in config.json: the same;
#   3. a container that asks for nothing: no NVIDIA file, no device;
#   4. NVIDIA_DRIVER_CAPABILITIES=utility: nvidia-smi yes, libcuda no;
#   5. the container start time with the hook against without it;
#   6. Enroot's way (test/fixtures/enroot-start.sh: user and mount
#      namespaces, pivot_root) with ocidec's hooks.d/98-ocidec.sh, and
#      Enroot's own 98-nvidia.sh call of nvidia-container-cli (ocidec's);
#   7. a hostile image with a FIFO, then a loop device's block node, at the
#      application profile's path: the profile a file, the disk unwritten.
# It writes `ocidec check`, `ocidec list` and the CDI spec to OUTDIR.
# Environment: RUNC (default: runc in PATH), BUSYBOX (a static busybox,
# default /bin/busybox), NVCC (default: nvcc in PATH or /usr/local/cuda),
# CONFDIR (default /etc/ocidec/ocidec.d).
set -u
OCIDEC=$(readlink -f "$1")
OUT=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d /tmp/ocidec-gpu.XXXXXX)
RUNC=${RUNC:-$(command -v runc)}
BUSYBOX=${BUSYBOX:-/bin/busybox}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CONFDIR=${CONFDIR:-/etc/ocidec/ocidec.d}
say() { printf '== %s\n' "$*"; }

say node
uname -srm
. /etc/os-release && echo "$PRETTY_NAME"
cat /sys/module/nvidia/version 2>&1
ls -l /dev/nvidia* 2>&1
nvidia-smi -L 2>&1
command -v nvidia-smi
ldconfig -p | grep -E 'libcuda.so.1 |libnvidia-ml.so.1 ' 2>&1
grep -E 'cgroup' /proc/self/mounts
"$RUNC" --version | head -n 1

# on a node whose driver works (nvidia-smi -L): a driver outside the
# loader's cache or ocidec's bin directories made visible as an operator
# would, said
if nvidia-smi -L >/dev/null 2>&1 && ! ldconfig -p | grep -q 'libcuda.so.1 '; then
	d=$(dirname "$(find / -xdev -name libcuda.so.1 2>/dev/null | head -n 1)")
	echo "NODE CHANGED: libcuda.so.1 not in ld.so.cache; $d added to /etc/ld.so.conf.d"
	echo "$d" >/etc/ld.so.conf.d/000-ocidec-gpu-node.conf && ldconfig
fi
say install
mkdir -p "$CONFDIR"
cp "$HERE"/conf/nvidia.ini "$HERE"/conf/nvidia-tegra.ini "$HERE"/conf/nvidia-wsl.ini "$CONFDIR/"
install -m 0755 "$OCIDEC" /usr/local/bin/ocidec
"$OCIDEC" check -c "$CONFDIR" 2>&1 | tee "$OUT/check.txt"
"$OCIDEC" list -c "$CONFDIR" 2>&1 | tee "$OUT/list.txt" | grep -cE . | sed 's/^/listed: /'
if ! grep -q "/nvidia-smi$" "$OUT/list.txt" && nvidia-smi -L >/dev/null 2>&1; then
	s=$(command -v nvidia-smi)
	echo "NODE CHANGED: nvidia-smi ($s) is in no directory ocidec looks in; linked from /usr/local/bin"
	ln -sf "$s" /usr/local/bin/nvidia-smi
	"$OCIDEC" list -c "$CONFDIR" >"$OUT/list.txt" 2>&1
fi
grep -E 'nvidia-smi|libcuda.so|/dev/' "$OUT/list.txt"
mkdir -p "$W/cdi"
"$OCIDEC" cdi -c "$CONFDIR" --output "$W/cdi" 2>&1
cp "$W"/cdi/*.json "$OUT/" 2>/dev/null
ls "$W/cdi"

say rootfs
R=$W/rootfs
mkdir -p "$R"/bin "$R"/usr/bin "$R"/etc "$R"/proc "$R"/sys "$R"/dev "$R"/tmp
cp "$BUSYBOX" "$R/bin/busybox"
for a in sh ls cat grep head sed wc echo test true; do ln -sf busybox "$R/bin/$a"; done
cat >"$W/vecadd.cu" <<'EOF'
#include <cstdio>
#include <cuda_runtime.h>
__global__ void add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
	printf("CUDA error %s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
int main(void)
{
	int n = 1 << 24, drv = 0, count = 0;
	size_t bytes = n * sizeof(float);
	CK(cudaDriverGetVersion(&drv));
	CK(cudaGetDeviceCount(&count));
	cudaDeviceProp p;
	CK(cudaGetDeviceProperties(&p, 0));
	printf("CUDA driver %d, %d device(s), 0: %s, sm_%d%d, %zu MiB\n", drv, count,
	       p.name, p.major, p.minor, p.totalGlobalMem >> 20);
	float *a = new float[n], *b = new float[n], *c = new float[n], *da, *db, *dc;
	for (int i = 0; i < n; i++) { a[i] = i; b[i] = 2.0f * i; }
	CK(cudaMalloc(&da, bytes)); CK(cudaMalloc(&db, bytes)); CK(cudaMalloc(&dc, bytes));
	CK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
	add<<<(n + 255) / 256, 256>>>(da, db, dc, n);
	CK(cudaGetLastError());
	CK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < n; i++)
		if (c[i] != 3.0f * i) bad++;
	printf("vecadd of %d floats on the GPU: %s\n", n, bad ? "WRONG" : "correct");
	return bad != 0;
}
EOF
"$NVCC" -O2 -o "$R/usr/bin/vecadd" "$W/vecadd.cu" 2>&1 || echo "nvcc failed"
# the program's own libraries (the node's glibc and libstdc++), no NVIDIA one
ldd "$R/usr/bin/vecadd" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | while read -r l; do
	mkdir -p "$R$(dirname "$l")" && cp -L "$l" "$R$l"
done
# glibc's set, which the driver's programs and libcuda need (libpthread,
# libdl, librt are separate files in any image with glibc older than 2.34)
for l in libpthread.so.0 libdl.so.2 librt.so.1 libm.so.6; do
	p=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ { print $NF; exit }')
	[ -n "$p" ] && mkdir -p "$R$(dirname "$p")" && cp -L "$p" "$R$p"
done
echo "the node, without a container: $("$R/usr/bin/vecadd" 2>&1 | tr '\n' ' ')"
ls -R "$R" | grep -c . | sed 's/^/rootfs entries: /'
find "$R" -name 'libcuda*' -o -name 'libnvidia*' -o -name 'nvidia-smi' | sed 's/^/NVIDIA file in the image (wrong): /'

# a copy for the container that asks for nothing: the hook's mount points
# (empty files) stay in a bundle's rootfs directory, as with any OCI hook
cp -a "$R" "$W/rootfs-none"
printf '[runtime]\npath = %s\n' "$RUNC" >"$CONFDIR/runtime.conf"

# bundle NAME ENV... -- ARGS...: config.json from runc spec, hook if HOOK=1
bundle() {
	local b=$W/$1; shift
	mkdir -p "$b" && (cd "$b" && rm -f config.json && "$RUNC" spec) || return 1
	CONFDIR=$CONFDIR python3 - "$b/config.json" "$R" "${HOOK:-0}" "$@" <<'EOF'
import json, os, sys
confdir = os.environ["CONFDIR"]
f, root, hook, rest = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
i = rest.index("--")
c = json.load(open(f))
c["root"] = {"path": os.environ.get("ROOTFS", root), "readonly": True}
c["process"]["terminal"] = False
# CUDA's images put NVIDIA's /usr/local/nvidia/bin in PATH
c["process"]["env"] = [e if not e.startswith("PATH=") else "PATH=/usr/local/nvidia/bin:" + e[5:] for e in c["process"]["env"]]
c["process"]["env"] += rest[:i]
c["process"]["args"] = rest[i + 1:]
if hook == "1":
    c["hooks"] = {"prestart": [{"path": "/usr/local/bin/ocidec",
        "args": ["ocidec", "hook", "-c", confdir, "--log", "/tmp/ocidec-gpu-hook.log", "prestart"],
        "env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]}]}
json.dump(c, open(f, "w"), indent=1)
EOF
}
SEE='nvidia-smi; echo "nvidia-smi: $?"; vecadd; echo "vecadd: $?"
echo "profile: $(cat /etc/nvidia/nvidia-application-profiles-rc.d/10-container.conf 2>&1)"
grep -E " /(usr|dev|proc/driver)[^ ]*(nvidia|cuda)" /proc/self/mountinfo | wc -l | sed "s/^/nvidia mounts: /"
ls /dev | grep nvidia | tr "\n" " "; echo'

say "1 prestart hook, NVIDIA_VISIBLE_DEVICES=all"
HOOK=1 bundle hook NVIDIA_VISIBLE_DEVICES=all -- sh -c "$SEE"
(cd "$W/hook" && timeout 120 "$RUNC" run ocidec-gpu-hook 2>&1); echo "runc: $?"
"$OCIDEC" ldcache -p -r "$R" 2>&1 | grep -E 'libcuda|libnvidia-ml' | sed 's/^/container cache: /'
cat /tmp/ocidec-gpu-hook.log 2>/dev/null

say "2 the shim, no hook in config.json"
bundle shim NVIDIA_VISIBLE_DEVICES=all -- sh -c "$SEE"
(cd "$W/shim" && timeout 120 "$OCIDEC" runtime --ocidec-config-dir "$CONFDIR" run ocidec-gpu-shim 2>&1); echo "shim: $?"

say "3 a container that asks for nothing (hook installed)"
ROOTFS=$W/rootfs-none HOOK=1 bundle none -- sh -c 'ls /dev; ls /usr/bin; nvidia-smi; echo "nvidia-smi: $?"'
(cd "$W/none" && timeout 120 "$RUNC" run ocidec-gpu-none 2>&1); echo "runc: $?"

say "4 NVIDIA_DRIVER_CAPABILITIES=utility"
HOOK=1 bundle util NVIDIA_VISIBLE_DEVICES=0 NVIDIA_DRIVER_CAPABILITIES=utility -- sh -c "$SEE"
(cd "$W/util" && timeout 120 "$RUNC" run ocidec-gpu-util 2>&1); echo "runc: $?"

say "5 start time: runc run of 'true', 10 each, with the hook (all GPUs) and without"
HOOK=1 bundle tw NVIDIA_VISIBLE_DEVICES=all -- true
bundle tn -- true
for k in tn tw tn tw; do
	s=$(date +%s%N)
	for i in 1 2 3 4 5; do (cd "$W/$k" && "$RUNC" run "ocidec-gpu-$k-$i" >/dev/null 2>&1) || echo "$k $i failed"; done
	echo "$k $(( ($(date +%s%N) - s) / 5000000 )) ms per start"
done
say "6 Enroot: 98-ocidec.sh, then 98-nvidia.sh's nvidia-container-cli call"
gcc -static -O1 -o "$W/switchroot" "$HERE/test/fixtures/switchroot.c" || echo "no switchroot"
mkdir -p "$W/hooks" "$W/hooks2"
sed "s|/usr/bin/ocidec inject|$OCIDEC inject -c $CONFDIR|" "$HERE/conf/enroot/98-ocidec.sh" >"$W/hooks/98-ocidec.sh"
printf '#!/bin/bash\nexec %s container-cli --ocidec-config-dir %s --user configure --no-cgroups --ldconfig=@/sbin/ldconfig --device=0 --compute --utility "$ENROOT_ROOTFS"\n' \
	"$OCIDEC" "$CONFDIR" >"$W/hooks2/98-nvidia.sh"
chmod 0755 "$W/hooks/98-ocidec.sh" "$W/hooks2/98-nvidia.sh"
printf 'PATH=/usr/local/nvidia/bin:/usr/local/bin:/usr/bin:/bin\nNVIDIA_VISIBLE_DEVICES=all\nNVIDIA_DRIVER_CAPABILITIES=compute,utility\n' >"$W/environ"
for h in hooks hooks2; do
	rm -rf "$W/enroot-root" && cp -a "$W/rootfs-none" "$W/enroot-root"
	RESTRICT_DEV=y SWITCHROOT=$W/switchroot timeout 120 "$HERE/test/fixtures/enroot-start.sh" "$W/enroot-root" \
		"$W/environ" "$W/$h" /bin/sh -c "$SEE"
	echo "enroot ($h): $?"
done
say "7 a hostile image: a FIFO, a loop device's block node at the application profile's path"
P=/etc/nvidia/nvidia-application-profiles-rc.d/10-container.conf
for thing in fifo block; do
	loop=
	rm -rf "$W/rootfs-bad" && cp -a "$R" "$W/rootfs-bad" && mkdir -p "$W/rootfs-bad${P%/*}" && rm -f "$W/rootfs-bad$P"
	if [ "$thing" = fifo ]; then
		mkfifo "$W/rootfs-bad$P"
	else
		head -c 1048576 /dev/zero >"$W/disk.img"
		loop=$(losetup -f --show "$W/disk.img") || { echo "no loop device here"; continue; }
		mknod "$W/rootfs-bad$P" b "$((0x$(stat -c %t "$loop")))" "$((0x$(stat -c %T "$loop")))"
	fi
	ROOTFS=$W/rootfs-bad HOOK=1 bundle bad NVIDIA_VISIBLE_DEVICES=all -- sh -c "cat $P; echo; ls -l $P"
	(cd "$W/bad" && timeout 60 "$RUNC" run ocidec-gpu-bad 2>&1); echo "runc ($thing): $?"
	if [ -n "$loop" ]; then
		echo "the disk behind the node: $(tr -d '\0' <"$loop" | wc -c) bytes written"
		losetup -d "$loop"
	fi
done
rm -rf "$W"
