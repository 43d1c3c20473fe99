#!/usr/bin/env bats
# The shipped amd.ini, intel.ini and habana.ini on a fake host with four
# accelerators (test/fixtures/gpu-sysfs.sh): sysfs in the kernel's layout,
# the DRM numbers not in the GPUs' order. Selection by index in the
# vendor's order (PCI), by PCI address and by AMD's unique ID; the selected
# GPU's card and render nodes together; under the hook, CDI and the shim,
# where a non-root process opens the 0660 render-group nodes.

load helpers

setup_file() {
	export HOST REF
	REF=$("$BATS_TEST_DIRNAME/fixtures/cdi-reference.sh" "$BATS_TEST_DIRNAME/../build/test-data")
	HOST=$(mktemp -d /tmp/ocidec-gpus.XXXXXX)
	"$BATS_TEST_DIRNAME/fixtures/gpu-sysfs.sh" "$HOST"
}

teardown_file() {
	rm -rf "${HOST:-/nonexistent}"
}

setup() {
	common_setup
	B=$BATS_TEST_TMPDIR/bundle
	ID=ocidec-gpus-$$-$BATS_TEST_NUMBER
	SPEC=$BATS_TEST_TMPDIR/spec.json
	for v in amd intel habana; do gpu_ini $v "$HOST"; done
}

teardown() {
	runc --root "$BATS_TEST_TMPDIR/runc-root" delete -f "$ID" >/dev/null 2>&1 || true
}

# as_user_1000 CONFIG: the bundle's process runs as uid and gid 1000
as_user_1000() {
	python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["user"] = {"uid": 1000, "gid": 1000}
json.dump(c, open(sys.argv[1], "w"))' "$1"
}

# nodes ENV...: the device nodes the hook's dry run gives, sorted, one line
nodes() {
	dry "$@" | sed -n "s|^mount [^ ]*/root\(/dev/[^ ]*\) .*|\1|p" | sort | tr '\n' ' ' | sed 's/ $//'
}

@test "AMD: index in PCI order, whatever the DRM numbers; card and render together, /dev/kfd for compute; ranges and all" {
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=0)" "/dev/dri/card2 /dev/dri/renderD130 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=1)" "/dev/dri/card1 /dev/dri/renderD129 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=0-1)" "/dev/dri/card1 /dev/dri/card2 /dev/dri/renderD129 /dev/dri/renderD130 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=all)" "$(nodes AMD_VISIBLE_DEVICES=1,0)"
	assert_equal "$(nodes OCI_AMD=all)" "$(nodes AMD_VISIBLE_DEVICES=0-1)"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=ALL)" "$(nodes AMD_VISIBLE_DEVICES=0-1)"   # AMD's toolkit's spellings
	run dry AMD_VISIBLE_DEVICES=0000000000000001   # 16 hex digits: an ID, not index 1
	assert_failure 1
	assert_output --partial "amd: no device '0000000000000001'"
	# the other vendors' nodes never: the iGPU's card0, the fbdev, Gaudi's
	run dry AMD_VISIBLE_DEVICES=all
	assert_success
	refute_line --partial card0
	refute_line --partial fb0
	refute_line --partial accel
}

@test "AMD: by PCI address and by unique ID (0x or not, any case); a device it does not have fails the container" {
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=0000:83:00.0)" "/dev/dri/card1 /dev/dri/renderD129 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=83:00.0)" "/dev/dri/card1 /dev/dri/renderD129 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=0x8a3c2f1e7d6b5a49)" "/dev/dri/card2 /dev/dri/renderD130 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=8A3C2F1E7D6B5A49)" "/dev/dri/card2 /dev/dri/renderD130 /dev/kfd"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=0xc0ffee12345678)" "/dev/dri/card1 /dev/dri/renderD129 /dev/kfd"
	run dry AMD_VISIBLE_DEVICES=2
	assert_failure 1
	assert_output --partial "amd: no device 2: pci_devices with partition_devices finds 2"
	run dry AMD_VISIBLE_DEVICES=0x1234567890
	assert_failure 1
	assert_output --partial "amd: no device '0x1234567890'"
	run dry AMD_VISIBLE_DEVICES=3-1
	assert_failure 1
	assert_output --partial "amd: device range '3-1' is backwards"
}

@test "one snapshot of the devices a run: a container asking by PCI address and unique ID reads each device's files once (issue 34)" {
	local trace=$BATS_TEST_TMPDIR/trace
	dry AMD_VISIBLE_DEVICES=0000:83:00.0,0x8a3c2f1e7d6b5a49 >/dev/null
	ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=open,openat -o "$trace" \
		"$OCIDEC" hook -c "$CFG" --dry-run <<<"{\"bundle\": \"$B\", \"pid\": $$}" >/dev/null
	# each device's uevent and unique_id once, however many questions the
	# selection and the plan ask of the inventory
	run sh -c "grep -o '\"$HOST/sys/[^\"]*/\\(uevent\\|unique_id\\)\"' '$trace' | sort | uniq -c | awk '\$1 > 1'"
	assert_output ""
	run grep -c "$HOST/sys/.*/uevent\"" "$trace"
	[ "$output" -ge 4 ]
}

@test "Intel and Habana: their own devices by index and PCI address; Intel's iGPU is its GPU 0 though AMD's took the higher DRM numbers" {
	assert_equal "$(nodes OCI_INTEL=0)" "/dev/dri/card0 /dev/dri/renderD128"
	assert_equal "$(nodes OCI_INTEL=0000:00:02.0)" "/dev/dri/card0 /dev/dri/renderD128"
	run dry OCI_INTEL=1
	assert_failure 1
	assert_equal "$(nodes HABANA_VISIBLE_DEVICES=0)" "/dev/accel/accel0 /dev/accel/accel_controlD0"
	assert_equal "$(nodes HABANA_VISIBLE_DEVICES=all)" "/dev/accel/accel0 /dev/accel/accel_controlD0"
	# the older driver's class: /dev/hl0
	mkdir -p "$BATS_TEST_TMPDIR/h/sys/devices/pci0000:00/0000:06:00.0/habanalabs/hl0" "$BATS_TEST_TMPDIR/h/sys/bus/pci/drivers/habanalabs" "$BATS_TEST_TMPDIR/h/root/dev"
	printf 'MAJOR=240\nMINOR=0\nDEVNAME=hl0\n' >"$BATS_TEST_TMPDIR/h/sys/devices/pci0000:00/0000:06:00.0/habanalabs/hl0/uevent"
	ln -s ../../../../devices/pci0000:00/0000:06:00.0 "$BATS_TEST_TMPDIR/h/sys/bus/pci/drivers/habanalabs/0000:06:00.0"
	mknod "$BATS_TEST_TMPDIR/h/root/dev/hl0" c 240 0
	gpu_ini habana "$BATS_TEST_TMPDIR/h"
	run dry HABANA_VISIBLE_DEVICES=0
	assert_success
	assert_line "mount $BATS_TEST_TMPDIR/h/root/dev/hl0 /dev/hl0 ro,nosuid,noexec"
}

@test "a DEVNAME that leaves /dev gives nothing: a device with no other node is no device" {
	local h=$BATS_TEST_TMPDIR/h
	cp -a "$HOST" "$h"
	gpu_ini amd "$h"
	d=$h/sys/devices/pci0000:00/0000:00:01.1/0000:03:00.0
	printf 'MAJOR=226\nMINOR=2\nDEVNAME=../etc/shadow\n' >"$d/drm/card2/uevent"
	printf 'MAJOR=226\nMINOR=130\nDEVNAME=dri/../../etc/passwd\n' >"$d/drm/renderD130/uevent"
	run dry AMD_VISIBLE_DEVICES=all
	assert_success
	refute_output --partial /etc/
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=all)" "/dev/dri/card1 /dev/dri/renderD129 /dev/kfd"
	run dry AMD_VISIBLE_DEVICES=1
	assert_failure 1
	assert_output --partial "amd: no device 1: pci_devices with partition_devices finds 1"
}

@test "CDI: amd.com/gpu=0, =1, =<unique ID>, =all with their own nodes and the host's group; 0.7.0 adds the group to the process" {
	run cdi -c "$CFG" -o "$SPEC" amd
	assert_success
	# said: the group is needed, and 0.7.0 adds it
	assert_output --partial "group 4242 only: a non-root container needs that group (--group-add 4242)"
	assert_equal "$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(" ".join(d["name"] for d in s["devices"]))' "$SPEC")" \
		"0 8a3c2f1e7d6b5a49 1 00c0ffee12345678 all"
	run python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))
for d in s["devices"]: print(d["name"], " ".join("%s:%d" % (n["path"], n["gid"]) for n in d["containerEdits"]["deviceNodes"]))
print("common", " ".join(n["path"] for n in s["containerEdits"]["deviceNodes"]))
print("gids", s["containerEdits"].get("additionalGids"))' "$SPEC"
	assert_line "0 /dev/dri/card2:4242 /dev/dri/renderD130:4242"
	assert_line "8a3c2f1e7d6b5a49 /dev/dri/card2:4242 /dev/dri/renderD130:4242"
	assert_line "1 /dev/dri/card1:4242 /dev/dri/renderD129:4242"
	assert_line "all /dev/dri/card2:4242 /dev/dri/renderD130:4242 /dev/dri/card1:4242 /dev/dri/renderD129:4242"
	assert_line "common /dev/kfd"
	assert_line "gids None"
	run "$FIXTURES/cdi-check.py" "$REF" "$SPEC"
	assert_success
	run cdi -c "$CFG" --cdi-version 0.7.0 -o "$SPEC" amd
	assert_success
	refute_output --partial "group 4242"
	run python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))
print(s["containerEdits"]["additionalGids"], [d["containerEdits"]["additionalGids"] for d in s["devices"]])' "$SPEC"
	assert_output "[4242] [[4242], [4242], [4242], [4242], [4242]]"
	# CDI's newest schema, where a copy is at hand (a checkout's sibling shared/cdi)
	if [ -f "$BATS_TEST_DIRNAME/../../shared/cdi/schema.json" ]; then
		run "$FIXTURES/cdi-check.py" - "$SPEC" --schema "$BATS_TEST_DIRNAME/../../shared/cdi"
		assert_success
	fi
}

@test "shim: a non-root process opens the selected render-group nodes (the group added, the nodes' group kept); the others are not there" {
	"$FIXTURES/bundle.sh" "$B" AMD_VISIBLE_DEVICES=1 -- sh -c \
		'id -G; for d in /dev/kfd /dev/dri/renderD129 /dev/dri/card1 /dev/dri/renderD130; do cat $d 2>&1; done; true' >/dev/null
	as_user_1000 "$B/config.json"
	run ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/runc-root" run --bundle "$B" "$ID"
	assert_success
	assert_line --regexp '^1000 4242$'
	# no driver behind the numbers here: the kernel says so, past the permission check
	assert_line "cat: can't open '/dev/kfd': No such device or address"
	assert_line "cat: can't open '/dev/dri/renderD129': No such device or address"
	assert_line "cat: can't open '/dev/dri/card1': No such device or address"
	assert_line "cat: can't open '/dev/dri/renderD130': No such file or directory"
	refute_output --partial "Permission denied"
}

@test "CDI 0.7.0: a non-root process given amd.com/gpu=1 by the spec opens its nodes (the group added); the spec's device only" {
	cdi -c "$CFG" --cdi-version 0.7.0 amd >"$SPEC"
	"$FIXTURES/bundle.sh" "$B" -- sh -c \
		'id -G; for d in /dev/kfd /dev/dri/renderD129 /dev/dri/renderD130; do cat $d 2>&1; done; true' >/dev/null
	as_user_1000 "$B/config.json"
	"$FIXTURES/cdi-apply.py" "$SPEC" "$B/config.json" 1
	run bash -c "cd '$B' && runc --root '$BATS_TEST_TMPDIR/runc-root' run '$ID'"
	assert_success
	assert_line --regexp '^1000 4242$'
	assert_line "cat: can't open '/dev/kfd': No such device or address"
	assert_line "cat: can't open '/dev/dri/renderD129': No such device or address"
	assert_line "cat: can't open '/dev/dri/renderD130': No such file or directory"
	refute_output --partial "Permission denied"
}

@test "shim: in a user namespace the group is added as the namespace maps it, and one it does not map is left out, said (setgroups would refuse it) (review of issue 24)" {
	"$FIXTURES/bundle.sh" "$B" AMD_VISIBLE_DEVICES=1 -- true >/dev/null
	as_user_1000 "$B/config.json"
	cp "$B/config.json" "$BATS_TEST_TMPDIR/config.json"
	# a namespace that maps host gid 4242 to 42, and one that does not map it
	for maps in '[{"containerID": 0, "hostID": 100000, "size": 42}, {"containerID": 42, "hostID": 4242, "size": 1}, {"containerID": 43, "hostID": 100043, "size": 65493}]' \
		'[{"containerID": 0, "hostID": 100000, "size": 65536}]'; do
		MAPS=$maps python3 - "$BATS_TEST_TMPDIR/config.json" "$B/config.json" <<-'EOF'
			import json, os, sys
			c = json.load(open(sys.argv[1]))
			c["linux"]["namespaces"].append({"type": "user"})
			c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 100000, "size": 65536}]
			c["linux"]["gidMappings"] = json.loads(os.environ["MAPS"])
			json.dump(c, open(sys.argv[2], "w"))
			EOF
		# the edits are in config.json before runc runs (which, in a user
		# namespace, binds /dev/kfd from the host's /dev: not this fake host's)
		# (output to a file: where runc's create succeeds, a container
		# process waiting for its start would hold a pipe open)
		rc=0
		ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/runc-root" create --bundle "$B" "$ID" \
			>"$BATS_TEST_TMPDIR/create.out" 2>&1 </dev/null || rc=$?
		run cat "$BATS_TEST_TMPDIR/create.out"
		runc --root "$BATS_TEST_TMPDIR/runc-root" delete -f "$ID" >/dev/null 2>&1 || true
		gids=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["process"]["user"].get("additionalGids"))' "$B/config.json")
		if [[ $maps == *4242* ]]; then
			assert_equal "$gids" "[42]"
		else
			assert_equal "$gids" None
			assert_output --partial "/dev/dri/card1: group 4242 is not mapped in the container's user namespace: not added to the process's groups"
		fi
	done
}

@test "a node that is not the kernel's device (a block device under the name) is left out, said; bus_devices works with pci_devices; a glob that finds nothing is said (review of issue 24)" {
	local h=$BATS_TEST_TMPDIR/h
	cp -a "$HOST" "$h"
	gpu_ini amd "$h"
	rm "$h/root/dev/dri/card1" && mknod "$h/root/dev/dri/card1" b 7 0
	run dry AMD_VISIBLE_DEVICES=1
	assert_success
	assert_output --partial "amd: skipped /dev/dri/card1: not the character device 226:1 the kernel made"
	assert_equal "$(nodes AMD_VISIBLE_DEVICES=1)" "/dev/dri/renderD129 /dev/kfd"
	# the by-path names by PCI address, as nvidia.ini's graphics has them
	mkdir -p "$h/root/dev/dri/by-path"
	ln -s ../renderD130 "$h/root/dev/dri/by-path/pci-0000:03:00.0-render"
	printf '\n[feature.bypath]\nbus_devices = /dev/dri/by-path/pci-%%s-render\n' >>"$CFG/amd.ini"
	sed -i 's/^driver_feature = .*/driver_feature = compute graphics bypath/' "$CFG/amd.ini"
	run dry AMD_VISIBLE_DEVICES=0
	assert_line "symlink /dev/dri/by-path/pci-0000:03:00.0-render ../renderD130"
	# pci_devices that finds nothing: said, the rest given
	sed -i 's|^pci_devices = .*|pci_devices = /nonexistent/*:*:*.*|' "$CFG/amd.ini"
	run dry AMD_VISIBLE_DEVICES=all
	assert_success
	assert_output --partial "amd: active, but pci_devices (/nonexistent/*:*:*.* ...) finds no device with a node"
}
