#!/usr/bin/env bats
# Real vendor userspace, as Debian's archive ships it, under the shipped
# vendor configs: installed into a root of its own (never on this host) by
# its own packages' apt and maintainer scripts. No GPU here: "works" means a
# container fails exactly as a chroot of the driver root fails. Once, in
# the static build's pass (runc runs it).

load helpers

# Debian 12's packages of every capability of the 535 driver
NVIDIA_FULL="nvidia-smi libcuda1 libnvidia-ml1 libnvidia-cfg1 nvidia-opencl-icd nvidia-vulkan-icd
	libglx-nvidia0 libegl-nvidia0 libgles-nvidia2 libnvidia-encode1 libnvcuvid1 nvidia-vdpau-driver
	libnvidia-egl-gbm1 libnvidia-egl-wayland1 libnvoptix1 nvidia-cuda-mps xserver-xorg-video-nvidia
	libnvidia-allocator1 libnvidia-fbc1 libnvidia-ngx1"

# AMD's ROCm 5.2 and Intel's compute and media stacks in Debian 12
GPU_USERSPACE="rocminfo rocm-smi libhsa-runtime64-1 clinfo ocl-icd-libopencl1 intel-opencl-icd libze1
	intel-media-va-driver vainfo"

setup_file() {
	is_static || return 0
	export NVR IMG
	NVR=$(mktemp -d /tmp/ocidec-nvidia.XXXXXX)
	IMG=$(mktemp -d /tmp/ocidec-image.XXXXXX)
	# two driver series: Debian 12's 535 and Debian 13's 550
	"$BATS_TEST_DIRNAME/fixtures/debian-nvidia.sh" "$NVR/bookworm"
	"$BATS_TEST_DIRNAME/fixtures/debian-nvidia.sh" "$NVR/trixie" trixie
	# 535 with every capability's packages (graphics, video, display, ngx)
	"$BATS_TEST_DIRNAME/fixtures/debian-nvidia.sh" "$NVR/full" bookworm $NVIDIA_FULL
	# the same 535 files in the layout NVIDIA's .run installer and driver
	# containers have: flat in the library directory, nvidia-smi in
	# /usr/bin, no alternatives
	"$BATS_TEST_DIRNAME/fixtures/chroot.sh" "$NVR/flat"
	cp -a "$NVR/bookworm/usr/lib/x86_64-linux-gnu/nvidia/current/." "$NVR/flat/usr/lib/x86_64-linux-gnu/"
	cp -L "$NVR/bookworm/usr/lib/nvidia/current/nvidia-smi" "$NVR/flat/usr/bin/nvidia-smi"
	ldconfig -r "$NVR/flat"
	# the image: a Debian userland, as CUDA's images have
	"$BATS_TEST_DIRNAME/fixtures/chroot.sh" "$IMG/rootfs"
	# a small program per API (dlopen and init), the image's own
	gcc -O1 -o "$IMG/api-probe" "$BATS_TEST_DIRNAME/fixtures/api-probe.c" -ldl
	gcc -m32 -O1 -o "$IMG/api-probe32" "$BATS_TEST_DIRNAME/fixtures/api-probe.c" -ldl
	# 535 with its 32-bit libraries (i386 added to the root's dpkg)
	"$BATS_TEST_DIRNAME/fixtures/debian-nvidia.sh" "$NVR/i386" bookworm nvidia-smi libcuda1 libnvidia-ml1 \
		libcuda1:i386 libnvidia-ml1:i386
	# AMD's and Intel's userspace, which their images carry, from Debian 12
	"$BATS_TEST_DIRNAME/fixtures/debian-nvidia.sh" "$NVR/gpu" bookworm $GPU_USERSPACE
	# a host with two AMD GPUs, an Intel iGPU and a Gaudi, in sysfs
	"$BATS_TEST_DIRNAME/fixtures/gpu-sysfs.sh" "$NVR/host"
}

teardown_file() {
	rm -rf "${NVR:-/nonexistent}" "${IMG:-/nonexistent}"
}

setup() {
	common_setup
	is_static || skip "the vendors' packages run once, in the static build's pass"
	ID=ocidec-vendors-$$-$BATS_TEST_NUMBER
	B=$BATS_TEST_TMPDIR/bundle
}

teardown() {
	runc delete -f "$ID" >/dev/null 2>&1 || true
}

@test "Debian's packaged NVIDIA driver (535 from bookworm, 550 from trixie, non-free; 535 in the flat .run layout) under the shipped nvidia.ini: nvidia-smi fails in the container as in a chroot of the driver root, not 'not found'; NVML and CUDA in the cache (issue 24)" {
	for suite in bookworm trixie flat; do
		dr=$NVR/$suite
		sed "s|^driver_root = /$|driver_root = $dr|" "$BATS_TEST_DIRNAME/../conf/nvidia.ini" | write_ini nvidia
		# the reference: the driver root itself, chrooted
		run chroot "$dr" nvidia-smi
		want_status=$status want_output=$output
		[ "$want_status" -ne 127 ]
		[ "$suite" = flat ] || [ "$(readlink "$dr/usr/bin/nvidia-smi")" = /etc/alternatives/nvidia--nvidia-smi ]
		# the container: a fresh copy of the image each time
		rm -rf "$IMG/run" && cp -a "$IMG/rootfs" "$IMG/run"
		HOOK="$OCIDEC ocidec-hook -c $CFG prestart" "$FIXTURES/bundle.sh" "$B" NVIDIA_VISIBLE_DEVICES=all -- \
			sh -c 'nvidia-smi; echo "status $?"; ldconfig -p | grep -E "libcuda.so.1 |libnvidia-ml.so.1 " | sed "s/ (.*//"' >/dev/null
		ROOT=$IMG/run perl -MJSON::PP -i -0777 -pe '$c = decode_json($_); $c->{root}{path} = $ENV{ROOT}; $_ = encode_json($c)' "$B/config.json"
		run bash -c "cd '$B' && runc run '$ID'"
		runc delete -f "$ID" >/dev/null 2>&1 || true
		assert_success
		assert_line "status $want_status"
		assert_line "$(head -n 1 <<<"$want_output")"
		assert_line --regexp '^	libcuda\.so\.1$'
		assert_line --regexp '^	libnvidia-ml\.so\.1$'
	done
}

@test "an image without merged /usr (Debian 11 and older, CentOS 7): every link the hook makes there resolves; nvidia-smi and the cache as on a merged image (issue 24)" {
	for suite in bookworm flat; do
		dr=$NVR/$suite
		sed "s|^driver_root = /$|driver_root = $dr|" "$BATS_TEST_DIRNAME/../conf/nvidia.ini" | write_ini nvidia
		run chroot "$dr" nvidia-smi
		want_status=$status want_output=$output
		# /lib a directory of its own, as before the /usr merge
		rm -rf "$IMG/run" && cp -a "$IMG/rootfs" "$IMG/run"
		[ -L "$IMG/run/lib" ]
		rm "$IMG/run/lib" && cp -a "$IMG/run/usr/lib" "$IMG/run/lib"
		HOOK="$OCIDEC ocidec-hook -c $CFG prestart" "$FIXTURES/bundle.sh" "$B" NVIDIA_VISIBLE_DEVICES=all -- \
			sh -c 'for l in $(find /lib /usr/lib /usr/bin -type l \( -name "libnvidia*" -o -name "libcuda*" -o -name "nvidia-smi" \)); do
				[ -e "$l" ] || echo "dangling $l -> $(readlink "$l")"; done
				nvidia-smi; echo "status $?"
				ldconfig -p | grep -E "libcuda.so.1 |libnvidia-ml.so.1 " | sed "s/ (.*//"' >/dev/null
		ROOT=$IMG/run perl -MJSON::PP -i -0777 -pe '$c = decode_json($_); $c->{root}{path} = $ENV{ROOT}; $_ = encode_json($c)' "$B/config.json"
		run bash -c "cd '$B' && runc run '$ID'"
		runc delete -f "$ID" >/dev/null 2>&1 || true
		assert_success
		refute_line --partial dangling
		assert_line "status $want_status"
		assert_line "$(head -n 1 <<<"$want_output")"
		assert_line --regexp '^	libcuda\.so\.1$'
		assert_line --regexp '^	libnvidia-ml\.so\.1$'
	done
}

@test "NVIDIA's own list, per capability, against what ocidec injects from Debian's 535 packages: every file of it the packages have is found; docs/nvidia-parity.md is this table (issue 24)" {
	dr=$NVR/full
	sed "s|^driver_root = /$|driver_root = $dr|" "$BATS_TEST_DIRNAME/../conf/nvidia.ini" | write_ini nvidia
	table=$BATS_TEST_TMPDIR/parity.md
	{
		echo "| capability | NVIDIA's tools inject | in Debian 12's 535 packages | ocidec injects |"
		echo "| --- | --- | --- | --- |"
	} >"$table"
	missing=()
	while read -r cap glob; do
		case $cap in '#'* | '') continue ;; esac
		# the files of the driver root the glob names (documentation aside)
		if [[ $glob == */* ]]; then
			have=$(cd "$dr" && find . -path "./$glob" \( -type f -o -type l \) -not -path './usr/share/doc/*' | sed 's|^\.||' | sort)
		else
			have=$(cd "$dr" && find . -name "$glob" \( -type f -o -type l \) -not -path './usr/share/doc/*' -not -path './var/*' | sed 's|^\.||' | sort)
		fi
		got=$("$OCIDEC" list -c "$CFG" --features "$cap" nvidia | sed "s|^$dr||" | while read -r p; do
			if [[ $glob == */* ]]; then [[ $p == /$glob ]] && echo "$p"; else [[ ${p##*/} == $glob ]] && echo "$p"; fi
			true
		done)
		nhave=$(grep -c . <<<"$have" || true) ngot=$(grep -c . <<<"$got" || true)
		[ "$nhave" -gt 0 ] && [ "$ngot" -eq 0 ] && missing+=("$cap $glob")
		echo "| $cap | \`$glob\` | $([ "$nhave" -gt 0 ] && echo "$nhave" || echo "not packaged") | $([ "$nhave" -eq 0 ] && echo "-" || { [ "$ngot" -gt 0 ] && echo "yes ($ngot)" || echo "**no**"; }) |" >>"$table"
	done <"$FIXTURES/nvidia-toolkit-files.txt"
	[ "${#missing[@]}" -gt 0 ] && printf 'in the packages, not injected: %s\n' "${missing[@]}"
	[ "${#missing[@]}" -eq 0 ]
	# the committed table is this one (OCIDEC_WRITE_DOCS=1 writes it)
	doc=$BATS_TEST_DIRNAME/../docs/nvidia-parity.md
	{ sed -n '1,/^<!-- table -->$/p' "$doc"; cat "$table"; } >"$BATS_TEST_TMPDIR/doc.md"
	[ -z "${OCIDEC_WRITE_DOCS:-}" ] || cp "$BATS_TEST_TMPDIR/doc.md" "$doc"
	run diff "$doc" "$BATS_TEST_TMPDIR/doc.md"
	assert_success
}

# doc_table NAME TABLE: docs/vendor-probes.md's table after "<!-- NAME -->"
# (up to the next empty line) is the file TABLE; OCIDEC_WRITE_DOCS=1
# writes it there
doc_table() {
	local doc=$BATS_TEST_DIRNAME/../docs/vendor-probes.md
	awk -v m="<!-- $1 -->" -v t="$2" '
		skip && /^$/ { skip = 0 }
		skip { next }
		{ print }
		$0 == m { while ((getline l <t) > 0) print l; skip = 1 }' "$doc" >"$BATS_TEST_TMPDIR/doc.md"
	[ -z "${OCIDEC_WRITE_DOCS:-}" ] || cp "$BATS_TEST_TMPDIR/doc.md" "$doc"
	diff "$doc" "$BATS_TEST_TMPDIR/doc.md"
}

# image_of SUITE: the image for driver root SUITE: that root with the
# driver's packages purged by its own dpkg (the same userland: X11's,
# Wayland's, OpenSSL's libraries the driver needs; no driver but what the
# hook gives), made once; for the flat layout, the plain Debian image
image_of() {
	local img=$NVR/$1-image
	if [ "$1" = flat ]; then
		echo "$IMG/rootfs"
		return
	fi
	if [ ! -d "$img" ]; then
		cp -al "$NVR/$1" "$img"
		# shellcheck disable=SC2046
		chroot "$img" dpkg --purge --force-depends $(chroot "$img" dpkg-query -W -f='${binary:Package} ${source:Package}\n' |
			awk '$2 ~ /^(nvidia-graphics-drivers|nvidia-support|nvidia-egl-gbm|egl-wayland|glx-alternatives)$/ { print $1 }') >/dev/null 2>&1
		if ls "$img/usr/lib/x86_64-linux-gnu" | grep -q -e nvidia -e libcuda; then
			echo "image_of $1: the driver is still there after the purge" >&2
			return 1
		fi
	fi
	echo "$img"
}

# compare WHAT: $got against $ref: "same" or "**differs**" added to
# $row; a difference, said, added to bad[]
compare() {
	if [ "$got" = "$ref" ]; then
		row="$row same |"
	else
		row="$row **differs** |"
		bad+=("$1: $(diff <(echo "$ref") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')")
	fi
}

# host_run ROOT SCRIPT: SCRIPT's output, sorted, in a chroot of ROOT as
# the host would run it: the host's procfs and sysfs (read-only), a /dev
# of its own with the nodes every container has, no CAP_MKNOD (as in
# every container here: NVIDIA's libraries make the device nodes they
# miss where they may), nothing of the host's /dev written
host_run() {
	unshare -m --propagation private sh -c '
		mount -t proc proc "$1/proc" && mount -t sysfs -o ro sysfs "$1/sys" &&
		mount -t tmpfs -o mode=0755,nosuid dev "$1/dev" || exit 1
		mknod -m 0666 "$1/dev/null" c 1 3 && mknod -m 0666 "$1/dev/zero" c 1 5 &&
		mknod -m 0666 "$1/dev/full" c 1 7 && mknod -m 0666 "$1/dev/random" c 1 8 &&
		mknod -m 0666 "$1/dev/urandom" c 1 9 && mknod -m 0666 "$1/dev/tty" c 5 0 &&
		ln -s /proc/self/fd "$1/dev/fd" || exit 1
		exec setpriv --bounding-set -mknod chroot "$1" sh -c "$2"' sh "$1" "$2" 2>&1 | sort
}

# probe_run ENGINE ROOTFS SCRIPT ENV...: SCRIPT's output, sorted, in a
# container of ROOTFS (a copy is used) given the vendor under ENGINE: runc
# with the prestart hook, the runtime shim, podman with the hook (ENV its
# env), or runc with the CDI spec of CDI_VENDOR's CDI_FEATURES applied for
# device CDI_DEVICE as an engine applies it
probe_run() {
	local engine=$1 rootfs=$2 script=$3 envs=() e
	shift 3
	rm -rf "$IMG/run" && cp -al "$rootfs" "$IMG/run"
	if [ "$engine" = podman ]; then
		podman_conf
		podman_hooks "$BATS_TEST_TMPDIR/hooks.d"
		for e in "$@"; do envs+=(-e "$e"); done
		timeout 300 podman --hooks-dir "$BATS_TEST_TMPDIR/hooks.d" run --rm --network none --cap-drop mknod "${envs[@]}" \
			--rootfs "$IMG/run" sh -c "$script" 2>&1 | sort
		return
	fi
	[ "$engine" = cdi ] && set --
	HOOK=$([ "$engine" = hook ] && echo "$OCIDEC ocidec-hook -c $CFG prestart") "$FIXTURES/bundle.sh" "$B" "$@" -- \
		sh -c "$script" >/dev/null
	ROOT=$IMG/run perl -MJSON::PP -i -0777 -pe '$c = decode_json($_); $c->{root}{path} = $ENV{ROOT}; $_ = encode_json($c)' "$B/config.json"
	case $engine in
	hook | cdi)
		if [ "$engine" = cdi ]; then
			"$OCIDEC" cdi -c "$CFG" --features "$CDI_FEATURES" "$CDI_VENDOR" >"$BATS_TEST_TMPDIR/spec.json"
			"$FIXTURES/cdi-apply.py" "$BATS_TEST_TMPDIR/spec.json" "$B/config.json" "$CDI_DEVICE"
		fi
		(cd "$B" && runc run "$ID" 2>&1 | sort)
		runc delete -f "$ID" >/dev/null 2>&1 || true ;;
	shim)
		ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/rr" run --bundle "$B" "$ID" 2>&1 | sort
		runc --root "$BATS_TEST_TMPDIR/rr" delete -f "$ID" >/dev/null 2>&1 || true ;;
	esac
}

# put_probe ROOT FEATURES: the probe programs into ROOT, and the files
# `ocidec list` gives for nvidia's FEATURES from driver root $dr
put_probe() {
	cp "$IMG/api-probe" "$1/probe"
	cp "$IMG/api-probe32" "$1/probe32"
	"$OCIDEC" list -c "$CFG" --features "$2" nvidia | sed -n "s|^$dr||p" | grep -v '^/dev/' >"$1/probe-files"
}

# probe_script PROBES [SMI [PROBES32]]: what runs in the container and in
# the chroot: each API's probe (PROBES32: the 32-bit program's too),
# nvidia-smi (SMI set), and ldd of every injected ELF (/probe-files), each
# unresolved name said
probe_script() {
	echo "cd /; /probe $1; ${2:+nvidia-smi 2>&1 | head -n 1;} ${3:+/probe32 $3 | sed 's/^/32-bit /'}"'
		n=0
		while read -r f; do
			[ -e "$f" ] || { echo "missing $f"; continue; }
			[ -f "$f" ] && [ "$(head -c 4 "$f" | od -An -tx1 | tr -d " ")" = 7f454c46 ] || continue
			n=$((n + 1))
			ldd "$f" 2>&1 | grep "not found" | sed "s|^[[:space:]]*|$f: |"
		done </probe-files
		echo "ldd: $n ELF files"'
}

@test "each capability's APIs (CUDA, NVML, OpenCL, NVENC, NVDEC, VDPAU, Vulkan, EGL, GLX, OptiX, Xorg, NGX; CUDA and NVML in 32 bits for compat32) and nvidia-smi fail in the container as in a chroot of the driver root, under the hook, the shim, CDI and podman; ldd of every injected ELF as there; docs/vendor-probes.md is this table (issue 24)" {
	declare -A probes=([utility]=nvml [compute]="cuda opencl" [video]="nvenc nvcuvid vdpau"
		[graphics]="vulkan egl glx optix" [display]=xorg [ngx]=ngx)
	table=$BATS_TEST_TMPDIR/probes.md
	{
		echo "| driver | capability | in a chroot of the driver root | runc + hook | runtime shim | CDI | podman + hook |"
		echo "| --- | --- | --- | --- | --- | --- | --- |"
	} >"$table"
	bad=()
	for layout in "full:535, Debian's layout:utility compute video graphics display ngx" \
		"trixie:550, Debian's layout:utility compute" "flat:535, flat (.run, driver containers):utility compute" \
		"i386:535 with its 32-bit libraries:utility,compute,compat32"; do
		IFS=: read -r suite what caps <<<"$layout"
		dr=$NVR/$suite
		img=$(image_of "$suite")
		sed "s|^driver_root = /$|driver_root = $dr|" "$BATS_TEST_DIRNAME/../conf/nvidia.ini" | write_ini nvidia
		for cap in $caps; do
			want= smi= want32=
			for c in ${cap//,/ }; do
				[ "$c" = compat32 ] || want="$want ${probes[$c]}"
				[ "$c" != utility ] || smi=1
			done
			[ "$suite" = full ] || want=${want/opencl/}   # only the full set has the OpenCL ICD
			[[ $cap != *compat32* ]] || want32=$want
			script=$(probe_script "$want" "$smi" "$want32")
			put_probe "$dr" "$cap"
			ref=$(host_run "$dr" "$script")
			rm -f "$dr/probe" "$dr/probe32" "$dr/probe-files"
			row="| $what | $cap | $(sed 's/\x1b\[[0-9;]*m//g; s/$/<br>/' <<<"$ref" | tr -d '\n' | sed 's/<br>$//') |"
			for engine in hook shim cdi podman; do
				put_probe "$img" "$cap"
				got=$(CDI_VENDOR=nvidia CDI_FEATURES=$cap CDI_DEVICE=all probe_run $engine "$img" "$script" \
					NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES="$cap")
				rm -f "$img/probe" "$img/probe32" "$img/probe-files"
				compare "$what $cap $engine"
			done
			echo "$row" >>"$table"
		done
	done
	[ "${#bad[@]}" -eq 0 ] || { printf '%s\n' "${bad[@]}"; false; }
	run doc_table nvidia "$table"
	assert_success
}

@test "AMD's ROCm and Intel's compute and media stacks from Debian 12 in the image, given the GPUs by the shipped amd.ini and intel.ini on a host with both: rocminfo, rocm-smi, HSA, clinfo, OpenCL, Level Zero and VA-API fail in the container as in a chroot of that root, under the hook, the shim, CDI and podman (issue 24)" {
	dr=$NVR/gpu
	cp "$IMG/api-probe" "$dr/probe"
	table=$BATS_TEST_TMPDIR/probes.md
	{
		echo "| vendor | given | in a chroot of the root | runc + hook | runtime shim | CDI | podman + hook |"
		echo "| --- | --- | --- | --- | --- | --- | --- |"
	} >"$table"
	bad=()
	for v in "amd:1:AMD_VISIBLE_DEVICES=1:/dev/dri/card1 /dev/dri/renderD129 /dev/kfd:/probe hsa; rocminfo 2>&1 | tail -n 1; rocm-smi 2>&1 | tail -n 1" \
		"intel:0:OCI_INTEL=0:/dev/dri/card0 /dev/dri/renderD128:/probe ze ocl; clinfo -l 2>&1; vainfo --display drm --device /dev/dri/renderD128 2>&1 | tail -n 1"; do
		IFS=: read -r vendor cdidev env nodes script <<<"$v"
		gpu_ini "$vendor" "$NVR/host"
		ref=$(host_run "$dr" "$script")
		row="| $vendor | $nodes | $(sed 's/\x1b\[[0-9;]*m//g; s/$/<br>/' <<<"$ref" | tr -d '\n' | sed 's/<br>$//') |"
		for engine in hook shim cdi podman; do
			got=$(CDI_VENDOR=$vendor CDI_FEATURES=all CDI_DEVICE=$cdidev probe_run $engine "$dr" \
				"ls /dev/kfd /dev/dri/* 2>/dev/null | sed 's/^/node /'; $script" "$env")
			# the selected GPU's nodes, and no other
			assert_equal "$(sed -n 's/^node //p' <<<"$got" | tr '\n' ' ' | sed 's/ $//')" "$nodes"
			got=$(grep -v '^node ' <<<"$got")
			compare "$vendor $engine"
		done
		echo "$row" >>"$table"
	done
	[ "${#bad[@]}" -eq 0 ] || { printf '%s\n' "${bad[@]}"; false; }
	run doc_table amd-intel "$table"
	assert_success
}

# req_run ENGINE SUITE ENV...: a container of the Debian image given NVIDIA
# from driver root SUITE with ENV, under runc and the hook or the shim: its
# output and status (run)
req_run() {
	local engine=$1 suite=$2
	shift 2
	# no kernel module here: the driver's version is its userspace's
	ver=$(cd "$NVR/$suite/usr/lib/x86_64-linux-gnu/nvidia/current" && ls libcuda.so.*.* | sed 's/^libcuda\.so\.//')
	sed "s|^driver_root = /$|driver_root = $NVR/$suite|; s|^version_file = .*|version = $ver|" \
		"$BATS_TEST_DIRNAME/../conf/nvidia.ini" | write_ini nvidia
	rm -rf "$IMG/run" && cp -al "$IMG/rootfs" "$IMG/run"
	HOOK=$([ "$engine" = hook ] && echo "$OCIDEC ocidec-hook -c $CFG prestart") "$FIXTURES/bundle.sh" "$B" \
		NVIDIA_VISIBLE_DEVICES=all "$@" -- sh -c 'echo started' >/dev/null
	ROOT=$IMG/run perl -MJSON::PP -i -0777 -pe '$c = decode_json($_); $c->{root}{path} = $ENV{ROOT}; $_ = encode_json($c)' "$B/config.json"
	if [ "$engine" = hook ]; then
		run bash -c "cd '$B' && runc run '$ID' 2>&1"
		runc delete -f "$ID" >/dev/null 2>&1 || true
	else
		run ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/rr" run --bundle "$B" "$ID"
		runc --root "$BATS_TEST_TMPDIR/rr" delete -f "$ID" >/dev/null 2>&1 || true
	fi
}

@test "NVIDIA_REQUIRE_*: cuda>=99.0 on 535 is refused naming the condition, cuda>=12.0 brand=tesla starts, NVIDIA_DISABLE_REQUIRE=1 starts the first; a legacy CUDA_VERSION=12.4 image is refused on 535 (CUDA 12.2) and starts on 550 (12.4); the versions read from Debian's libcuda; under the hook and the shim (issue 25)" {
	for engine in hook shim; do
		req_run $engine bookworm "NVIDIA_REQUIRE_CUDA=cuda>=99.0"
		assert_failure
		assert_output --partial "nvidia: unsatisfied condition: cuda>=99.0 (the driver: cuda 12.2, driver 535."
		assert_output --partial "NVIDIA_DISABLE_REQUIRE=true skips the check"
		refute_output --partial started
		req_run $engine bookworm "NVIDIA_REQUIRE_CUDA=cuda>=12.0 brand=tesla"
		assert_success
		assert_output started
		req_run $engine bookworm "NVIDIA_REQUIRE_CUDA=cuda>=99.0" NVIDIA_DISABLE_REQUIRE=1
		assert_success
		assert_output started
		req_run $engine bookworm CUDA_VERSION=12.4.1
		assert_failure
		assert_output --partial "nvidia: unsatisfied condition: cuda>=12.4 (the driver: cuda 12.2"
		req_run $engine trixie CUDA_VERSION=12.4.1
		assert_success
		assert_output started
		# NVIDIA's alternatives: a term holds, or a Tesla's older branch; the driver's own version
		req_run $engine bookworm "NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=535,driver<536"
		assert_success
		req_run $engine bookworm "NVIDIA_REQUIRE_DRIVER=driver>=550"
		assert_failure
		assert_output --partial "nvidia: unsatisfied condition: driver>=550 (the driver: cuda 12.2, driver 535."
		req_run $engine bookworm "NVIDIA_REQUIRE_CUDA=cuda>12.x"
		assert_failure
		assert_output --partial "nvidia: cannot check a condition: 'cuda>12.x' is no condition (PROPERTY OP VERSION, as cuda>=12.0)"
	done
	# a container that asks for no GPU is never checked
	req_run hook bookworm "NVIDIA_REQUIRE_CUDA=cuda>=99.0" NVIDIA_VISIBLE_DEVICES=void
	assert_success
}

# compat_image HOSTSUITE COMPATSUITE: the Debian image with CUDA's compat
# directory holding COMPATSUITE's libcuda (as NVIDIA's cuda-compat package
# lays it out), run given NVIDIA from driver root HOSTSUITE under ENGINE:
# the libcuda the container loads says its CUDA version
compat_run() {
	local engine=$1 host=$2 compat=$3 d ver
	d=$(ls -d "$NVR/$compat/usr/lib/x86_64-linux-gnu/nvidia/current")
	rm -rf "$IMG/compat" && cp -al "$IMG/rootfs" "$IMG/compat"
	mkdir -p "$IMG/compat/usr/local/cuda/compat"
	cp "$d"/libcuda.so.*.* "$d"/libnvidia-ptxjitcompiler.so.*.* "$IMG/compat/usr/local/cuda/compat/"
	cp "$IMG/api-probe" "$IMG/compat/probe"
	# STALE: a drop-in of ours from an earlier start (a driver upgraded since)
	[ -z "${STALE:-}" ] || echo /usr/local/cuda/compat >"$IMG/compat/etc/ld.so.conf.d/00-compat-ocidec.conf"
	ver=$(cd "$NVR/$host/usr/lib/x86_64-linux-gnu/nvidia/current" && ls libcuda.so.*.* | sed 's/^libcuda\.so\.//')
	sed "s|^driver_root = /$|driver_root = $NVR/$host|; s|^version_file = .*|version = $ver|" \
		"$BATS_TEST_DIRNAME/../conf/nvidia.ini" | write_ini nvidia
	CDI_VENDOR=nvidia CDI_FEATURES=compute CDI_DEVICE=all probe_run "$engine" "$IMG/compat" \
		'/probe cudaver; ldconfig -p | grep "libcuda.so.1 " | head -n 1 | sed "s/.*=> //"; cat /etc/ld.so.conf.d/00-compat-ocidec.conf 2>&1' \
		NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute
}

@test "CUDA forward compatibility: an image with 550's compat libcuda on the 535 host runs on it (12040) and keeps it first for its own ldconfig; with 535's on the 550 host, on the host's; under the hook, the shim, CDI and podman (issue 25)" {
	for engine in hook shim cdi podman; do
		run compat_run $engine bookworm trixie
		assert_line "cudaver: cuDriverGetVersion 0, 12040"
		assert_line /usr/local/cuda/compat/libcuda.so.1
		assert_line /usr/local/cuda/compat
		run compat_run $engine trixie bookworm
		assert_line "cudaver: cuDriverGetVersion 0, 12040"
		assert_line --regexp '^/usr/lib/x86_64-linux-gnu/(nvidia/current/)?libcuda\.so\.1$'
		assert_line --partial "00-compat-ocidec.conf: No such file or directory"
	done
	# 535's own, where no compat directory is
	run compat_run hook bookworm bookworm
	assert_line "cudaver: cuDriverGetVersion 0, 12020"
	# the drop-in of an earlier start, the host driver newer since: gone, the host's libcuda
	for engine in hook shim; do
		STALE=1 run compat_run $engine trixie bookworm
		assert_line "cudaver: cuDriverGetVersion 0, 12040"
		assert_line --partial "00-compat-ocidec.conf: No such file or directory"
	done
}

# nvidia_ctk_spec DRIVERROOT VERSION [COMPAT]: a CDI spec in the shape
# `nvidia-ctk cdi generate --driver-root DRIVERROOT` writes for a flat
# driver root (NVIDIA's documentation and source: the device nodes, the
# libraries mounted at their paths, and its hooks calling nvidia-cdi-hook),
# written by hand; COMPAT: with enable-cuda-compat
nvidia_ctk_spec() {
	DR=$1 VER=$2 COMPAT=${3:-} HOOKBIN=$BATS_TEST_TMPDIR/nvbin/nvidia-cdi-hook python3 - <<-'EOF'
		import json, os
		dr, ver, hook = os.environ["DR"], os.environ["VER"], os.environ["HOOKBIN"]
		lib = "/usr/lib/x86_64-linux-gnu/"
		libs = ["libcuda.so." + ver, "libnvidia-ml.so." + ver, "libnvidia-ptxjitcompiler.so." + ver]
		mount = lambda p: {"hostPath": dr + p, "containerPath": p, "options": ["ro", "nosuid", "nodev", "rbind", "rprivate"]}
		h = lambda *a: {"hookName": "createContainer", "path": hook, "args": ["nvidia-cdi-hook"] + list(a), "env": ["NVIDIA_CTK_DEBUG=false"]}
		hooks = [h("create-symlinks", "--link", "libcuda.so.1::" + lib + "libcuda.so",
		           "--link=libnvidia-ml.so." + ver + "::" + lib + "libnvidia-ml.so.1")]
		if os.environ["COMPAT"]:
		    hooks.append(h("enable-cuda-compat", "--host-driver-version=" + ver))
		hooks += [h("update-ldcache", "--folder", lib),
		          h("disable-device-node-modification"),
		          h("chmod", "--mode", "755", "--path", "/dev/dri"),
		          h("update-application-profile", "--profile", "x")]
		spec = {"cdiVersion": "0.5.0", "kind": "nvidia.com/gpu",
		        "devices": [{"name": "all", "containerEdits": {"env": ["NVIDIA_VISIBLE_DEVICES=void"]}}],
		        "containerEdits": {"env": ["NVIDIA_VISIBLE_DEVICES=void"],
		                           "mounts": [mount(lib + l) for l in libs] + [mount("/usr/bin/nvidia-smi")],
		                           "hooks": hooks}}
		print(json.dumps(spec, indent=2))
		EOF
}

@test "nvidia-cdi-hook: a spec in nvidia-ctk's shape runs ocidec as NVIDIA's hook (create-symlinks, update-ldcache, enable-cuda-compat, disable-device-node-modification, chmod, update-application-profile; an unknown hook said, the container started): nvidia-smi, NVML and CUDA as with ocidec's own spec; a 550 compat libcuda comes first (issue 25)" {
	mkdir -p "$BATS_TEST_TMPDIR/nvbin"
	ln -s "$OCIDEC" "$BATS_TEST_TMPDIR/nvbin/nvidia-cdi-hook"
	dr=$NVR/flat
	ver=$(cd "$dr/usr/lib/x86_64-linux-gnu" && ls libcuda.so.*.* | sed 's/^libcuda\.so\.//')
	script='/probe cuda nvml cudaver; nvidia-smi 2>&1 | head -n 1; readlink /usr/lib/x86_64-linux-gnu/libcuda.so; ldconfig -p | grep -E "libcuda.so.1 |libnvidia-ml.so.1 " | sed "s/ (.*//"'
	for spec in nvidia ocidec; do
		rm -rf "$IMG/run" && cp -al "$IMG/rootfs" "$IMG/run" && cp "$IMG/api-probe" "$IMG/run/probe"
		"$FIXTURES/bundle.sh" "$B" -- sh -c "$script" >/dev/null
		ROOT=$IMG/run perl -MJSON::PP -i -0777 -pe '$c = decode_json($_); $c->{root}{path} = $ENV{ROOT}; $_ = encode_json($c)' "$B/config.json"
		if [ $spec = nvidia ]; then
			nvidia_ctk_spec "$dr" "$ver" >"$BATS_TEST_TMPDIR/spec.json"
		else
			sed "s|^driver_root = /$|driver_root = $dr|" "$BATS_TEST_DIRNAME/../conf/nvidia.ini" | write_ini nvidia
			cdi -c "$CFG" --features utility,compute nvidia >"$BATS_TEST_TMPDIR/spec.json"
		fi
		"$FIXTURES/cdi-apply.py" "$BATS_TEST_TMPDIR/spec.json" "$B/config.json" all
		run bash -c "cd '$B' && runc run '$ID' 2>&1"
		runc delete -f "$ID" >/dev/null 2>&1 || true
		assert_success
		assert_line "cuda: cuInit 100"
		assert_line "nvml: nvmlInit_v2 9"
		assert_line "cudaver: cuDriverGetVersion 0, 12020"
		assert_line --partial "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
		assert_line --regexp '^	libcuda\.so\.1$'
		[ $spec = ocidec ] || assert_line libcuda.so.1
	done
	# a hook it does not answer (a later toolkit's): said, exit 0
	run "$BATS_TEST_TMPDIR/nvbin/nvidia-cdi-hook" some-later-hook --profile x </dev/null
	assert_success
	assert_output --partial "nvidia-cdi-hook some-later-hook: not a hook ocidec answers: nothing done"
	# with CUDA's compat directory holding 550's libcuda: first (12040)
	rm -rf "$IMG/run" && cp -al "$IMG/rootfs" "$IMG/run" && cp "$IMG/api-probe" "$IMG/run/probe"
	mkdir -p "$IMG/run/usr/local/cuda/compat"
	cp "$NVR/trixie/usr/lib/x86_64-linux-gnu/nvidia/current"/libcuda.so.*.* "$IMG/run/usr/local/cuda/compat/"
	"$FIXTURES/bundle.sh" "$B" -- sh -c '/probe cudaver; cat /etc/ld.so.conf.d/00-compat-ocidec.conf' >/dev/null
	ROOT=$IMG/run perl -MJSON::PP -i -0777 -pe '$c = decode_json($_); $c->{root}{path} = $ENV{ROOT}; $_ = encode_json($c)' "$B/config.json"
	nvidia_ctk_spec "$dr" "$ver" compat >"$BATS_TEST_TMPDIR/spec.json"
	"$FIXTURES/cdi-apply.py" "$BATS_TEST_TMPDIR/spec.json" "$B/config.json" all
	run bash -c "cd '$B' && runc run '$ID' 2>&1"
	runc delete -f "$ID" >/dev/null 2>&1 || true
	assert_success
	assert_line "cudaver: cuDriverGetVersion 0, 12040"
	assert_line /usr/local/cuda/compat
}

@test "CDI specs that stay true across a driver upgrade: Debian's 535 replaced by 550 in the same driver root, ocidec cdi --refresh (what the units and the DaemonSet run) names 550's files only, the management spec too; both valid CDI; a second refresh writes nothing (issue 35)" {
	dr=$BATS_TEST_TMPDIR/driver out=$BATS_TEST_TMPDIR/run-cdi
	cp -a "$NVR/bookworm" "$dr"
	sed "s|^driver_root = /$|driver_root = $dr|" "$BATS_TEST_DIRNAME/../conf/nvidia.ini" | write_ini nvidia
	run "$OCIDEC" cdi --refresh -c "$CFG" -o "$out"
	assert_line "nvidia: wrote $out/nvidia.com-gpu.json"
	assert_line "nvidia: wrote $out/management.nvidia.com-gpu.json"
	v535=$(basename "$dr"/usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.5*.*)
	grep -q "$v535" "$out/nvidia.com-gpu.json"
	# the upgrade: the package manager replaces the files in place
	rm -rf "$dr" && cp -a "$NVR/trixie" "$dr"
	v550=$(basename "$dr"/usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.5*.*)
	[ "$v535" != "$v550" ]
	run "$OCIDEC" cdi --refresh -c "$CFG" -o "$out"
	assert_line "nvidia: wrote $out/nvidia.com-gpu.json"
	assert_line "nvidia: wrote $out/management.nvidia.com-gpu.json"
	for f in "$out"/nvidia.com-gpu.json "$out"/management.nvidia.com-gpu.json; do
		grep -q "$v550" "$f"
		run grep -c "$v535" "$f"
		assert_output 0
	done
	echo "# $v535 -> $v550" >&3
	"$FIXTURES/cdi-check.py" "$("$FIXTURES/cdi-reference.sh" "$BATS_TEST_DIRNAME/../build/test-data")" \
		"$out/nvidia.com-gpu.json" "$out/management.nvidia.com-gpu.json"
	run "$OCIDEC" cdi --refresh -c "$CFG" -o "$out"
	assert_line "nvidia: $out/nvidia.com-gpu.json unchanged"
	refute_line --partial wrote
}
