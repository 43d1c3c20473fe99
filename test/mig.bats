#!/usr/bin/env bats
# NVIDIA MIG with the shipped nvidia.ini, on the fake driver root
# (test/fixtures/driver-root.sh) with MIG set up as NVIDIA documents the
# driver's files (test/fixtures/mig-host.sh: GPU index 0, minor 1, split
# into gi1/ci0, gi2/ci0 and gi2/ci1; nvidia-smi's -L and -q text for it).
# No GPU here: the /proc and /dev trees and nvidia-smi's output are a
# fixture.

load helpers

setup_file() {
	export MDR
	MDR=$(mktemp -d /tmp/ocidec-mig.XXXXXX)
	"$BATS_TEST_DIRNAME/fixtures/driver-root.sh" "$MDR" >/dev/null
	"$BATS_TEST_DIRNAME/fixtures/mig-host.sh" "$MDR"
}

teardown_file() {
	rm -rf "${MDR:-/nonexistent}"
}

setup() {
	common_setup
	B=$BATS_TEST_TMPDIR/bundle
	mig_ini "$MDR"
	rm -f "$MDR/mig.map"
	cat "$MDR/smi-L.txt" "$MDR/smi-q.txt" | "$OCIDEC" mig-map -c "$CFG"
}

teardown() {
	# what a test added to the fixture's instances goes
	rm -rf "$MDR/proc/driver/nvidia/capabilities/gpu1/mig/gi9"
	runc --root "$BATS_TEST_TMPDIR/runc-root" delete -f "ocidec-mig-$$" >/dev/null 2>&1 || true
}

UUID0=MIG-0b3c7a34-5c4e-5d7a-9d1c-1a2b3c4d5e01
UUID1=MIG-0b3c7a34-5c4e-5d7a-9d1c-1a2b3c4d5e02
UUID2=MIG-0b3c7a34-5c4e-5d7a-9d1c-1a2b3c4d5e03
GPU0=GPU-11111111-2222-3333-4444-555555555555

# nodes ENV...: the device nodes of the hook's dry run, one line
nodes() {
	dry NVIDIA_DRIVER_CAPABILITIES=utility "$@" | sed -n "s|^mount [^ ]*\(/dev/[^ ]*\) .*|\1|p" | sort | tr '\n' ' ' | sed 's/ $//'
}

@test "mig-map: nvidia-smi -L and -q (either order) give each MIG device's UUID, index and instances, with the instances /proc shows" {
	run cat "$MDR/mig.map"
	assert_line "instances gpu1/gi1/ci0 gpu1/gi2/ci0 gpu1/gi2/ci1"
	assert_line "$UUID0 $GPU0 0 1 0"
	assert_line "$UUID1 $GPU0 1 2 0"
	assert_line "$UUID2 $GPU0 2 2 1"
	# root's, 0644: the hook reads nothing else
	[ "$(stat -c '%u %a' "$MDR/mig.map")" = "0 644" ]
	# -q first; the Processes section's "GPU instance ID" is no MIG device's
	run sh -c 'cat "$1/smi-q.txt" "$1/smi-L.txt" | "$2" mig-map -c "$3" -o -' sh "$MDR" "$OCIDEC" "$CFG"
	assert_success
	assert_equal "$output" "$(cat "$MDR/mig.map")"
	# -L alone: the instances are not there
	run sh -c '"$2" mig-map -c "$3" -o - <"$1/smi-L.txt"' sh "$MDR" "$OCIDEC" "$CFG"
	assert_failure 1
	assert_output --partial "MIG device $UUID0 ($GPU0, device 0): nvidia-smi -q gives no GPU and compute instance for it"
	# the old UUID form carries its instances: -L is enough
	printf 'GPU 0: A100 (UUID: %s)\n  MIG 3g.20gb Device 0: (UUID: MIG-%s/1/0)\n  MIG 2g.10gb Device 1: (UUID: MIG-%s/2/0)\n  MIG 1c.2g.10gb Device 2: (UUID: MIG-%s/2/1)\n' \
		"$GPU0" "$GPU0" "$GPU0" "$GPU0" >"$BATS_TEST_TMPDIR/old"
	run "$OCIDEC" mig-map -c "$CFG" -o - <"$BATS_TEST_TMPDIR/old"
	assert_line "MIG-$GPU0/1/0 $GPU0 0 1 0"
	# the output must name what the driver shows now: text from before
	# MIG was set up anew (gi5 instead of gi2) is refused, not stamped current
	sed 's/GPU Instance ID               : 2$/GPU Instance ID               : 5/' "$MDR/smi-q.txt" >"$BATS_TEST_TMPDIR/q-old"
	run sh -c 'cat "$1/smi-L.txt" "$2" | "$3" mig-map -c "$4" -o -' sh "$MDR" "$BATS_TEST_TMPDIR/q-old" "$OCIDEC" "$CFG"
	assert_failure 1
	assert_output --partial "nvidia-smi's output gives the instances gpu1/gi1/ci0 gpu1/gi5/ci0 gpu1/gi5/ci1, the driver shows gpu1/gi1/ci0 gpu1/gi2/ci0 gpu1/gi2/ci1 now: run nvidia-smi again"
	# --invalidate: the map gone, names refused until it is made again
	run "$OCIDEC" mig-map -c "$CFG" --invalidate
	assert_success
	assert_file_not_exist "$MDR/mig.map"
}

@test "mig-map: text in a Processes section (anyone's process names) is not read; a device, GPU or instance given twice is refused (review of issue 25)" {
	# a process name holding newlines that forge a section for GPU 0 with
	# its device 0 at another tenant's instance (gi2/ci0)
	python3 - "$MDR/smi-q.txt" "$BATS_TEST_TMPDIR/q-forged" <<-'EOF'
		import sys
		q = open(sys.argv[1]).read()
		forged = ("        Name                              : x\nGPU 00000000:3B:00.0\n    GPU UUID : GPU-11111111-2222-3333-4444-555555555555\n"
		          "        MIG Device\n            Index : 0\n            GPU Instance ID : 2\n            Compute Instance ID : 0\n")
		q = q.replace("        Type                              : C\n", "        Type                              : C\n" + forged, 1)
		open(sys.argv[2], "w").write(q)
		EOF
	run sh -c 'cat "$1/smi-L.txt" "$2" | "$3" mig-map -c "$4" -o -' sh "$MDR" "$BATS_TEST_TMPDIR/q-forged" "$OCIDEC" "$CFG"
	assert_failure 1
	assert_output --partial "given twice"
	# records forged in a process's name without a section line: after
	# "Processes", not read at all; the map is the true one
	grep -q '^    Processes$' "$MDR/smi-q.txt"
	sed -i '/^GPU 00000000:3B:00.0$/{x;s/^/x/;/^xx$/{x;d};x}' "$BATS_TEST_TMPDIR/q-forged"
	[ "$(grep -c '^GPU 00000000:3B:00.0$' "$BATS_TEST_TMPDIR/q-forged")" -eq 1 ]
	run sh -c 'cat "$1/smi-L.txt" "$2" | "$3" mig-map -c "$4" -o -' sh "$MDR" "$BATS_TEST_TMPDIR/q-forged" "$OCIDEC" "$CFG"
	assert_success
	assert_line "$UUID0 $GPU0 0 1 0"
	assert_line "$UUID1 $GPU0 1 2 0"
	# a MIG UUID twice in -L
	{ cat "$MDR/smi-L.txt"; echo "  MIG 1g.5gb Device  7: (UUID: $UUID0)"; cat "$MDR/smi-q.txt"; } >"$BATS_TEST_TMPDIR/twice"
	run "$OCIDEC" mig-map -c "$CFG" -o - <"$BATS_TEST_TMPDIR/twice"
	assert_failure 1
	assert_output --partial "nvidia-smi -L: MIG device $UUID0"
}

@test "mig-map --nvidia-smi: -L, then -q -i UUID per GPU, each read up to its Processes: a process name that forges a section changes nothing, the map is made and true (issue 32, finding 6)" {
	# a stand-in nvidia-smi answering -L and -q -i GPU-... as the real one
	# does (the preamble and that GPU's section), GPU 0's section with a
	# process whose name forges a section for GPU 1 with its device 0 at
	# another tenant's instance
	python3 - "$MDR/smi-q.txt" "$BATS_TEST_TMPDIR" <<-'EOF'
		import re, sys
		q = open(sys.argv[1]).read()
		parts = re.split(r"(?m)^(?=GPU [0-9A-Fa-f]{8}:)", q)
		pre, secs = parts[0], parts[1:]
		forged = ("        Name                              : x\nGPU 00000000:86:00.0\n    GPU UUID : GPU-66666666-7777-8888-9999-000000000000\n"
		          "    MIG Devices\n        MIG Device\n            Index : 0\n            GPU Instance ID : 2\n            Compute Instance ID : 0\n")
		for i, sec in enumerate(secs):
		    if i == 0:
		        assert "        Type                              : C\n" in sec
		        sec = sec.replace("        Type                              : C\n", "        Type                              : C\n" + forged, 1)
		    open("%s/q-gpu%d" % (sys.argv[2], i), "w").write(pre + sec)
		EOF
	cat >"$BATS_TEST_TMPDIR/nvidia-smi" <<-EOF
		#!/bin/sh
		echo "\$*" >>"$BATS_TEST_TMPDIR/smi-calls"
		case "\$*" in
		-L) cat "$MDR/smi-L.txt" ;;
		"-q -i GPU-11111111-2222-3333-4444-555555555555") cat "$BATS_TEST_TMPDIR/q-gpu0" ;;
		"-q -i GPU-66666666-7777-8888-9999-000000000000") cat "$BATS_TEST_TMPDIR/q-gpu1" ;;
		*) echo "No devices were found" >&2; exit 6 ;;
		esac
		EOF
	chmod +x "$BATS_TEST_TMPDIR/nvidia-smi"
	grep -q "GPU Instance ID : 2" "$BATS_TEST_TMPDIR/q-gpu0"
	# from standard input the forgery is refused (never a wrong map)
	run sh -c 'cat "$1/smi-L.txt" "$2/q-gpu0" "$2/q-gpu1" | "$3" mig-map -c "$4" -o -' sh "$MDR" "$BATS_TEST_TMPDIR" "$OCIDEC" "$CFG"
	assert_failure 1
	run "$OCIDEC" mig-map -c "$CFG" --nvidia-smi "$BATS_TEST_TMPDIR/nvidia-smi" -o -
	assert_success
	assert_equal "$output" "$(cat "$MDR/mig.map")"
	run cat "$BATS_TEST_TMPDIR/smi-calls"
	assert_output $'-L\n-q -i GPU-11111111-2222-3333-4444-555555555555\n-q -i GPU-66666666-7777-8888-9999-000000000000'
	# nvidia-smi failing is said, with its status
	sed -i 's/^-L) cat/-L) exit 9; cat/' "$BATS_TEST_TMPDIR/nvidia-smi"
	run "$OCIDEC" mig-map -c "$CFG" --nvidia-smi "$BATS_TEST_TMPDIR/nvidia-smi" -o -
	assert_failure 1
	assert_output --partial "$BATS_TEST_TMPDIR/nvidia-smi -L: exit status 9"
}

@test "a MIG device by UUID, by G:M, by the old MIG-GPU-<uuid>/GI/CI: its GPU's node and its GPU and compute instances' cap nodes, nothing more" {
	# index 0 is minor 1 (PCI order): gpu1's caps, /dev/nvidia1
	assert_equal "$(nodes NVIDIA_VISIBLE_DEVICES=$UUID0)" "/dev/nvidia-caps/nvidia-cap147 /dev/nvidia-caps/nvidia-cap148 /dev/nvidia1 /dev/nvidiactl"
	assert_equal "$(nodes NVIDIA_VISIBLE_DEVICES=0:1)" "/dev/nvidia-caps/nvidia-cap156 /dev/nvidia-caps/nvidia-cap157 /dev/nvidia1 /dev/nvidiactl"
	assert_equal "$(nodes NVIDIA_VISIBLE_DEVICES=$UUID2)" "/dev/nvidia-caps/nvidia-cap156 /dev/nvidia-caps/nvidia-cap158 /dev/nvidia1 /dev/nvidiactl"
	assert_equal "$(nodes NVIDIA_VISIBLE_DEVICES=MIG-$GPU0/2/1)" "$(nodes NVIDIA_VISIBLE_DEVICES=0:2)"
	# with a whole GPU; two compute instances of one GPU instance
	assert_equal "$(nodes NVIDIA_VISIBLE_DEVICES=1,$UUID1,0:2)" \
		"/dev/nvidia-caps/nvidia-cap156 /dev/nvidia-caps/nvidia-cap157 /dev/nvidia-caps/nvidia-cap158 /dev/nvidia0 /dev/nvidia1 /dev/nvidiactl"
	# the device plugin's mounts (volume-mounts strategy) name MIG UUIDs too
	MOUNTS=/var/run/nvidia-container-devices/$UUID0 run dry
	assert_success
	assert_output --partial "/dev/nvidia-caps/nvidia-cap148"
	# no config or monitor cap without asking
	refute_line --partial nvidia-cap1\ 
	refute_line --partial nvidia-cap2\ 
}

@test "a MIG device that is not there fails the container, saying which: no such UUID or index, an instance /proc does not show" {
	for sel in 0:3 1:0 MIG-ffffffff-0000-0000-0000-000000000000 MIG-$GPU0/3/0 MIG-$GPU0/x; do
		run dry NVIDIA_VISIBLE_DEVICES=$sel
		assert_failure 1
		assert_output --partial "nvidia: no MIG device '$sel'"
	done
	# a MIG name on a vendor without MIG
	sed -i '/^mig_/d' "$CFG/nvidia.ini"
	run dry NVIDIA_VISIBLE_DEVICES=$UUID0
	assert_failure 1
	assert_output --partial "names a MIG device: MIG is not set up for this vendor"
}

@test "the MIG map is taken only while current: after MIG is set up anew its names are refused until mig-map runs; a map anyone could write is refused" {
	# a new instance (nvidia-smi mig -cgi ...): the map is stale
	mkdir -p "$MDR/proc/driver/nvidia/capabilities/gpu1/mig/gi9/ci0"
	printf 'DeviceFileMinor: 220\n' >"$MDR/proc/driver/nvidia/capabilities/gpu1/mig/gi9/ci0/access"
	run dry NVIDIA_VISIBLE_DEVICES=$UUID0
	assert_failure 1
	assert_output --partial "nvidia: MIG device '$UUID0': the MIG map $MDR/mig.map is stale: MIG was set up anew, or the host rebooted, since it was made"
	run dry NVIDIA_VISIBLE_DEVICES=0:0
	assert_failure 1
	# the old form needs no map: its instance is checked against /proc
	assert_equal "$(nodes NVIDIA_VISIBLE_DEVICES=MIG-$GPU0/1/0)" "/dev/nvidia-caps/nvidia-cap147 /dev/nvidia-caps/nvidia-cap148 /dev/nvidia1 /dev/nvidiactl"
	# nvidia-smi's output from before the change does not name gi9: refused
	run sh -c 'cat "$1/smi-L.txt" "$1/smi-q.txt" | "$2" mig-map -c "$3"' sh "$MDR" "$OCIDEC" "$CFG"
	assert_failure 1
	# the instance gone again, the map made again: current
	rm -rf "$MDR/proc/driver/nvidia/capabilities/gpu1/mig/gi9"
	cat "$MDR/smi-L.txt" "$MDR/smi-q.txt" | "$OCIDEC" mig-map -c "$CFG"
	assert_equal "$(nodes NVIDIA_VISIBLE_DEVICES=$UUID0)" "/dev/nvidia-caps/nvidia-cap147 /dev/nvidia-caps/nvidia-cap148 /dev/nvidia1 /dev/nvidiactl"
	# a map others may write, or a link to one, is not read
	chmod 0664 "$MDR/mig.map"
	run dry NVIDIA_VISIBLE_DEVICES=$UUID0
	assert_failure 1
	assert_output --partial "is not a regular file of root's that only root may write"
	chmod 0644 "$MDR/mig.map"
	mv "$MDR/mig.map" "$MDR/mig.real" && ln -s mig.real "$MDR/mig.map"
	run dry NVIDIA_VISIBLE_DEVICES=$UUID0
	assert_failure 1
	rm "$MDR/mig.map" && mv "$MDR/mig.real" "$MDR/mig.map"
}

@test "MIG's config and monitor caps as NVIDIA's toolkit gives them: 'all' only, with CAP_SYS_ADMIN, with whole GPUs (never with MIG devices: the config cap reconfigures the GPU under other tenants), from the environment only where the tenant policy takes it" {
	run dry NVIDIA_VISIBLE_DEVICES=0 NVIDIA_MIG_CONFIG_DEVICES=all
	assert_failure 1
	assert_output --partial "NVIDIA_MIG_CONFIG_DEVICES=all: MIG's config cap only for a container with CAP_SYS_ADMIN"
	run dry NVIDIA_VISIBLE_DEVICES=0 NVIDIA_MIG_MONITOR_DEVICES=all
	assert_failure 1
	export CAPS=CAP_SYS_ADMIN
	assert_equal "$(nodes NVIDIA_VISIBLE_DEVICES=0 NVIDIA_MIG_CONFIG_DEVICES=all)" "/dev/nvidia-caps/nvidia-cap1 /dev/nvidia1 /dev/nvidiactl"
	assert_equal "$(nodes NVIDIA_VISIBLE_DEVICES=0 NVIDIA_MIG_MONITOR_DEVICES=ALL)" "/dev/nvidia-caps/nvidia-cap2 /dev/nvidia1 /dev/nvidiactl"
	# a tenant given one MIG slice gets no config cap, whatever its capabilities
	run dry NVIDIA_VISIBLE_DEVICES=0:0 NVIDIA_MIG_CONFIG_DEVICES=all
	assert_failure 1
	assert_output --partial "nvidia: NVIDIA_MIG_CONFIG_DEVICES=all with MIG devices selected (0/1/0): MIG's config cap only with whole GPUs"
	run dry NVIDIA_VISIBLE_DEVICES=0 NVIDIA_MIG_CONFIG_DEVICES=0,1
	assert_failure 1
	assert_output --partial "only 'all'"
	# no GPU given: no cap
	run dry NVIDIA_VISIBLE_DEVICES=none NVIDIA_MIG_CONFIG_DEVICES=all
	assert_success
	refute_output --partial nvidia-cap1
	assert_output --partial "no GPU given, no config cap"
	# the Kubernetes policy (no selection from the environment): ignored, said
	MOUNTS=/var/run/nvidia-container-devices/0 run dry NVIDIA_MIG_CONFIG_DEVICES=all
	assert_success
	printf 'selection = mounts annotation\nunprivileged_selection = mounts annotation\n' >"$BATS_TEST_TMPDIR/pol"
	sed -i "/^\[vendor\]/r $BATS_TEST_TMPDIR/pol" "$CFG/nvidia.ini"
	MOUNTS=/var/run/nvidia-container-devices/0 run dry NVIDIA_MIG_CONFIG_DEVICES=all
	assert_success
	refute_output --partial nvidia-cap1
	assert_output --partial "NVIDIA_MIG_CONFIG_DEVICES=all ignored"
}

@test "two MIG devices of one GPU, or a GPU and its MIG device, in one container with the proc view (the device plugin's mig-1g.10gb: 2); all gives every MIG device too, as NVIDIA's all (review of issue 25)" {
	assert_equal "$(nodes NVIDIA_VISIBLE_DEVICES=$UUID1,$UUID2)" \
		"/dev/nvidia-caps/nvidia-cap156 /dev/nvidia-caps/nvidia-cap157 /dev/nvidia-caps/nvidia-cap158 /dev/nvidia1 /dev/nvidiactl"
	assert_equal "$(nodes NVIDIA_VISIBLE_DEVICES=all)" \
		"/dev/nvidia-caps/nvidia-cap147 /dev/nvidia-caps/nvidia-cap148 /dev/nvidia-caps/nvidia-cap156 /dev/nvidia-caps/nvidia-cap157 /dev/nvidia-caps/nvidia-cap158 /dev/nvidia0 /dev/nvidia1 /dev/nvidiactl"
	# a cap node that is not the minor mig-minors gives (a driver root's
	# stand-in): left out of all, a MIG device asking for it refused
	mv "$MDR/dev/nvidia-caps/nvidia-cap148" "$MDR/cap148"
	mknod -m 0444 "$MDR/dev/nvidia-caps/nvidia-cap148" c 236 157
	run dry NVIDIA_VISIBLE_DEVICES=$UUID0
	mv -f "$MDR/cap148" "$MDR/dev/nvidia-caps/nvidia-cap148"
	assert_failure 1
	assert_output --partial "is not the character device of minor 148: left out"
	assert_output --partial "nvidia: MIG cap gpu1/gi1/ci0/access: no character device /dev/nvidia-caps/nvidia-cap148 of minor 148"
}

@test "runc: a container given a MIG device has its GPU's and its instances' nodes, the device cgroup lets it open them (ENXIO: no driver here), and no other instance's" {
	local id=ocidec-mig-$$
	HOOK="$OCIDEC ocidec-hook -c $CFG prestart" "$FIXTURES/bundle.sh" "$B" NVIDIA_VISIBLE_DEVICES=0:1 \
		NVIDIA_DRIVER_CAPABILITIES=utility -- sh -c 'ls /dev/nvidia-caps; for n in /dev/nvidia1 /dev/nvidia-caps/*; do head -c 0 $n; done; true' >/dev/null
	run sh -c "cd '$B' && runc --root '$BATS_TEST_TMPDIR/runc-root' run $id 2>&1"
	assert_success
	assert_line --index 0 nvidia-cap156
	assert_line --index 1 nvidia-cap157
	[ "${#lines[@]}" -eq 5 ]
	# allowed by the device cgroup: the kernel has no driver for them
	[ "$(grep -c 'No such device or address' <<<"$output")" -eq 3 ]
	refute_output --partial "Operation not permitted"
}

@test "the proc view: a container given a MIG device sees its GPU's entry and only its own instances' access files (copies, read-only); the config cap's file only with CAP_SYS_ADMIN" {
	# the shipped paths: the hook and the "container" see the fixture's
	# files at /proc/driver, as on a host with the driver
	sed -i "s|^device_uuids = .*|device_uuids = /proc/driver/nvidia/gpus/*/information|
		s|^mig_minors = .*|mig_minors = /proc/driver/nvidia-caps/mig-minors|
		s|^mig_caps = .*|mig_caps = /proc/driver/nvidia/capabilities|" "$CFG/nvidia.ini"
	"$FIXTURES/bundle.sh" "$B" >/dev/null
	pivot_bed "$B/rootfs" "$MDR/proc/driver"
	# hook ENV...: the hook at prestart for the "container" with these env entries
	hook() {
		DRYPID=$PID
		ENVS=$(printf '%s\037' "$@") perl -MJSON::PP -e '
			my @env = grep { length } split /\037/, $ENV{ENVS};
			print encode_json({ ociVersion => "1.0.2", root => { path => "rootfs" },
				process => { env => \@env, capabilities => { bounding => [ split / /, ($ENV{CAPS} // "") ] } },
				linux => { namespaces => [ { type => "mount" }, { type => "pid" } ] } });' >"$B/config.json"
		unshare -m --propagation private sh -c 'mount --bind "$1" /proc/driver && "$2" hook -c "$3" prestart' \
			sh "$MDR/proc/driver" "$OCIDEC" "$CFG" <<<"{\"ociVersion\": \"1.0.2\", \"id\": \"mig\", \"pid\": $PID, \"bundle\": \"$B\"}"
	}
	run hook NVIDIA_VISIBLE_DEVICES=$UUID2 NVIDIA_DRIVER_CAPABILITIES=utility
	assert_success
	assert_equal "$(inside /bin/busybox find /proc/driver/nvidia/capabilities /proc/driver/nvidia/gpus | sort)" \
		"$(printf '%s\n' /proc/driver/nvidia/capabilities /proc/driver/nvidia/capabilities/gpu1 \
		/proc/driver/nvidia/capabilities/gpu1/mig /proc/driver/nvidia/capabilities/gpu1/mig/gi2 \
		/proc/driver/nvidia/capabilities/gpu1/mig/gi2/access /proc/driver/nvidia/capabilities/gpu1/mig/gi2/ci1 \
		/proc/driver/nvidia/capabilities/gpu1/mig/gi2/ci1/access /proc/driver/nvidia/gpus \
		/proc/driver/nvidia/gpus/0000:3b:00.0 /proc/driver/nvidia/gpus/0000:3b:00.0/information | sort)"
	run inside cat /proc/driver/nvidia/capabilities/gpu1/mig/gi2/ci1/access
	assert_output $'DeviceFileMinor: 158\nDeviceFileMode: 292\nDeviceFileModify: 1'
	run inside sh -c 'echo x >/proc/driver/nvidia/capabilities/gpu1/mig/gi2/access'
	assert_output --partial "Read-only file system"
	run inside ls /dev/nvidia-caps
	assert_output $'nvidia-cap156\nnvidia-cap158'
	kill -9 "$PID"
	# CAP_SYS_ADMIN and the config cap: its file (root's alone, 0400 as the
	# driver makes it) and node
	pivot_bed "$B/rootfs" "$MDR/proc/driver"
	CAPS=CAP_SYS_ADMIN run hook NVIDIA_VISIBLE_DEVICES=0 NVIDIA_MIG_CONFIG_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=utility
	assert_success
	run inside /bin/busybox stat -c '%a %n' /proc/driver/nvidia/capabilities/mig/config /dev/nvidia-caps/nvidia-cap1
	assert_output $'400 /proc/driver/nvidia/capabilities/mig/config\n444 /dev/nvidia-caps/nvidia-cap1'
	run inside ls /proc/driver/nvidia/capabilities/mig
	assert_output config
	kill -9 "$PID"
}

@test "CDI: MIG devices by UUID and G:M (nvidia-ctk's names) with their GPU's and instances' nodes; checked against CDI's schema; runc given nvidia.com/gpu=0:2 opens them; a stale map gives none, said" {
	local spec=$BATS_TEST_TMPDIR/spec.json id=ocidec-mig-$$ ref
	run "$OCIDEC" cdi -c "$CFG" -o "$spec" nvidia
	assert_success
	run python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))
for d in s["devices"]: print(d["name"], " ".join(n["path"] for n in d["containerEdits"]["deviceNodes"]))' "$spec"
	assert_line "0:0 /dev/nvidia1 /dev/nvidia-caps/nvidia-cap147 /dev/nvidia-caps/nvidia-cap148"
	assert_line "$UUID0 /dev/nvidia1 /dev/nvidia-caps/nvidia-cap147 /dev/nvidia-caps/nvidia-cap148"
	assert_line "0:2 /dev/nvidia1 /dev/nvidia-caps/nvidia-cap156 /dev/nvidia-caps/nvidia-cap158"
	assert_line "$UUID2 /dev/nvidia1 /dev/nvidia-caps/nvidia-cap156 /dev/nvidia-caps/nvidia-cap158"
	# all: every GPU and every MIG device, as nvidia-ctk's all
	assert_line "all /dev/nvidia0 /dev/nvidia1 /dev/nvidia-caps/nvidia-cap147 /dev/nvidia-caps/nvidia-cap148 /dev/nvidia-caps/nvidia-cap156 /dev/nvidia-caps/nvidia-cap157 /dev/nvidia-caps/nvidia-cap158"
	ref=$("$FIXTURES/cdi-reference.sh" "$BATS_TEST_DIRNAME/../build/test-data")
	run "$FIXTURES/cdi-check.py" "$ref" "$spec"
	assert_success
	# what an engine does with nvidia.com/gpu=0:2
	HOOK= "$FIXTURES/bundle.sh" "$B" -- sh -c 'ls /dev/nvidia-caps; for n in /dev/nvidia-caps/*; do head -c 0 $n; done; true' >/dev/null
	"$FIXTURES/cdi-apply.py" "$spec" "$B/config.json" 0:2
	run sh -c "cd '$B' && runc --root '$BATS_TEST_TMPDIR/runc-root' run $id 2>&1"
	assert_success
	assert_equal "$(grep -c 'No such device or address' <<<"$output")" 2
	assert_line nvidia-cap158
	refute_line nvidia-cap157
	# MIG set up anew, the map not: no MIG device in the spec, a warning
	mkdir -p "$MDR/proc/driver/nvidia/capabilities/gpu1/mig/gi9/ci0"
	printf 'DeviceFileMinor: 220\n' >"$MDR/proc/driver/nvidia/capabilities/gpu1/mig/gi9/ci0/access"
	run "$OCIDEC" cdi -c "$CFG" -o "$spec" nvidia
	assert_success
	assert_output --partial "nvidia: no MIG devices in the spec: the MIG map $MDR/mig.map is stale"
	refute [ "$(grep -c MIG- "$spec")" -gt 0 ]
}

@test "the runtime shim: a MIG device's nodes and cgroup rules in config.json, runc opens them (ENXIO), the config cap not without CAP_SYS_ADMIN" {
	local id=ocidec-mig-$$
	"$FIXTURES/bundle.sh" "$B" NVIDIA_VISIBLE_DEVICES=$UUID0 NVIDIA_DRIVER_CAPABILITIES=utility -- sh -c \
		'ls /dev/nvidia-caps; for n in /dev/nvidia-caps/*; do head -c 0 $n; done; true' >/dev/null
	run ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/runc-root" run --bundle "$B" "$id"
	assert_success
	assert_line nvidia-cap147
	assert_line nvidia-cap148
	assert_equal "$(grep -c 'No such device or address' <<<"$output")" 2
	refute_output --partial "Operation not permitted"
	run python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(" ".join(sorted(d["path"] for d in c["linux"]["devices"])))' "$B/config.json"
	assert_output "/dev/nvidia-caps/nvidia-cap147 /dev/nvidia-caps/nvidia-cap148 /dev/nvidia1 /dev/nvidiactl"
	# the config cap asked for without CAP_SYS_ADMIN: the container is refused
	"$FIXTURES/bundle.sh" "$B" NVIDIA_VISIBLE_DEVICES=$UUID0 NVIDIA_MIG_CONFIG_DEVICES=all -- true >/dev/null
	run ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/runc-root" run --bundle "$B" "$id-2"
	assert_failure
	assert_output --partial "MIG's config cap only for a container with CAP_SYS_ADMIN"
}

@test "a MIG change reaches the CDI specs at the next refresh (the .path unit watches the map; the DaemonSet's plugin refreshes every 5 s): MIG devices by UUID and G:M once mapped; MIG set up anew, they leave the spec, said, until mig-map runs again (issue 35)" {
	out=$BATS_TEST_TMPDIR/run-cdi
	run "$OCIDEC" cdi --refresh -c "$CFG" -o "$out"
	assert_line "nvidia: wrote $out/nvidia.com-gpu.json"
	for name in "$UUID0" "$UUID2" '"0:1"'; do grep -q "$name" "$out/nvidia.com-gpu.json"; done
	# a new instance (nvidia-smi mig -cgi ...): the map is stale, the
	# spec gives no MIG device a stale name would misplace
	mkdir -p "$MDR/proc/driver/nvidia/capabilities/gpu1/mig/gi9/ci0"
	printf 'DeviceFileMinor: 220\n' >"$MDR/proc/driver/nvidia/capabilities/gpu1/mig/gi9/ci0/access"
	run "$OCIDEC" cdi --refresh -c "$CFG" -o "$out"
	assert_line "nvidia: wrote $out/nvidia.com-gpu.json"
	assert_line --partial "no MIG devices in the spec: the MIG map $MDR/mig.map is stale"
	run grep -c "MIG-" "$out/nvidia.com-gpu.json"
	assert_output 0
	grep -q "$GPU0" "$out/nvidia.com-gpu.json"
	# the instance gone again and the map made: the MIG devices are back
	rm -rf "$MDR/proc/driver/nvidia/capabilities/gpu1/mig/gi9"
	cat "$MDR/smi-L.txt" "$MDR/smi-q.txt" | "$OCIDEC" mig-map -c "$CFG"
	run "$OCIDEC" cdi --refresh -c "$CFG" -o "$out"
	assert_line "nvidia: wrote $out/nvidia.com-gpu.json"
	grep -q "$UUID1" "$out/nvidia.com-gpu.json"
}
