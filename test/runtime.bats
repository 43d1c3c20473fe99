#!/usr/bin/env bats
# `ocidec runtime` (argv[0] ocidec-runtime), called as containerd's shim and
# dockerd call runc: global options, then create/start/delete or run; the
# bundle's config.json gets the container edits, then real runc runs.

load helpers

setup() {
	common_setup
	DR=$BATS_TEST_TMPDIR/dr
	demo_vendor
	B=$BATS_TEST_TMPDIR/bundle
	ID=ocidec-rt-$$-$BATS_TEST_NUMBER
	ROOT=$BATS_TEST_TMPDIR/runc-root
}

teardown() {
	runc --root "$ROOT" delete -f "$ID" >/dev/null 2>&1 || true
	[ -z "${USERNS_DIR:-}" ] || rm -rf "$USERNS_DIR"
}

# shim ARGS...: the runtime as containerd-shim-runc-v2 calls runc
shim() {
	ocidec-runtime --ocidec-config-dir "$CFG" --root "$ROOT" --log "$BATS_TEST_TMPDIR/runc.log" --log-format json "$@"
}


@test "run: an activated container gets the device, the program through the cache, read-only mounts" {
	"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all -- sh -c "$DEMO_SEE" >/dev/null
	run shim run --bundle "$B" "$ID"
	assert_success
	assert_output "$DEMO_SEEN_ALL"
}

@test "create, start, state, delete as containerd calls them (bundle from the working directory too)" {
	"$FIXTURES/bundle.sh" "$B" OCI_DEMO=0 -- sh -c "{ $DEMO_SEE; } >/out 2>&1" >/dev/null
	python3 - "$B/config.json" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1]))
		c["root"]["readonly"] = False
		json.dump(c, open(sys.argv[1], "w"))
		EOF
	(cd "$B" && shim create --pid-file "$BATS_TEST_TMPDIR/pid" "$ID" </dev/null >/dev/null 2>&1)
	[ -s "$BATS_TEST_TMPDIR/pid" ]
	run shim state "$ID"
	assert_success
	assert_output --partial '"status": "created"'
	shim start "$ID"
	wait_until -t 5 '[ -s "$B/rootfs/out" ]'
	sleep 0.2
	run cat "$B/rootfs/out"
	assert_line "demo-tool: the answer is 42"
	assert_line demo0
	refute_line demo1
	assert_line opened
	shim delete -f "$ID"
	run shim state "$ID"
	assert_failure
}

@test "no activation: config.json is not touched, and runc runs it" {
	"$FIXTURES/bundle.sh" "$B" -- sh -c 'ls /dev; test -e /usr/bin/demo-tool || echo none' >/dev/null
	before=$(sha256sum "$B/config.json")
	ino=$(stat -c %i "$B/config.json")
	run shim run --bundle "$B" "$ID"
	assert_success
	refute_line democtl
	assert_line none
	assert_equal "$(sha256sum "$B/config.json")" "$before"
	assert_equal "$(stat -c %i "$B/config.json")" "$ino"
}

@test "the edits in config.json are the container edits of --dry-run --format json; device rules in linux.resources.devices" {
	"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all -- true >/dev/null
	hook -c "$CFG" --dry-run --format json <<<"{\"bundle\": \"$B\"}" >"$BATS_TEST_TMPDIR/edits.json"
	chmod 0640 "$B/config.json"
	cp "$B/config.json" "$BATS_TEST_TMPDIR/before.json"
	run shim run --bundle "$B" "$ID"
	assert_success
	assert_equal "$(stat -c %a "$B/config.json")" 640
	run python3 - "$BATS_TEST_TMPDIR/before.json" "$B/config.json" "$BATS_TEST_TMPDIR/edits.json" <<-'EOF'
		import json, sys
		before, after, edits = (json.load(open(f)) for f in sys.argv[1:])
		new = lambda k: [x for x in after[k[0]][k[1]] if x not in before[k[0]][k[1]]] if len(k) == 2 else None
		mounts = [m for m in after["mounts"] if m not in before["mounts"]]
		assert [(m["source"], m["destination"], m["options"]) for m in mounts] == \
		    [(m["source"], m["destination"], m["options"]) for m in edits["mounts"] if not m["destination"].startswith("/dev/")], mounts
		devs = [d for d in after["linux"]["devices"] if d not in before["linux"].get("devices", [])]
		assert [(d["path"], d["type"], d["major"], d["minor"], d["fileMode"]) for d in devs] == \
		    [(d["path"], d["type"], d["major"], d["minor"], d["fileMode"]) for d in edits["devices"]], devs
		rules = [r for r in after["linux"]["resources"]["devices"] if r not in before["linux"]["resources"]["devices"]]
		assert rules == edits["deviceRules"], rules
		hook = after["hooks"]["createContainer"][-1]
		assert hook["args"][:2] == ["ocidec-hook", "--cdi"], hook
		print("ok %d mounts, %d devices, %d rules" % (len(mounts), len(devs), len(rules)))
		EOF
	assert_success
	assert_output "ok 4 mounts, 3 devices, 3 rules"
}

@test "the real runtime: runtime.conf, or runc; never ocidec itself; bad input names file and line" {
	"$FIXTURES/bundle.sh" "$B" -- true >/dev/null
	ln -s "$(command -v runc)" "$BATS_TEST_TMPDIR/my-runc"
	printf '[runtime]\npath = %s\n' "$BATS_TEST_TMPDIR/my-runc" | install -m 0644 /dev/stdin "$CFG/runtime.conf"
	run shim run --bundle "$B" "$ID"
	assert_success
	printf '[runtime]\npath = %s\n' "$OCIDEC" | install -m 0644 /dev/stdin "$CFG/runtime.conf"
	run shim run --bundle "$B" "$ID"
	assert_failure 1
	assert_output "ocidec runtime: $CFG/runtime.conf: path $OCIDEC is ocidec itself: refused (a loop)"
	printf '[runtime]\nbinary = runc\n' | install -m 0644 /dev/stdin "$CFG/runtime.conf"
	run shim --version
	assert_failure 2
	assert_output "ocidec runtime: $CFG/runtime.conf:2: unknown key 'binary' in [runtime]"
	printf '[runtime]\npath = /usr/sbin/runc\n' | install -m 0666 /dev/stdin "$CFG/runtime.conf"
	run shim --version
	assert_failure 2
	assert_output --partial "refused: writable by group or others"
}

@test "every other subcommand goes to runc as it is: output and exit status" {
	run runc --root "$ROOT" state nosuch-$$
	want_status=$status want=$output
	run ocidec-runtime --ocidec-config-dir "$CFG" --root "$ROOT" state nosuch-$$
	assert_equal "$status" "$want_status"
	assert_equal "$(sed 's/time="[^"]*" //' <<<"$output")" "$(sed 's/time="[^"]*" //' <<<"$want")"
	run shim list
	assert_success
	assert_line --index 0 --partial "ID"
}

@test "a broken vendor file stops only the containers that name its vendor" {
	printf '[vendor]\nname = broken\nactivation_flag = OCI_BROKEN\nbogus = 1\n' | install -m 0644 /dev/stdin "$CFG/broken.ini"
	"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all -- demo-tool >/dev/null
	run shim run --bundle "$B" "$ID"
	assert_success
	assert_line "demo-tool: the answer is 42"
	assert_line --partial "broken.ini:4: unknown key 'bogus'"
	runc --root "$ROOT" delete -f "$ID" >/dev/null 2>&1 || true
	rm -rf "$B"
	"$FIXTURES/bundle.sh" "$B" OCI_BROKEN=all -- true >/dev/null
	run shim run --bundle "$B" "$ID"
	assert_failure 2
	assert_output --partial "broken.ini:4: unknown key 'bogus'"
}

@test "numbers pass through exactly: Docker's --ulimit core=-1 (uint64 max) and integers above 2^53 (issue 21, finding 5)" {
	"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all -- sh -c 'ulimit -c; head -c 0 /dev/democtl && echo opened' >/dev/null
	python3 - "$B/config.json" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1]))
		c["process"]["rlimits"] = [{"type": "RLIMIT_CORE", "hard": 18446744073709551615, "soft": 18446744073709551615}]
		c["annotations"] = {"x": "y"}
		c["x-numbers"] = [9007199254740993, -1, 0.1, "INF", 2.5e-3]
		open(sys.argv[1], "w").write(json.dumps(c).replace('"INF"', "1e400"))
		EOF
	run shim run --bundle "$B" "$ID"
	assert_success
	assert_line unlimited
	assert_line opened
	run grep -o '"hard":18446744073709551615,"soft":18446744073709551615' "$B/config.json"
	assert_success
	run grep -o '"x-numbers":\[9007199254740993,-1,0.1,1e400,0.0025\]' "$B/config.json"
	assert_success
}

@test "runtime argv: crun's value options, the last --bundle, restore edited; a wrapper leading back is refused (issue 21, finding 7)" {
	"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all -- sh -c "$DEMO_SEE" >/dev/null
	"$FIXTURES/bundle.sh" "$BATS_TEST_TMPDIR/other" -- true >/dev/null
	# two --bundle: runc runs the last, and the last is the one edited
	run shim run --bundle "$BATS_TEST_TMPDIR/other" --bundle "$B" "$ID"
	assert_success
	assert_output "$DEMO_SEEN_ALL"
	# a value-taking global option of crun's before the command: the
	# command is still found (runc here just refuses the option)
	rm -rf "$B" && "$FIXTURES/bundle.sh" "$B" OCI_DEMO=all -- true >/dev/null
	run ocidec-runtime --ocidec-config-dir "$CFG" --log-level debug --root "$ROOT" create --bundle "$B" "$ID-x"
	run grep -c '"ocidec-hook","--cdi"' "$B/config.json"
	assert_output 1
	rm -rf "$B" && "$FIXTURES/bundle.sh" "$B" OCI_DEMO=all -- true >/dev/null
	run ocidec-runtime --ocidec-config-dir "$CFG" --cgroup-manager=cgroupfs --root "$ROOT" create -b "$B" "$ID-x"
	run grep -c '"ocidec-hook","--cdi"' "$B/config.json"
	assert_output 1
	# restore (CRIU) starts a container from a bundle too
	rm -rf "$B" && "$FIXTURES/bundle.sh" "$B" OCI_DEMO=all -- true >/dev/null
	run shim restore --image-path "$BATS_TEST_TMPDIR/nosuch" --bundle "$B" "$ID"
	run grep -c '"ocidec-hook","--cdi"' "$B/config.json"
	assert_output 1
	# a real runtime that calls ocidec-runtime again: refused at once
	printf '#!/bin/sh\nexec %s "$@"\n' "$BIN/ocidec-runtime" >"$BATS_TEST_TMPDIR/wrapper"
	chmod 0755 "$BATS_TEST_TMPDIR/wrapper"
	printf '[runtime]\npath = %s\n' "$BATS_TEST_TMPDIR/wrapper" | install -m 0644 /dev/stdin "$CFG/runtime.conf"
	run timeout 10 ocidec-runtime --ocidec-config-dir "$CFG" --version
	assert_failure 1
	assert_output --partial "ocidec runtime: called again by the real runtime it ran (a wrapper that calls ocidec-runtime?): refused"
}

@test "nvidia-container-runtime is the shim's name too (what NVIDIA's toolkit registers) (issue 21, finding 8)" {
	ln -s "$OCIDEC" "$BATS_TEST_TMPDIR/nvidia-container-runtime"
	"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all -- sh -c "$DEMO_SEE" >/dev/null
	run "$BATS_TEST_TMPDIR/nvidia-container-runtime" --ocidec-config-dir "$CFG" --root "$ROOT" run --bundle "$B" "$ID"
	assert_success
	assert_output "$DEMO_SEEN_ALL"
}

@test "a user namespace of the container's own, the driver root not /: the nodes are bind mounts of the driver root's (runc cannot make them there, and the host has none at their paths); the container opens them" {
	# where the namespace's root (host uid 100000) reaches: bats' own
	# directories are 0700
	USERNS_DIR=$(mktemp -d /tmp/ocidec-rtns.XXXXXX)
	chmod 0755 "$USERNS_DIR"
	demo_vendor "$USERNS_DIR/dr"
	B=$USERNS_DIR/bundle
	"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all -- sh -c "$DEMO_SEE" >/dev/null
	chown -R 100000:100000 "$B/rootfs"   # the namespace's root owns its rootfs, as engines make it
	python3 - "$B/config.json" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1]))
		c["linux"]["namespaces"].append({"type": "user"})
		c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": 100000, "size": 65536}]
		json.dump(c, open(sys.argv[1], "w"))
		EOF
	run shim run --bundle "$B" "$ID"
	assert_success
	assert_output "$DEMO_SEEN_ALL"
	run python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))
print(" ".join(sorted(d["path"] for d in c["linux"]["devices"] if "demo" in d["path"])) or "none")
for m in sorted(c["mounts"], key=lambda m: m["destination"]):
    if m["destination"].startswith("/dev/demo"): print(m["destination"], m["source"], ",".join(m["options"]))' "$B/config.json"
	assert_output "$(printf 'none\n/dev/demo0 %s/dr/dev/demo0 bind,ro,nosuid,noexec\n/dev/demo1 %s/dr/dev/demo1 bind,ro,nosuid,noexec\n/dev/democtl %s/dr/dev/democtl bind,ro,nosuid,noexec' \
		"$USERNS_DIR" "$USERNS_DIR" "$USERNS_DIR")"
}

@test "a config.json nested deeper than the JSON reader goes, with \\u and \\/ escapes, that asks for nothing: runc runs it, untouched; one spelling OCI_DEMO with escapes is read (issue 32, N11)" {
	"$FIXTURES/bundle.sh" "$B" -- sh -c 'test -e /usr/bin/demo-tool || echo none' >/dev/null
	python3 - "$B/config.json" <<-'PY'
		import json, sys
		c = json.load(open(sys.argv[1]))
		c["annotations"] = {"x": "caf\u00e9 a\\/b"}
		c["x-deep"] = "PLACEHOLDER"
		t = json.dumps(c, indent=1).replace('"PLACEHOLDER"', "[" * 3000 + "]" * 3000)
		open(sys.argv[1], "w").write(t)
		PY
	grep -q '\\u00e9' "$B/config.json"
	before=$(sha256sum "$B/config.json")
	run shim run --bundle "$B" "$ID"
	assert_success
	assert_line none
	assert_equal "$(sha256sum "$B/config.json")" "$before"
	runc --root "$ROOT" delete -f "$ID" >/dev/null 2>&1 || true
	# the idle path decodes the escapes: OCI_DEMO spelled \u004fCI_DEMO is seen,
	# and the parse that follows refuses the nesting, naming the file
	sed -i 's/"env": \[/"env": ["\\u004fCI_DEMO=all", /' "$B/config.json"
	run shim run --bundle "$B" "$ID"
	assert_failure
	assert_output --partial "config.json"
}

@test "a refusal goes where the engine reads a runtime's error: the --log file in runc's JSON (or text) format, stderr and the system log (issue 33, finding 1)" {
	"$FIXTURES/bundle.sh" "$B" OCI_DEMO=7 -- true >/dev/null
	"$FIXTURES/syslogd.py" "$BATS_TEST_TMPDIR/log.sock" "$BATS_TEST_TMPDIR/syslog" &
	spid=$!
	wait_until -t 5 "[ -S '$BATS_TEST_TMPDIR/log.sock' ]"
	run ocidec-runtime --ocidec-config-dir "$CFG" --ocidec-syslog "$BATS_TEST_TMPDIR/log.sock" --root "$ROOT" \
		--log "$BATS_TEST_TMPDIR/log.json" --log-format json create --bundle "$B" "$ID"
	assert_failure 1
	assert_output "ocidec runtime: demo: no device 7: $DR/dev/demo7 not found (this host has 0, 1)"
	run python3 -c 'import json, sys; l = [json.loads(x) for x in open(sys.argv[1])][-1]; print(l["level"], l["msg"], len(l["time"]))' \
		"$BATS_TEST_TMPDIR/log.json"
	assert_output "error ocidec runtime: demo: no device 7: $DR/dev/demo7 not found (this host has 0, 1) 20"
	# logrus's text format, for a runtime driven with --log-format text
	run ocidec-runtime --ocidec-config-dir "$CFG" --root "$ROOT" --log="$BATS_TEST_TMPDIR/log.txt" --log-format=text \
		create --bundle "$B" "$ID"
	assert_failure 1
	run cat "$BATS_TEST_TMPDIR/log.txt"
	assert_output --regexp '^time="[0-9T:Z-]+" level=error msg="ocidec runtime: demo: no device 7: .* \(this host has 0, 1\)"$'
	# a link at the log's path is not followed
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$BATS_TEST_TMPDIR/link.json"
	run ocidec-runtime --ocidec-config-dir "$CFG" --root "$ROOT" --log "$BATS_TEST_TMPDIR/link.json" create --bundle "$B" "$ID"
	assert_failure 1
	assert_file_not_exists "$BATS_TEST_TMPDIR/elsewhere"
	kill "$spid"
	run cat "$BATS_TEST_TMPDIR/syslog"
	assert_output --partial "ocidec runtime: demo: no device 7"
}

@test "a refusal's --log that is no regular file gets nothing: a FIFO nobody reads (no wait), one somebody reads, a character device (issue 46, finding 10)" {
	"$FIXTURES/bundle.sh" "$B" OCI_DEMO=7 -- true >/dev/null
	refusal="ocidec runtime: demo: no device 7: $DR/dev/demo7 not found (this host has 0, 1)"
	refuse() {
		run timeout 10 "$BIN/ocidec-runtime" --ocidec-config-dir "$CFG" --root "$ROOT" --log "$1" --log-format json \
			create --bundle "$B" "$ID"
		assert_failure 1          # (124: it waited)
		assert_output "$refusal"  # (and no warning of a failed write)
	}
	# a FIFO that nobody reads: the open does not wait for a reader
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	refuse "$BATS_TEST_TMPDIR/fifo"
	# one that is read (this shell holds it open): nothing written into it
	exec 7<>"$BATS_TEST_TMPDIR/fifo"
	refuse "$BATS_TEST_TMPDIR/fifo"
	got=$(timeout 1 head -c 1 <&7 | od -An -c) || true
	exec 7<&-
	assert_equal "$got" ""
	# a character device of the test's own (/dev/full's numbers: a write
	# there fails, and would be said)
	mknod -m 0666 "$BATS_TEST_TMPDIR/full" c 1 7
	refuse "$BATS_TEST_TMPDIR/full"
	# a terminal: what is written to it comes out of its other side
	run python3 - "$BIN/ocidec-runtime" --ocidec-config-dir "$CFG" --root "$ROOT" --log @TTY@ create --bundle "$B" "$ID" <<-'EOF'
		import os, pty, select, subprocess, sys
		master, slave = pty.openpty()
		args = [os.ttyname(slave) if a == "@TTY@" else a for a in sys.argv[1:]]
		r = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
		print("exit", r.returncode)
		print("written" if select.select([master], [], [], 1)[0] else "nothing written")
		EOF
	assert_output $'exit 1\nnothing written'
	# a regular file: the line (the guard is not in the way of one)
	refuse "$BATS_TEST_TMPDIR/log.json"
	run grep -c '"level":"error"' "$BATS_TEST_TMPDIR/log.json"
	assert_output 1
}

@test "ocidec-runtime --version and --help: ocidec's own first, then the real runtime's (Docker reads runc's version line, the last) (issue 33, finding 6)" {
	run ocidec-runtime --ocidec-config-dir "$CFG" --version
	assert_success
	assert_line --index 0 --regexp "^ocidec-runtime $(cat "$BATS_TEST_DIRNAME/../VERSION") \(ocidec's shim: the vendors' devices, then /.*/runc\)$"
	assert_line --regexp '^runc version '
	[ "$(grep version <<<"$output" | tail -n 1 | cut -d' ' -f1)" = runc ]
	run ocidec-runtime --ocidec-config-dir "$CFG" --help
	assert_success
	assert_line --index 0 --partial "usage: ocidec runtime"
	assert_line --regexp '^The real runtime, /.*/runc:$'
	assert_output --partial "runc is a command line client"
	ln -s "$OCIDEC" "$BIN/nvidia-container-runtime"
	run nvidia-container-runtime --version
	assert_line --index 0 --partial "ocidec-runtime $(cat "$BATS_TEST_DIRNAME/../VERSION")"
}
