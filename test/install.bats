#!/usr/bin/env bats
# ocidec install: a host root that is a directory (a driver or toolkit
# container's /host), with an administrator's daemon.json and containerd
# config.toml in it, and this machine's containerd 1.6 (its binary and
# libc: install asks it for its configuration); what install adds, what a
# second run changes (nothing), what --uninstall restores (every byte);
# containerd's own `config dump` reading the result; the toolkit image
# (Containerfile) built and run by podman; a podman container on this host
# given the demo vendor through what was installed. containerd 1.7, podman
# 5 and Docker 26 read what install writes in test/engines.bats.

load helpers

setup() {
	common_setup
	H=$BATS_TEST_TMPDIR/host
	P=/usr/local/ocidec
	mkdir -p "$H/etc/docker" "$H/etc/containerd" "$H/usr/local/bin" "$H/run"
	cat >"$H/etc/docker/daemon.json" <<-'EOF'
	{
	  "log-level": "warn",
	  "storage-driver": "overlay2",
	  "runtimes": { "other": { "path": "/usr/bin/other-runtime" } }
	}
	EOF
	chmod 0600 "$H/etc/docker/daemon.json"
	printf 'version = 2\nroot = "/var/lib/containerd"\n\n[grpc]\n  address = "/run/containerd/containerd.sock"\n' \
		>"$H/etc/containerd/config.toml"
	host_containerd "$H"
	DR=$BATS_TEST_TMPDIR/dr
	demo_vendor
	ALL=(--host-root "$H" -c "$CFG" --runtime podman,docker --runtime containerd)
	HOOKS=/usr/share/containers/oci/hooks.d
}

# host_containerd H: this machine's containerd in the host root H, with the
# loader and libc it runs on
host_containerd() {
	mkdir -p "$1/usr/bin" "$1/lib64" "$1/lib/x86_64-linux-gnu"
	cp -l /usr/bin/containerd "$1/usr/bin/" 2>/dev/null || cp /usr/bin/containerd "$1/usr/bin/"
	cp -L /lib64/ld-linux-x86-64.so.2 "$1/lib64/"
	cp -L /lib/x86_64-linux-gnu/libc.so.6 "$1/lib/x86_64-linux-gnu/"
}

# snapshot: every path under the host root with type, mode, size, inode,
# mtime, link text, and every file's digest (a directory's mode only: its
# mtime moves when install adds an entry and uninstall takes it out)
# (but the install lock in /run, which stays: removing a lock file races
# the next one to take it)
snapshot() {
	(cd "$H" && find . -path ./run/ocidec-install.lock -prune -o \( -type d -printf '%p/ %m\n' \) -o -printf '%p %y %m %s %i %T@ %l\n' | LC_ALL=C sort &&
		find . -path ./run/ocidec-install.lock -prune -o -type f -exec sha256sum {} + | LC_ALL=C sort)
}

@test "install --runtime help: each driver's words and what it registers, from the drivers (engine_ops.usage); install --help and check --help name no engine of their own (issue 48's review)" {
	run "$OCIDEC" install --runtime help
	assert_success
	for w in podman crio docker containerd nri; do
		assert_line --regexp "^  ([a-z]+, )?$w( |,)"
	done
	run "$OCIDEC" install --help
	assert_line --partial '`--runtime help` lists them'
	refute_output --partial 'daemon.json'
	run "$OCIDEC" check --help
	refute_output --partial 'daemon.json'
	run "$OCIDEC" install --runtime bogus
	assert_failure 2
	assert_output --partial "not one of podman, crio, docker, containerd, nri"
}

@test "install: the binary, its links, the configs, the hooks.d file, Docker's runtime, containerd's drop-in" {
	run ocidec install "${ALL[@]}"
	assert_success
	assert_line "ocidec install: 9 changes under $P"
	cmp "$OCIDEC" "$H$P/bin/ocidec"
	[ "$(stat -c %a "$H$P/bin/ocidec")" = 755 ]
	[ "$(readlink "$H$P/bin/ocidec-hook")" = ocidec ]
	[ "$(readlink "$H$P/bin/ocidec-runtime")" = ocidec ]
	[ "$(readlink "$H$P/bin/nvidia-cdi-hook")" = ocidec ]   # (NVIDIA's DRA driver's --nvidia-cdi-hook-path)
	cmp "$CFG/demo.ini" "$H$P/etc/ocidec.d/demo.ini"
	run python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); print(h["hook"]["path"], h["hook"]["args"], h["stages"], h["when"])' \
		"$H$HOOKS/ocidec.json"
	assert_output "$P/bin/ocidec-hook ['ocidec-hook', 'prestart'] ['prestart'] {'always': True}"
	# daemon.json: merged, the administrator's settings and runtime kept, mode kept
	run python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' "$H/etc/docker/daemon.json"
	assert_output '{"log-level": "warn", "runtimes": {"ocidec": {"path": "/usr/local/ocidec/bin/ocidec-runtime"}, "other": {"path": "/usr/bin/other-runtime"}}, "storage-driver": "overlay2"}'
	[ "$(stat -c %a "$H/etc/docker/daemon.json")" = 600 ]
	# the originals kept: the same inode as before
	run cat "$H/etc/docker/daemon.json.ocidec-orig"
	assert_line '  "runtimes": { "other": { "path": "/usr/bin/other-runtime" } }'
	run head -n 2 "$H/etc/containerd/config.toml"
	assert_output $'imports = ["/etc/containerd/conf.d/ocidec.toml"]  # ocidec install\nversion = 2'
	assert_file_exists "$H/etc/containerd/config.toml.ocidec-orig"
	run grep -A1 'runtimes.ocidec.options' "$H/etc/containerd/conf.d/ocidec.toml"
	assert_line '  BinaryName = "/usr/local/ocidec/bin/ocidec-runtime"'
}

@test "install: a second run changes nothing; --uninstall restores every file byte for byte" {
	snapshot >"$BATS_TEST_TMPDIR/before"
	ocidec install "${ALL[@]}" >/dev/null
	snapshot >"$BATS_TEST_TMPDIR/once"
	run ocidec install "${ALL[@]}"
	assert_success
	assert_output "ocidec install: nothing to change"
	snapshot >"$BATS_TEST_TMPDIR/twice"
	diff "$BATS_TEST_TMPDIR/once" "$BATS_TEST_TMPDIR/twice"
	run ocidec install --host-root "$H" --uninstall
	assert_success
	assert_line "restored /etc/docker/daemon.json"
	assert_line "restored /etc/containerd/config.toml"
	assert_line "removed $P/bin/ocidec"
	snapshot >"$BATS_TEST_TMPDIR/after"
	# inodes and mtimes too: the originals are back, not copies of them
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	# a second uninstall: nothing to do, not an error (issue 33)
	run ocidec install --host-root "$H" --uninstall
	assert_success
	assert_output "ocidec install: nothing to uninstall (no install record $P/install.json)"
}

# edit_and_uninstall: the administrator edits daemon.json and config.toml
# after the install, then --uninstall: daemon.json keeps their change and
# loses ocidec's runtime; the uninstall's output is left in $output
edit_and_uninstall() {
	local said
	python3 - "$H/etc/docker/daemon.json" <<-'EOF'
	import json, sys
	d = json.load(open(sys.argv[1])); d["debug"] = True
	json.dump(d, open(sys.argv[1], "w"))
	EOF
	printf '\n[debug]\n  level = "info"\n' >>"$H/etc/containerd/config.toml"
	run ocidec install --host-root "$H" --uninstall
	assert_success
	assert_line "edited /etc/docker/daemon.json: changed since the install, only ocidec's part taken out"
	said=$output
	run python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' "$H/etc/docker/daemon.json"
	assert_output '{"debug": true, "log-level": "warn", "runtimes": {"other": {"path": "/usr/bin/other-runtime"}}, "storage-driver": "overlay2"}'
	run printf '%s\n' "$said"
}

@test "install --uninstall after the administrator changed daemon.json and config.toml: only ocidec's part goes" {
	ocidec install "${ALL[@]}" >/dev/null
	edit_and_uninstall
	run cat "$H/etc/containerd/config.toml"
	assert_output $'version = 2\nroot = "/var/lib/containerd"\n\n[grpc]\n  address = "/run/containerd/containerd.sock"\n\n[debug]\n  level = "info"'
	assert_file_not_exists "$H/etc/docker/daemon.json.ocidec-orig"
	assert_file_not_exists "$H/etc/containerd/config.toml.ocidec-orig"
}

@test "install: the record keeps how each engine file was merged; a record an older ocidec wrote (no kind) is undone the same way (issue 34: the journal)" {
	ocidec install "${ALL[@]}" >/dev/null
	run python3 -c 'import json,sys; print(sorted((f["path"], f.get("merge")) for f in json.load(open(sys.argv[1]))["files"] if "merge" in f))' \
		"$H$P/install.json"
	assert_output "[('/etc/containerd/config.toml', 'toml'), ('/etc/docker/daemon.json', 'docker')]"
	# the kind taken out, as ocidec 0.x wrote it; the files edited since
	python3 - "$H$P/install.json" <<-'EOF'
	import json, sys
	r = json.load(open(sys.argv[1]))
	for f in r["files"]:
	    f.pop("merge", None)
	json.dump(r, open(sys.argv[1], "w"))
	EOF
	edit_and_uninstall
	assert_line "edited /etc/containerd/config.toml: changed since the install, only ocidec's part taken out"
	run grep -c ocidec "$H/etc/containerd/config.toml"
	assert_output 0
}

@test "install: a daemon.json that repeats ocidec's runtime (a hand edit; Docker takes the last) ends with one; --uninstall gives the file back (fuzzing found it)" {
	printf '{"runtimes": {"ocidec": {"path": "/old"}, "other": {"path": "/usr/bin/other-runtime"}, "ocidec": {"path": "/older"}}}\n' \
		>"$H/etc/docker/daemon.json"
	cp "$H/etc/docker/daemon.json" "$BATS_TEST_TMPDIR/orig"
	ocidec install "${ALL[@]}" >/dev/null
	run grep -c '"ocidec"' "$H/etc/docker/daemon.json"
	assert_output 1
	run ocidec install "${ALL[@]}"
	assert_success
	run grep -c '"ocidec"' "$H/etc/docker/daemon.json"
	assert_output 1
	# the administrator's own file back, as it was
	ocidec install --host-root "$H" --uninstall >/dev/null
	cmp "$BATS_TEST_TMPDIR/orig" "$H/etc/docker/daemon.json"
}

@test "install on a host without daemon.json or config.toml: both made, and removed again" {
	rm -r "$H/etc/docker" "$H/etc/containerd"
	snapshot >"$BATS_TEST_TMPDIR/before"
	ocidec install "${ALL[@]}" >/dev/null
	run cat "$H/etc/containerd/config.toml"
	assert_output $'version = 2\nimports = ["/etc/containerd/conf.d/ocidec.toml"]  # ocidec install'
	run python3 -c 'import json,sys; print(json.load(open(sys.argv[1])))' "$H/etc/docker/daemon.json"
	assert_output "{'runtimes': {'ocidec': {'path': '/usr/local/ocidec/bin/ocidec-runtime'}}}"
	ocidec install --host-root "$H" --uninstall >/dev/null
	snapshot >"$BATS_TEST_TMPDIR/after"
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

# containerd2 H: Debian unstable's containerd 2.x (test/fixtures/containerd2.sh)
# as the host root H's containerd, in /usr/local/bin (where upstream's
# release goes; it comes first on PATH), beside H's 1.6; skips where the
# archive has no 2.x
containerd2() {
	local c2 rc=0
	c2=$("$FIXTURES/containerd2.sh") || rc=$?
	[ "$rc" -ne 3 ] || skip "Debian's unstable archive has no containerd 2.x"
	[ "$rc" -eq 0 ]
	cp "$c2/usr/bin/containerd" "$1/usr/local/bin/containerd"
}

@test "install: containerd 2.x (Debian unstable's, real): an existing imports array gets one string; config version 3 gets the runtime's tables only; a node's config.toml still of version 2 gets them in version 2's names, and keeps every setting (issue 33)" {
	containerd2 "$H"
	printf 'version = 3\nimports = ["/etc/containerd/other.toml"]\n' >"$H/etc/containerd/config.toml"
	printf 'version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]\n  SystemdCgroup = true\n' \
		>"$H/etc/containerd/other.toml"
	ocidec install --host-root "$H" -c "$CFG" --runtime containerd --set-as-default >/dev/null
	run cat "$H/etc/containerd/config.toml"
	assert_output $'version = 3\nimports = ["/etc/containerd/other.toml", "/etc/containerd/conf.d/ocidec.toml"]'
	run grep -v '^#' "$H/etc/containerd/conf.d/ocidec.toml"
	assert_line 'version = 3'
	assert_line '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.ocidec]'
	assert_line '  BinaryName = "/usr/local/ocidec/bin/ocidec-runtime"'
	assert_line '  SystemdCgroup = true'            # runc's options, from other.toml
	refute_line --partial 'cri.v1.images'            # nothing of the node's but the runtime
	# containerd 2.x's own reading
	run chroot "$H" /usr/local/bin/containerd config dump
	assert_line --regexp "^ +default_runtime_name = 'ocidec'$"
	assert_line --regexp "^ +BinaryName = '/usr/local/ocidec/bin/ocidec-runtime'$"
	ocidec install --host-root "$H" --uninstall >/dev/null
	# a node upgraded from 1.7 keeps its version 2 config.toml: a version 3
	# import there makes containerd 2.x drop the node's CRI settings
	cat >"$H/etc/containerd/config.toml" <<-'EOF'
	version = 2
	[plugins."io.containerd.grpc.v1.cri"]
	  sandbox_image = "registry.example/pause:9"
	  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
	    NoNewKeyring = true
	EOF
	cp "$H/etc/containerd/config.toml" "$BATS_TEST_TMPDIR/orig.toml"
	run ocidec install --host-root "$H" -c "$CFG" --runtime containerd --set-as-default --enable-cdi
	assert_success
	run grep -c 'cri.v1' "$H/etc/containerd/conf.d/ocidec.toml"
	assert_output 0
	run chroot "$H" /usr/local/bin/containerd config dump
	assert_line --regexp "^ +sandbox = 'registry.example/pause:9'$"
	assert_line --regexp "^ +default_runtime_name = 'ocidec'$"
	assert_line --regexp "^ +enable_cdi = true$"
	assert_line --regexp "^ +NoNewKeyring = true$"
	refute_output --partial 'level=warning'
	ocidec install --host-root "$H" --uninstall >/dev/null
	cmp "$BATS_TEST_TMPDIR/orig.toml" "$H/etc/containerd/config.toml"
	# no config.toml: one of containerd 2.x's version, removed again
	rm "$H/etc/containerd/config.toml"
	ocidec install --host-root "$H" -c "$CFG" --runtime containerd >/dev/null
	run head -n 1 "$H/etc/containerd/config.toml"
	assert_output 'version = 3'
	run chroot "$H" /usr/local/bin/containerd config dump
	assert_line --regexp "^ +BinaryName = '/usr/local/ocidec/bin/ocidec-runtime'$"
	ocidec install --host-root "$H" --uninstall >/dev/null
	[ ! -e "$H/etc/containerd/config.toml" ]
}

@test "check: containerd 1.x reading ocidec's drop-in through an imports glob (conf.d/*.toml) after a drop-in of the administrator's there: the CRI settings it shadows are found, no host file renamed; install again carries them (review of issue 48)" {
	printf 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\nroot = "/var/lib/containerd"\n' >"$H/etc/containerd/config.toml"
	mkdir -p "$H/etc/containerd/conf.d"
	ocidec install --host-root "$H" -c "$CFG" --runtime containerd >/dev/null
	run grep -c '^imports = \["/etc/containerd/conf.d/\*.toml", "/etc/containerd/conf.d/ocidec.toml"\]$' "$H/etc/containerd/config.toml"
	assert_output 1
	# conf.d read-only for check: it renames nothing there
	ro() { unshare -m --propagation private sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"' sh "$H/etc/containerd/conf.d" "$@"; }
	run ro ocidec check --host-root "$H" -c "$CFG"
	refute_output --partial "carries the CRI section"
	# the administrator's CRI setting in a drop-in of the glob's, before
	# ocidec's: containerd 1.x takes ocidec's CRI section whole, over it
	printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  max_container_log_line_size = 4096\n' \
		>"$H/etc/containerd/conf.d/50-site.toml"
	run chroot "$H" /usr/bin/containerd config dump
	refute_line --partial "max_container_log_line_size = 4096"
	before=$(snapshot)
	run ro ocidec check --host-root "$H" -c "$CFG"
	assert_failure 1
	assert_line --regexp '^PROBLEM  containerd: /etc/containerd/conf.d/ocidec.toml carries the CRI section config.toml had when ocidec was installed'
	assert_equal "$(snapshot)" "$before"
	# the fix's install: the drop-in made from what containerd reads without it
	ocidec install --host-root "$H" -c "$CFG" --runtime containerd >/dev/null
	run chroot "$H" /usr/bin/containerd config dump
	assert_line --partial "max_container_log_line_size = 4096"
	run ro ocidec check --host-root "$H" -c "$CFG"
	refute_output --partial "carries the CRI section"
}

@test "install: a config.toml of version 1 (containerd 1.x imports no version 2 file into it): refused with containerd's own conversion as the fix, nothing written; after it, installed (issue 33)" {
	printf 'root = "/var/lib/containerd"\n[plugins.cri]\n  sandbox_image = "registry.example/pause:9"\n' \
		>"$H/etc/containerd/config.toml"
	before=$(snapshot)
	run ocidec install --host-root "$H" -c "$CFG" --runtime containerd
	assert_failure 2
	assert_output --partial "config.toml is configuration version 1"
	convert='(umask 077 \&\& containerd config dump >/etc/containerd/config.toml.new) \&\& chmod --reference=/etc/containerd/config.toml /etc/containerd/config.toml.new \&\& mv /etc/containerd/config.toml.new /etc/containerd/config.toml'
	convert=${convert//\\/}
	assert_output --partial "($convert)"
	assert_output --partial 'invalid plugin key URI "cri"'   # containerd's own words
	assert_equal "$(snapshot)" "$before"
	# check says the same, before ocidec install (review of issue 33)
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line "         fix: $convert && ocidec install --runtime containerd"
	# the conversion, as printed, in the host root (a shell and coreutils
	# there); the file's mode kept (it may hold registry credentials)
	chmod 0600 "$H/etc/containerd/config.toml"
	mkdir -p "$H/bin"
	cp /bin/dash "$H/bin/sh"
	for c in /bin/dash /bin/chmod /bin/mv; do
		cp "$c" "$H/bin/"
		for l in $(ldd "$c" | grep -o '/[^ ]*'); do cp --parents -L "$l" "$H"; done
	done
	PATH=/usr/bin:/bin /usr/sbin/chroot "$H" /bin/sh -c "$convert"
	[ "$(stat -c %a "$H/etc/containerd/config.toml")" = 600 ]
	run ocidec install --host-root "$H" -c "$CFG" --runtime containerd --set-as-default
	assert_success
	run chroot "$H" /usr/bin/containerd config dump
	assert_line --regexp '^ +sandbox_image = "registry.example/pause:9"$'
	assert_line --regexp '^ +default_runtime_name = "ocidec"$'
	# renamed (the migration guide's nvidia): the default runtime follows,
	# as Docker's does (review of issue 47)
	# run again: the converted file imports config.toml itself
	# (containerd 1.6's dump writes that), which the dump of the node's own
	# configuration leaves out, or it would read ocidec's part back
	run ocidec install --host-root "$H" -c "$CFG" --runtime containerd
	assert_success
	assert_line "ocidec install: nothing to change"
	run ocidec install --host-root "$H" -c "$CFG" --runtime containerd --runtime-name nvidia
	assert_success
	run chroot "$H" /usr/bin/containerd config dump
	assert_line --regexp '^ +default_runtime_name = "nvidia"$'
}

@test "install: containerd 1.6 keeps every CRI setting of the node, the runtime inherits runc's options (issue 21, finding 3)" {
	cat >"$H/etc/containerd/config.toml" <<-'EOF'
	version = 2
	root = "/var/lib/containerd"
	[plugins."io.containerd.grpc.v1.cri"]
	  sandbox_image = "registry.example/pause:9"
	  enable_cdi = true
	  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
	    SystemdCgroup = true
	    BinaryName = "/usr/local/sbin/runc-vendor"
	  [plugins."io.containerd.grpc.v1.cri".registry]
	    config_path = "/etc/containerd/certs.d"
	EOF
	cp "$H/etc/containerd/config.toml" "$BATS_TEST_TMPDIR/orig.toml"
	# containerd's dump of it, before and after, in the host root
	dump() { chroot "$H" /usr/bin/containerd --config /etc/containerd/config.toml config dump; }
	dump >"$BATS_TEST_TMPDIR/before.dump"
	run ocidec install --host-root "$H" -c "$CFG" --runtime containerd
	assert_success
	# no systemd in this host root: said, with no command it lacks (issue 33)
	assert_line 'ocidec install: containerd runs runtime "ocidec" once it restarts: restart it the way this host starts it (no systemd or init script of its own here)'
	dump >"$BATS_TEST_TMPDIR/after.dump"
	# what containerd reads now: the node's settings all there, and ocidec's runtime
	run diff "$BATS_TEST_TMPDIR/before.dump" "$BATS_TEST_TMPDIR/after.dump"
	assert_line --regexp '^> +\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.ocidec\]$'
	assert_line --regexp '^> +BinaryName = "/usr/local/ocidec/bin/ocidec-runtime"$'
	assert_line --regexp '^> +SystemdCgroup = true$'
	assert_line --regexp '^> +container_annotations = \["ocidec.io/\*"\]$'
	# (containerd lists the imports it read in either order)
	assert_line --regexp '^> imports = \[("/etc/containerd/config.toml", )?"/etc/containerd/conf.d/ocidec.toml"(, "/etc/containerd/config.toml")?\]$'
	refute_line --regexp '^< [^i]'                   # nothing of the node's lost
	refute_line --regexp '^> +(sandbox_image|enable_cdi|config_path|default_runtime_name) '
	# runc's own binary: the shim runs it
	run cat "$H$P/etc/ocidec.d/runtime.conf"
	assert_output --partial $'[runtime]\npath = /usr/local/sbin/runc-vendor'
	# a second run: nothing; --uninstall: config.toml byte for byte
	run ocidec install --host-root "$H" -c "$CFG" --runtime containerd
	assert_output "ocidec install: nothing to change"
	ocidec install --host-root "$H" --uninstall >/dev/null
	cmp "$BATS_TEST_TMPDIR/orig.toml" "$H/etc/containerd/config.toml"
	assert_file_not_exists "$H/etc/containerd/conf.d"
}

@test "install: containerd 1.6 with an imports glob, a later import with a CRI section, a 0600 config.toml" {
	dump() { chroot "$H" /usr/bin/containerd --config /etc/containerd/config.toml config dump; }
	mkdir -p "$H/etc/containerd/conf.d"
	# a glob that reads ocidec's own drop-in too: a second install still
	# starts from the node's settings, not from the drop-in's copy of them
	printf 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "first/pause:1"\n' \
		>"$H/etc/containerd/config.toml"
	chmod 0600 "$H/etc/containerd/config.toml"
	ocidec install --host-root "$H" -c "$CFG" --runtime containerd >/dev/null
	sed -i 's|first/pause:1|second/pause:2|' "$H/etc/containerd/config.toml"
	run ocidec install --host-root "$H" -c "$CFG" --runtime containerd
	assert_line "wrote /etc/containerd/conf.d/ocidec.toml"
	run dump
	assert_line --regexp '^ +sandbox_image = "second/pause:2"$'
	assert_line --regexp '^ +\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.ocidec\]$'
	# registry credentials may be in the CRI section: the drop-in and the record as private as config.toml
	[ "$(stat -c %a "$H/etc/containerd/conf.d/ocidec.toml")" = 600 ]
	[ "$(stat -c %a "$H$P/install.json")" = 600 ]
	assert_file_not_exists "$H/etc/containerd/conf.d/ocidec.toml.ocidec-aside"
	ls -A "$H/etc/containerd" | grep -v '^\(config.toml\|config.toml.ocidec-orig\|conf.d\)$' && false
	ocidec install --host-root "$H" --uninstall >/dev/null
	# an import after ours with a CRI section of its own would replace ours: ours goes last
	printf 'version = 2\nimports = ["/etc/containerd/other.toml"]\n' >"$H/etc/containerd/config.toml"
	printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata]\n  runtime_type = "io.containerd.kata.v2"\n' \
		>"$H/etc/containerd/other.toml"
	ocidec install --host-root "$H" -c "$CFG" --runtime containerd >/dev/null
	run head -n 2 "$H/etc/containerd/config.toml"
	assert_line 'imports = ["/etc/containerd/other.toml", "/etc/containerd/conf.d/ocidec.toml"]'
	run dump
	assert_line --regexp '^ +\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.ocidec\]$'
	assert_line --regexp '^ +\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.kata\]$'
}

@test "install where /usr is read-only (CoreOS): /etc's hooks dir and a drop-in, never over the engine's own hooks_dir" {
	ro() { unshare -m --propagation private sh -c 'mount --bind "$1/usr" "$1/usr" && mount -o remount,bind,ro "$1/usr" && shift && exec "$@"' sh "$H" "$@"; }
	mkdir -p "$H/usr/share" "$H/var/usrlocal"
	rm -rf "$H/usr/local"
	ln -s /var/usrlocal "$H/usr/local"
	run ro ocidec install --host-root "$H" -c "$CFG" --runtime podman,crio
	assert_success
	assert_line "wrote /etc/containers/oci/hooks.d/ocidec.json"
	run cat "$H/etc/containers/containers.conf.d/ocidec.conf" "$H/etc/crio/crio.conf.d/99-ocidec.conf"
	assert_line 'hooks_dir = ["/usr/share/containers/oci/hooks.d", "/etc/containers/oci/hooks.d"]'
	assert_line '[crio.runtime]'
	ocidec install --host-root "$H" --uninstall >/dev/null
	# OpenShift's CRI-O names its own hooks dirs: a drop-in would drop them
	mkdir -p "$H/etc/crio/crio.conf.d"
	printf '[crio.runtime]\nhooks_dir = ["/etc/containers/oci/hooks.d-other", "/run/containers/oci/hooks.d"]\n' >"$H/etc/crio/crio.conf.d/10-site.conf"
	snapshot >"$BATS_TEST_TMPDIR/before"
	run ro ocidec install --host-root "$H" -c "$CFG" --runtime crio
	assert_failure 2
	assert_output "ocidec install: /usr/share/containers/oci/hooks.d is read-only and the CRI-O configuration sets its own hooks_dir without /etc/containers/oci/hooks.d: add /etc/containers/oci/hooks.d there, or name one of its directories with --hooks-dir"
	snapshot >"$BATS_TEST_TMPDIR/after"
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	# one that names /etc's already: no drop-in needed
	printf '[crio.runtime]\nhooks_dir = ["/etc/containers/oci/hooks.d", "/run/containers/oci/hooks.d"]\n' >"$H/etc/crio/crio.conf.d/10-site.conf"
	run ro ocidec install --host-root "$H" -c "$CFG" --runtime crio
	assert_success
	assert_file_not_exists "$H/etc/crio/crio.conf.d/99-ocidec.conf"
	assert_file_exists "$H/etc/containers/oci/hooks.d/ocidec.json"
}

@test "install --runtime crio where /usr is read-only: CRI-O reads its hooks_dir drop-in when it starts, and the hint says so, once; its uninstall too (review of issue 48)" {
	ro() { unshare -m --propagation private sh -c 'mount --bind "$1/usr" "$1/usr" && mount -o remount,bind,ro "$1/usr" && shift && exec "$@"' sh "$H" "$@"; }
	mkdir -p "$H/usr/share" "$H/var/usrlocal"
	rm -rf "$H/usr/local"
	ln -s /var/usrlocal "$H/usr/local"
	run ro ocidec install --host-root "$H" -c "$CFG" --runtime crio
	assert_success
	assert_line "wrote /etc/crio/crio.conf.d/99-ocidec.conf"
	assert_line "ocidec install: crio reads its hooks_dir (/etc/crio/crio.conf.d/99-ocidec.conf) once it restarts: restart it the way this host starts it (no systemd or init script of its own here)"
	run ro ocidec install --host-root "$H" -c "$CFG" --runtime crio
	assert_success
	refute_output --partial "crio reads"
	# podman alone: no daemon to tell
	run ro ocidec install --host-root "$H" -c "$CFG" --runtime podman
	assert_success
	refute_output --partial "once it restarts"
	run ocidec install --host-root "$H" --uninstall
	assert_success
	assert_line "removed /etc/crio/crio.conf.d/99-ocidec.conf"
	assert_line "ocidec install: crio reads its hooks_dir (/etc/crio/crio.conf.d/99-ocidec.conf) once it restarts: restart it the way this host starts it (no systemd or init script of its own here)"
}

@test "install: one install or uninstall at a time; --wait never undoes a newer install; no directory without its record (issue 21, finding 6)" {
	# a DaemonSet's surge: the new pod installs while the old one waits,
	# then the old one gets SIGTERM
	ocidec install "${ALL[@]}" --wait >"$BATS_TEST_TMPDIR/old" &
	old=$!
	wait_until "grep -q 'changes under' '$BATS_TEST_TMPDIR/old'"
	ocidec install "${ALL[@]}" --wait >"$BATS_TEST_TMPDIR/new" &
	new=$!
	wait_until "grep -q 'under\\|nothing' '$BATS_TEST_TMPDIR/new'"
	kill -TERM "$old"
	wait "$old"
	run cat "$BATS_TEST_TMPDIR/old"
	assert_line "ocidec install: signal 15: a newer install owns $P: left in place"
	assert_file_exists "$H$P/bin/ocidec"
	assert_file_exists "$H$HOOKS/ocidec.json"
	kill -TERM "$new"
	wait "$new"
	run cat "$BATS_TEST_TMPDIR/new"
	assert_line "ocidec install: uninstalled from $P"
	assert_file_not_exists "$H$P"
	# the lock: while one holds it (here: flock(1) on the lock file), the other waits
	flock "$H/run/ocidec-install.lock" sleep 2 &
	sleep 0.3
	start=$(date +%s%N)
	ocidec install "${ALL[@]}" >/dev/null
	[ $(( ($(date +%s%N) - start) / 1000000 )) -ge 1000 ]
	wait
	# rolling updates, 20 rounds: the old pod's uninstall racing the new pod's
	# install; each round ends installed, with the binary and its record
	ocidec install --host-root "$H" --uninstall >/dev/null
	ocidec install "${ALL[@]}" --wait >/dev/null &
	prev=$!
	for i in $(seq 20); do
		wait_until "[ -e '$H$P/install.json' ]"
		ocidec install "${ALL[@]}" --wait >/dev/null &
		next=$!
		kill -TERM "$prev"
		wait "$prev"
		wait_until "grep -q '\"owner\"' '$H$P/install.json' 2>/dev/null"
		prev=$next
	done
	sleep 0.5
	assert_file_exists "$H$P/bin/ocidec"
	assert_file_exists "$H$P/install.json"
	kill -TERM "$prev"
	wait "$prev"
	assert_file_not_exists "$H$P"
	# SIGKILL between making the prefix and the first file: the record names it
	ocidec install --host-root "$H" -c "$CFG" >/dev/null
	run python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["dirs"])' "$H$P/install.json"
	assert_output --partial "'$P'"
	assert_output --partial "'$P/bin'"
}

@test "install --uninstall acts only on what an install writes, whatever install.json says (issue 22, finding 5)" {
	ocidec install "${ALL[@]}" >/dev/null
	mkdir -p "$H/etc/ssh"
	echo "root:x:0:0::/root:/bin/sh" >"$H/etc/passwd"
	echo "planted" >"$H/etc/passwd.ocidec-orig"
	echo "key" >"$H/etc/ssh/ssh_host_ed25519_key"
	cp "$H$P/install.json" "$BATS_TEST_TMPDIR/record"
	# a link in the prefix to /etc: the record's path text is the prefix's,
	# the file it reaches is not; an ocidec.json that is not ocidec's hook
	ln -s /etc "$H$P/x"
	echo '{"hook": {"path": "/usr/bin/other-hook"}}' >"$H/etc/ssh/ocidec.json"
	for edit in \
		'push @{$r->{files}}, {path => "/etc/passwd", backup => "/etc/passwd.ocidec-orig"}' \
		'push @{$r->{files}}, {path => "/etc/ssh/ssh_host_ed25519_key"}' \
		'push @{$r->{files}}, {path => "/etc/../etc/passwd"}' \
		'push @{$r->{dirs}}, "/etc/ssh"' \
		'push @{$r->{files}}, {path => "/usr/local/ocidec/x/passwd", backup => "/usr/local/ocidec/x/passwd.ocidec-orig"}' \
		'push @{$r->{files}}, {path => "/usr/local/ocidec/x/ssh/ssh_host_ed25519_key"}' \
		'push @{$r->{files}}, {path => "/etc/ssh/ocidec.json"}'; do
		CODE=$edit perl -MJSON::PP -e 'local $/; my $r = decode_json(<STDIN>); eval $ENV{CODE}; die $@ if $@;
			print encode_json($r)' <"$BATS_TEST_TMPDIR/record" >"$H$P/install.json"
		snapshot >"$BATS_TEST_TMPDIR/before"
		run ocidec install --host-root "$H" --uninstall
		assert_failure 2
		assert_output --regexp "^ocidec install: $P/install.json( names|: an entry without a clean)"
		snapshot >"$BATS_TEST_TMPDIR/after"
		diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	done
	assert_equal "$(cat "$H/etc/passwd")" "root:x:0:0::/root:/bin/sh"
	assert_file_exists "$H/etc/ssh/ssh_host_ed25519_key"
	# the install's own record still uninstalls
	rm "$H$P/x"
	cp "$BATS_TEST_TMPDIR/record" "$H$P/install.json"
	run ocidec install --host-root "$H" --uninstall
	assert_success
	assert_line "restored /etc/docker/daemon.json"
	# a record that says the install made daemon.json (no original kept):
	# only ocidec's part goes, the administrator's file stays
	ocidec install "${ALL[@]}" >/dev/null
	CODE='for (@{$r->{files}}) { if ($_->{path} eq "/etc/docker/daemon.json") { delete $_->{backup}; delete $_->{wrote} } }' \
		perl -MJSON::PP -e 'local $/; my $r = decode_json(<STDIN>); eval $ENV{CODE}; die $@ if $@;
			print encode_json($r)' <"$H$P/install.json" >"$BATS_TEST_TMPDIR/forged"
	cp "$BATS_TEST_TMPDIR/forged" "$H$P/install.json"
	run ocidec install --host-root "$H" --uninstall
	assert_success
	assert_line "edited /etc/docker/daemon.json: changed since the install, only ocidec's part taken out"
	run grep -c -e '"log-level"' -e '"other"' "$H/etc/docker/daemon.json"
	assert_output 2
	refute grep -q ocidec "$H/etc/docker/daemon.json"
}

@test "install --uninstall: a record whose original for daemon.json is another file (key.json, one elsewhere, not a path) is refused whole, one line, nothing renamed or removed (issue 46, finding 9)" {
	ocidec install "${ALL[@]}" >/dev/null
	echo '{"keys": "the host key"}' >"$H/etc/docker/key.json"
	mkdir -p "$H/etc/other"
	echo 'another file' >"$H/etc/other/daemon.json.ocidec-orig"
	cp "$H$P/install.json" "$BATS_TEST_TMPDIR/record"
	for backup in '"/etc/docker/key.json"' '"/etc/other/daemon.json.ocidec-orig"' '"/etc/docker/daemon.json.ocidec-orig/"' 1 '{}'; do
		BK=$backup perl -MJSON::PP -e 'local $/; my $r = decode_json(<STDIN>);
			$_->{path} eq "/etc/docker/daemon.json" and $_->{backup} = decode_json("[$ENV{BK}]")->[0] for @{$r->{files}};
			print encode_json($r)' <"$BATS_TEST_TMPDIR/record" >"$H$P/install.json"
		# (the engines' files are not the record's last: an undo refusing
		# when it comes to daemon.json would have undone others first)
		[ "$(perl -MJSON::PP -e 'local $/; print decode_json(<STDIN>)->{files}[-1]{path}' <"$H$P/install.json")" != /etc/docker/daemon.json ]
		snapshot >"$BATS_TEST_TMPDIR/before"
		run ocidec install --host-root "$H" --uninstall
		assert_failure 2
		assert_output --regexp "^ocidec install: $P/install.json: the entry of /etc/docker/daemon.json names (\"[^\"]+\"|a value that is not a path) as its original, not /etc/docker/daemon.json.ocidec-orig: nothing changed$"
		snapshot >"$BATS_TEST_TMPDIR/after"
		diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	done
	assert_equal "$(cat "$H/etc/docker/key.json")" '{"keys": "the host key"}'
	assert_equal "$(cat "$H/etc/other/daemon.json.ocidec-orig")" 'another file'
	# the install's own record uninstalls
	cp "$BATS_TEST_TMPDIR/record" "$H$P/install.json"
	run ocidec install --host-root "$H" --uninstall
	assert_success
	assert_line "restored /etc/docker/daemon.json"
	assert_file_exists "$H/etc/docker/key.json"
}

@test "install --driver-root --vendor: the driver root rewritten, and P/bin/ocidec reads P/etc/ocidec.d by default" {
	nvidia_ini /nowhere
	ln -s dr "$BATS_TEST_TMPDIR/driver"
	run ocidec install --host-root "$H" -c "$CFG" --vendor demo --driver-root "$BATS_TEST_TMPDIR/driver"
	assert_success
	assert_file_not_exists "$H$P/etc/ocidec.d/nvidia.ini"
	diff <(sed "s|^driver_root = .*|driver_root = $BATS_TEST_TMPDIR/driver|" "$CFG/demo.ini") "$H$P/etc/ocidec.d/demo.ini"
	# the installed binary, without -c, reads the installed configs
	run "$H$P/bin/ocidec" list --features base
	assert_success
	assert_line "$BATS_TEST_TMPDIR/driver/usr/bin/demo-tool"
	assert_equal "$output" "$(ocidec list -c "$H$P/etc/ocidec.d" --features base)"
	# a config without driver_root gets one line after [vendor]
	printf '[vendor]\nname = plain\nactivation_flag = OCI_PLAIN\n[feature.a]\nbinaries = /bin/true\n' | write_ini plain
	ocidec install --host-root "$H" -c "$CFG" --vendor plain --driver-root /drv >/dev/null
	run cat "$H$P/etc/ocidec.d/plain.ini"
	assert_output $'[vendor]\ndriver_root = /drv\nname = plain\nactivation_flag = OCI_PLAIN\n[feature.a]\nbinaries = /bin/true'
	# the demo config the first run put there is gone: this run installs plain only
	assert_file_not_exists "$H$P/etc/ocidec.d/demo.ini"
}

@test "install: bad input is one line, exit 2, and nothing written" {
	echo '{ "log-level": "warn", ' >"$H/etc/docker/daemon.json"
	snapshot >"$BATS_TEST_TMPDIR/before"
	run ocidec install "${ALL[@]}"
	assert_failure 2
	# where the JSON stops (issue 33)
	assert_output "ocidec install: /etc/docker/daemon.json: no JSON: it stops at line 1, column 24 (dockerd refuses it too): left alone"
	echo '[]' >"$H/etc/docker/daemon.json"
	run ocidec install "${ALL[@]}"
	assert_failure 2
	assert_output "ocidec install: /etc/docker/daemon.json: not a JSON object: left alone"
	echo '{ "log-level": "warn", ' >"$H/etc/docker/daemon.json"
	snapshot >"$BATS_TEST_TMPDIR/before"
	printf '[vendor]\nname = bad\nbogus = 1\n' | write_ini bad
	run ocidec install --host-root "$H" -c "$CFG"
	assert_failure 2
	assert_output --partial "bad.ini:3:"
	# -c without --host-root: the host's own install copies no configs
	run ocidec install -c "$CFG"
	assert_failure 2
	assert_output --partial "-c: copying configs is the toolkit container's (--host-root DIR)"
	run ocidec install --host-root "$H" --prefix /usr/../etc
	assert_failure 2
	run ocidec install --host-root "$H" --runtime docker,kubelet
	assert_failure 2
	assert_output --partial "--runtime kubelet: not one of"
	snapshot >"$BATS_TEST_TMPDIR/after"
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "install: a host's absolute symlink resolves inside the host root (CoreOS: /usr/local -> /var/usrlocal)" {
	rmdir "$H/usr/local/bin" "$H/usr/local"
	mkdir -p "$H/var/usrlocal"
	ln -s /var/usrlocal "$H/usr/local"
	ocidec install --host-root "$H" -c "$CFG" >/dev/null
	assert_file_exists "$H/var/usrlocal/ocidec/bin/ocidec"
	[ ! -e /var/usrlocal/ocidec ]
	ocidec install --host-root "$H" --uninstall >/dev/null
	assert_file_not_exists "$H/var/usrlocal/ocidec"
	[ "$(readlink "$H/usr/local")" = /var/usrlocal ]
}

@test "install --wait: installed until SIGTERM, then uninstalled" {
	snapshot >"$BATS_TEST_TMPDIR/before"
	ocidec install "${ALL[@]}" --wait >"$BATS_TEST_TMPDIR/out" &
	pid=$!
	wait_until "[ -e '$H$P/etc/ocidec.d/demo.ini' ] && grep -q 'changes under' '$BATS_TEST_TMPDIR/out'"
	assert_file_exists "$H$HOOKS/ocidec.json"
	kill -TERM "$pid"
	wait "$pid"
	run cat "$BATS_TEST_TMPDIR/out"
	assert_line "ocidec install: signal 15: uninstalling"
	assert_line "ocidec install: uninstalled from $P"
	snapshot >"$BATS_TEST_TMPDIR/after"
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

# --- the toolkit image and a container through what it installed ---

podman_setup() {
	is_static || skip "podman runs once, in the static build's pass"
	podman_conf
	IMAGE=localhost/ocidec-toolkit-test:$$
	# the build context: the repository's Containerfile with this binary
	# (and the other architecture's build, where ./build.sh made it)
	CTX=$BATS_TEST_TMPDIR/ctx
	NATIVE=$(dpkg --print-architecture)
	mkdir -p "$CTX/build/$NATIVE" "$CTX/conf"
	cp "$BATS_TEST_DIRNAME/../Containerfile" "$BATS_TEST_DIRNAME/../.containerignore" "$CTX/"
	cp "$OCIDEC" "$CTX/build/$NATIVE/ocidec"
	cp "$CONF"/*.ini "$CTX/conf/"
}

teardown() {
	[ -z "${IMAGE:-}" ] || podman manifest rm "$IMAGE" >/dev/null 2>&1 || true
	[ -z "${IMAGE:-}" ] || podman rmi -f "$IMAGE" >/dev/null 2>&1 || true
	rm -rf "/tmp/ocidec-image-$$-oci"
	[ ! -d "$BATS_TEST_TMPDIR/store" ] || podman --root "$BATS_TEST_TMPDIR/store/root" --runroot "$BATS_TEST_TMPDIR/store/run" \
		--storage-driver vfs system reset -f >/dev/null 2>&1 || true
	# a --wait of a test that failed half-way
	for j in $(jobs -p); do kill -TERM "$j" 2>/dev/null || true; done
}

@test "toolkit image: FROM scratch, built offline; run against a host root it installs, and podman stop uninstalls" {
	podman_setup
	run timeout 300 podman build --network none -q -t "$IMAGE" "$CTX"
	assert_success
	run podman image inspect --format '{{.Size}} {{len .RootFS.Layers}}' "$IMAGE"
	echo "# toolkit image: $output (bytes, layers)" >&3
	# the shipped configs are in it and the entrypoint is install
	run timeout 120 podman run --rm --network none -v "$H:/host" "$IMAGE" --host-root /host --runtime docker
	assert_success
	assert_line "wrote /etc/docker/daemon.json (the original kept as /etc/docker/daemon.json.ocidec-orig)"
	assert_file_exists "$H$P/etc/ocidec.d/nvidia.ini"
	cmp "$OCIDEC" "$H$P/bin/ocidec"
	timeout 120 podman run --rm --network none -v "$H:/host" "$IMAGE" --host-root /host --uninstall >/dev/null
	assert_file_not_exists "$H$P"
	# the image's default command waits; podman stop sends SIGTERM, and it uninstalls
	snapshot >"$BATS_TEST_TMPDIR/before"
	id=$(timeout 120 podman run -d --network none -v "$H:/host" "$IMAGE")
	wait_until "[ -e '$H$HOOKS/ocidec.json' ]"
	assert_file_exists "$H$P/install.json"
	timeout 60 podman stop -t 20 "$id" >/dev/null
	run podman logs "$id"
	assert_line "ocidec install: uninstalled from $P"
	podman rm -f "$id" >/dev/null
	snapshot >"$BATS_TEST_TMPDIR/after"
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "toolkit image: make image gives one OCI index of linux/amd64 and linux/arm64 (podman's storage and an OCI layout); each platform's image runs its ocidec --version, the other architecture's under qemu-user (issue 36)" {
	podman_setup
	for a in amd64 arm64; do
		[ "$a" = "$NATIVE" ] && continue
		x=$BATS_TEST_DIRNAME/../build/$a/ocidec
		[ -x "$x" ] || skip "no $x (./build.sh builds it)"
		mkdir -p "$CTX/build/$a" && cp "$x" "$CTX/build/$a/ocidec"
	done
	# (lower case: podman names an image pulled from a layout by its path)
	A=/tmp/ocidec-image-$$-oci
	run timeout 300 make -s -C "$BATS_TEST_DIRNAME/.." image IMAGE="$IMAGE" IMAGE_CONTEXT="$CTX" IMAGE_LAYOUT="$A"
	assert_success
	assert_line "image: $IMAGE (linux/$NATIVE linux/$([ "$NATIVE" = amd64 ] && echo arm64 || echo amd64)), $A"
	# the layout's index is an OCI image index of both
	run python3 -c 'import json, sys, os
d = sys.argv[1]
blob = lambda dg: json.load(open(os.path.join(d, "blobs", *dg.split(":"))))
top = json.load(open(os.path.join(d, "index.json")))
idx = blob(top["manifests"][0]["digest"]) if top["manifests"][0]["mediaType"].endswith("index.v1+json") else top
print(idx["mediaType"])
for m in sorted(idx["manifests"], key=lambda m: m["platform"]["architecture"]):
    print(m["mediaType"], m["platform"]["os"] + "/" + m["platform"]["architecture"])' "$A"
	assert_success
	assert_output $'application/vnd.oci.image.index.v1+json\napplication/vnd.oci.image.manifest.v1+json linux/amd64\napplication/vnd.oci.image.manifest.v1+json linux/arm64'
	# the index in podman's storage too (what podman manifest push sends)
	run podman manifest inspect "$IMAGE"
	assert_output --partial '"architecture": "arm64"'
	assert_output --partial '"architecture": "amd64"'
	# each platform pulled from the layout, as a node of that architecture
	# pulls it (a store of the test's own): its own binary, which runs
	S=$BATS_TEST_TMPDIR/store
	p="podman --root $S/root --runroot $S/run --storage-driver vfs"
	for a in amd64 arm64; do
		id=$($p pull -q --arch "$a" "oci:$A")
		assert_equal "$($p image inspect --format '{{.Os}}/{{.Architecture}}' "$id")" "linux/$a"
		if [ "$a" = "$NATIVE" ]; then
			run timeout 120 $p run --rm --network none --entrypoint /usr/bin/ocidec "$id" --version
		else
			# not this machine's: exec format error, and under qemu-user it runs
			run timeout 120 $p run --rm --network none --entrypoint /usr/bin/ocidec "$id" --version
			assert_failure
			assert_output --partial "exec format error"
			run timeout 120 "$FIXTURES/qemu-user.sh" "$a" $p run --rm --network none --entrypoint /usr/bin/ocidec "$id" --version
			[ "$status" != 77 ] || skip "$output"
		fi
		assert_success
		assert_line "$("$OCIDEC" --version)"
	done
}

@test "toolkit image: a podman container on this host gets the demo vendor through what it installed" {
	podman_setup
	timeout 300 podman build --network none -q -t "$IMAGE" "$CTX" >/dev/null
	timeout 120 podman run --rm --network none -v "$H:/host" -v "$CFG:/cfg:ro" "$IMAGE" \
		--host-root /host -c /cfg --vendor demo --driver-root "$DR" --runtime podman >/dev/null
	ROOTFS=$BATS_TEST_TMPDIR/b/rootfs
	"$FIXTURES/bundle.sh" "$BATS_TEST_TMPDIR/b" >/dev/null
	# the host's /usr/local/ocidec is the one installed under $H: a private
	# mount namespace shows it there; podman reads the hooks dir install wrote
	run unshare -m sh -c '
		mount -t tmpfs tmpfs /usr/local && mkdir /usr/local/ocidec &&
		mount --bind "$1/usr/local/ocidec" /usr/local/ocidec &&
		timeout 120 podman --hooks-dir "$1/usr/share/containers/oci/hooks.d" run --rm --network none \
			-e OCI_DEMO=all --rootfs "$2" sh -c "$3"' sh "$H" "$ROOTFS" "$DEMO_SEE"
	assert_success
	assert_output "$DEMO_SEEN_ALL"
}

# --- deploy/kubernetes ---

# deploy_copy: the repository's deploy/ in $K, Debian 13's kubectl in
# $kubectl (the test skipped where the archive has none)
deploy_copy() {
	local rc=0
	kubectl=$("$FIXTURES/kubectl.sh") || rc=$?
	[ "$rc" -ne 3 ] || skip "Debian 13's archive has no kubectl"
	[ "$rc" -eq 0 ]
	cp -r "$BATS_TEST_DIRNAME/../deploy" "$K"
}

@test "deploy/kubernetes with kustomize (Debian 13's kubectl): the base and each overlay give the manifests' objects, passing the API's types; the base's settings are ocidec-toolkit.yaml's ConfigMap, key for key; the DaemonSet names the generated ConfigMap, whose name changes with any setting (a change rolls the pods); the overlays' driver roots (issue 47)" {
	local kubectl K=$BATS_TEST_TMPDIR/deploy
	deploy_copy
	for k in kubernetes overlays/driver-container overlays/host-driver; do
		"$kubectl" kustomize "$K/$k" >"$BATS_TEST_TMPDIR/${k##*/}.yaml"
		run "$FIXTURES/k8s-check.py" "$BATS_TEST_TMPDIR/${k##*/}.yaml"
		assert_success
		assert_output --regexp $'^Namespace/ocidec\nResourceQuota/ocidec-critical-pods\nServiceAccount/ocidec-toolkit\nConfigMap/ocidec-toolkit-settings-[a-z0-9]{10}\nDaemonSet/ocidec-toolkit$'
	done
	# the settings and what the DaemonSet reads them from
	settings() {
		/usr/bin/python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
cm = next(d for d in docs if d["kind"] == "ConfigMap")
ds = next(d for d in docs if d["kind"] == "DaemonSet")
print(ds["spec"]["template"]["spec"]["containers"][0]["envFrom"][0]["configMapRef"]["name"] == cm["metadata"]["name"])
print(sorted(cm["data"].items()))' "$1"
	}
	run settings "$BATS_TEST_TMPDIR/kubernetes.yaml"
	assert_line True
	base=${lines[1]}
	run settings "$K/kubernetes/ocidec-toolkit.yaml"
	assert_line "$base"
	# a setting changed: another ConfigMap, named in the pod template
	name() { grep -o 'ocidec-toolkit-settings-[a-z0-9]*' "$1" | sort -u; }
	assert_equal "$(name "$BATS_TEST_TMPDIR/kubernetes.yaml" | wc -l)" 1
	sed -i 's/^OCIDEC_VENDORS=nvidia$/OCIDEC_VENDORS=nvidia,amd/' "$K/kubernetes/ocidec.env"
	"$kubectl" kustomize "$K/kubernetes" >"$BATS_TEST_TMPDIR/changed.yaml"
	[ "$(name "$BATS_TEST_TMPDIR/changed.yaml")" != "$(name "$BATS_TEST_TMPDIR/kubernetes.yaml")" ]
	# the args each gives the pod: the base finds the driver root per
	# node, the overlays as they say
	for k in kubernetes:auto driver-container:container host-driver:; do
		run "$FIXTURES/k8s-args.py" "$BATS_TEST_TMPDIR/${k%%:*}.yaml"
		assert_line -- "--driver-root=${k#*:}"
		assert_line -- "--vendor=nvidia"
	done
}

@test "deploy/overlays/dra (kustomize, Debian 13's kubectl): the toolkit's objects and the DRA driver's, its RBAC no more than claims read, nodes read, slices managed, an admission policy keeping its writes to its own node's slices of ocidec's drivers; ocidec-dra on the nodes labelled ocidec.io/dra=true; a DeviceClass per shipped vendor, equal to ocidec dra classes (issue 50)" {
	local kubectl K=$BATS_TEST_TMPDIR/deploy
	deploy_copy
	"$kubectl" kustomize "$K/overlays/dra" >"$BATS_TEST_TMPDIR/dra.yaml"
	# every object but the DeviceClasses and the admission policy against
	# the API's types (Debian's python3-kubernetes has neither
	# resource.k8s.io/v1 nor admissionregistration's policies: checked
	# below, and by a real API server in test/cluster.bats)
	/usr/bin/python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
yaml.safe_dump_all([d for d in docs if d["kind"] not in ("DeviceClass", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")], open(sys.argv[2], "w"))
yaml.safe_dump_all([d for d in docs if d["kind"] == "DeviceClass"], open(sys.argv[3], "w"))' \
		"$BATS_TEST_TMPDIR/dra.yaml" "$BATS_TEST_TMPDIR/dra-typed.yaml" "$BATS_TEST_TMPDIR/classes.yaml"
	run "$FIXTURES/k8s-check.py" "$BATS_TEST_TMPDIR/dra-typed.yaml"
	assert_success
	assert_output --regexp $'^Namespace/ocidec\nResourceQuota/ocidec-critical-pods\nServiceAccount/ocidec-dra\nServiceAccount/ocidec-toolkit\nClusterRole/ocidec-dra\nClusterRoleBinding/ocidec-dra\nConfigMap/ocidec-toolkit-settings-[a-z0-9]{10}\nDaemonSet/ocidec-dra\nDaemonSet/ocidec-toolkit$'
	run /usr/bin/python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
get = lambda k, n: next(d for d in docs if d["kind"] == k and d["metadata"]["name"] == n)
role = get("ClusterRole", "ocidec-dra")
print(sorted((tuple(r["apiGroups"]), tuple(r["resources"]), tuple(sorted(r["verbs"]))) for r in role["rules"]))
b = get("ClusterRoleBinding", "ocidec-dra")
print(b["roleRef"]["name"], b["subjects"][0]["name"], b["subjects"][0]["namespace"])
dra, tk = get("DaemonSet", "ocidec-dra")["spec"]["template"]["spec"], get("DaemonSet", "ocidec-toolkit")["spec"]["template"]["spec"]
print("nodes:", dra["nodeSelector"], dra["tolerations"] == tk["tolerations"], "affinity" in dra)
vap = get("ValidatingAdmissionPolicy", "ocidec-dra-slices")
print(vap["spec"]["failurePolicy"], vap["spec"]["matchConditions"][0]["expression"], [r["resources"] for r in vap["spec"]["matchConstraints"]["resourceRules"]])
print(get("ValidatingAdmissionPolicyBinding", "ocidec-dra-slices")["spec"])
print("token:", dra["serviceAccountName"], dra.get("automountServiceAccountToken", True), tk.get("automountServiceAccountToken"))
c = dra["containers"][0]
print(" ".join(c["command"] + c["args"]))
print(c["env"][0]["name"], c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"])' "$BATS_TEST_TMPDIR/dra.yaml"
	assert_success
	assert_output "[(('',), ('nodes',), ('get',)), (('resource.k8s.io',), ('resourceclaims',), ('get',)), (('resource.k8s.io',), ('resourceslices',), ('create', 'delete', 'list', 'update'))]
ocidec-dra ocidec-dra ocidec
nodes: {'ocidec.io/dra': 'true'} True False
Fail request.userInfo.username == \"system:serviceaccount:ocidec:ocidec-dra\" [['resourceslices']]
{'policyName': 'ocidec-dra-slices', 'validationActions': ['Deny']}
token: ocidec-dra True False
/usr/bin/ocidec dra serve --host-root=/host --config-dir=/usr/local/ocidec/etc/ocidec.d --hook-path=/usr/local/ocidec/bin/ocidec
NODE_NAME spec.nodeName"
	# the DeviceClasses: each shipped vendor's, as ocidec prints them
	run /usr/bin/python3 -c 'import json, subprocess, sys, yaml
got = sorted((d["metadata"]["name"], d["spec"]["selectors"][0]["cel"]["expression"]) for d in yaml.safe_load_all(open(sys.argv[1])) if d)
want = sorted((d["metadata"]["name"], d["spec"]["selectors"][0]["cel"]["expression"]) for d in json.loads(subprocess.check_output([sys.argv[2], "dra", "classes", "-c", sys.argv[3]]))["items"])
print(got == want, len(got))
print(all(d["apiVersion"] == "resource.k8s.io/v1" and set(d) == {"apiVersion", "kind", "metadata", "spec"} for d in yaml.safe_load_all(open(sys.argv[1])) if d))' \
		"$BATS_TEST_TMPDIR/classes.yaml" "$OCIDEC" "$BATS_TEST_DIRNAME/../conf"
	assert_output "True $(ls "$BATS_TEST_DIRNAME"/../conf/*.ini | wc -l)
True"
	assert_line --index 0 --regexp '^True '
}

@test "deploy/kubernetes: the manifests pass the API's types (python3-kubernetes); a misspelt field does not" {
	K=$BATS_TEST_DIRNAME/../deploy/kubernetes
	run "$FIXTURES/k8s-check.py" "$K/ocidec-toolkit.yaml" "$K/shim/runtimeclass.yaml"
	assert_success
	assert_output $'Namespace/ocidec\nResourceQuota/ocidec-critical-pods\nServiceAccount/ocidec-toolkit\nConfigMap/ocidec-toolkit\nDaemonSet/ocidec-toolkit\nRuntimeClass/ocidec'
	# no API token in the privileged pod (issue 47, finding 6); NFD's
	# default labels (class and vendor) select the nodes
	run /usr/bin/python3 -c 'import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
sa = next(d for d in docs if d["kind"] == "ServiceAccount")
pod = next(d for d in docs if d["kind"] == "DaemonSet")["spec"]["template"]["spec"]
terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
print(sa["automountServiceAccountToken"], pod["serviceAccountName"], pod["automountServiceAccountToken"])
ds = next(d for d in docs if d["kind"] == "DaemonSet")
print("tolerate:", ds["spec"]["template"]["metadata"]["annotations"]["tolerate-missing-plugins.ocidec.io"])
print(" ".join(t["matchExpressions"][0]["key"].split("/")[-1] for t in terms))' "$K/ocidec-toolkit.yaml"
	assert_line "False ocidec-toolkit False"
	# its own pod let start where containerd 2.2 requires ocidec's NRI
	# plugin of every container (the key test/nri-closed.bats configures)
	assert_line "tolerate: true"
	grep -q 'tolerate_missing_plugins_annotation = "tolerate-missing-plugins.ocidec.io"' "$BATS_TEST_DIRNAME/nri-closed.bats"
	assert_line --partial "pci-0302_10de.present"
	# admitted where Pod Security is enforced: its namespace says privileged
	run /usr/bin/python3 -c 'import sys, yaml
ns = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d["kind"] == "Namespace")
print(ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"])' "$K/ocidec-toolkit.yaml"
	assert_output privileged
	sed 's/mountPropagation:/mountPropogation:/' "$K/ocidec-toolkit.yaml" >"$BATS_TEST_TMPDIR/bad.yaml"
	run "$FIXTURES/k8s-check.py" "$BATS_TEST_TMPDIR/bad.yaml"
	assert_failure 1
	assert_output --partial "unknown field 'mountPropogation' in V1VolumeMount"
	grep -v '^handler:' "$K/shim/runtimeclass.yaml" >"$BATS_TEST_TMPDIR/bad.yaml"
	run "$FIXTURES/k8s-check.py" "$BATS_TEST_TMPDIR/bad.yaml"
	assert_failure 1
	assert_output --partial "handler"
}

@test "deploy/kubernetes: the DaemonSet's args (the ConfigMap's values, as the kubelet expands them) install NVIDIA's config, its driver root the node's (a driver container's where one is there); with OCIDEC_RUNTIME=containerd, the runtime the RuntimeClass names; an empty OCIDEC_DRIVER_ROOT keeps the config's" {
	K=$BATS_TEST_DIRNAME/../deploy/kubernetes
	mapfile -t args < <("$FIXTURES/k8s-args.py" "$K/ocidec-toolkit.yaml")
	[[ " ${args[*]} " == *" --wait "* ]]
	[[ " ${args[*]} " == *" --runtime=nri "* ]]
	# as the image runs them (its configs are the shipped ones), but with
	# $H for /host and without --wait (the --wait test is above; NRI's,
	# test/nri.bats)
	toolkit_args() {
		inst=()
		for a in "$@"; do
			case $a in
			--wait) ;;
			--host-root=/host) inst+=("--host-root=$H") ;;
			*) inst+=("$a") ;;
			esac
		done
	}
	toolkit_args "${args[@]}"
	# the driver root found per node (issue 47, finding 6): the node's own
	# driver, then a driver container's root at /run/nvidia/driver
	run ocidec install -c "$CONF" "${inst[@]}"
	assert_success
	assert_line "ocidec install: nvidia: driver root: its own (no driver container's root at /run/nvidia/driver; --driver-root auto)"
	run grep '^driver_root' "$H$P/etc/ocidec.d/nvidia.ini"
	assert_output "$(grep '^driver_root' "$CONF/nvidia.ini")"
	# the GPU Operator's /run/nvidia before its driver pod is done (after a
	# boot): waited for, not taken as the node's own driver
	mkdir -p "$H/run/nvidia"
	(sleep 2; mkdir -p "$H/run/nvidia/driver/usr") &
	run ocidec install -c "$CONF" "${inst[@]}"
	assert_success
	assert_line "ocidec install: nvidia: waiting for its driver container's root at /run/nvidia/driver (/run/nvidia is there; --driver-root auto)"
	assert_line "ocidec install: nvidia: driver root /run/nvidia/driver: its driver container's root is there (--driver-root auto)"
	run ocidec install -c "$CONF" "${inst[@]}"
	assert_success
	assert_line "ocidec install: nvidia: driver root /run/nvidia/driver: its driver container's root is there (--driver-root auto)"
	assert_line --partial "NRI: nothing to register"
	run grep '^driver_root' "$H$P/etc/ocidec.d/nvidia.ini"
	assert_output "driver_root = /run/nvidia/driver"
	# only the vendor whose driver that container is (its
	# driver_container_root): MOFED's nodes are the node's (review of
	# issue 47)
	run grep -h '^driver_root' "$H$P/etc/ocidec.d/nvidia-mofed.ini" "$H$P/etc/ocidec.d/nvidia-gds.ini"
	assert_output $'driver_root = /\ndriver_root = /'
	# container (deploy/overlays/driver-container): the driver container's
	# root whether or not it is there yet, no wait
	rm -rf "$H/run/nvidia/driver"
	mapfile -t args < <("$FIXTURES/k8s-args.py" "$K/ocidec-toolkit.yaml" OCIDEC_DRIVER_ROOT=container)
	toolkit_args "${args[@]}"
	run timeout 20 ocidec install -c "$CONF" "${inst[@]}"
	assert_success
	assert_line "ocidec install: nvidia: driver root /run/nvidia/driver, its driver container's (--driver-root container)"
	run grep -h '^driver_root' "$H$P/etc/ocidec.d/nvidia.ini" "$H$P/etc/ocidec.d/nvidia-mofed.ini"
	assert_output $'driver_root = /run/nvidia/driver\ndriver_root = /'
	mapfile -t args < <("$FIXTURES/k8s-args.py" "$K/ocidec-toolkit.yaml")
	toolkit_args "${args[@]}"
	assert_file_not_exists "$H$P/etc/ocidec.d/solarflare.ini"
	assert_file_not_exists "$H/etc/containerd/conf.d/ocidec.toml"
	mapfile -t args < <("$FIXTURES/k8s-args.py" "$K/ocidec-toolkit.yaml" OCIDEC_RUNTIME=containerd OCIDEC_DRIVER_ROOT=)
	toolkit_args "${args[@]}"
	run ocidec install -c "$CONF" "${inst[@]}"
	assert_success
	run grep '^driver_root' "$H$P/etc/ocidec.d/nvidia.ini"
	assert_output "$(grep '^driver_root' "$CONF/nvidia.ini")"
	handler=$(/usr/bin/python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["handler"])' "$K/shim/runtimeclass.yaml")
	run grep -c "^\[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.$handler\]$" "$H/etc/containerd/conf.d/ocidec.toml"
	assert_output 1
}

@test "install: the lock is a file only root may open; a user's lock on the host root holds nothing; a held lock is a clear error after --lock-timeout; SIGTERM ends --wait's wait at once (issue 32, finding 4)" {
	# any user could lock the host root directory: it stalls nothing now
	d=$H
	while [ "$d" != /tmp ] && [ "$d" != / ]; do chmod a+x "$d"; d=$(dirname "$d"); done
	setpriv --reuid 65534 --regid 65534 --clear-groups flock "$H" true
	setpriv --reuid 65534 --regid 65534 --clear-groups flock "$H" sleep 60 &
	holder=$!
	sleep 0.3
	run timeout 30 ocidec install "${ALL[@]}"
	kill "$holder" 2>/dev/null || true
	assert_success
	[ "$(stat -c '%u %a %F' "$H/run/ocidec-install.lock")" = "0 600 regular empty file" ]
	# and the lock file: no user may open it
	run setpriv --reuid 65534 --regid 65534 --clear-groups flock "$H/run/ocidec-install.lock" true
	assert_failure
	# root holding it: a clear error within the timeout, nothing written
	ocidec install --host-root "$H" --uninstall >/dev/null
	before=$(snapshot)
	flock "$H/run/ocidec-install.lock" sleep 30 &
	holder=$!
	sleep 0.3
	start=$(date +%s)
	run ocidec install "${ALL[@]}" --lock-timeout 1
	assert_failure 1
	assert_line "ocidec install: waiting for another install or uninstall (the lock $H/run/ocidec-install.lock, 1 s at most)"
	assert_line "ocidec install: $H/run/ocidec-install.lock: another ocidec install or uninstall held it for 1 s (--lock-timeout)"
	[ $(( $(date +%s) - start )) -le 5 ]
	assert_equal "$(snapshot)" "$before"
	# --wait waiting for it: SIGTERM ends it at once, nothing done
	ocidec install "${ALL[@]}" --wait >"$BATS_TEST_TMPDIR/w" 2>&1 &
	w=$!
	wait_until "grep -q waiting '$BATS_TEST_TMPDIR/w'"
	start=$(date +%s%N)
	kill -TERM "$w"
	rc=0
	wait "$w" || rc=$?
	[ "$rc" = 1 ]
	[ $(( ($(date +%s%N) - start) / 1000000 )) -lt 2000 ]
	run cat "$BATS_TEST_TMPDIR/w"
	assert_line "ocidec install: signal 15 while waiting for the install lock: nothing done"
	assert_equal "$(snapshot)" "$before"
	kill "$holder"
	wait "$holder" || true
	# a link where the lock goes is refused, never followed
	rm "$H/run/ocidec-install.lock"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$H/run/ocidec-install.lock"
	run ocidec install "${ALL[@]}"
	assert_failure
	assert_output --partial "$H/run/ocidec-install.lock"
	assert_file_not_exists "$BATS_TEST_TMPDIR/elsewhere"
}

@test "check: on containerd 1.x a drop-in whose CRI section is older than config.toml's shadows the administrator's edits: said, with the fix; made anew, in order (issue 32, finding 7)" {
	ocidec install "${ALL[@]}" >/dev/null
	run ocidec check --host-root "$H" -c "$CFG"
	refute_output --partial "containerd ignores them"
	# the administrator sets the sandbox image in config.toml afterwards
	printf '\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "registry.example/pause:9"\n' >>"$H/etc/containerd/config.toml"
	run ocidec check --host-root "$H" -c "$CFG"
	assert_line --partial "PROBLEM  containerd: /etc/containerd/conf.d/ocidec.toml carries the CRI section config.toml had when ocidec was installed, and containerd 1.x takes the drop-in's whole: config.toml's CRI settings changed since, and containerd ignores them"
	# a toolkit container installed ocidec here: that container installs again (review of issue 33)
	assert_line "         do: run the toolkit container that installed ocidec here again (its record: /usr/local/ocidec/install.json); where ocidec is installed on the host itself, this is: ocidec install --runtime containerd; then restart containerd the way this host starts it (no systemd, no init script of its own here)"
	# what containerd itself reads: the drop-in's sandbox image, not the edit
	run chroot "$H" /usr/bin/containerd --config /etc/containerd/config.toml config dump
	refute_output --partial "registry.example/pause:9"
	# installed again: the drop-in carries the edit, check is content
	ocidec install "${ALL[@]}" >/dev/null
	run chroot "$H" /usr/bin/containerd --config /etc/containerd/config.toml config dump
	assert_output --partial 'sandbox_image = "registry.example/pause:9"'
	run ocidec check --host-root "$H" -c "$CFG"
	refute_output --partial "containerd ignores them"
	ls -A "$H/etc/containerd" | grep -v ocidec-dump >/dev/null
	[ -z "$(ls -A "$H/etc/containerd" | grep ocidec-dump)" ]
}

# host_mode H ARGS...: ocidec install ARGS as the installed binary of the host
# root H, run on that host itself (chroot into it, its own /proc): what
# a package's ocidec does on a node
# package_root: the host root H with ocidec installed as a package installs
# it (/usr/bin/ocidec and its links, the demo vendor in /etc/ocidec/ocidec.d),
# a /proc and /dev/null for it (the static build's pass only)
package_root() {
	is_static || skip "the installed binary runs inside the host root: the static build's pass"
	mkdir -p "$H/proc" "$H/dev" "$H/etc/ocidec/ocidec.d" "$H/var/run" "$H/bin"
	mknod -m 0666 "$H/dev/null" c 1 3
	install -m 0755 "$OCIDEC" "$H/usr/bin/ocidec"
	for a in hook runtime; do ln -s ocidec "$H/usr/bin/ocidec-$a"; done
	cp "$CFG/demo.ini" "$H/etc/ocidec/ocidec.d/"
	chmod 0644 "$H/etc/ocidec/ocidec.d/"*
}

host_mode() {
	local h=$1
	shift
	unshare -m sh -c 'mount -t proc proc "$1/proc" && shift && chroot "$@"' sh "$h" "$h" /usr/bin/ocidec install "$@"
}

@test "install on the host itself: the installed ocidec and its configs registered where they are, nothing copied; --set-as-default, --enable-cdi; a second run changes nothing; --uninstall gives every file back byte for byte (issue 33, finding 2)" {
	package_root
	install -m 0644 "$BATS_TEST_DIRNAME/../conf/nvidia.ini" "$H/etc/ocidec/ocidec.d/"
	# a host systemd runs: the commands are systemctl's (issue 33)
	mkdir -p "$H/run/systemd/system"
	before=$(snapshot)
	run host_mode "$H" --runtime podman,docker,containerd --set-as-default --enable-cdi
	assert_success
	assert_line "ocidec install: 5 changes: /usr/bin/ocidec registered, as it is installed (the record in /var/lib/ocidec/install.json)"
	assert_line 'ocidec install: dockerd runs runtime "ocidec" once it restarts: systemctl restart docker (or --restart)'
	assert_line 'ocidec install: containerd runs runtime "ocidec" once it restarts: systemctl restart containerd (or --restart)'
	# containerd 1.6 here: no CDI to turn on, said
	assert_output --partial "containerd: this containerd has no CDI (enable_cdi: containerd 1.7 or later): not enabled"
	# nothing copied: no prefix, no second config dir
	assert_file_not_exists "$H/usr/local/ocidec"
	[ "$(ls "$H/usr/bin")" = "$(printf 'containerd\nocidec\nocidec-hook\nocidec-runtime')" ]
	grep -q '"/usr/bin/ocidec-hook"' "$H/usr/share/containers/oci/hooks.d/ocidec.json"
	run python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["runtimes"]["ocidec"]["path"], d["default-runtime"], d["features"]["cdi"], d["log-level"])' \
		"$H/etc/docker/daemon.json"
	assert_output "/usr/bin/ocidec-runtime ocidec True warn"
	# what containerd itself makes of it: ocidec's runtime, its default
	run chroot "$H" /usr/bin/containerd --config /etc/containerd/config.toml config dump
	assert_line --regexp '^ +default_runtime_name = "ocidec"$'
	assert_line --regexp '^ +BinaryName = "/usr/bin/ocidec-runtime"$'
	[ "$(readlink "$H/usr/local/bin/nvidia-container-runtime-hook")" = /usr/bin/ocidec ]
	run host_mode "$H" --runtime podman,docker,containerd --set-as-default --enable-cdi
	assert_line "ocidec install: nothing to change"
	# check: the default ocidec set on top is no drift of the CRI section; and
	# an install run again without the flags keeps what they set (review)
	run unshare -m sh -c 'mount -t proc proc "$1/proc" && chroot "$1" /usr/bin/ocidec check' sh "$H"
	refute_output --partial "containerd ignores them"
	run host_mode "$H" --runtime podman,docker,containerd
	assert_line "ocidec install: nothing to change"
	# names the engines' own runtimes have are refused; --wait is a container's
	run host_mode "$H" --runtime docker --runtime-name runc
	assert_failure 2
	assert_output --partial "--runtime-name runc: the engines' own runtime's name"
	run host_mode "$H" --runtime docker --wait
	assert_failure 2
	assert_output "ocidec install: --wait: installed until SIGTERM is the toolkit container's (--host-root DIR, a DaemonSet's pod); on the host, an install stays until ocidec install --uninstall (see ocidec install --help)"
	# a user (a rootless dockerd's) is told how its own daemon registers the
	# runtime, nothing written
	now=$(snapshot)
	run unshare -m sh -c 'mount -t proc proc "$1/proc" && chroot --userspec=65534:65534 "$1" /usr/bin/ocidec install --runtime docker' sh "$H"
	assert_failure 1
	assert_output "ocidec install: registering ocidec with the host's engines is root's: run it as root. A user's rootless dockerd is registered by that user, in its own daemon.json (\$XDG_CONFIG_HOME/docker/daemon.json): \"runtimes\": {\"ocidec\": {\"path\": \"/usr/bin/ocidec-runtime\"}} (ocidec-install(1), ROOTLESS DOCKER)"
	assert_equal "$(snapshot)" "$now"
	# the copying options are the toolkit container's
	run host_mode "$H" --driver-root /run/nvidia/driver
	assert_failure 2
	assert_output --partial "--driver-root: copying configs is the toolkit container's (--host-root DIR)"
	run host_mode "$H" --uninstall
	assert_success
	# what the engines must do to run without it, said (issue 33)
	assert_line "ocidec install: dockerd runs without ocidec's runtime once it restarts: systemctl restart docker (or --restart)"
	assert_line "ocidec install: containerd runs without ocidec's runtime once it restarts: systemctl restart containerd (or --restart)"
	assert_equal "$(snapshot)" "$before"
	# the administrator edits daemon.json meanwhile: only ocidec's part goes
	host_mode "$H" --runtime docker --set-as-default --enable-cdi >/dev/null
	python3 -c 'import json, sys; p = sys.argv[1]; d = json.load(open(p)); d["debug"] = True; json.dump(d, open(p, "w"))' \
		"$H/etc/docker/daemon.json"
	run host_mode "$H" --uninstall
	assert_success
	run python3 -c 'import json, sys; print(sorted(json.load(open(sys.argv[1]))))' "$H/etc/docker/daemon.json"
	assert_output "['debug', 'log-level', 'runtimes', 'storage-driver']"
	# a binary that is not the installed one (no ocidec-runtime beside it) is refused
	mkdir -p "$H/opt" && install -m 0755 "$OCIDEC" "$H/opt/ocidec"
	run unshare -m sh -c 'mount -t proc proc "$1/proc" && chroot "$1" /opt/ocidec install --runtime docker' sh "$H"
	assert_failure 2
	assert_output --partial "/opt/ocidec-hook is not this ocidec (/opt/ocidec): run the installed ocidec"
}

@test "install --restart: without systemd, dockerd reloaded by SIGHUP to the process its pid file names (runtimes, the default runtime); what needs a restart is said, exit 1, the install done; refused for another host root (issue 33, finding 2)" {
	package_root
	[ ! -d "$H/run/systemd/system" ]
	# a stand-in dockerd: a process of that name, which SIGHUP ends
	cp /bin/sleep "$BATS_TEST_TMPDIR/dockerd"
	# (SIGHUP's default action restored: a suite run under nohup passes it ignored)
	env --default-signal=HUP "$BATS_TEST_TMPDIR/dockerd" 120 &
	dpid=$!
	echo "$dpid" >"$H/var/run/docker.pid"
	run host_mode "$H" --runtime docker --set-as-default --restart
	assert_success
	assert_line "ocidec install: reloaded dockerd (SIGHUP to pid $dpid from /var/run/docker.pid)"
	rc=0
	wait "$dpid" || rc=$?
	[ "$rc" = $((128 + 1)) ]    # SIGHUP
	# CDI needs dockerd restarted, which only systemd does here: said, the install done
	run host_mode "$H" --runtime docker --set-as-default --enable-cdi --restart
	assert_failure 1
	assert_output --partial "--restart: dockerd: no systemd here (PID 1), a reload does not do, no init script: restart dockerd yourself"
	grep -q '"cdi"' "$H/etc/docker/daemon.json"
	# run again, nothing to change: the restart still to do is tried again,
	# or, without --restart, said (once) (issue 33)
	run host_mode "$H" --runtime docker --set-as-default --enable-cdi --restart
	assert_failure 1
	assert_output --partial "restart dockerd yourself"
	run host_mode "$H" --runtime docker --set-as-default --enable-cdi
	assert_success
	assert_line "ocidec install: nothing to change"
	assert_line 'ocidec install: dockerd runs runtime "ocidec" once it restarts: restart it the way this host starts it (no systemd or init script of its own here)'
	run host_mode "$H" --runtime docker --set-as-default --enable-cdi
	assert_output "ocidec install: nothing to change"
	# CDI turned off again by --uninstall: a restart too
	run host_mode "$H" --uninstall --restart
	assert_failure 1
	assert_output --partial "a reload does not do, no init script: restart dockerd yourself"
	# a pid file naming another process: not signalled
	host_mode "$H" --runtime docker >/dev/null
	sleep 120 &
	other=$!
	echo "$other" >"$H/var/run/docker.pid"
	run host_mode "$H" --uninstall --restart
	assert_failure 1
	assert_output --partial "no running one named by its pid file"
	kill -0 "$other"
	kill "$other"
	# an init script (Debian's docker.io has one): --restart runs its
	# restart, as the printed command does (issue 33)
	mkdir -p "$H/etc/init.d" "$H/bin"
	cp /bin/busybox "$H/bin/" && ln -sf busybox "$H/bin/sh"
	printf '#!/bin/sh\necho "$1" >/restarted\n' >"$H/etc/init.d/docker"
	chmod 0755 "$H/etc/init.d/docker"
	run host_mode "$H" --runtime docker --enable-cdi
	assert_line 'ocidec install: dockerd runs runtime "ocidec" once it restarts: service docker restart (or --restart)'
	host_mode "$H" --uninstall >/dev/null
	# (--restart then waits until dockerd answers on its socket: a stand-in
	# of its API answers there; without it, the wait fails, said)
	run host_mode "$H" --runtime docker --enable-cdi --restart --restart-timeout 1
	assert_failure 1
	assert_line --partial "--restart: dockerd does not answer on its socket 1 s after: no container starts there"
	host_mode "$H" --uninstall >/dev/null
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
while True:
    c, _ = s.accept(); c.recv(4096); c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{}"); c.close()' \
		"$H/var/run/docker.sock" &
	api=$!
	wait_until -t 10 '[ -S "$H/var/run/docker.sock" ]'
	run host_mode "$H" --runtime docker --enable-cdi --restart
	kill "$api"
	assert_success
	assert_line "ocidec install: restarted dockerd (/etc/init.d/docker restart)"
	[ "$(cat "$H/restarted")" = restart ]
	run ocidec install --host-root "$H" --runtime docker --restart
	assert_failure 2
	assert_output --partial "--restart: the engines of a host root ($H) are its own to restart"
}

@test "install: a runtime name changed since the last install (--runtime-name) replaces the old entry in daemon.json, a default runtime that named it follows; the file keeps its indentation; --uninstall gives it back (issue 33)" {
	before=$(sha256sum <"$H/etc/docker/daemon.json")
	ocidec install --host-root "$H" -c "$CFG" --runtime docker --runtime-name gpu --set-as-default >/dev/null
	# run again without the flags (what check's fixes type): the recorded
	# name and default kept (review of issue 33)
	run ocidec install --host-root "$H" -c "$CFG" --runtime docker,containerd
	assert_success
	refute_output --partial "renamed"
	run python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sorted(d["runtimes"]), d["default-runtime"])' \
		"$H/etc/docker/daemon.json"
	assert_output "['gpu', 'other'] gpu"
	grep -q '^\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.gpu\]$' "$H/etc/containerd/conf.d/ocidec.toml"
	run ocidec install --host-root "$H" -c "$CFG" --runtime docker --runtime-name ocidec
	assert_success
	assert_line 'ocidec install: warn: /etc/docker/daemon.json: runtime "gpu" of the last install renamed "ocidec", the default runtime too'
	run python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sorted(d["runtimes"]), d["default-runtime"])' \
		"$H/etc/docker/daemon.json"
	assert_output "['ocidec', 'other'] ocidec"
	# written in the file's own indentation (two spaces here), no tabs
	run grep -c $'\t' "$H/etc/docker/daemon.json"
	assert_output 0
	run sed -n 2p "$H/etc/docker/daemon.json"
	assert_output '  "log-level": "warn",'
	ocidec install --host-root "$H" --uninstall >/dev/null
	assert_equal "$(sha256sum <"$H/etc/docker/daemon.json")" "$before"
}

@test "install --enable-cdi asks Docker's version of the dockerd first on PATH only where root owns it and no one else may write it: a user's file of that name is never run as root (review of issue 33)" {
	package_root
	cp /bin/busybox "$H/bin/" && ln -s busybox "$H/bin/sh"
	printf '#!/bin/sh\nid -u >/ran\necho "Docker version 24.0.7, build x"\n' >"$H/usr/local/bin/dockerd"
	chmod 0755 "$H/usr/local/bin/dockerd"
	chown 65534:65534 "$H/usr/local/bin/dockerd"
	run host_mode "$H" --runtime docker --enable-cdi
	assert_success
	refute_output --partial "has no CDI"
	[ ! -e "$H/ran" ]
	grep -q '"cdi"' "$H/etc/docker/daemon.json"
	host_mode "$H" --uninstall >/dev/null
	# root's: asked (and Docker 24 has no CDI: said, not set)
	chown 0:0 "$H/usr/local/bin/dockerd"
	run host_mode "$H" --runtime docker --enable-cdi
	assert_success
	assert_line --partial "warn: docker: Docker 24 has no CDI (Docker 25 or later): not enabled"
	[ "$(cat "$H/ran")" = 0 ]
	! grep -q '"cdi"' "$H/etc/docker/daemon.json"
}

@test "install --runtime containerd --runtime-name nvidia over NVIDIA's runtime of that name: replaced, said, put back by --uninstall (review of issue 33)" {
	cat >"$H/etc/containerd/config.toml" <<-'EOF2'
	version = 2
	[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
	  runtime_type = "io.containerd.runc.v2"
	  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
	    BinaryName = "/usr/bin/nvidia-container-runtime"
	EOF2
	cp "$H/etc/containerd/config.toml" "$BATS_TEST_TMPDIR/orig.toml"
	run ocidec install --host-root "$H" -c "$CFG" --runtime containerd --runtime-name nvidia
	assert_success
	assert_line 'ocidec install: warn: containerd: runtime "nvidia" ran /usr/bin/nvidia-container-runtime: it runs /usr/local/ocidec/bin/ocidec-runtime now (--uninstall puts it back)'
	run chroot "$H" /usr/bin/containerd config dump
	assert_line --regexp '^ +BinaryName = "/usr/local/ocidec/bin/ocidec-runtime"$'
	refute_output --partial '"/usr/bin/nvidia-container-runtime"'
	ocidec install --host-root "$H" --uninstall >/dev/null
	cmp "$BATS_TEST_TMPDIR/orig.toml" "$H/etc/containerd/config.toml"
}
