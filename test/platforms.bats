#!/usr/bin/env bats
# The shipped configs of NVIDIA's other platforms, under runc with the hook
# and through their CDI specs: a Jetson in CSV mode (nvidia-tegra.ini: the
# L4T layout of test/fixtures/l4t-root.sh, arm64 libraries) and WSL2
# (nvidia-wsl.ini: test/fixtures/wsl-root.sh). Both are fixtures laid out
# as NVIDIA's and Microsoft's documents describe: no Jetson and no Windows
# here. Where their marks are missing (this host), both are inert and
# nvidia.ini serves; where one is there, nvidia.ini steps aside.

load helpers

setup() {
	common_setup
	B=$BATS_TEST_TMPDIR/bundle
	ID=ocidec-platforms-$$-$BATS_TEST_NUMBER
	SPEC=$BATS_TEST_TMPDIR/spec.json
}

teardown() {
	runc delete -f "$ID" >/dev/null 2>&1 || true
}

TEGRA_SEE='for d in nvhost-as-gpu nvhost-ctrl nvhost-ctrl-gpu nvhost-dbg-gpu nvhost-gpu nvhost-prof-gpu nvmap nvhost-vic; do
	[ -c /dev/$d ] && echo > /dev/$d && echo "dev $d"; done
L=/usr/lib/aarch64-linux-gnu
for f in $L/tegra/libcuda.so.1.1 $L/tegra/libnvrm_gpu.so $L/tegra/libnvrm_mem.so $L/tegra/libnvos.so \
	$L/tegra/libnvidia-ptxjitcompiler.so.35.4.1 $L/tegra/nvidia_icd.json $L/tegra-egl/libEGL_nvidia.so.0 \
	/usr/src/jetson_multimedia_api/include/NvBuffer.h; do [ -f $f ] && echo "file $f"; done
for l in $L/tegra/libcuda.so.1 $L/tegra/libcuda.so $L/libcuda.so $L/tegra/libnvidia-ptxjitcompiler.so.1 /usr/local/cuda; do
	echo "link $l -> $(readlink $l)"; done
/usr/local/cuda/bin/nvcc
grep -c " /usr/lib/aarch64-linux-gnu/tegra/libnvargus.so " /proc/self/mountinfo; true'

tegra_seen() {
	assert_line "dev nvmap"
	assert_line "dev nvhost-vic"
	[ "$(grep -c '^dev ' <<<"$output")" = 8 ]
	[ "$(grep -c '^file ' <<<"$output")" = 8 ]
	assert_line "link /usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1 -> libcuda.so.1.1"
	assert_line "link /usr/lib/aarch64-linux-gnu/libcuda.so -> /usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1.1"
	assert_line "link /usr/lib/aarch64-linux-gnu/tegra/libnvidia-ptxjitcompiler.so.1 -> libnvidia-ptxjitcompiler.so.35.4.1"
	# JetPack's CUDA: "sym, /usr/local/cuda", a link to a directory
	assert_line "link /usr/local/cuda -> cuda-11.4"
	assert_line "Cuda compilation tools, release 11.4, V11.4.315"
	# what L4T's list names and this board lacks is not there, and no error
	assert_line 0
}

@test "Jetson in CSV mode (nvidia-tegra.ini, L4T's lists in host-files-for-container.d; a fixture): NVIDIA_VISIBLE_DEVICES=all under the hook and as its CDI spec gives every dev, lib, sym and dir line's file, links as on the host; nvidia.ini steps aside; void gives nothing (issue 36)" {
	DR=$BATS_TEST_TMPDIR/l4t
	"$FIXTURES/l4t-root.sh" "$DR"
	configs "$DR" nvidia nvidia-tegra nvidia-wsl
	run_container "$TEGRA_SEE" NVIDIA_VISIBLE_DEVICES=all
	assert_success
	tegra_seen
	# the same files and nodes in the inventory restorecon reads, nothing of nvidia.ini's
	run ocidec list -c "$CFG"
	assert_success
	assert_line "$DR/dev/nvmap"
	assert_line "$DR/usr/src/jetson_multimedia_api/include/NvBuffer.h"
	refute_output --partial nvidia-smi
	run ocidec check -c "$CFG"
	assert_line --regexp "^info +nvidia: not this platform's \(not_where in $CFG/nvidia.ini\): served here by nvidia-tegra$"
	assert_line --regexp "^info +nvidia-wsl: not this platform's \(only_where in $CFG/nvidia-wsl.ini\): served here by nvidia-tegra$"
	assert_line --regexp "^ok +nvidia-tegra: driver_root $DR: 8 device nodes"
	# nvidia.ini alone (installed without its siblings) serves nothing
	# here: check says so, with the fix
	mkdir "$BATS_TEST_TMPDIR/alone" && cp "$CFG/nvidia.ini" "$BATS_TEST_TMPDIR/alone/"
	run ocidec check -c "$BATS_TEST_TMPDIR/alone"
	assert_line --regexp "^PROBLEM +nvidia: not this platform's \(not_where in $BATS_TEST_TMPDIR/alone/nvidia.ini\), and no other vendor file serves nvidia.com/gpu: a container asking for it gets nothing$"
	assert_line --regexp "do: install the vendor file of this platform beside it .*which ocidec install --vendor nvidia brings\)"
	# which ocidec install --vendor nvidia does (inert where not theirs)
	H=$BATS_TEST_TMPDIR/host
	mkdir "$H"
	ocidec install --host-root "$H" -c "$CONF" --vendor nvidia --runtime podman >/dev/null
	run ls "$H/usr/local/ocidec/etc/ocidec.d"
	assert_output $'nvidia-gdrcopy.ini\nnvidia-gds.ini\nnvidia-mofed.ini\nnvidia-nvswitch.ini\nnvidia-tegra.ini\nnvidia-wsl.ini\nnvidia.ini'
	ocidec install --host-root "$H" --uninstall >/dev/null
	# CDI: one spec of NVIDIA's kind, device "all", valid; a container
	# given it by a CDI engine sees the same
	cdi -c "$CFG" >"$SPEC"
	run "$FIXTURES/cdi-check.py" "$("$FIXTURES/cdi-reference.sh" "$BATS_TEST_DIRNAME/../build/test-data")" "$SPEC"
	assert_success
	run python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(s["kind"], [d["name"] for d in s["devices"]])' "$SPEC"
	assert_output "nvidia.com/gpu ['all']"
	cdi_container "$SPEC" "$TEGRA_SEE"
	assert_success
	tegra_seen
	# the refresh the units and the DaemonSet run keeps it (the inert files
	# of the same kind remove nothing)
	mkdir -m 0755 "$BATS_TEST_TMPDIR/cdi"
	run cdi --refresh -c "$CFG" -o "$BATS_TEST_TMPDIR/cdi"
	assert_success
	assert_line "nvidia-tegra: wrote $BATS_TEST_TMPDIR/cdi/nvidia.com-gpu.json"
	refute_output --partial removed
	run ls "$BATS_TEST_TMPDIR/cdi"
	assert_output $'management.nvidia.com-gpu.json\nnvidia.com-gpu.json'
	# void: nothing, and the container starts
	run_container 'ls /dev/nvmap 2>&1; echo started' NVIDIA_VISIBLE_DEVICES=void
	assert_success
	assert_line started
	refute_line /dev/nvmap
}

@test "Jetson: a CSV line that is not TYPE, PATH is named by file and line and skipped, the rest given; the tenant policy as for any vendor (kubernetes: a pod's own NVIDIA_VISIBLE_DEVICES gets nothing, the device plugin's mount does); the arm64 build under qemu plans the same (issue 36)" {
	DR=$BATS_TEST_TMPDIR/l4t
	"$FIXTURES/l4t-root.sh" "$DR"
	configs "$DR" nvidia-tegra
	csv=$DR/etc/nvidia-container-runtime/host-files-for-container.d
	printf 'dev, /dev/nvmap\nlibs, /usr/lib/aarch64-linux-gnu/tegra/libnvos.so\nlib,\n' >"$csv/zz-broken.csv"
	run_container 'ls /dev/nvmap /usr/lib/aarch64-linux-gnu/tegra/libnvos.so' NVIDIA_VISIBLE_DEVICES=0
	assert_success
	assert_line /dev/nvmap
	assert_line /usr/lib/aarch64-linux-gnu/tegra/libnvos.so
	# (the hook's warnings go to the engine's log; ocidec list says the same)
	run ocidec list -c "$CFG"
	assert_success
	assert_line "ocidec list: warn: nvidia-tegra: $csv/zz-broken.csv:2: the type is none of dev, lib, sym, dir: line skipped"
	assert_line "ocidec list: warn: nvidia-tegra: $csv/zz-broken.csv:3: no path after the comma: line skipped"
	rm "$csv/zz-broken.csv"
	# a list that is a symlink (inside the driver root) is read through it
	mv "$csv/devices.csv" "$DR/etc/devices.csv.real" && ln -s ../../devices.csv.real "$csv/devices.csv"
	run ocidec list -c "$CFG"
	assert_line "$DR/dev/nvmap"
	# one that leads out of the driver root is read inside it: nothing there
	echo "dev, /dev/nvhost-gpu" >"$BATS_TEST_TMPDIR/outside.csv"
	ln -sf "$BATS_TEST_TMPDIR/outside.csv" "$csv/devices.csv"
	run ocidec list -c "$CFG"
	refute_line "$DR/dev/nvhost-gpu"
	ln -sf ../../devices.csv.real "$csv/devices.csv"
	# a shared node: the configs as ocidec install --tenant-policy kubernetes writes them
	H=$BATS_TEST_TMPDIR/host
	mkdir "$H"
	ocidec install --host-root "$H" -c "$CFG" --tenant-policy kubernetes --runtime podman >/dev/null
	OPEN=$CFG CFG=$H/usr/local/ocidec/etc/ocidec.d
	run_container 'ls /dev/nvmap 2>&1; echo started' NVIDIA_VISIBLE_DEVICES=all
	assert_success
	assert_line started
	refute_line /dev/nvmap
	rm -rf "$B"
	HOOK="$OCIDEC ocidec-hook -c $CFG prestart" "$FIXTURES/bundle.sh" "$B" -- sh -c 'ls /dev/nvmap' >/dev/null
	mkdir -p "$BATS_TEST_TMPDIR/empty" && : >"$BATS_TEST_TMPDIR/empty/all"
	perl -MJSON::PP -i -0777 -pe '$c = decode_json($_); push @{$c->{mounts}}, { destination => "/var/run/nvidia-container-devices/all",
		type => "bind", source => "/dev/null", options => ["bind", "ro"] }; $_ = encode_json($c)' "$B/config.json"
	run bash -c "cd '$B' && runc run '$ID' 2>&1"
	assert_success
	assert_line /dev/nvmap
	# the arm64 build (under qemu) plans what this machine's does
	X=$BATS_TEST_DIRNAME/../build/arm64/ocidec
	[ "$(dpkg --print-architecture)" = amd64 ] && [ -x "$X" ] || skip "no arm64 build here"
	ocidec install --host-root "$H" --uninstall >/dev/null
	CFG=$OPEN
	mkdir -p "$BATS_TEST_TMPDIR/b/rootfs"
	printf '{"ociVersion": "1.0.2", "process": {"env": ["NVIDIA_VISIBLE_DEVICES=all"], "args": ["sh"], "cwd": "/"}, "root": {"path": "rootfs"}, "linux": {}}' \
		>"$BATS_TEST_TMPDIR/b/config.json"
	state="{\"ociVersion\": \"1.0.2\", \"id\": \"t\", \"status\": \"creating\", \"pid\": $$, \"bundle\": \"$BATS_TEST_TMPDIR/b\"}"
	run qemu-aarch64-static -0 ocidec "$X" hook --dry-run -c "$CFG" <<<"$state"
	assert_success
	assert_line "ldcache /usr/lib/aarch64-linux-gnu/tegra"
	assert_line "ldcache-entry libcuda.so.1 /usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1"
	diff <("$OCIDEC" hook --dry-run -c "$CFG" <<<"$state" | grep -v '^ldcache') <(grep -v '^ldcache' <<<"$output")
}

@test "Jetson: a CSV list that anyone but root could have written (not root's, or writable by others, or in a directory that is) is refused as a vendor file is, in one line naming it; its dev line gives no container the host's device (issue 46, finding 6)" {
	DR=$BATS_TEST_TMPDIR/l4t
	"$FIXTURES/l4t-root.sh" "$DR"
	configs "$DR" nvidia-tegra
	csv=$DR/etc/nvidia-container-runtime/host-files-for-container.d
	# a host device no list of L4T's names, and a user's list that names it
	mknod -m 0600 "$DR/dev/hostdisk" c 1 3
	echo "dev, /dev/hostdisk" >"$csv/zz-user.csv"
	chown 1000:1000 "$csv/zz-user.csv"
	chmod 0666 "$csv/zz-user.csv"
	chmod 0777 "$csv"
	run_container 'ls /dev/hostdisk /dev/nvmap; echo started' NVIDIA_VISIBLE_DEVICES=all
	assert_failure
	# (the first list read, L4T's own, is in the directory anyone may write)
	assert_output --partial "ocidec hook: container $ID: nvidia-tegra: csv_files: $csv: refused: writable by group or others (mode 0777)"
	refute_line started
	refute_line /dev/hostdisk
	# each part of the rule on its own, the same line from every applet
	# that reads the lists
	refused() {
		run ocidec list -c "$CFG"
		assert_failure 2
		assert_output "ocidec list: nvidia-tegra: csv_files: $1: refused: $2"
		run ocidec hook -c "$CFG" --dry-run <<<"{\"id\": \"c1\", \"bundle\": \"$B\", \"pid\": $$}"
		assert_failure 2
		assert_output "ocidec hook: container c1: nvidia-tegra: csv_files: $1: refused: $2"
	}
	chmod 0755 "$csv"
	refused "$csv/zz-user.csv" "writable by group or others (mode 0666)"
	chmod 0644 "$csv/zz-user.csv"
	refused "$csv/zz-user.csv" "owned by uid 1000, not root"
	chown 0:0 "$csv/zz-user.csv"
	chmod 0777 "$csv"
	refused "$csv" "writable by group or others (mode 0777)"
	chmod 0755 "$csv"
	chown 1000 "$csv"
	refused "$csv" "owned by uid 1000, not root"
	chown 0 "$csv"
	chmod 0775 "$csv"
	refused "$csv" "writable by group or others (mode 0775)"
	chmod 0755 "$csv"
	# a list that is a link: the file it leads to, and that one's directory
	rm "$csv/zz-user.csv"
	mkdir -m 0777 "$DR/tmp"
	echo "dev, /dev/hostdisk" >"$DR/tmp/user.csv"
	ln -s ../../../tmp/user.csv "$csv/zz-user.csv"
	refused "$DR/tmp" "writable by group or others (mode 0777)"
	# root's lists in root's directory: read, and the container runs
	rm "$csv/zz-user.csv"
	run_container 'ls /dev/nvmap; echo started' NVIDIA_VISIBLE_DEVICES=all
	assert_success
	assert_line /dev/nvmap
	assert_line started
}

WSL_SEE='echo > /dev/dxg && echo "dev dxg"
S=$(echo /usr/lib/wsl/drivers/nv_dispi.inf_amd64_*)
for f in /usr/lib/wsl/lib/libcuda.so.1.1 /usr/lib/wsl/lib/libdxcore.so /usr/lib/wsl/lib/libd3d12.so /usr/lib/wsl/lib/libd3d12core.so \
	/usr/lib/wsl/lib/libnvidia-ml.so.1 /usr/lib/wsl/lib/nvidia-smi $S/libcuda.so.1.1 $S/libcuda_loader.so $S/libnvidia-ml.so.1 \
	$S/libnvidia-ml_loader.so $S/libnvidia-ptxjitcompiler.so.1 $S/libnvdxgdmal.so.1 $S/nvcubins.bin $S/nvidia-smi \
	$S/nvml.dll $S/nvapi64.dll $S/nvcuda64.dll; do [ -f $f ] && echo "file ${f#$S/}"; done
ls $S/nvlddmkm.sys /usr/lib/wsl/lib/libnvcuvid.so.1 2>&1 | sed "s/.*: //"
/usr/lib/wsl/lib/nvidia-smi; echo "nvidia-smi $?"'

@test "WSL2 (nvidia-wsl.ini; a fixture of /dev/dxg, /usr/lib/wsl/lib and the driver store): NVIDIA_VISIBLE_DEVICES=all under the hook and as its CDI spec gives /dev/dxg, WSL's libraries and the versioned driver store's .so, .bin and .dll files, libcuda and libdxcore in the container's cache; capabilities as NVIDIA's; nvidia.ini steps aside (issue 36)" {
	DR=$BATS_TEST_TMPDIR/wsl
	"$FIXTURES/wsl-root.sh" "$DR"
	configs "$DR" nvidia nvidia-tegra nvidia-wsl
	run_container "$WSL_SEE" NVIDIA_VISIBLE_DEVICES=all
	assert_success
	assert_line "dev dxg"
	[ "$(grep -c '^file ' <<<"$output")" = 17 ]
	assert_line "No such file or directory"   # the .sys, and video's library without video
	[ "$(grep -c 'No such file or directory' <<<"$output")" = 2 ]
	assert_line "nvidia-smi 9"
	# the cache the hook wrote into the image: WSL's libcuda first, as
	# NVIDIA's toolkit orders it
	run ocidec ldcache -p -r "$B/rootfs"
	assert_line --regexp '^	libcuda\.so\.1 \(libc6,x86-64\) => /usr/lib/wsl/lib/libcuda\.so\.1$'
	assert_line --regexp '^	libdxcore\.so \(libc6,x86-64\) => /usr/lib/wsl/lib/libdxcore\.so$'
	assert_line --regexp '^	libnvdxgdmal\.so\.1 \(libc6,x86-64\) => /usr/lib/wsl/drivers/nv_dispi\.inf_amd64_[0-9a-f]+/libnvdxgdmal\.so\.1$'
	# utility only: NVML and nvidia-smi, no libcuda
	run_container 'ls /usr/lib/wsl/lib/libnvidia-ml.so.1 /usr/lib/wsl/lib/libcuda.so.1.1 2>&1' NVIDIA_VISIBLE_DEVICES=all \
		NVIDIA_DRIVER_CAPABILITIES=utility
	assert_line /usr/lib/wsl/lib/libnvidia-ml.so.1
	assert_line --partial "libcuda.so.1.1: No such file or directory"
	run ocidec check -c "$CFG"
	assert_line --regexp "^info +nvidia: not this platform's \(not_where in $CFG/nvidia.ini\): served here by nvidia-wsl$"
	assert_line --regexp "^ok +nvidia-wsl: driver_root $DR: 1 device node,"
	# a CUDA image's requirement is not refused (the Windows driver's CUDA
	# version is not in its Linux files)
	run_container 'ls /dev/dxg' NVIDIA_VISIBLE_DEVICES=all NVIDIA_REQUIRE_CUDA="cuda>=12.2"
	assert_success
	assert_line /dev/dxg
	# CDI: NVIDIA's kind, device "all", valid, and what a CDI engine does with it
	cdi -c "$CFG" >"$SPEC"
	run "$FIXTURES/cdi-check.py" "$("$FIXTURES/cdi-reference.sh" "$BATS_TEST_DIRNAME/../build/test-data")" "$SPEC"
	assert_success
	cdi_container "$SPEC" "$WSL_SEE"
	assert_success
	assert_line "dev dxg"
	[ "$(grep -c '^file ' <<<"$output")" = 17 ]
	# WSL2 on an Intel or AMD GPU: /dev/dxg, no NVIDIA driver store; a CUDA
	# image gets nothing (neither NVIDIA file serves there), and starts
	rm -rf "$DR"/usr/lib/wsl/drivers/nv_* "$DR"/usr/lib/wsl/lib/libcuda* "$DR"/usr/lib/wsl/lib/libnvidia* "$DR"/usr/lib/wsl/lib/nvidia-smi
	run_container 'ls /dev/dxg /usr/lib/wsl/lib/libdxcore.so 2>&1; echo started' NVIDIA_VISIBLE_DEVICES=all
	assert_success
	assert_line started
	refute_line /dev/dxg
	refute_line /usr/lib/wsl/lib/libdxcore.so
	# and check says no NVIDIA platform is here, no problem
	run ocidec check -c "$CFG"
	assert_line --regexp "^info +nvidia: not this platform's \(not_where in $CFG/nvidia.ini\): nor is any other vendor file of nvidia.com/gpu$"
	refute_line --regexp "^PROBLEM +nvidia"
}

@test "neither platform here (no /dev/dxg, no L4T lists): nvidia-tegra.ini and nvidia-wsl.ini are inert (no refusal, no spec, check says why) and nvidia.ini serves as before (issue 36)" {
	DR=$BATS_TEST_TMPDIR/nv
	mkdir -p "$DR/dev" "$DR/usr/bin"
	mknod -m 0666 "$DR/dev/nvidiactl" c 1 3
	mknod -m 0666 "$DR/dev/nvidia0" c 1 5
	configs "$DR" nvidia nvidia-tegra nvidia-wsl
	run_container 'ls /dev/nvidia0 /dev/nvidiactl /dev/dxg 2>&1; true' NVIDIA_VISIBLE_DEVICES=all
	assert_success
	assert_line /dev/nvidia0
	assert_line /dev/nvidiactl
	assert_line --partial "/dev/dxg: No such file or directory"
	refute_output --partial warn
	# a UUID the desktop driver does not know is nvidia.ini's refusal, not theirs
	run_container 'true' NVIDIA_VISIBLE_DEVICES=GPU-00000000-0000-0000-0000-000000000000
	assert_failure
	assert_output --partial "nvidia: no device 'GPU-00000000"
	refute_output --partial "nvidia-wsl"
	refute_output --partial "nvidia-tegra"
	run ocidec check -c "$CFG"
	assert_line --regexp "^info +nvidia-tegra: not this platform's \(only_where in $CFG/nvidia-tegra.ini\): served here by nvidia$"
	assert_line --regexp "^info +nvidia-wsl: not this platform's \(only_where in $CFG/nvidia-wsl.ini\): served here by nvidia$"
	mkdir "$BATS_TEST_TMPDIR/cdi"
	run cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/cdi"
	assert_success
	run ls "$BATS_TEST_TMPDIR/cdi"
	assert_output "nvidia.com-gpu.json"
}
