#!/usr/bin/env bats
# NVIDIA's gated features with the shipped files (nvidia-gds.ini,
# nvidia-mofed.ini, nvidia-gdrcopy.ini, nvidia-nvswitch.ini) beside
# nvidia.ini: NVIDIA_GDS, NVIDIA_MOFED, NVIDIA_GDRCOPY, NVIDIA_NVSWITCH set
# to "enabled" in a container that asks for GPUs, as NVIDIA's toolkit's
# gated modifier selects them (internal/modifier/gated.go, cdi.go), under
# runc with the prestart hook, under the runtime shim, and through their CDI
# specs (NVIDIA's modes' names: nvidia.com/gds=all ...). The drivers' nodes
# are a fixture (test/fixtures/gated-host.sh over driver-root.sh's root):
# no driver of theirs runs here, so a node the device cgroup lets the
# container open answers ENXIO.

load helpers

GATED="nvidia-gds nvidia-mofed nvidia-gdrcopy nvidia-nvswitch"

setup_file() {
	export GDR=$BATS_FILE_TMPDIR/gated
	"$FIXTURES/driver-root.sh" "$GDR" >/dev/null
	"$FIXTURES/gated-host.sh" "$GDR"
	cdi_schemas
}

setup() {
	common_setup
	B=$BATS_TEST_TMPDIR/bundle
	ID=ocidec-gated-$$-$BATS_TEST_NUMBER
	nvidia_ini "$GDR"
	# shellcheck disable=SC2086
	configs "$GDR" $GATED
}

teardown() {
	runc delete -f "$ID" >/dev/null 2>&1 || true
	runc --root "$BATS_TEST_TMPDIR/rr" delete -f "$ID" >/dev/null 2>&1 || true
}

# What a container sees of them: each gated node there, and whether the
# device cgroup lets the container open it (EPERM: denied; allowed, a
# fixture's node answers ENXIO or ENODEV: no driver), each of GDS's files,
# the GPU nodes
SEE='for d in /dev/nvidia-fs* /dev/infiniband/* /dev/gdrdrv /dev/nvidia-nvswitch* /dev/nvidia0 /dev/nvidia1; do
	[ -c "$d" ] || continue
	head -c 1 "$d" 2>&1 | grep -q "Operation not permitted" && echo "denied $d" || echo "dev $d"; done
for f in /etc/cufile.json /run/udev/data/b259:0; do [ -f "$f" ] && echo "file $f"; done; true'

# seen FEATURE...: SEE's output for a container given GPU 0 (NVML's index
# 0 is nvidia1 in the fixture) and these gated features, sorted
seen() {
	local f n
	{
		echo "dev /dev/nvidia1"
		for f in "$@"; do
			case $f in
			gds)
				for n in $(seq 0 15); do echo "dev /dev/nvidia-fs$n"; done
				echo "file /etc/cufile.json"
				echo "file /run/udev/data/b259:0" ;;
			mofed) printf 'dev /dev/infiniband/%s\n' uverbs0 uverbs1 rdma_cm ;;
			gdrcopy) echo "dev /dev/gdrdrv" ;;
			nvswitch) printf 'dev /dev/nvidia-nvswitch%s\n' ctl 0 1 ;;
			esac
		done
	} | LC_ALL=C sort
}

# VAR=enabled for FEATURE (gds -> NVIDIA_GDS)
var() {
	echo "NVIDIA_$(tr a-z A-Z <<<"$1")"
}

# engine ENGINE KEY=VALUE...: SEE in a runc container under ENGINE (hook:
# the prestart hook; shim: ocidec-runtime), its output sorted in $output
engine() {
	local e=$1
	shift
	if [ "$e" = hook ]; then
		run_container "$SEE" NVIDIA_DRIVER_CAPABILITIES=utility "$@"
	else
		rm -rf "$B"
		"$FIXTURES/bundle.sh" "$B" NVIDIA_DRIVER_CAPABILITIES=utility "$@" -- sh -c "$SEE" >/dev/null
		run bash -c "ocidec-runtime --ocidec-config-dir '$CFG' --root '$BATS_TEST_TMPDIR/rr' run --bundle '$B' '$ID' 2>&1"
		runc --root "$BATS_TEST_TMPDIR/rr" delete -f "$ID" >/dev/null 2>&1 || true
	fi
	# (the shim's own warnings, on its stderr, are the hook's dry run's to check)
	output=$(grep -v '^ocidec runtime: ' <<<"$output" | LC_ALL=C sort)
}

@test "each gated feature, enabled beside a GPU request, gives exactly its nodes (and GDS its files), under the hook and the shim; all four together (issue 37)" {
	for e in hook shim; do
		for f in gds mofed gdrcopy nvswitch; do
			engine "$e" NVIDIA_VISIBLE_DEVICES=0 "$(var "$f")=enabled"
			assert_success
			assert_equal "$output" "$(seen "$f")"
		done
		engine "$e" NVIDIA_VISIBLE_DEVICES=0 NVIDIA_GDS=enabled NVIDIA_MOFED=enabled NVIDIA_GDRCOPY=enabled \
			NVIDIA_NVSWITCH=enabled
		assert_success
		assert_equal "$output" "$(seen gds mofed gdrcopy nvswitch)"
		# umad and issm (management datagrams) are not MOFED's nodes here, as NVIDIA's
		refute_output --partial umad
	done
	# the control: a node bind-mounted with no device rule is denied here
	rm -rf "$B"
	"$FIXTURES/bundle.sh" "$B" -- sh -c "$SEE" >/dev/null
	GDR=$GDR perl -MJSON::PP -i -0777 -pe '$c = decode_json($_); push @{$c->{mounts}}, { destination => "/dev/gdrdrv",
		source => "$ENV{GDR}/dev/gdrdrv", type => "bind", options => ["bind"] }; $_ = encode_json($c)' "$B/config.json"
	run bash -c "cd '$B' && runc run '$ID' 2>&1"
	assert_output "denied /dev/gdrdrv"
}

@test "a gated variable other than 'enabled' gives nothing of it, as NVIDIA's toolkit compares: true, Enabled, 1, disabled, void, empty (issue 37)" {
	for e in hook shim; do
		engine "$e" NVIDIA_VISIBLE_DEVICES=0 NVIDIA_GDS=true NVIDIA_MOFED=Enabled NVIDIA_GDRCOPY=1 NVIDIA_NVSWITCH=disabled
		assert_success
		assert_equal "$output" "$(seen)"
		engine "$e" NVIDIA_VISIBLE_DEVICES=0 NVIDIA_GDS=void NVIDIA_MOFED=
		assert_success
		assert_equal "$output" "$(seen)"
	done
	# the hook's log says why, at info
	LOG=$BATS_TEST_TMPDIR/log
	sed -i 's/^log_level = warn/log_level = info/' "$CFG/nvidia-gds.ini"
	run dry NVIDIA_VISIBLE_DEVICES=0 NVIDIA_GDS=true
	assert_success
	run cat "$LOG"
	assert_output --partial "nvidia-gds: NVIDIA_GDS=true asks nothing (only enabled activates it)"
}

@test "no GPU requested: a gated variable alone, or beside NVIDIA_VISIBLE_DEVICES=void, gives nothing, said; none (the driver, no GPU) is a request, as NVIDIA's (issue 37)" {
	for e in hook shim; do
		engine "$e" NVIDIA_GDS=enabled NVIDIA_MOFED=enabled NVIDIA_GDRCOPY=enabled NVIDIA_NVSWITCH=enabled
		assert_success
		assert_output ""
		engine "$e" NVIDIA_VISIBLE_DEVICES=void NVIDIA_GDS=enabled NVIDIA_GDRCOPY=enabled
		assert_success
		assert_output ""
		# none: NVIDIA's VisibleDevices() lists [""], so its gated modifier applies
		engine "$e" NVIDIA_VISIBLE_DEVICES=none NVIDIA_GDRCOPY=enabled NVIDIA_NVSWITCH=enabled
		assert_success
		assert_equal "$output" "$(seen gdrcopy nvswitch | grep -v /dev/nvidia1)"
	done
	run dry NVIDIA_GDS=enabled
	assert_success
	assert_output "ocidec hook: warn: nvidia-gds: env NVIDIA_GDS=enabled ignored: the container asks for none of nvidia, nvidia-tegra, nvidia-wsl (only_with)"
	# the GPU request from the device plugin's list or the annotation counts
	MOUNTS=/var/run/nvidia-container-devices/0 run dry NVIDIA_GDRCOPY=enabled
	assert_success
	assert_line "mount $GDR/dev/gdrdrv /dev/gdrdrv ro,nosuid,noexec"
	ANN='{"ocidec.io/nvidia": "0"}' run dry NVIDIA_GDRCOPY=enabled
	assert_line "mount $GDR/dev/gdrdrv /dev/gdrdrv ro,nosuid,noexec"
}

@test "a container that asks for nothing is untouched with the gated files installed (issue 37)" {
	run dry PATH=/bin HOME=/root
	assert_success
	assert_output ""
	for e in hook shim; do
		engine "$e" PATH=/bin
		assert_success
		assert_output ""
	done
}

@test "CDI: a spec per gated feature, kind as NVIDIA's modes name it, one device 'all' with exactly the feature's nodes; valid; applied beside nvidia.com/gpu=0 as an engine applies them (issue 37)" {
	mkdir -m 0755 "$BATS_TEST_TMPDIR/cdi"
	run cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/cdi"
	assert_success
	run ls "$BATS_TEST_TMPDIR/cdi"
	assert_output $'nvidia.com-gdrcopy.json\nnvidia.com-gds.json\nnvidia.com-gpu.json\nnvidia.com-mofed.json\nnvidia.com-nvswitch.json'
	run cdi_check "$BATS_TEST_TMPDIR"/cdi/*.json
	assert_success
	run cdi -c "$CFG" --list
	assert_success
	assert_line nvidia.com/gds=all
	assert_line nvidia.com/mofed=all
	assert_line nvidia.com/gdrcopy=all
	assert_line nvidia.com/nvswitch=all
	[ "$(grep -c '^nvidia.com/\(gds\|mofed\|gdrcopy\|nvswitch\)=' <<<"$output")" = 4 ]
	for f in gds mofed gdrcopy nvswitch; do
		run python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(s["kind"], [d["name"] for d in s["devices"]], s["containerEdits"]["env"])' \
			"$BATS_TEST_TMPDIR/cdi/nvidia.com-$f.json"
		assert_output "nvidia.com/$f ['all'] ['$(var "$f")=void']"
		rm -rf "$B"
		"$FIXTURES/bundle.sh" "$B" -- sh -c "$SEE" >/dev/null
		"$FIXTURES/cdi-apply.py" "$BATS_TEST_TMPDIR/cdi/nvidia.com-gpu.json" "$B/config.json" 0
		"$FIXTURES/cdi-apply.py" "$BATS_TEST_TMPDIR/cdi/nvidia.com-$f.json" "$B/config.json" all
		run bash -c "cd '$B' && runc run '$ID' 2>&1"
		runc delete -f "$ID" >/dev/null 2>&1 || true
		assert_success
		assert_equal "$(LC_ALL=C sort <<<"$output")" "$(seen "$f")"
	done
	# the device alone, with no GPU: asked for by its name, it comes (as
	# nvidia-ctk's spec of the mode gives it)
	cdi_container "$BATS_TEST_TMPDIR/cdi/nvidia.com-gdrcopy.json" "$SEE"
	assert_success
	assert_output "dev /dev/gdrdrv"
	# the refresh: the same specs, no management spec for a gated feature
	mkdir -m 0755 "$BATS_TEST_TMPDIR/run-cdi"
	run cdi --refresh -c "$CFG" -o "$BATS_TEST_TMPDIR/run-cdi"
	assert_success
	run ls "$BATS_TEST_TMPDIR/run-cdi"
	assert_output $'management.nvidia.com-gpu.json\nnvidia.com-gdrcopy.json\nnvidia.com-gds.json\nnvidia.com-gpu.json\nnvidia.com-mofed.json\nnvidia.com-nvswitch.json'
}

@test "a host whose drivers made none of the nodes: enabled gives nothing, no spec, check says so as information; install --vendor nvidia brings the four files (issue 37)" {
	local bare=$BATS_TEST_TMPDIR/bare
	"$FIXTURES/driver-root.sh" "$bare" >/dev/null
	nvidia_ini "$bare"
	# shellcheck disable=SC2086
	configs "$bare" $GATED
	run dry NVIDIA_VISIBLE_DEVICES=0 NVIDIA_DRIVER_CAPABILITIES=utility NVIDIA_GDS=enabled NVIDIA_MOFED=enabled \
		NVIDIA_GDRCOPY=enabled NVIDIA_NVSWITCH=enabled
	assert_success
	assert_line "mount $bare/dev/nvidia1 /dev/nvidia1 ro,nosuid,noexec"
	refute_output --regexp 'nvidia-fs|infiniband|gdrdrv|nvswitch|cufile|udev'
	run cdi -c "$CFG" --list
	assert_success
	refute_output --regexp 'gds|mofed|gdrcopy|nvswitch'
	mkdir -m 0755 "$BATS_TEST_TMPDIR/run-cdi"
	run cdi --refresh -c "$CFG" -o "$BATS_TEST_TMPDIR/run-cdi"
	assert_success
	run ls "$BATS_TEST_TMPDIR/run-cdi"
	assert_output $'management.nvidia.com-gpu.json\nnvidia.com-gpu.json'
	run ocidec check -c "$CFG"
	# one line for the vendors the host does not have (issue 47, finding 7)
	assert_line --regexp "^info +vendors: not here: (.*; )?nvidia-gdrcopy, nvidia-gds, nvidia-mofed, nvidia-nvswitch \(their drivers not loaded: none of their only_where under $bare\): a container asking for one gets nothing of it$"
	assert_equal "$(grep -c 'not here' <<<"$output")" 1
	refute_line --regexp '^PROBLEM +nvidia-(gds|mofed|gdrcopy|nvswitch)'
	# where the nodes are: ok, with their count
	nvidia_ini "$GDR"
	# shellcheck disable=SC2086
	configs "$GDR" $GATED
	run ocidec check -c "$CFG"
	assert_line --regexp "^ok +nvidia-gds: driver_root $GDR: 16 device nodes, 18 paths in all$"
	assert_line --regexp "^ok +nvidia-mofed: driver_root $GDR: 3 device nodes, 3 paths in all$"
	assert_line --regexp "^ok +nvidia-gdrcopy: driver_root $GDR: 1 device node, 1 path in all$"
	assert_line --regexp "^ok +nvidia-nvswitch: driver_root $GDR: 3 device nodes, 3 paths in all$"
	# a gated file without NVIDIA's GPU files: never given, a problem
	rm "$CFG/nvidia.ini"
	run ocidec check -c "$CFG"
	assert_line --regexp "^PROBLEM +nvidia-gds: given only beside nvidia, nvidia-tegra, nvidia-wsl \(only_with in $CFG/nvidia-gds.ini\), none of which is configured in $CFG: no container gets it through the hook$"
	# install --vendor nvidia brings them, driver root and tenant policy set as on nvidia.ini
	H=$BATS_TEST_TMPDIR/host
	mkdir "$H"
	ocidec install --host-root "$H" -c "$CONF" --vendor nvidia --driver-root /run/nvidia/driver \
		--tenant-policy kubernetes --runtime podman >/dev/null
	for v in $GATED; do
		assert_file_exist "$H/usr/local/ocidec/etc/ocidec.d/$v.ini"
		run sh -c "grep -E '^(driver_root|unprivileged_selection) =' '$H/usr/local/ocidec/etc/ocidec.d/$v.ini' | sort"
		assert_output $'driver_root = /run/nvidia/driver\nunprivileged_selection = mounts annotation'
	done
	ocidec install --host-root "$H" -c "$CONF" --uninstall >/dev/null
	run ocidec install --host-root "$H" -c "$CONF" --vendor amd --runtime podman
	assert_success
	assert_file_not_exist "$H/usr/local/ocidec/etc/ocidec.d/nvidia-gds.ini"
	ocidec install --host-root "$H" --uninstall >/dev/null
}

@test "the Kubernetes tenant policy: a pod without CAP_SYS_ADMIN given GPUs by the device plugin cannot switch a feature on by its own environment (said); the annotation does (issue 37)" {
	for f in "$CFG"/*.ini; do
		sed -i '/^\[vendor\]/a selection = mounts annotation env\nunprivileged_selection = mounts annotation' "$f"
	done
	MOUNTS=/var/run/nvidia-container-devices/0 run dry NVIDIA_GDRCOPY=enabled
	assert_success
	assert_line --partial "nvidia-gdrcopy: NVIDIA_GDRCOPY=enabled ignored: the vendor takes no device selection from 'env' for a container without CAP_SYS_ADMIN (unprivileged_selection)"
	refute_output --partial gdrdrv
	MOUNTS=/var/run/nvidia-container-devices/0 ANN='{"ocidec.io/nvidia-gdrcopy": "enabled"}' run dry
	assert_success
	assert_line "mount $GDR/dev/gdrdrv /dev/gdrdrv ro,nosuid,noexec"
	# the annotation's other values ask nothing
	MOUNTS=/var/run/nvidia-container-devices/0 ANN='{"ocidec.io/nvidia-gdrcopy": "all"}' run dry
	refute_output --partial gdrdrv
	# with CAP_SYS_ADMIN (the operator's, a privileged pod) the environment works
	CAPS=CAP_SYS_ADMIN MOUNTS=/var/run/nvidia-container-devices/0 run dry NVIDIA_GDRCOPY=enabled
	assert_line "mount $GDR/dev/gdrdrv /dev/gdrdrv ro,nosuid,noexec"
}

@test "bad gated config: one line naming file and line, exit 2 (activation_value not a word or void, with per-device nodes; only_with not a vendor name) (issue 37)" {
	cp "$CFG/nvidia-gds.ini" "$BATS_TEST_TMPDIR/good"
	for bad in 's/^activation_value = enabled/activation_value = void/' 's/^activation_value = enabled/activation_value = en abled/' \
		's/^only_with = .*/only_with = nvidia NVIDIA/' 's/^driver_feature = gds/driver_feature = gds\nper_device_nodes = nvidia-fs%u/'; do
		sed "$bad" "$BATS_TEST_TMPDIR/good" | write_ini nvidia-gds
		run ocidec list -c "$CFG" nvidia-gds
		assert_failure 2
		assert_equal "${#lines[@]}" 1
		assert_output --regexp "^ocidec list: $CFG/nvidia-gds.ini:[0-9]+: (activation_value|malformed list for 'only_with')"
	done
	# and under the hook: only the containers that name it fail
	sed 's/^activation_value = enabled/activation_value = void/' "$BATS_TEST_TMPDIR/good" | write_ini nvidia-gds
	run dry NVIDIA_VISIBLE_DEVICES=0 NVIDIA_GDS=enabled
	assert_failure
	assert_output --partial "$CFG/nvidia-gds.ini:"
	run dry NVIDIA_VISIBLE_DEVICES=0 NVIDIA_DRIVER_CAPABILITIES=utility
	assert_success
	assert_line "mount $GDR/dev/nvidia1 /dev/nvidia1 ro,nosuid,noexec"
}
