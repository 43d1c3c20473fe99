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
