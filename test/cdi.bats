#!/usr/bin/env bats
# `ocidec cdi`: CDI specs from the vendor configs, checked against the CDI
# project's schema and Go types (v0.5.2, what podman 4.3 vendors; Debian's
# package, test/fixtures/cdi-reference.sh), applied to runc bundles as a
# CDI engine applies them (test/fixtures/cdi-apply.py), and run by podman
# itself from /etc/cdi. The spec's hook (ocidec hook --cdi) runs at
# createContainer, inside the container's namespaces, and at prestart.

load helpers

setup_file() {
	cdi_schemas
}

setup() {
	common_setup
	DR=$BATS_TEST_TMPDIR/dr
	demo_vendor
	B=$BATS_TEST_TMPDIR/bundle
	ID=ocidec-cdi-$$-$BATS_TEST_NUMBER
	SPEC=$BATS_TEST_TMPDIR/spec.json
}

teardown() {
	runc delete -f "$ID" >/dev/null 2>&1 || true
	if [ -n "${ETC_SPEC:-}" ]; then
		rm -f "$ETC_SPEC"
		[ -z "${MADE_ETC_CDI:-}" ] || rmdir /etc/cdi 2>/dev/null || true
	fi
}

# q FILE EXPR: the Python expression EXPR over the JSON spec FILE (s)
q() {
	python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); r = eval(sys.argv[2]); print("\n".join(map(str, r)) if isinstance(r, list) else r)' "$1" "$2"
}

# check SPEC...: cdi_check (helpers.bash)
check() {
	cdi_check "$@"
}

# cdi_bundle STAGE DEVICE... [-- SCRIPT]: a runc bundle given demo's DEVICEs
# through the spec, its hook at STAGE (createContainer or prestart)
cdi_bundle() {
	local stage=$1 devs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do devs+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	rm -rf "$B"
	RW=${RW:-} "$FIXTURES/bundle.sh" "$B" ${ENVS:-} -- sh -c "${1:-demo-tool}" >/dev/null
	cdi -c "$CFG" --features all demo | sed "s/\"createContainer\"/\"$stage\"/" >"$SPEC"
	"$FIXTURES/cdi-apply.py" "$SPEC" "$B/config.json" "${devs[@]}"
}

@test "the demo spec: a device per index and all, each its own node; the rest in the common edits" {
	run cdi -c "$CFG" --features all -o "$SPEC" demo
	assert_success
	assert_equal "$(q "$SPEC" 's["kind"] + " " + s["cdiVersion"]')" "ocidec.io/demo 0.5.0"
	assert_equal "$(q "$SPEC" '[d["name"] for d in s["devices"]]')" $'0\n1\nall'
	assert_equal "$(q "$SPEC" '[n["path"] + " " + n["hostPath"] + " %s %d:%d" % (n["type"], n["major"], n["minor"]) for n in s["devices"][0]["containerEdits"]["deviceNodes"]]')" \
		"/dev/demo0 $DR/dev/demo0 c 1:3"
	assert_equal "$(q "$SPEC" '[n["path"] for n in s["devices"][2]["containerEdits"]["deviceNodes"]]')" $'/dev/demo0\n/dev/demo1'
	assert_equal "$(q "$SPEC" '[n["path"] for n in s["containerEdits"]["deviceNodes"]]')" /dev/democtl
	assert_equal "$(q "$SPEC" '[m["containerPath"] + " " + ",".join(m["options"]) for m in s["containerEdits"]["mounts"]]')" \
		"/usr/bin/demo-tool bind,ro,nosuid,nodev
/opt/demo/lib/libdemo.so.1.0 bind,ro,nosuid,nodev
/usr/share/demo bind,ro,nosuid,nodev
/etc/demo/demo.conf bind,ro,nosuid,nodev
/run/demo bind,ro,nosuid,nodev,noexec"
	h='s["containerEdits"]["hooks"][0]'
	assert_equal "$(q "$SPEC" "$h[\"hookName\"] + \" \" + $h[\"path\"]")" "createContainer $OCIDEC"
	assert_equal "$(q "$SPEC" "$h[\"args\"]")" "ocidec-hook
--cdi
--library
/opt/demo/lib/libdemo.so.1.0
--symlink
/opt/demo/lib/libdemo.so.1::libdemo.so.1.0"
	# an env of its own: without one runc hands the hook the container's
	# (an image's LD_PRELOAD: CVE-2025-23266, test/advisories.bats)
	assert_equal "$(q "$SPEC" "$h[\"env\"]")" "PATH=/usr/sbin:/usr/bin:/sbin:/bin"
}

@test "the spec validates: CDI's schema, v0.5.2's fields and versions; JSON and YAML say the same" {
	cdi -c "$CFG" -o "$SPEC" demo
	cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/spec.yaml" demo
	cdi -c "$CFG" --format yaml demo >"$BATS_TEST_TMPDIR/stdout.yaml"
	run check "$SPEC" "$BATS_TEST_TMPDIR/spec.yaml"
	assert_success
	assert_equal "$(head -n 1 "$BATS_TEST_TMPDIR/spec.yaml")" "---"
	cmp "$BATS_TEST_TMPDIR/spec.yaml" "$BATS_TEST_TMPDIR/stdout.yaml"
	python3 -c 'import json, sys, yaml; sys.exit(json.load(open(sys.argv[1])) != yaml.safe_load(open(sys.argv[2])))' \
		"$SPEC" "$BATS_TEST_TMPDIR/spec.yaml"
	# the checker itself: a field newer than 0.5.0, or 0.6.0, is caught
	sed 's/"cdiVersion"/"annotations": {"a": "b"}, "cdiVersion"/' "$SPEC" >"$BATS_TEST_TMPDIR/new.json"
	run check "$BATS_TEST_TMPDIR/new.json"
	assert_failure
	assert_output --partial "field 'annotations' is not in CDI v0.5.2's Spec"
	run cdi -c "$CFG" --cdi-version 0.6.0 -o "$BATS_TEST_TMPDIR/v6.json" demo
	assert_success
	run check "$BATS_TEST_TMPDIR/v6.json"
	assert_failure
	assert_output --partial "cdiVersion 0.6.0"
}

@test "the fake NVIDIA tree: the spec names what list lists, every feature; indices and UUIDs" {
	driver_root
	nvidia_ini "$DR"
	rm "$CFG/demo.ini"
	run cdi -c "$CFG" --features all -o "$SPEC"
	assert_success
	run check "$SPEC"
	assert_success
	assert_equal "$(q "$SPEC" 's["kind"]')" nvidia.com/gpu   # NVIDIA's names (issue 25)
	# NVML's indices: PCI bus order, where the GPU at 0000:3b:00.0 (minor 1) is first
	assert_equal "$(q "$SPEC" '[d["name"] for d in s["devices"]]')" \
		$'0\nGPU-11111111-2222-3333-4444-555555555555\n1\nGPU-66666666-7777-8888-9999-000000000000\nall'
	assert_equal "$(q "$SPEC" 's["devices"][1]["containerEdits"] == s["devices"][0]["containerEdits"]')" True
	assert_equal "$(q "$SPEC" '[n["path"] for n in s["devices"][0]["containerEdits"]["deviceNodes"]]')" /dev/nvidia1
	assert_equal "$(q "$SPEC" '[n["path"] for n in s["devices"][2]["containerEdits"]["deviceNodes"]]')" /dev/nvidia0
	# host paths: every node, mount and link of the spec, as list prints them
	spec_paths=$(python3 - "$SPEC" "$DR" <<-'EOF'
		import json, sys
		s, dr = json.load(open(sys.argv[1])), sys.argv[2]
		edits = [s["containerEdits"]] + [d["containerEdits"] for d in s["devices"]]
		out = set()
		for e in edits:
		    out |= {n["hostPath"] for n in e.get("deviceNodes", [])}
		    out |= {m["hostPath"] for m in e.get("mounts", [])}
		    for h in e.get("hooks", []):
		        out |= {dr + a.split("::")[0] for a in h["args"] if "::" in a}
		print("\n".join(sorted(out)))
		EOF
	)
	assert_equal "$spec_paths" "$(list -c "$CFG" | LC_ALL=C sort)"
}

@test "a driver-root link never names a host file outside the driver root; links are container paths" {
	ln -s /etc/shadow "$DR/etc/demo/shadow"                 # outside: resolved inside, where nothing is
	ln -s /etc/demo/demo.conf "$DR/etc/demo/link.conf"      # absolute, in the driver root's view
	sed -i 's|^miscellaneous = .*|miscellaneous = /etc/demo/demo.conf /etc/demo/shadow /etc/demo/link.conf|' "$CFG/demo.ini"
	run cdi -c "$CFG" -o "$SPEC" demo
	assert_success
	run grep -c '"/etc/shadow"' "$SPEC"
	assert_output 0
	run q "$SPEC" '[m["hostPath"] for m in s["containerEdits"]["mounts"]] + s["containerEdits"]["hooks"][0]["args"]'
	refute_output --partial shadow
	assert_line "$DR/etc/demo/demo.conf"
	assert_line "/etc/demo/link.conf::/etc/demo/demo.conf"
	assert_line "/opt/demo/lib/libdemo.so.1::libdemo.so.1.0"
	refute_line --partial "::$DR"
	refute_line --regexp "^$DR.*::"
}

@test "createContainer: the hook runs in the container's namespaces; device, program through the cache, read-only mounts" {
	cdi_bundle createContainer all -- 'demo-tool; ls /dev | grep demo; readlink /opt/demo/lib/libdemo.so.1; grep -E " /(usr/bin/demo-tool|opt/demo/lib/libdemo.so.1.0|run/demo) " /proc/self/mountinfo | cut -d" " -f5,6; head -c 0 /dev/democtl && echo opened; (echo x >/etc/demo/demo.conf) 2>&1; true'
	run bash -c "cd '$B' && timeout 60 runc run '$ID' 2>&1"
	assert_success
	assert_line "demo-tool: the answer is 42"
	assert_line demo0
	assert_line demo1
	assert_line democtl
	assert_line libdemo.so.1.0
	assert_line "/usr/bin/demo-tool ro,nosuid,nodev,relatime"
	assert_line "/opt/demo/lib/libdemo.so.1.0 ro,nosuid,nodev,relatime"
	assert_line "/run/demo ro,nosuid,nodev,noexec,relatime"
	assert_line opened
	assert_line --partial "Read-only file system"
	run "$OCIDEC" ldcache -p -r "$B/rootfs"
	assert_output --partial "libdemo.so.1 (libc6,x86-64) => /opt/demo/lib/libdemo.so.1"
}

@test "prestart: the same spec's hook from the runtime's namespaces; one device" {
	cdi_bundle prestart 1 -- 'demo-tool; ls /dev | grep demo'
	run bash -c "cd '$B' && timeout 60 runc run '$ID' 2>&1"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl'
}

@test "the cache survives the image's own ldconfig: the drop-in, at either stage" {
	for stage in createContainer prestart; do
		RW=1 cdi_bundle "$stage" all -- 'ldconfig && demo-tool && cat /etc/ld.so.conf.d/00-ocidec-opt-demo-lib.conf'
		mkdir -p "$B/rootfs/etc/ld.so.conf.d" "$B/rootfs/sbin"
		echo 'include /etc/ld.so.conf.d/*.conf' >"$B/rootfs/etc/ld.so.conf"
		cp /sbin/ldconfig "$B/rootfs/sbin/ldconfig"
		run bash -c "cd '$B' && timeout 60 runc run '$ID' 2>&1"
		assert_success
		assert_output $'demo-tool: the answer is 42\n/opt/demo/lib'
		runc delete -f "$ID" >/dev/null 2>&1 || true
	done
}

@test "the image's env never reaches the spec's hook (runc hands a createContainer hook without env the image's)" {
	ENVS="OCIDEC_LDCACHE_ARCH=vax OCIDEC_RESOLVE=fallback OCIDEC_MOUNT_API=legacy TZ=/proc/self/environ" \
		cdi_bundle createContainer all
	# a probe beside the spec's hook shows what runc hands such a hook
	python3 - "$B/config.json" "$BATS_TEST_TMPDIR/probe" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1]))
		c["hooks"]["createContainer"].append({"path": "/bin/sh", "args": ["sh", "-c", "env >" + sys.argv[2]]})
		json.dump(c, open(sys.argv[1], "w"))
		EOF
	run bash -c "cd '$B' && timeout 60 runc run '$ID' 2>&1"
	assert_success
	assert_output "demo-tool: the answer is 42"
	run cat "$BATS_TEST_TMPDIR/probe"
	assert_line OCIDEC_LDCACHE_ARCH=vax
	assert_line OCIDEC_MOUNT_API=legacy
	run "$OCIDEC" ldcache -p -r "$B/rootfs"
	assert_output --partial "libdemo.so.1 (libc6,x86-64) => /opt/demo/lib/libdemo.so.1"
}

@test "the vendor hook registered at createContainer refuses what it cannot do there; idle containers start" {
	rm -rf "$B"
	"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all >/dev/null
	python3 - "$B/config.json" "$OCIDEC" "$CFG" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1]))
		c["hooks"] = {"createContainer": [{"path": sys.argv[2], "args": ["ocidec-hook", "-c", sys.argv[3], "createContainer"]}]}
		json.dump(c, open(sys.argv[1], "w"))
		EOF
	run bash -c "cd '$B' && timeout 60 runc run '$ID' 2>&1"
	assert_failure
	assert_output --partial "a createContainer hook"
	runc delete -f "$ID" >/dev/null 2>&1 || true
	python3 - "$B/config.json" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1]))
		c["process"]["env"].remove("OCI_DEMO=all")
		json.dump(c, open(sys.argv[1], "w"))
		EOF
	run bash -c "cd '$B' && timeout 60 runc run '$ID' 2>&1"
	assert_success
}

@test "podman: --device ocidec.io/demo=all and =0 from a spec in /etc/cdi, JSON and YAML" {
	is_static || skip "podman runs once, in the static build's pass"
	[ -d /etc/cdi ] || { mkdir /etc/cdi; MADE_ETC_CDI=1; }
	ROOTFS=$BATS_TEST_TMPDIR/b/rootfs
	"$FIXTURES/bundle.sh" "$BATS_TEST_TMPDIR/b" >/dev/null
	podman_conf
	ETC_SPEC=/etc/cdi/ocidec-test-$$-$BATS_TEST_NUMBER.json
	cdi -c "$CFG" -o "$ETC_SPEC" demo
	run timeout 120 podman run --rm --network none --device ocidec.io/demo=all --rootfs "$ROOTFS" sh -c \
		'demo-tool; ls /dev | grep demo; head -c 0 /dev/democtl && echo opened; grep -c " /opt/demo/lib/libdemo.so.1.0 ro," /proc/self/mountinfo; (echo x >/usr/bin/demo-tool) 2>&1; true'
	assert_success
	assert_line "demo-tool: the answer is 42"
	assert_line demo0
	assert_line demo1
	assert_line opened
	assert_line 1
	assert_line --partial "Read-only file system"
	rm "$ETC_SPEC"
	ETC_SPEC=${ETC_SPEC%.json}.yaml
	cdi -c "$CFG" -o "$ETC_SPEC" demo
	rm -f "$ROOTFS/etc/ld.so.cache"
	run timeout 120 podman run --rm --network none --device ocidec.io/demo=0 --rootfs "$ROOTFS" sh -c 'demo-tool; ls /dev | grep demo'
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemoctl'
}

@test "-o DIR: KIND.json per vendor, mode 0644, replaced atomically; nothing for a vendor with nothing" {
	printf '[vendor]\nname = empty\nactivation_flag = OCI_EMPTY\ndriver_root = %s/none\n[feature.base]\nbinaries = x\n' "$BATS_TEST_TMPDIR" | write_ini empty
	mkdir "$BATS_TEST_TMPDIR/out"
	run --separate-stderr cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/out"
	assert_success
	# every vendor: those not here are no warning (the package ships every
	# vendor's file; most hosts have one: issue 47, finding 7); one named is
	assert_equal "$stderr" ""
	run --separate-stderr cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/out" empty
	assert_failure 1
	assert_equal "$stderr" "ocidec cdi: warn: empty: nothing under driver_root $BATS_TEST_TMPDIR/none: no spec
ocidec cdi: no vendor has anything to give: none of their files is under their driver_root: no spec"
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/out")" ocidec.io-demo.json
	assert_equal "$(stat -c %a "$BATS_TEST_TMPDIR/out/ocidec.io-demo.json")" 644
	ino=$(stat -c %i "$BATS_TEST_TMPDIR/out/ocidec.io-demo.json")
	cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/out" --format yaml demo
	cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/out" demo
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/out")" $'ocidec.io-demo.json\nocidec.io-demo.yaml'
	[ "$(stat -c %i "$BATS_TEST_TMPDIR/out/ocidec.io-demo.json")" != "$ino" ]
	run cdi -c "$CFG" empty
	assert_failure 1
	assert_output --partial "no vendor has anything to give"
}

@test "cdi --refresh: each vendor's spec and its management spec (management.KIND=all) written only when they change, atomically; they follow a driver upgrade; removed when the driver is gone; another tool's spec untouched (issue 35)" {
	local out=$BATS_TEST_TMPDIR/run-cdi
	run cdi -c "$CFG" --refresh -o "$out"
	assert_success
	assert_line "demo: wrote $out/ocidec.io-demo.json"
	assert_line "demo: wrote $out/management.ocidec.io-demo.json"
	check "$out/ocidec.io-demo.json" "$out/management.ocidec.io-demo.json"
	assert_equal "$(q "$out/management.ocidec.io-demo.json" 's["kind"] + " " + ",".join(d["name"] for d in s["devices"])')" \
		"management.ocidec.io/demo all"
	# every feature and every device node in the management spec
	grep -q '/dev/demo0' "$out/management.ocidec.io-demo.json"
	grep -q '/dev/demo1' "$out/management.ocidec.io-demo.json"
	# nothing changed: nothing written (the same inode, the same time)
	before=$(stat -c '%i %.9Y' "$out/ocidec.io-demo.json" "$out/management.ocidec.io-demo.json")
	echo '{"cdiVersion": "0.5.0", "kind": "other.io/x", "devices": []}' >"$out/other.io-x.json"
	run cdi -c "$CFG" --refresh -o "$out"
	assert_success
	assert_line "demo: $out/ocidec.io-demo.json unchanged"
	assert_line "demo: $out/management.ocidec.io-demo.json unchanged"
	assert_equal "$(stat -c '%i %.9Y' "$out/ocidec.io-demo.json" "$out/management.ocidec.io-demo.json")" "$before"
	# a driver upgrade (its library's version): the specs follow, and a
	# container given the device through the new spec runs
	mv "$DR/opt/demo/lib/libdemo.so.1.0" "$DR/opt/demo/lib/libdemo.so.1.1"
	ln -sf libdemo.so.1.1 "$DR/opt/demo/lib/libdemo.so.1"
	run cdi -c "$CFG" --refresh -o "$out"
	assert_line "demo: wrote $out/ocidec.io-demo.json"
	run grep -c 'libdemo.so.1.0' "$out/ocidec.io-demo.json"
	assert_output 0
	grep -q 'libdemo.so.1.1' "$out/ocidec.io-demo.json"
	rm -rf "$B"
	"$FIXTURES/bundle.sh" "$B" -- demo-tool >/dev/null
	"$FIXTURES/cdi-apply.py" "$out/ocidec.io-demo.json" "$B/config.json" 0
	run bash -c "cd '$B' && runc --root '$BATS_TEST_TMPDIR/runc-root' run ocidec-cdi-$$-refresh 2>&1"
	runc --root "$BATS_TEST_TMPDIR/runc-root" delete -f "ocidec-cdi-$$-refresh" >/dev/null 2>&1 || true
	assert_output --partial "demo-tool: the answer is 42"
	# the vendor's file taken away: its specs go with the next refresh of
	# every vendor, not with a broken file's (review of issue 47); another
	# tool's stays
	mv "$CFG/demo.ini" "$BATS_TEST_TMPDIR/demo.ini.aside"
	printf '[vendor]\nname = broken\nno_such_key = 1\n' >"$CFG/broken.ini"
	chmod 0644 "$CFG/broken.ini"
	run cdi -c "$CFG" --refresh -o "$out"
	assert_file_exists "$out/ocidec.io-demo.json"
	rm "$CFG/broken.ini"
	run cdi -c "$CFG" --refresh -o "$out"
	assert_line "removed $out/ocidec.io-demo.json: no vendor config gives ocidec.io/demo any more"
	assert_line "removed $out/management.ocidec.io-demo.json: no vendor config gives management.ocidec.io/demo any more"
	assert_equal "$(ls -A "$out")" other.io-x.json
	mv "$BATS_TEST_TMPDIR/demo.ini.aside" "$CFG/demo.ini"
	run cdi -c "$CFG" --refresh -o "$out"
	assert_line "demo: wrote $out/ocidec.io-demo.json"
	# the driver gone: its specs go; another tool's stays
	rm -rf "$DR" && mkdir "$DR"
	run cdi -c "$CFG" --refresh -o "$out"
	assert_success
	assert_line "demo: removed $out/ocidec.io-demo.json: nothing under its driver_root $DR to give"
	assert_equal "$(ls -A "$out")" other.io-x.json
	run cdi -c "$CFG" --refresh --list
	assert_failure 2
}

@test "cdi --refresh: a broken vendor config is said and the others are refreshed all the same (exit 1); a format switch leaves no twin of ours; another spec of the same kind is said; a directory others may write is refused (review of issue 35)" {
	local out=$BATS_TEST_TMPDIR/run-cdi
	mkdir -m 0755 "$out"
	printf '[vendor]\nname = bad\nbogus = 1\n' >"$CFG/bad.ini"
	run --separate-stderr cdi -c "$CFG" --refresh -o "$out"
	assert_failure 1
	assert_line "demo: wrote $out/ocidec.io-demo.json"
	[[ $stderr == *"bad.ini:3: unknown key 'bogus' in [vendor]"* ]] || fail "not said: $stderr"
	rm "$CFG/bad.ini"
	# YAML now: the JSON twin goes (an engine refuses a device two specs define)
	run cdi -c "$CFG" --refresh --format yaml -o "$out"
	assert_success
	assert_line "demo: removed $out/ocidec.io-demo.json: the other format of ocidec.io-demo.yaml"
	assert_equal "$(ls -A "$out")" $'management.ocidec.io-demo.yaml\nocidec.io-demo.yaml'
	# another tool's spec of our kind (NVIDIA's refresh writes nvidia.yaml): said, left
	printf 'cdiVersion: "0.5.0"\nkind: ocidec.io/demo\ndevices: []\n' >"$out/other.yaml"
	run --separate-stderr cdi -c "$CFG" --refresh --format yaml -o "$out"
	assert_success
	[[ $stderr == *"$out/other.yaml gives kind ocidec.io/demo too"* ]] || fail "not said: $stderr"
	assert_exist "$out/other.yaml"
	# a file of ours not root's, or not 0644: written again
	chmod 0666 "$out/ocidec.io-demo.yaml"
	run cdi -c "$CFG" --refresh --format yaml -o "$out"
	assert_line "demo: wrote $out/ocidec.io-demo.yaml"
	assert_equal "$(stat -c %a "$out/ocidec.io-demo.yaml")" 644
	# a directory others may write: nothing written there
	chmod 0777 "$out"
	run cdi -c "$CFG" --refresh -o "$out"
	assert_failure 1
	assert_output --partial "not the caller's alone"
}

@test "cdi_kind and bad input: one line, exit 2" {
	sed -i '/^\[vendor\]/a cdi_kind = example.com/gpu' "$CFG/demo.ini"
	run cdi -c "$CFG" demo
	assert_success
	assert_line --partial '"kind":	"example.com/gpu"'
	sed -i 's|^cdi_kind = .*|cdi_kind = example.com/1gpu|' "$CFG/demo.ini"
	run cdi -c "$CFG" demo
	assert_failure 2
	assert_output "ocidec cdi: $CFG/demo.ini:2: cdi_kind 'example.com/1gpu' is not a CDI kind (VENDOR/CLASS, such as nvidia.com/gpu)"
	sed -i '/^cdi_kind/d' "$CFG/demo.ini"
	run cdi -c "$CFG" --cdi-version 0.5 demo
	assert_failure 2
	assert_output "ocidec cdi: --cdi-version 0.5: not one of 0.3.0 ... 1.1.0 (see ocidec cdi --help)"
	run cdi -c "$CFG" --format toml demo
	assert_failure 2
	run cdi -c "$CFG" --hook-path relative demo
	assert_failure 2
	run cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/x.json"     # the one vendor configured
	assert_success
	printf '[vendor]\nname = other\nactivation_flag = OCI_OTHER\n[feature.base]\nbinaries = x\n' | write_ini other
	run cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/x.json"
	assert_failure 2
	assert_output "ocidec cdi: -o $BATS_TEST_TMPDIR/x.json: not a directory: name one VENDOR to write one file (see ocidec cdi --help)"
	run cdi -c "$CFG" nosuch
	assert_failure 2
	# before 0.5.0 a device node has no hostPath: a driver root cannot be said
	run cdi -c "$CFG" --cdi-version 0.4.0 demo
	assert_failure 1
	assert_output "ocidec cdi: demo: /dev/democtl: on the host at $DR/dev/democtl: cdiVersion 0.4.0 has no hostPath for device nodes (0.5.0 has)"
}

@test "hook --cdi: bad arguments are usage errors; --dry-run prints the links and cache directories" {
	run hook --cdi --symlink relative::x </dev/null
	assert_failure 2
	run hook --cdi --symlink /a/b </dev/null
	assert_failure 2
	run hook --library /x.so </dev/null
	assert_failure 2
	assert_output "ocidec hook: unknown option '--library' (see ocidec hook --help)"
	rm -rf "$B"
	"$FIXTURES/bundle.sh" "$B" >/dev/null
	run hook --cdi --dry-run --library /opt/demo/lib/libdemo.so.1.0 --library /usr/lib/x/liby.so \
		--symlink /opt/demo/lib/libdemo.so.1::libdemo.so.1.0 <<<"{\"bundle\": \"$B\"}"
	assert_success
	assert_output $'symlink /opt/demo/lib/libdemo.so.1 libdemo.so.1.0\nldcache /opt/demo/lib\nldcache /usr/lib/x'

	# the hooks' own options beside the cache hook's (--mount-api was once
	# taken for --chmod), and --folder in what it prints (issue 34)
	run hook --cdi --dry-run --mount-api legacy --resolver fallback --folder /usr/lib/extra \
		--library /opt/demo/lib/libdemo.so.1.0 <<<"{\"bundle\": \"$B\"}"
	assert_success
	assert_output $'ldcache /opt/demo/lib\nldcache /usr/lib/extra'
}

@test "nvidia-cdi-hook: NVIDIA's global flags (--debug) before a subcommand are skipped, never spun on; --chmod needs --chmod-mode (review of issue 25)" {
	ln -s "$OCIDEC" "$BATS_TEST_TMPDIR/nvidia-cdi-hook"
	run timeout 10 "$BATS_TEST_TMPDIR/nvidia-cdi-hook" --debug --quiet update-ldcache --folder /usr/lib </dev/null
	[ "$status" -ne 124 ]
	assert_output --partial "container state"
	run "$OCIDEC" cdi-hook --chmod /dev/dri prestart </dev/null
	assert_failure 2
	assert_output --partial "--chmod needs --chmod-mode"
}

@test "cdi --claim NAME --devices SEL: one device NAME (a DRA claim) with everything SEL gives, kind DOMAIN/claim, written as DOMAIN-claim_NAME.json; bad claims and selections refused" {
	demo_vendor
	run cdi -c "$CFG" --claim 3f2a-9b7c --devices 1 demo
	assert_success
	run python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["kind"], s["containerEdits"]["env"]); d=s["devices"]
print(len(d), d[0]["name"], " ".join(n["path"] for n in d[0]["containerEdits"]["deviceNodes"]), len(d[0]["containerEdits"]["mounts"]) > 0, len(d[0]["containerEdits"]["hooks"]))' <<<"$output"
	assert_output $'ocidec.io/claim [\'OCI_DEMO=void\']\n1 3f2a-9b7c /dev/democtl /dev/demo1 True 1'
	mkdir -p "$BATS_TEST_TMPDIR/run-cdi"
	run cdi -c "$CFG" --claim 3f2a-9b7c --devices 0,1 -o "$BATS_TEST_TMPDIR/run-cdi" demo
	assert_success
	assert_file_exist "$BATS_TEST_TMPDIR/run-cdi/ocidec.io-claim_3f2a-9b7c.json"
	run "$FIXTURES/cdi-check.py" "$("$FIXTURES/cdi-reference.sh" "$BATS_TEST_DIRNAME/../build/test-data")" "$BATS_TEST_TMPDIR/run-cdi/ocidec.io-claim_3f2a-9b7c.json"
	assert_success
	run cdi -c "$CFG" --claim 3f2a-9b7c --devices 7 demo
	assert_failure 1
	assert_output --partial "demo: no device 7"
	run cdi -c "$CFG" --claim "a/b" --devices 0 demo
	assert_failure 2
	run cdi -c "$CFG" --claim x demo
	assert_failure 2
	assert_output --partial "--claim and --devices go together"
	run cdi -c "$CFG" --claim x --devices '' demo
	assert_failure 2
	assert_output --partial "no device: a claim names one at least"
	run cdi -c "$CFG" --claim x --devices none demo
	assert_failure 2
	run cdi -c "$CFG" --claim x --devices 0
	assert_failure 2
}

@test "nvidia-cdi-hook: --link and --folder values with commas are several, as NVIDIA's command line takes them (runc, createContainer)" {
	local id=ocidec-cdi-$$-commas
	ln -s "$OCIDEC" "$BATS_TEST_TMPDIR/nvidia-cdi-hook"
	"$FIXTURES/bundle.sh" "$B" -- sh -c 'readlink /opt/x/a; readlink /opt/x/b' >/dev/null
	HOOK=$BATS_TEST_TMPDIR/nvidia-cdi-hook python3 -c 'import json, os, sys
c = json.load(open(sys.argv[1]))
# (LeakSanitizer cannot read /proc/PID/task from the container'"'"'s PID
# namespace, where a createContainer hook exits: the sanitizer build fails there)
h = lambda *a: {"path": os.environ["HOOK"], "args": ["nvidia-cdi-hook"] + list(a), "env": ["ASAN_OPTIONS=detect_leaks=0"]}
c.setdefault("hooks", {})["createContainer"] = [h("create-symlinks", "--link", "liba.so.1::/opt/x/a,libb.so.2::/opt/x/b"),
	h("update-ldcache", "--folder", "/opt/x,/opt/y")]
json.dump(c, open(sys.argv[1], "w"))' "$B/config.json"
	run bash -c "cd '$B' && runc --root '$BATS_TEST_TMPDIR/runc-root' run $id 2>&1"
	runc --root "$BATS_TEST_TMPDIR/runc-root" delete -f "$id" >/dev/null 2>&1 || true
	assert_success
	assert_output $'liba.so.1\nlibb.so.2'
}

@test "enable-cuda-compat: a compat libcuda carrying NVIDIA's note of the driver branches it supports is used only on one of them, and only when newer; without the note, when its major is greater (as NVIDIA's hook decides)" {
	local id=ocidec-cdi-$$-compat
	ln -s "$OCIDEC" "$BATS_TEST_TMPDIR/nvidia-cdi-hook"
	# compat VERSION DRIVERS: is the image's compat directory put first on a 535.261.03 host?
	compat() {
		rm -rf "$B"
		"$FIXTURES/bundle.sh" "$B" -- sh -c 'cat /etc/ld.so.conf.d/00-compat-ocidec.conf 2>/dev/null || echo host' >/dev/null
		mkdir -p "$B/rootfs/usr/local/cuda/compat" "$B/rootfs/etc/ld.so.conf.d"
		"$FIXTURES/cuda-compat-lib.sh" "$B/rootfs/usr/local/cuda/compat/libcuda.so.$1" "$2"
		HOOK=$BATS_TEST_TMPDIR/nvidia-cdi-hook python3 -c 'import json, os, sys
c = json.load(open(sys.argv[1]))
c.setdefault("hooks", {})["createContainer"] = [{"path": os.environ["HOOK"],
	"args": ["nvidia-cdi-hook", "enable-cuda-compat", "--host-driver-version=535.261.03"]}]
json.dump(c, open(sys.argv[1], "w"))' "$B/config.json"
		(cd "$B" && runc --root "$BATS_TEST_TMPDIR/runc-root" run "$id" 2>&1)
		runc --root "$BATS_TEST_TMPDIR/runc-root" delete -f "$id" >/dev/null 2>&1 || true
	}
	run compat 560.10.01 "535, 550"
	assert_output /usr/local/cuda/compat
	run compat 560.10.01 "550, 555"         # not for the host's branch, newer or not
	assert_output host
	run compat 535.300.01 "535"              # the host's branch, newer within it
	assert_output /usr/local/cuda/compat
	run compat 535.100.01 "535"              # older than the host's
	assert_output host
	run compat 560.10.01 ""                  # no note: the major decides
	assert_output /usr/local/cuda/compat
	run compat 535.300.01 ""
	assert_output host
}

@test "cdi gives what the hook gives by default: the vendor's driver_feature, and says so; --features all for every feature (issue 33, finding 5)" {
	mkdir "$BATS_TEST_TMPDIR/out"
	run cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/out" demo
	assert_success
	assert_output "demo: wrote $BATS_TEST_TMPDIR/out/ocidec.io-demo.json: features base (its driver_feature, what the hook gives by default; --features all for every one)"
	refute grep -q '"/run/demo"' "$BATS_TEST_TMPDIR/out/ocidec.io-demo.json"
	# the hook's default for the same vendor: the same mounts
	B=$BATS_TEST_TMPDIR/b run dry OCI_DEMO=all
	refute_output --partial /run/demo
	run cdi -c "$CFG" --features all -o "$BATS_TEST_TMPDIR/out" demo
	assert_output "demo: wrote $BATS_TEST_TMPDIR/out/ocidec.io-demo.json: features base,ipc"
	grep -q '"/run/demo"' "$BATS_TEST_TMPDIR/out/ocidec.io-demo.json"
	# to stdout: the spec alone
	run --separate-stderr cdi -c "$CFG" demo
	python3 -c 'import json, sys; json.loads(sys.argv[1])' "$output"
}

@test "cdi --list: each spec's device names as engines take them, KIND=NAME (nvidia-ctk cdi list); -o refused (issue 33)" {
	demo_vendor
	run ocidec cdi --list -c "$CFG"
	assert_success
	want=$(ocidec cdi -c "$CFG" | python3 -c 'import json, sys; s = json.load(sys.stdin); [print(s["kind"] + "=" + d["name"]) for d in s["devices"]]')
	assert_output "$want"
	assert_line "ocidec.io/demo=all"
	assert_line "ocidec.io/demo=0"
	run ocidec cdi --list -c "$CFG" -o "$BATS_TEST_TMPDIR/x.json"
	assert_failure 2
	assert_output --partial "--list prints the device names: no -o"
}

@test "cdi -o PATH that is not there: a directory when it names no .json or .yaml file (the guide's cdi -o /etc/cdi on a node without one), a file when it does; a missing parent is one line (issue 47, finding 5)" {
	run cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/etc-cdi" demo
	assert_success
	assert_output --partial "demo: wrote $BATS_TEST_TMPDIR/etc-cdi/ocidec.io-demo.json"
	assert_equal "$(stat -c '%F %a' "$BATS_TEST_TMPDIR/etc-cdi")" "directory 755"
	run cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/one.yaml" demo
	assert_success
	assert_equal "$(stat -c %F "$BATS_TEST_TMPDIR/one.yaml")" "regular file"
	run cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/no/such" demo
	assert_failure 1
	assert_output "ocidec cdi: -o $BATS_TEST_TMPDIR/no/such: can't make the directory (no .json or .yaml name: a directory is meant): No such file or directory"
	assert_file_not_exist "$BATS_TEST_TMPDIR/no"
}

@test "a user's spec (ocidec cdi not as root: a rootless engine's own spec dir) gives a node whose host path is not its container path as a bind mount of the driver root's, which rootless runc binds, and a root's spec as deviceNodes (issue 47, finding 9)" {
	local d=$BATS_TEST_TMPDIR
	while [ "$d" != / ]; do chmod o+x "$d"; d=$(dirname "$d"); done
	run --separate-stderr setpriv --reuid 65534 --regid 65534 --clear-groups "$OCIDEC" cdi -c "$CFG" demo
	assert_success
	run python3 -c 'import json, sys
s = json.loads(sys.argv[1])["containerEdits"]
print(len(s.get("deviceNodes", [])))
print("\n".join(sorted(m["hostPath"] + " " + m["containerPath"] for m in s["mounts"] if "/dev/" in m["containerPath"])))' "$output"
	assert_output "0
$DR/dev/democtl /dev/democtl"
	run --separate-stderr cdi -c "$CFG" demo
	run python3 -c 'import json, sys
s = json.loads(sys.argv[1])["containerEdits"]
print(" ".join(n["path"] for n in s["deviceNodes"]), len([m for m in s["mounts"] if "/dev/" in m["containerPath"]]))' "$output"
	assert_output "/dev/democtl 0"
}

@test "a node without MIG instances: no warning that the MIG map is missing, on every refresh (issue 47, finding 7); with instances and no map, the warning" {
	"$FIXTURES/driver-root.sh" "$BATS_TEST_TMPDIR/nv" >/dev/null
	nvidia_ini "$BATS_TEST_TMPDIR/nv"
	sed -i "s|^mig_caps = .*|mig_caps = $BATS_TEST_TMPDIR/caps|; s|^mig_map = .*|mig_map = $BATS_TEST_TMPDIR/mig.map|" "$CFG/nvidia.ini"
	mkdir "$BATS_TEST_TMPDIR/caps"
	run --separate-stderr cdi -c "$CFG" nvidia
	assert_success
	assert_equal "$stderr" ""
	mkdir -p "$BATS_TEST_TMPDIR/caps/gpu0/mig/gi1/ci0"
	echo "cap 1" >"$BATS_TEST_TMPDIR/caps/gpu0/mig/gi1/ci0/access"
	run --separate-stderr cdi -c "$CFG" nvidia
	assert_success
	assert_equal "$stderr" "ocidec cdi: warn: nvidia: no MIG devices in the spec: the MIG map $BATS_TEST_TMPDIR/mig.map (made by ocidec mig-map when MIG is set up): No such file or directory"
}

@test "nvidia-ctk cdi's verbs: ocidec cdi generate --output=FILE writes NVIDIA's vendor's spec where none is named; cdi list is --list (review of issue 47)" {
	mkdir -m 0755 "$BATS_TEST_TMPDIR/nv"
	sed 's/^name = demo$/name = nvidia/' "$CFG/demo.ini" >"$BATS_TEST_TMPDIR/nv/nvidia.ini"
	chmod 0644 "$BATS_TEST_TMPDIR/nv/nvidia.ini"
	run cdi generate -c "$BATS_TEST_TMPDIR/nv" --output="$BATS_TEST_TMPDIR/nvidia.yaml"
	assert_success
	run grep -c '^kind: ' "$BATS_TEST_TMPDIR/nvidia.yaml"
	assert_output 1
	run cdi list -c "$BATS_TEST_TMPDIR/nv"
	assert_success
	assert_output "$(cdi --list -c "$BATS_TEST_TMPDIR/nv")"
	assert_line --regexp '=all$'
	# a vendor named is that one; generate of none without an nvidia.ini: said
	run cdi generate -c "$CFG" --output="$BATS_TEST_TMPDIR/x.json"
	assert_failure 2
	assert_output --partial "no vendor 'nvidia'"
}

@test "udev's rule (conf/udev/60-ocidec-cdi-refresh.rules) names no vendor: any module's load and unload, any PCI function's bind and unbind, DRM's, accel's and platform devices' add and remove (a new vendor is its INI file, no line in the rule); its only action is the refresh's timer (issue 49)" {
	local rule=$CONF/udev/60-ocidec-cdi-refresh.rules
	run grep -Ev '^(#|$)' "$rule"
	assert_line 'SUBSYSTEM=="module", ACTION=="add|remove", ENV{OCIDEC_CDI_REFRESH}="1"'
	assert_line 'SUBSYSTEM=="pci", ACTION=="bind|unbind", ENV{OCIDEC_CDI_REFRESH}="1"'
	assert_line 'SUBSYSTEM=="drm|accel|platform", ACTION=="add|remove", ENV{OCIDEC_CDI_REFRESH}="1"'
	# no driver, module or vendor class named anywhere in its rules
	for m in $(sed -n 's|.*/sys/bus/pci/drivers/\([^/]*\)/.*|\1|p; s|.*/sys/module/\([^/]*\)/.*|\1|p' "$CONF"/*.ini | sort -u); do
		run grep -Ev '^#' "$rule"
		refute_output --partial "$m"
	done
	run grep -Ev '^(#|$)' "$rule"
	run grep -E 'RUN|SYSTEMD_WANTS|PROGRAM|IMPORT' <<<"$output"
	assert_output 'ENV{OCIDEC_CDI_REFRESH}=="1", TEST=="/run/systemd/system", RUN+="/usr/bin/systemctl --no-block start ocidec-cdi-refresh.timer"'
	run grep -c '^Unit=ocidec-cdi-refresh.service$' "$CONF/systemd/ocidec-cdi-refresh.timer"
	assert_output 1
}
