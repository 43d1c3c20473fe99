#!/usr/bin/env bats
# ocidec check against a host root of the test's own (--host-root): what it
# finds wrong in the vendor configs, driver roots, podman's hooks dirs and
# Docker's daemon.json, each with its fix, as text and as JSON; nothing
# changed. The engines themselves read the same files in test/engines.bats.

load helpers

setup() {
	common_setup
	H=$BATS_TEST_TMPDIR/host
	mkdir -p "$H/usr/share/containers/oci/hooks.d" "$H/etc/docker" "$H/usr/bin"
	# the driver root inside the host root, its config naming it as the host does
	demo_vendor "$H/dr"
	sed -i "s|^driver_root = .*|driver_root = /dr|" "$CFG/demo.ini"
	cp "$OCIDEC" "$H/usr/bin/ocidec"       # links resolve inside the host root
	ln -s ocidec "$H/usr/bin/ocidec-hook"
	printf '{"version": "1.0.0", "hook": {"path": "/usr/bin/ocidec-hook", "args": ["ocidec-hook", "prestart"]}, "when": {"always": true}, "stages": ["prestart"]}\n' \
		>"$H/usr/share/containers/oci/hooks.d/ocidec.json"
}

snapshot() { (cd "$H" && find . -printf '%p %y %m %s %T@\n' | LC_ALL=C sort); }

@test "check: all in order is exit 0, each check one line; nothing changed" {
	snapshot >"$BATS_TEST_TMPDIR/before"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_success
	assert_line "ok       demo: driver_root /dr is there"
	assert_line "ok       podman: the hook /usr/bin/ocidec-hook, from /usr/share/containers/oci/hooks.d/ocidec.json (podman and CRI-O read it)"
	refute_line --partial "fix:"
	assert_line --regexp '^info +cgroups: (v2 \(unified\)|hybrid|v1)'
	assert_line "0 problems: ready"
	snapshot >"$BATS_TEST_TMPDIR/after"
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "check: a broken config, a missing driver root, a dangling hook, a hooks dir podman does not read, a daemon.json that is no JSON" {
	printf '[vendor]\nname = bad\nbogus = 1\n' | write_ini bad
	printf '[vendor]\nname = gone\nactivation_flag = OCI_GONE\ndriver_root = /nonexistent\n[feature.a]\nbinaries = /bin/x\n' | write_ini gone
	rm "$H/usr/bin/ocidec-hook"
	mkdir -p "$H/etc/containers/oci/hooks.d"
	sed 's|/usr/bin/ocidec-hook|/usr/libexec/ocidec|' "$H/usr/share/containers/oci/hooks.d/ocidec.json" \
		>"$H/etc/containers/oci/hooks.d/ocidec.json"
	mkdir -p "$H/usr/libexec" && ln -s ../bin/ocidec "$H/usr/libexec/ocidec"
	printf '{\n  "runtimes": \n' >"$H/etc/docker/daemon.json"
	# podman installed (a stand-in: check looks for its binary)
	printf '#!/bin/sh\n' >"$H/usr/bin/podman" && chmod 0755 "$H/usr/bin/podman"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_failure 1
	assert_line --partial "PROBLEM  config: $CFG/bad.ini:3: unknown key 'bogus'"
	assert_line "PROBLEM  gone: driver_root /nonexistent: No such file or directory"
	assert_line "PROBLEM  podman: /usr/share/containers/oci/hooks.d/ocidec.json names the hook /usr/bin/ocidec-hook, which is not there: podman starts containers without it, and without a word"
	assert_line "PROBLEM  podman: /etc/containers/oci/hooks.d/ocidec.json: podman does not read /etc/containers/oci/hooks.d (its hooks_dir is elsewhere)"
	assert_line "         fix: ocidec install --runtime podman"
	# where the JSON stops (issue 33)
	assert_line "PROBLEM  docker: /etc/docker/daemon.json is no JSON: it stops at line 2, column 15"
	assert_line "         do: correct /etc/docker/daemon.json (dockerd refuses to start with it)"
	# no hook that works, no runtime, no spec: no engine runs ocidec (issue 33, finding 4)
	assert_line "PROBLEM  engines: no engine runs ocidec here: no hooks.d file, runtime or CDI spec of ocidec's"
	assert_line "         fix: ocidec install --runtime podman"   # the engines this host has
	assert_line "6 problems: not ready (each with its fix above)"
	# a containers.conf drop-in that names /etc's hooks dir: podman reads it
	mkdir -p "$H/etc/containers/containers.conf.d"
	printf '[engine]\nhooks_dir = ["/usr/share/containers/oci/hooks.d", "/etc/containers/oci/hooks.d"]\n' \
		>"$H/etc/containers/containers.conf.d/ocidec.conf"
	run ocidec check --host-root "$H" -c "$CFG" --json
	assert_failure 1
	run python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["problems"]); [print(c["status"], c["check"], c["detail"]) for c in j["checks"] if c["check"] == "podman"]' <<<"$output"
	assert_line 4
	assert_line "ok podman the hook /usr/libexec/ocidec, from /etc/containers/oci/hooks.d/ocidec.json (podman reads it)"
	# the last file that sets hooks_dir is the one podman goes by, and an
	# array over several lines is read
	printf '[engine]\nhooks_dir = [\n  "/usr/share/containers/oci/hooks.d",\n  "/etc/containers/oci/hooks.d",\n]\n' \
		>"$H/etc/containers/containers.conf"
	printf '[engine]\nhooks_dir = ["/usr/share/containers/oci/hooks.d"]\n' >"$H/etc/containers/containers.conf.d/zz.conf"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line "PROBLEM  podman: /etc/containers/oci/hooks.d/ocidec.json: podman does not read /etc/containers/oci/hooks.d (its hooks_dir is elsewhere)"
	# an entry commented out is no entry (review of issue 33)
	printf '[engine]\nhooks_dir = [\n  # "/etc/containers/oci/hooks.d",\n  "/usr/share/containers/oci/hooks.d", # "/etc/containers/oci/hooks.d"\n]\n' \
		>"$H/etc/containers/containers.conf.d/zz.conf"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line "PROBLEM  podman: /etc/containers/oci/hooks.d/ocidec.json: podman does not read /etc/containers/oci/hooks.d (its hooks_dir is elsewhere)"
	rm "$H/etc/containers/containers.conf.d/"*
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line "ok       podman: the hook /usr/libexec/ocidec, from /etc/containers/oci/hooks.d/ocidec.json (podman reads it)"
}

@test "check: Docker's runtimes that run the shim, and one whose binary is gone" {
	ln -s ocidec "$H/usr/bin/ocidec-runtime"
	printf '{"runtimes": {"ocidec": {"path": "/usr/bin/ocidec-runtime"}, "nvidia": {"path": "/usr/bin/nvidia-container-runtime"}, "other": {"path": "/x"}}}\n' \
		>"$H/etc/docker/daemon.json"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_failure 1
	assert_line 'ok       docker: runtime "ocidec": /usr/bin/ocidec-runtime (docker run --runtime ocidec)'
	assert_line 'PROBLEM  docker: runtime "nvidia": /usr/bin/nvidia-container-runtime is not there (NVIDIA'"'"'s toolkit removed?)'
	assert_line '         fix: ocidec install --runtime docker --runtime-name nvidia'
	# NVIDIA's own binary (no link to ocidec) is NVIDIA's, not ocidec's (review of issue 33)
	printf '#!/bin/sh\n' >"$H/usr/bin/nvidia-container-runtime" && chmod 0755 "$H/usr/bin/nvidia-container-runtime"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line 'info     docker: runtime "nvidia": /usr/bin/nvidia-container-runtime is NVIDIA'"'"'s, not ocidec'"'"'s (ocidec install --runtime docker --runtime-name nvidia makes it ocidec'"'"'s)'
	# a link to ocidec under NVIDIA's name is ocidec's
	rm "$H/usr/bin/nvidia-container-runtime" && ln -s ocidec "$H/usr/bin/nvidia-container-runtime"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line 'ok       docker: runtime "nvidia": /usr/bin/nvidia-container-runtime (docker run --runtime nvidia)'
	refute_line --partial '"other"'
	# a bare name (NVIDIA's documents write it so), looked up on dockerd's
	# PATH: there, ocidec's; NVIDIA's toolkit removed, gone (review of issue 47)
	printf '{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}, "default-runtime": "nvidia"}\n' \
		>"$H/etc/docker/daemon.json"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line 'ok       docker: runtime "nvidia": nvidia-container-runtime (docker run --runtime nvidia), the default runtime'
	rm "$H/usr/bin/nvidia-container-runtime"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_failure 1
	assert_line 'PROBLEM  docker: runtime "nvidia": nvidia-container-runtime is not there (NVIDIA'"'"'s toolkit removed?)'
	assert_line '         fix: ocidec install --runtime docker --runtime-name nvidia'
	run ocidec check --host-root "$H" -c "$CFG" extra
	assert_failure 2
}

@test "check: a Kubernetes node whose vendor lets unprivileged pods select devices by their own environment (issue 22)" {
	# no Kubernetes node: nothing to say (issue 33, finding 4)
	run ocidec check --host-root "$H" -c "$CFG"
	assert_success
	refute_line --partial "its own environment"
	mkdir -p "$H/var/lib/kubelet"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_failure 1
	assert_line "PROBLEM  demo: a container without CAP_SYS_ADMIN selects devices through its own environment (unprivileged_selection has env): on this Kubernetes node any pod gets any device by setting the variable"
	assert_line "         do: in the vendor file: selection = mounts annotation env and unprivileged_selection = mounts annotation (what ocidec install --tenant-policy kubernetes writes)"
	# the Kubernetes policy: no such line
	sed -i '/^\[vendor\]/a selection = mounts annotation env\nunprivileged_selection = mounts annotation' "$CFG/demo.ini"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_success
	refute_line --partial "its own environment"
}

@test "check: a CDI spec gone stale (a host path it names is no more: a driver upgraded since) is a problem naming the spec and the first path; a current one is ok; a YAML one is said not read" {
	mkdir -p "$H/etc/cdi" "$H/var/run/cdi" "$BATS_TEST_TMPDIR/cfg2"
	# the spec as the host makes it (its driver root at /dr), made here
	# from the driver root's path in this test's root
	sed "s|^driver_root = .*|driver_root = $H/dr|" "$CFG/demo.ini" >"$BATS_TEST_TMPDIR/cfg2/demo.ini"
	chmod 0644 "$BATS_TEST_TMPDIR/cfg2/demo.ini"
	ocidec cdi -c "$BATS_TEST_TMPDIR/cfg2" --hook-path /usr/bin/ocidec demo |
		sed "s|\"$H/dr/|\"/dr/|g" >"$H/etc/cdi/ocidec.io-demo.json"
	echo 'cdiVersion: 0.5.0' >"$H/etc/cdi/nvidia.yaml"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_success
	assert_line --regexp '^ok +cdi: /etc/cdi/ocidec.io-demo.json \(ocidec.io/demo\): the [0-9]+ host paths it names are there$'
	assert_line "info     cdi: /etc/cdi/nvidia.yaml (no kind: line): a YAML spec, not read: its paths are not checked"
	# nvidia-ctk's YAML spec beside ocidec's, of one kind in one directory:
	# the engines drop the devices both name; its removal is the fix (only
	# its kind: line read: issue 47)
	printf 'cdiVersion: 0.5.0\nkind: "ocidec.io/demo"\ndevices:\n- name: "0"\n' >"$H/etc/cdi/nvidia.yaml"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_failure 1
	assert_line "info     cdi: /etc/cdi/nvidia.yaml (ocidec.io/demo): a YAML spec, not read: its paths are not checked"
	assert_line --partial "PROBLEM  cdi: /etc/cdi/nvidia.yaml and /etc/cdi/ocidec.io-demo.json are both specs of ocidec.io/demo in one directory: the engines drop every device both name"
	assert_line "         fix: rm /etc/cdi/nvidia.yaml"
	# in /var/run/cdi instead: it shadows /etc/cdi's, information
	mv "$H/etc/cdi/nvidia.yaml" "$H/var/run/cdi/"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_success
	assert_line --partial "info     cdi: /var/run/cdi/nvidia.yaml and /etc/cdi/ocidec.io-demo.json are both specs of ocidec.io/demo: where both name a device the engines take /var/run/cdi's"
	rm "$H/var/run/cdi/nvidia.yaml"
	# the driver upgraded: its library's file name changed
	mv "$H/dr/opt/demo/lib/libdemo.so.1.0" "$H/dr/opt/demo/lib/libdemo.so.1.1"
	# (a claim's spec: devices of their own names, none given twice)
	sed 's/"name":[[:space:]]*"/"name": "claim-/' "$H/etc/cdi/ocidec.io-demo.json" >"$H/var/run/cdi/claim.json"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_failure 1
	assert_line --regexp '^PROBLEM  cdi: /etc/cdi/ocidec.io-demo.json \(ocidec.io/demo\): stale: 1 of the [0-9]+ host paths it names are gone \(/dr/opt/demo/lib/libdemo.so.1.0 first\)'
	assert_line --partial "PROBLEM  cdi: /var/run/cdi/claim.json (ocidec.io/demo): stale"
	# ocidec's own spec, of a vendor whose driver is here: the command that makes it anew
	assert_line "         fix: ocidec cdi -o /etc/cdi/ocidec.io-demo.json demo"
	# a file name a shell would read otherwise: one quoted word, and the
	# command, run, writes that very file
	cp "$H/etc/cdi/ocidec.io-demo.json" "$H/etc/cdi/it's \$(touch x);.json"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line "         fix: ocidec cdi -o '/etc/cdi/it'\"'\"'s \$(touch x);.json' demo"
	fix=$(grep -o "ocidec cdi -o '/etc/cdi/it.*" <<<"$output")
	eval "set -- $fix"
	assert_equal "$4" "/etc/cdi/it's \$(touch x);.json"
	rm "$H/etc/cdi/it's \$(touch x);.json"
	# a link (the engines follow it, in the host root), a FIFO
	ln -s ../../var/run/cdi/claim.json "$H/etc/cdi/link.json"
	mkfifo "$H/etc/cdi/fifo.json"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line --partial "PROBLEM  cdi: /etc/cdi/link.json (ocidec.io/demo): stale"
	assert_line "PROBLEM  cdi: /etc/cdi/fifo.json: not a regular file"
	rm "$H/etc/cdi/fifo.json" "$H/etc/cdi/link.json"
	echo '{ "kind": ' >"$H/etc/cdi/broken.json"
	run ocidec check --host-root "$H" -c "$CFG" --json
	assert_failure 1
	run python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["problems"], [c["detail"] for c in j["checks"] if c["check"] == "cdi" and c["status"] == "problem"][0])' <<<"$output"
	assert_output "3 /etc/cdi/broken.json: not a JSON spec"
}

@test "check: a CDI spec older than the vendor's devices (a node made again with other numbers since it was written: a driver module's reload) is a problem naming the node, its numbers and the spec's, with the refresh as the fix; the spec made again is ok (issue 49)" {
	mkdir -p "$H/etc/cdi" "$H/var/run/cdi" "$BATS_TEST_TMPDIR/cfg2"
	sed "s|^driver_root = .*|driver_root = $H/dr|" "$CFG/demo.ini" >"$BATS_TEST_TMPDIR/cfg2/demo.ini"
	chmod 0644 "$BATS_TEST_TMPDIR/cfg2/demo.ini"
	spec() { ocidec cdi -c "$BATS_TEST_TMPDIR/cfg2" --hook-path /usr/bin/ocidec demo | sed "s|\"$H/dr/|\"/dr/|g"; }
	spec >"$H/var/run/cdi/ocidec.io-demo.json"
	touch -d '1 minute ago' "$H/var/run/cdi/ocidec.io-demo.json"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_success
	assert_line --regexp '^ok +cdi: /var/run/cdi/ocidec.io-demo.json \(ocidec.io/demo\): the [0-9]+ host paths it names are there$'
	# the driver's module loaded anew: demo1's node removed and made again
	# with another minor (1:5, now 1:7), nothing else changed
	rm "$H/dr/dev/demo1"
	mknod -m 0666 "$H/dr/dev/demo1" c 1 7
	run ocidec check --host-root "$H" -c "$CFG"
	assert_failure 1
	assert_line "PROBLEM  cdi: /var/run/cdi/ocidec.io-demo.json (ocidec.io/demo): older than the vendor's devices: 1 device node it names made again with other numbers since (/dr/dev/demo1 is c 1:7 here, the spec's c 1:5: made again after the spec was written; a driver module's reload, a partition switch): every container given a device of it gets the spec's numbers, another device or none (ocidec's udev rule, 60-ocidec-cdi-refresh.rules, refreshes it on the driver's next event where the refresh units are installed)"
	# (no systemd in this root: the refresh itself; where systemd runs it, its unit)
	assert_line "         fix: ocidec cdi --refresh"
	mkdir -p "$H/run/systemd/system"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line "         fix: systemctl start ocidec-cdi-refresh.service"
	# the same spec in /etc/cdi (no refresh writes there): the command that writes it
	mv "$H/var/run/cdi/ocidec.io-demo.json" "$H/etc/cdi/"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line --partial "PROBLEM  cdi: /etc/cdi/ocidec.io-demo.json (ocidec.io/demo): older than the vendor's devices"
	assert_line "         fix: ocidec cdi -o /etc/cdi/ocidec.io-demo.json demo"
	# another tool's spec: that tool
	sed 's|"kind":[^,]*|"kind": "other.io/x"|' "$H/etc/cdi/ocidec.io-demo.json" >"$H/etc/cdi/other.json"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line --partial "PROBLEM  cdi: /etc/cdi/other.json (other.io/x): older than the vendor's devices"
	assert_line "         do: make it again with the tool that wrote it (NVIDIA's: nvidia-ctk cdi generate --output FILE), or remove it"
	rm "$H/etc/cdi/other.json"
	# made again: true
	spec >"$H/etc/cdi/ocidec.io-demo.json"
	grep -q '"minor":[[:space:]]*7' "$H/etc/cdi/ocidec.io-demo.json"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_success
	refute_line --partial "older than"
}

@test "check: a spec's kind, paths and file name print escaped (no forged line, no terminal escape); a device node a spec's name links to is never opened (issue 32, finding 5)" {
	mkdir -p "$H/etc/cdi" "$H/dev"
	printf '{"cdiVersion": "0.5.0", "kind": "evil.io/x\\nok       cdi: forged \\u001b[31m", "devices": [], "containerEdits": {"mounts": [{"hostPath": "/gone\\nok       forged too", "containerPath": "/x"}]}}' \
		>"$H/etc/cdi/evil.json"
	printf '{"cdiVersion": "0.5.0", "kind": "evil.io/y", "devices": [], "containerEdits": {}}' >"$H/etc/cdi/$(printf 'name\nok       forged.json')"
	mknod "$H/dev/spec-node" c 1 3
	ln -s ../../dev/spec-node "$H/etc/cdi/node.json"
	run env ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=open,openat,openat2 -o "$BATS_TEST_TMPDIR/trace" \
		"$OCIDEC" check --host-root "$H" -c "$CFG"
	assert_failure 1
	refute_line --regexp '^ok +(cdi: )?forged'
	refute_line --partial $'\e'
	assert_line --partial 'PROBLEM  cdi: /etc/cdi/evil.json (evil.io/x\x0aok       cdi: forged \x1b[31m): stale'
	assert_line --partial '(/gone\x0aok       forged too first)'
	assert_line --partial 'cdi: /etc/cdi/name\x0aok       forged.json (evil.io/y)'
	assert_line "PROBLEM  cdi: /etc/cdi/node.json: not a regular file"
	# the node only ever looked at through O_PATH
	run grep -E 'node\.json|spec-node' "$BATS_TEST_TMPDIR/trace"
	assert_success
	while read -r l; do [[ $l == *O_PATH* ]] || { echo "opened without O_PATH: $l"; false; }; done <<<"$output"
}

@test "check: no driver for any vendor and no engine are problems; Docker without ocidec's runtime is said; --host-root reads the host's configs; a host root it cannot open is exit 3 (issue 33, finding 4)" {
	# the host's own configs without -c: its /etc/ocidec/ocidec.d
	mkdir -p "$H/etc/ocidec/ocidec.d"
	cp "$CFG/demo.ini" "$H/etc/ocidec/ocidec.d/"
	run ocidec check --host-root "$H"
	assert_success
	assert_line "info     config: the host's vendor configs, $H/etc/ocidec/ocidec.d (-c DIR for others)"
	assert_line "ok       demo: driver_root /dr is there"
	# Docker there, but no runtime of ocidec's
	echo '{"log-level": "warn"}' >"$H/etc/docker/daemon.json"
	run ocidec check --host-root "$H"
	assert_line "info     docker: /etc/docker/daemon.json names no runtime of ocidec's: docker run gets no vendor but through CDI"
	# no driver anywhere, no engine registered: two problems, not "0 problems"
	sed -i "s|^driver_root = .*|driver_root = /nodriver|" "$H/etc/ocidec/ocidec.d/demo.ini"
	rm "$H/usr/share/containers/oci/hooks.d/ocidec.json"
	run ocidec check --host-root "$H"
	assert_failure 1
	assert_line "PROBLEM  drivers: no driver found here for any configured vendor: a container that asks for one fails"
	assert_line "PROBLEM  engines: no engine runs ocidec here: no hooks.d file, runtime or CDI spec of ocidec's"
	assert_line "3 problems: not ready (each with its fix above)"
	run ocidec check --host-root "$BATS_TEST_TMPDIR/nonexistent"
	assert_failure 3
	assert_output --partial "nonexistent: No such file or directory"
	assert_line "0 problems: not all checked (the error above)"
	# --json: an object still, as selinux-check's (review of issue 34)
	run --separate-stderr ocidec check --host-root "$BATS_TEST_TMPDIR/nonexistent" --json
	assert_failure 3
	run python3 -c 'import json, sys; j = json.load(sys.stdin); print(j["ok"], j["problems"], j["checks"])' <<<"$output"
	assert_output "False 0 []"
}

@test "check --json is JSON whatever a name holds: a driver root in no encoding is given as the text shows it (review of issue 34)" {
	printf '[vendor]\nname = gone\nactivation_flag = OCI_GONE\ndriver_root = /non\377ex\n[feature.a]\nbinaries = /bin/x\n' \
		>"$CFG/gone.ini"
	ocidec check --host-root "$H" -c "$CFG" --json >"$BATS_TEST_TMPDIR/out" 2>/dev/null || true
	run python3 -c 'import json, sys; j = json.loads(open(sys.argv[1], "rb").read().decode()); print(len(j["checks"]) > 0)' \
		"$BATS_TEST_TMPDIR/out"
	assert_output True
	run grep -c '/non\\\\xffex' "$BATS_TEST_TMPDIR/out"
	assert_output 1
}

@test "check: the dockerd it goes by is root's, in PID 1's namespace: a user's program named dockerd says nothing of Docker (review of issue 33)" {
	ln -s ocidec "$H/usr/bin/ocidec-runtime"
	printf '{"runtimes": {"ocidec": {"path": "/usr/bin/ocidec-runtime"}}}\n' >"$H/etc/docker/daemon.json"
	X=$(mktemp -d /tmp/ocidec-dk.XXXXXX)
	chmod 0755 "$X" && cp /bin/sleep "$X/dockerd"
	# a "dockerd" started before daemon.json changed, then check, in a PID
	# namespace of the test's own: by a user, then by root
	for who in "setpriv --reuid 65534 --regid 65534 --clear-groups" ""; do
		run unshare -p -f --mount-proc sh -c '
			$1 "$2/dockerd" 30 &
			for i in $(seq 50); do pgrep -x dockerd >/dev/null && break; sleep 0.1; done
			pgrep -x dockerd >/dev/null || exit 9
			sleep 0.1; touch "$3/etc/docker/daemon.json"
			"$4" check --host-root "$3" -c "$5"' sh "$who" "$X" "$H" "$OCIDEC" "$CFG"
		[ "$status" -ne 9 ]
		if [ -n "$who" ]; then
			refute_output --partial "running dockerd"
		else
			assert_line --regexp '^PROBLEM  docker: the running dockerd started before /etc/docker/daemon.json last changed'
		fi
	done
	rm -rf "$X"
}

@test "check --host-root without -c: the configs a toolkit container's install copied (/usr/local/ocidec/etc/ocidec.d), where it installed; else the host's /etc/ocidec/ocidec.d (issue 47, finding 6)" {
	ocidec install --host-root "$H" -c "$CFG" --runtime podman >/dev/null
	run ocidec check --host-root "$H"
	assert_line "info     config: the host's vendor configs, $H/usr/local/ocidec/etc/ocidec.d, which the toolkit's install copied (-c DIR for others)"
	assert_line "ok       demo: driver_root /dr is there"
	ocidec install --host-root "$H" --uninstall >/dev/null
	run ocidec check --host-root "$H"
	assert_line "info     config: the host's vendor configs, $H/etc/ocidec/ocidec.d (-c DIR for others)"
}

@test "check: two specs that give one device: in one directory a problem (engines drop the device), across /etc/cdi and /var/run/cdi information (the refresh's wins, the other is shadowed), each with the rm that keeps one (issue 47, finding 3)" {
	mkdir -p "$H/etc/cdi" "$H/var/run/cdi"
	spec() {
		printf '{"cdiVersion": "0.5.0", "kind": "nvidia.com/gpu", "devices": [{"name": "0", "containerEdits": {"deviceNodes": [{"path": "/dr/dev/demo0"}]}}, {"name": "all", "containerEdits": {}}]}\n' >"$H/$1"
	}
	spec var/run/cdi/nvidia.com-gpu.json
	spec var/run/cdi/nvidia.json
	run ocidec check --host-root "$H" -c "$CFG"
	assert_failure 1
	assert_line "PROBLEM  cdi: /var/run/cdi/nvidia.com-gpu.json and /var/run/cdi/nvidia.json both give nvidia.com/gpu=0 (and maybe more): engines drop a device two specs of one directory define, and every container asking for it fails; keep one"
	assert_line "         fix: rm /var/run/cdi/nvidia.com-gpu.json"
	run grep -c 'both give' <<<"$output"
	assert_output 1
	mv "$H/var/run/cdi/nvidia.json" "$H/etc/cdi/nvidia.json"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_success
	assert_line "info     cdi: /etc/cdi/nvidia.json and /var/run/cdi/nvidia.com-gpu.json both give nvidia.com/gpu=0 (and maybe more): the engines take /var/run/cdi's, the other's is shadowed (and goes stale at the next driver upgrade); keep one (ocidec's refresh keeps /var/run/cdi)"
	assert_line "         fix: rm /etc/cdi/nvidia.json"
	rm "$H/etc/cdi/nvidia.json"
	run ocidec check --host-root "$H" -c "$CFG"
	refute_output --partial "both give"
}

@test "check on a host with CRI-O and no podman: the hooks dir's lines are CRI-O's, their fix --runtime crio; a crio started before its hooks_dir drop-in changed is told to restart (review of issue 48)" {
	printf '#!/bin/sh\n' >"$H/usr/bin/crio" && chmod 0755 "$H/usr/bin/crio"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line "ok       crio: the hook /usr/bin/ocidec-hook, from /usr/share/containers/oci/hooks.d/ocidec.json (podman and CRI-O read it)"
	refute_line --partial "podman:"
	rm "$H/usr/bin/ocidec-hook"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_failure 1
	assert_line "PROBLEM  crio: /usr/share/containers/oci/hooks.d/ocidec.json names the hook /usr/bin/ocidec-hook, which is not there: CRI-O starts containers without it, and without a word"
	assert_line "         fix: ocidec install --runtime crio"
	ln -s ocidec "$H/usr/bin/ocidec-hook"
	# a "crio" (root's, in PID 1's namespace of the test's own) started
	# before install's hooks_dir drop-in changed
	mkdir -p "$H/etc/crio/crio.conf.d"
	printf '[crio.runtime]\nhooks_dir = ["/usr/share/containers/oci/hooks.d"]\n' >"$H/etc/crio/crio.conf.d/99-ocidec.conf"
	X=$(mktemp -d /tmp/ocidec-crio.XXXXXX)
	chmod 0755 "$X" && cp /bin/sleep "$X/crio"
	run unshare -p -f --mount-proc sh -c '
		"$1/crio" 30 &
		for i in $(seq 50); do pgrep -x crio >/dev/null && break; sleep 0.1; done
		pgrep -x crio >/dev/null || exit 9
		sleep 0.1; touch "$2/etc/crio/crio.conf.d/99-ocidec.conf"
		"$3" check --host-root "$2" -c "$4"' sh "$X" "$H" "$OCIDEC" "$CFG"
	rm -rf "$X"
	[ "$status" -ne 9 ]
	assert_line "PROBLEM  crio: crio started before /etc/crio/crio.conf.d/99-ocidec.conf last changed: it reads hooks_dir from it when it starts, and ocidec's hook is in a hooks dir it does not read yet"
	assert_line "         do: restart crio the way this host starts it (no systemd, no init script of its own here)"
}
