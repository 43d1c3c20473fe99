#!/usr/bin/env bats
# Accelerators beyond PCI functions (issue 37), on fake hosts in the
# kernel's sysfs layout (test/fixtures/gpu-sysfs.sh): two MI300X in compute
# partition modes (amdgpu's xcp partitions, KFD's topology), indexed as
# AMD's container toolkit indexes them; an HLS with four Gaudi 2 selected by
# index and by module ID (HABANA_VISIBLE_MODULES), their scale-out network
# interfaces as CDI 1.1 netDevices and the shim's linux.netDevices. Under
# the prestart hook with runc, the runtime shim and CDI.

load helpers

setup_file() {
	export MI GA MIXED
	MI=$(mktemp -d /tmp/ocidec-mi300.XXXXXX)
	GA=$(mktemp -d /tmp/ocidec-gaudi.XXXXXX)
	MIXED=$(mktemp -d /tmp/ocidec-mixed.XXXXXX)
	"$BATS_TEST_DIRNAME/fixtures/gpu-sysfs.sh" "$MI" 4242 mi300
	"$BATS_TEST_DIRNAME/fixtures/gpu-sysfs.sh" "$GA" 4242 gaudi
	"$BATS_TEST_DIRNAME/fixtures/gpu-sysfs.sh" "$MIXED"
	cdi_schemas
}

teardown_file() {
	rm -rf "${MI:-/nonexistent}" "${GA:-/nonexistent}" "${MIXED:-/nonexistent}"
}

setup() {
	common_setup
	B=$BATS_TEST_TMPDIR/bundle
	ID=ocidec-part-$$-$BATS_TEST_NUMBER
	SPEC=$BATS_TEST_TMPDIR/spec.json
	gpu_ini amd "$MI"
	gpu_ini habana "$GA"
}

teardown() {
	runc --root "$BATS_TEST_TMPDIR/runc-root" delete -f "$ID" >/dev/null 2>&1 || true
}

# nodes ENV...: the device nodes the hook's dry run gives, sorted, one line
nodes() {
	dry "$@" | sed -n "s|^mount [^ ]*/root\(/dev/[^ ]*\) .*|\1|p" | sort | tr '\n' ' ' | sed 's/ $//'
}

# in_container ENGINE ENV...: the device nodes a runc container given ENV
# under ENGINE (hook: runc with the prestart hook; shim: ocidec runtime) has
# in /dev/dri, /dev/accel and /dev/kfd, sorted, one line
in_container() {
	local engine=$1
	shift
	HOOK=$([ "$engine" = hook ] && echo "$OCIDEC ocidec-hook -c $CFG prestart") "$FIXTURES/bundle.sh" "$B" "$@" -- \
		sh -c 'ls /dev/kfd /dev/dri/* /dev/accel/* 2>/dev/null; true' >/dev/null
	if [ "$engine" = hook ]; then
		(cd "$B" && runc --root "$BATS_TEST_TMPDIR/runc-root" run "$ID") | sort | tr '\n' ' ' | sed 's/ $//'
	else
		ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/runc-root" run --bundle "$B" "$ID" |
			sort | tr '\n' ' ' | sed 's/ $//'
	fi
	runc --root "$BATS_TEST_TMPDIR/runc-root" delete -f "$ID" >/dev/null 2>&1 || true
}

@test "AMD partitions: AMD's toolkit's indices (GPUs in PCI order, each one's partitions by render minor, though the second GPU was probed first): a partition is its card and render nodes with /dev/kfd; all, ranges, a GPU's unique ID or PCI address gives all its partitions" {
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=0)" "/dev/dri/card2 /dev/dri/renderD130 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=1)" "/dev/dri/card3 /dev/dri/renderD131 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=3)" "/dev/dri/card5 /dev/dri/renderD133 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=4)" "/dev/dri/card0 /dev/dri/renderD128 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=5)" "/dev/dri/card1 /dev/dri/renderD129 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=2-4)" "/dev/dri/card0 /dev/dri/card4 /dev/dri/card5 /dev/dri/renderD128 /dev/dri/renderD132 /dev/dri/renderD133 /dev/kfd"
	local all="/dev/dri/card0 /dev/dri/card1 /dev/dri/card2 /dev/dri/card3 /dev/dri/card4 /dev/dri/card5 /dev/dri/renderD128 /dev/dri/renderD129 /dev/dri/renderD130 /dev/dri/renderD131 /dev/dri/renderD132 /dev/dri/renderD133 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=all)" "$all"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=0-5)" "$all"
	# a GPU by unique ID (its file's, or KFD's decimal one in hex) or address: each of its partitions
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=0x99aabbccddeeff00)" "/dev/dri/card0 /dev/dri/card1 /dev/dri/renderD128 /dev/dri/renderD129 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=1122334455667788)" "$(nodes AMD_VISIBLE_DEVICES=0-3)"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=0000:85:00.0)" "$(nodes AMD_VISIBLE_DEVICES=4,5)"
	# refused, one line: an index beyond the partitions, an ID no GPU has
	run dry AMD_VISIBLE_DEVICES=6
	assert_failure 1
	assert_output "ocidec hook: container : amd: no device 6: pci_devices with partition_devices finds 6"
	run dry AMD_VISIBLE_DEVICES=0x1234567890
	assert_failure 1
	assert_output "ocidec hook: amd: no device '0x1234567890'"
	# asking for nothing: nothing
	run dry
	assert_success
	assert_output ""
}

@test "AMD partitions: a render node KFD's topology does not list is left out, as AMD's toolkit leaves it (the indices after it shift); without any topology (KFD not loaded) the PCI functions alone, in PCI order; unpartitioned GPUs keep their indices" {
	local h=$BATS_TEST_TMPDIR/h
	cp -a "$MI" "$h"
	gpu_ini amd "$h"
	rm -r "$h/sys/class/kfd/kfd/topology/nodes/4"   # renderD131, the first GPU's second partition
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=1)" "/dev/dri/card4 /dev/dri/renderD132 /dev/kfd"
	run dry AMD_VISIBLE_DEVICES=5
	assert_failure 1
	rm -r "$h/sys/class/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=0)" "/dev/dri/card2 /dev/dri/renderD130 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=1)" "/dev/dri/card0 /dev/dri/renderD128 /dev/kfd"
	run dry AMD_VISIBLE_DEVICES=2
	assert_failure 1
	# the mixed host (two unpartitioned AMD GPUs, an Intel iGPU KFD does not know): as before
	gpu_ini amd "$MIXED"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=0)" "/dev/dri/card2 /dev/dri/renderD130 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=1)" "/dev/dri/card1 /dev/dri/renderD129 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=0x8a3c2f1e7d6b5a49)" "/dev/dri/card2 /dev/dri/renderD130 /dev/kfd"
}

@test "AMD partitions under runc: the prestart hook and the shim give a partition's nodes and /dev/kfd, nothing else; a container asking for nothing is untouched" {
	for engine in hook shim; do
		assert_equal "$(in_container $engine AMD_VISIBLE_DEVICES=1)" "/dev/dri/card3 /dev/dri/renderD131 /dev/kfd"
		assert_equal "$(in_container $engine AMD_VISIBLE_DEVICES=5)" "/dev/dri/card1 /dev/dri/renderD129 /dev/kfd"
		assert_equal "$(in_container $engine)" ""
	done
	"$FIXTURES/bundle.sh" "$B" -- true >/dev/null
	cp "$B/config.json" "$BATS_TEST_TMPDIR/before.json"
	ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/runc-root" create --bundle "$B" "$ID" >/dev/null 2>&1 </dev/null
	runc --root "$BATS_TEST_TMPDIR/runc-root" delete -f "$ID" >/dev/null 2>&1 || true
	cmp "$B/config.json" "$BATS_TEST_TMPDIR/before.json"
	# an unknown index: the container fails, one line
	HOOK="$OCIDEC ocidec-hook -c $CFG prestart" "$FIXTURES/bundle.sh" "$B" AMD_VISIBLE_DEVICES=9 -- true >/dev/null
	run bash -c "cd '$B' && runc --root '$BATS_TEST_TMPDIR/runc-root' run '$ID' 2>&1"
	assert_failure
	assert_output --partial "amd: no device 9: pci_devices with partition_devices finds 6"
}

@test "AMD partitions in CDI: amd.com/gpu=0 ... =5 and =all as AMD's generator names them (no unique-ID name for a partitioned GPU: it is no one device), /dev/kfd in the common edits; valid CDI (0.5.0, and the newest schema); a container given =4 by the spec has its nodes" {
	run cdi -c "$CFG" -o "$SPEC" amd
	assert_success
	run python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["cdiVersion"], s["kind"])
for d in s["devices"]: print(d["name"], " ".join(n["path"] for n in d["containerEdits"]["deviceNodes"]))
print("common", " ".join(n["path"] for n in s["containerEdits"]["deviceNodes"]))' "$SPEC"
	assert_output "0.5.0 amd.com/gpu
0 /dev/dri/card2 /dev/dri/renderD130
1 /dev/dri/card3 /dev/dri/renderD131
2 /dev/dri/card4 /dev/dri/renderD132
3 /dev/dri/card5 /dev/dri/renderD133
4 /dev/dri/card0 /dev/dri/renderD128
5 /dev/dri/card1 /dev/dri/renderD129
all /dev/dri/card2 /dev/dri/renderD130 /dev/dri/card3 /dev/dri/renderD131 /dev/dri/card4 /dev/dri/renderD132 /dev/dri/card5 /dev/dri/renderD133 /dev/dri/card0 /dev/dri/renderD128 /dev/dri/card1 /dev/dri/renderD129
common /dev/kfd"
	run "$FIXTURES/cdi-check.py" "$("$FIXTURES/cdi-reference.sh" "$BATS_TEST_DIRNAME/../build/test-data")" "$SPEC"
	assert_success
	run cdi_check_newest "$SPEC"
	assert_success
	"$FIXTURES/bundle.sh" "$B" -- sh -c 'ls /dev/kfd /dev/dri/*' >/dev/null
	"$FIXTURES/cdi-apply.py" "$SPEC" "$B/config.json" 4
	run bash -c "cd '$B' && runc --root '$BATS_TEST_TMPDIR/runc-root' run '$ID'"
	assert_success
	assert_equal "$(sort <<<"$output" | tr '\n' ' ')" "/dev/dri/card0 /dev/dri/renderD128 /dev/kfd "
}

@test "Gaudi: HABANA_VISIBLE_DEVICES by index, HABANA_VISIBLE_MODULES by module ID (device/module_id), both: the devices both name; an unknown module is refused in one line; the container keeps the variable for SynapseAI" {
	assert_equal "$(nodes HABANA_VISIBLE_DEVICES=0)" "/dev/accel/accel0 /dev/accel/accel_controlD0"
	assert_equal "$(nodes HABANA_VISIBLE_MODULES=0)" "/dev/accel/accel2 /dev/accel/accel_controlD2"
	assert_equal "$(nodes HABANA_VISIBLE_MODULES=3,1)" "/dev/accel/accel0 /dev/accel/accel1 /dev/accel/accel_controlD0 /dev/accel/accel_controlD1"
	assert_equal "$(nodes HABANA_VISIBLE_MODULES=all)" "$(nodes HABANA_VISIBLE_DEVICES=all)"
	assert_equal "$(nodes HABANA_VISIBLE_DEVICES=0-1 HABANA_VISIBLE_MODULES=1,0)" "/dev/accel/accel1 /dev/accel/accel_controlD1"
	assert_equal "$(nodes HABANA_VISIBLE_DEVICES=0000:9b:00.0)" "/dev/accel/accel3 /dev/accel/accel_controlD3"
	run dry HABANA_VISIBLE_MODULES=7
	assert_failure 1
	assert_output "ocidec hook: habana: no module '7' (HABANA_VISIBLE_MODULES)"
	run dry HABANA_VISIBLE_DEVICES=4
	assert_failure 1
	assert_output "ocidec hook: container : habana: no device 4: pci_devices finds 4"
	for engine in hook shim; do
		assert_equal "$(in_container $engine HABANA_VISIBLE_MODULES=2)" "/dev/accel/accel3 /dev/accel/accel_controlD3"
		assert_equal "$(in_container $engine HABANA_VISIBLE_DEVICES=1)" "/dev/accel/accel1 /dev/accel/accel_controlD1"
		assert_equal "$(in_container $engine)" ""
	done
	"$FIXTURES/bundle.sh" "$B" HABANA_VISIBLE_MODULES=2 -- sh -c 'echo $HABANA_VISIBLE_MODULES' >/dev/null
	run ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/runc-root" run --bundle "$B" "$ID"
	assert_line 2
}

@test "Gaudi's network interfaces: CDI 1.1 netDevices per device (cdiVersion 1.1.0 only where a spec has them, valid against CDI's 1.1 schema; --cdi-version 1.0.0 leaves them out, said); the shim writes linux.netDevices where the container has a network namespace of its own, refuses some modules' on the host's network namespace, takes all of them there; the hook says it moves none" {
	run cdi -c "$CFG" -o "$SPEC" habana
	assert_success
	run python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["cdiVersion"])
for d in s["devices"]: print(d["name"], " ".join(n["hostInterfaceName"] + ">" + n["name"] for n in d["containerEdits"].get("netDevices", [])))
print("common", s["containerEdits"].get("netDevices"))' "$SPEC"
	assert_line "1.1.0"
	assert_line "0 enp25s0p22>enp25s0p22 enp25s0p23>enp25s0p23"
	assert_line "2 enp154s0p22>enp154s0p22 enp154s0p23>enp154s0p23"
	assert_line "all enp25s0p22>enp25s0p22 enp25s0p23>enp25s0p23 enp26s0p22>enp26s0p22 enp26s0p23>enp26s0p23 enp154s0p22>enp154s0p22 enp154s0p23>enp154s0p23 enp155s0p22>enp155s0p22 enp155s0p23>enp155s0p23"
	assert_line "common None"
	run cdi_check_newest "$SPEC"
	assert_success
	# no network interface: the version as before (AMD's spec, the mixed host's Gaudi)
	assert_equal "$(cdi -c "$CFG" amd 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["cdiVersion"])')" 0.5.0
	gpu_ini habana "$MIXED"
	assert_equal "$(cdi -c "$CFG" habana 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["cdiVersion"])')" 0.5.0
	gpu_ini habana "$GA"
	run cdi -c "$CFG" --cdi-version 1.0.0 -o "$SPEC" habana
	assert_success
	assert_output --partial "network interfaces enp25s0p22 ... left out: cdiVersion 1.0.0 has no netDevices (1.1.0 has)"
	run grep -c netDevices "$SPEC"
	assert_output 0
	# the shim: config.json's linux.netDevices (crun 1.28 moves them: engines-unstable.bats; this runc, 1.1, reads no such member)
	"$FIXTURES/bundle.sh" "$B" HABANA_VISIBLE_MODULES=0 -- true >/dev/null
	ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/runc-root" create --bundle "$B" "$ID" >/dev/null 2>&1 </dev/null || true
	run python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["linux"]["netDevices"])' "$B/config.json"
	assert_output "{'enp154s0p22': {'name': 'enp154s0p22'}, 'enp154s0p23': {'name': 'enp154s0p23'}}"
	runc --root "$BATS_TEST_TMPDIR/runc-root" delete -f "$ID" >/dev/null 2>&1 || true
	# the host's network namespace: module 0 cannot have its ports alone
	# there (the container would see every module's): refused; all of them
	# (Habana's --net=host): every port is where the container is, it runs
	local nohostns='import json,sys; c=json.load(open(sys.argv[1])); c["linux"]["namespaces"]=[n for n in c["linux"]["namespaces"] if n["type"]!="network"]; json.dump(c,open(sys.argv[1],"w"))'
	"$FIXTURES/bundle.sh" "$B" HABANA_VISIBLE_MODULES=0 -- true >/dev/null
	python3 -c "$nohostns" "$B/config.json"
	run ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/runc-root" run --bundle "$B" "$ID"
	assert_failure 1
	assert_output --partial "network interfaces enp154s0p22 ...: the devices asked for cannot have them alone in the host's network namespace, which the container shares (it would see every device's): give it a network namespace of its own, or ask for all devices"
	"$FIXTURES/bundle.sh" "$B" HABANA_VISIBLE_MODULES=all -- true >/dev/null
	python3 -c "$nohostns" "$B/config.json"
	run ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/runc-root" run --bundle "$B" "$ID"
	assert_success
	refute_output --partial "network interfaces"
	run dry HABANA_VISIBLE_MODULES=0
	assert_success
	assert_output --partial "network interfaces enp154s0p22 ... not moved into the container: the hook does not move them"
}
