#!/usr/bin/env bats
# The field's advisories, one test per attack class, each named after the
# advisory it replays: the published attack's shape, against every path a
# container gets ocidec's edits by where the class applies (the prestart
# hook, the CDI spec's createContainer hook, the runtime shim with runc
# under it, the NRI plugin's answer applied as containerd applies it), with
# both resolvers (openat2, and the checked walk). Each test watches a host
# directory the image points at (hostwatched: a fingerprint of names, types,
# modes and contents) and the host's mount table (test/helpers.bash:
# attack), and looks from inside the container for a mount of the host
# directory and for a place it can write there; and each first shows that
# its check can fail: the naive write, the dynamic program, the taken path.
# SECURITY.md maps the advisories to these tests.

load helpers

setup_file() {
	"$BATS_TEST_DIRNAME/fixtures/demo-vendor.sh" "$BATS_FILE_TMPDIR/dr" "$BATS_FILE_TMPDIR/conf.d" >/dev/null
	gcc -shared -fPIC -o "$BATS_FILE_TMPDIR/libhostonly.so.1" "$BATS_TEST_DIRNAME/fixtures/libdemo.c" \
		-Wl,-soname,libhostonly.so.1
	# a CUDA compat libcuda newer than the vendor's driver (no note: its major decides)
	"$BATS_TEST_DIRNAME/fixtures/cuda-compat-lib.sh" "$BATS_FILE_TMPDIR/libcuda.so.999.1"
}

setup() {
	common_setup
	DR=$BATS_FILE_TMPDIR/dr
	cp "$BATS_FILE_TMPDIR/conf.d/demo.ini" "$CFG/"
	# the host directory the images point at: a library and a compat
	# libcuda of the host's, a conf.d naming the library's directory
	HOST=$BATS_TEST_TMPDIR/hostwatched
	mkdir -p "$HOST/sub" "$HOST/lib" "$HOST/compat" "$HOST/conf.d" "$HOST/etc"
	echo "host file" >"$HOST/file"
	cp "$BATS_FILE_TMPDIR/libhostonly.so.1" "$HOST/lib/"
	cp "$BATS_FILE_TMPDIR/libcuda.so.999.1" "$HOST/compat/"
	echo "$HOST/lib" >"$HOST/conf.d/host.conf"
	B=$BATS_TEST_TMPDIR/bundle
	ID=ocidec-adv-$$-$BATS_TEST_NUMBER
}

teardown() {
	runc delete -f "$ID" >/dev/null 2>&1 || true
	[ -z "${RACER:-}" ] || { rm -f "$BATS_TEST_TMPDIR/racing"; wait "$RACER" 2>/dev/null || true; }
	if mountpoint -q "$BATS_TEST_TMPDIR/hostproc" 2>/dev/null; then umount -R "$BATS_TEST_TMPDIR/hostproc"; fi
}

# The paths a container gets ocidec's edits by, and the hook's resolvers;
# the races on each path's own way of making the edits, the hook's code
# under both resolvers (the shim's and the plugin's hook is the CDI one's)
PATHS="hook:openat2 hook:fallback cdi:openat2 cdi:fallback shim:openat2 shim:fallback nri:openat2 nri:fallback"
RACE_PATHS="hook:openat2 hook:fallback cdi:openat2 cdi:fallback shim:openat2 nri:openat2"

# via PATH:MODE FN ARGS...: FN MODE ARGS... (attack, race: test/helpers.bash's
# attack_bundle and attack_start under them), the container's edits by that
# path: the prestart hook, the CDI spec's createContainer hook, the shim, the
# NRI plugin
via() {
	local path=${1%:*} mode=${1#*:} CDI_STAGE= VIA=
	case $path in
	cdi) CDI_STAGE=createContainer ;;
	shim | nri) VIA=$path ;;
	esac
	"$2" "$mode" "${@:3}"
}

# by PATH:MODE PREPARE [SCRIPT]: attack by that path
by() { via "$1" attack "${@:2}"; }

# What the container does: writes into each place the images point at the
# host, shows any mount of the watched directory (a mount's root naming
# it), runs the vendor's program
PROBE='for d in /opt /opt/demo /opt/demo/lib /usr/bin /usr/local/cuda/compat /etc /etc/ld.so.conf.d /dev /dev/dri; do
	{ echo pwned >"$d/pwned"; } 2>/dev/null && echo "wrote $d"; done
busybox awk '\''$4 ~ /hostwatched/ { print "host mount: " $4 " on " $5 }'\'' /proc/self/mountinfo
demo-tool'

# contained: the container ran the vendor's program and saw no mount of
# the watched directory (attack checked the host's side)
contained() {
	assert_success
	assert_line "demo-tool: the answer is 42"
	refute_output --partial "host mount:"
}

# replay SCRIPT CHECK IMAGE...: each IMAGE (the name of a variable holding
# a PREPARE) by every path, SCRIPT the container's, which is contained;
# then CHECK, a command looking at what was left
replay() {
	local script=$1 check=$2 p image
	shift 2
	for p in $PATHS; do
		for image in "$@"; do
			by "$p" "${!image}" "$script"
			contained
			$check
		done
	done
}

# race PATH:MODE SETUP FLIP: a bundle for that path, SETUP run in its
# rootfs, then FLIP run there over and over (a directory of the image
# changed under the hook's feet, as by another container sharing it) while
# the container starts 3 times: the watched directory and the host's
# mounts never change, and no start shows the container a mount of them
race() { via "$1" race_by "${@:2}"; }

race_by() {
	local mode=$1 setup=$2 flip=$3 before mounts i
	attack_bundle "$mode" "$PROBE; true"
	(cd "$B/rootfs" && eval "$setup")
	before=$(fingerprint "$HOST")
	mounts=$(host_mounts)
	touch "$BATS_TEST_TMPDIR/racing"
	(cd "$B/rootfs" && end=$((SECONDS + 20))
	 while [ -e "$BATS_TEST_TMPDIR/racing" ] && [ $SECONDS -lt $end ]; do eval "$flip" 2>/dev/null || true; done) &
	RACER=$!
	for i in 1 2 3; do
		attack_start "$mode"
		refute_output --partial "host mount:"
	done
	rm "$BATS_TEST_TMPDIR/racing"
	wait "$RACER"
	RACER=
	assert_equal "$(fingerprint "$HOST")" "$before"
	assert_equal "$(host_mounts)" "$mounts"
}

@test "CVE-2025-23267: the cache update follows no link out of the rootfs (ld.so.cache, ld.so.conf.d, ld.so.conf and its includes, a library directory)" {
	# the published shape: the image's cache and conf.d links to host
	# files, which a cache update writes through (NVIDIA's update-ldcache
	# wrote its conf.d file, then ldconfig the cache)
	abs='mkdir -p opt/demo && ln -s "$HOST/file" etc/ld.so.cache && ln -s "$HOST/conf.d" etc/ld.so.conf.d &&
		printf "include %s/conf.d/*.conf\n%s/lib\ninclude /proc/self/root%s/conf.d/*.conf\n" "$HOST" "$HOST" "$HOST" >etc/ld.so.conf &&
		ln -s "$HOST/lib" opt/demo/lib'
	up=../../../../../../../../../..
	climb='mkdir -p opt/demo && ln -s "'$up'$HOST/file" etc/ld.so.cache && ln -s "'$up'$HOST/conf.d" etc/ld.so.conf.d &&
		ln -s "'$up'$HOST/conf.d/host.conf" etc/ld.so.conf && ln -s "'$up'$HOST/lib" opt/demo/lib'
	watch_catches "$abs" 'echo cache >etc/ld.so.cache; echo /opt/demo/lib >etc/ld.so.conf.d/naive.conf'
	watch_catches "$climb" 'echo cache >etc/ld.so.cache'
	# the cache is the container's own file, with nothing of the host's
	cache_own() {
		assert_file_exists "$B/rootfs/etc/ld.so.cache"
		[ ! -L "$B/rootfs/etc/ld.so.cache" ]
		run "$OCIDEC" ldcache -p -r "$B/rootfs"
		assert_output --partial libdemo.so.1
		refute_output --partial libhostonly
		refute_output --partial hostwatched
	}
	replay "$PROBE" cache_own abs climb
}

@test "CVE-2024-0133: an image's link makes the hook create no file on the host (an empty mount target, a driver link, the cache, a conf.d drop-in)" {
	# the published shape: a link where the hook makes an empty file (a
	# mount's target) or writes one, dangling to a host path that does not
	# exist yet, absolute or climbing out with .., or to a host directory
	up=../../../../../../../../../..
	links='mkdir -p usr/bin && ln -s "$HOST/made-target" usr/bin/demo-tool && ln -s "'$up'$HOST/made-cache" etc/ld.so.cache &&
		ln -s "'$up'$HOST/conf.d" etc/ld.so.conf.d'
	# the driver's soname link, where the image has a link of its own
	link='mkdir -p opt/demo/lib && ln -s "$HOST/made-link" opt/demo/lib/libdemo.so.1'
	watch_catches "$links" 'touch usr/bin/demo-tool'
	watch_catches "$links" 'echo cache >etc/ld.so.cache'
	watch_catches "$links" 'echo /opt/demo/lib >etc/ld.so.conf.d/naive.conf'
	watch_catches "$link" 'echo x >opt/demo/lib/libdemo.so.1'
	for p in $PATHS; do
		by "$p" "$links" "$PROBE"
		contained
		# (the image's link stays, the library unreachable by that name)
		by "$p" "$link" 'cat /opt/demo/lib/libdemo.so.1 >/dev/null 2>&1 || echo no library'
		assert_success
	done
}

# compat_vendor: the demo vendor with CUDA's forward compatibility (the
# image's /usr/local/cuda/compat, a 535 host driver)
compat_vendor() {
	sed -i '/^\[vendor\]/a cuda_compat_dir = /usr/local/cuda/compat\nversion = 535.54.15' "$CFG/demo.ini"
}

# the image's own compat libcuda, newer than the host's driver
GENUINE_COMPAT='mkdir -p usr/local/cuda/compat etc/ld.so.conf.d && cp "$BATS_FILE_TMPDIR/libcuda.so.999.1" usr/local/cuda/compat/'

@test "CVE-2024-0132: an image's CUDA compat directory or library linked, or raced, to the host gives the container nothing of the host" {
	compat_vendor
	# the path is taken: a genuine compat directory comes first, by a drop-in
	for p in hook:openat2 cdi:fallback shim:openat2 nri:fallback; do
		by "$p" "$GENUINE_COMPAT" 'cat /etc/ld.so.conf.d/00-compat-ocidec.conf; demo-tool'
		assert_success
		assert_line /usr/local/cuda/compat
	done
	# the published shape: the compat directory, or its library, a link
	# the host resolves to the host's (libnvidia-container mounted what it
	# found there into the container)
	abs='mkdir -p usr/local/cuda etc/ld.so.conf.d && ln -s "$HOST/compat" usr/local/cuda/compat'
	climb='mkdir -p usr/local/cuda/compat etc/ld.so.conf.d &&
		ln -s "../../../../../../../../../..$HOST/compat/libcuda.so.999.1" usr/local/cuda/compat/libcuda.so.999.1'
	watch_catches "$abs" 'touch usr/local/cuda/compat/.naive'
	watch_catches "$climb" 'echo x >usr/local/cuda/compat/libcuda.so.999.1'
	# no decision on the host's library: the host's driver stays
	no_compat() {
		assert_line "no compat"
		run "$OCIDEC" ldcache -p -r "$B/rootfs"
		refute_output --partial hostwatched
		refute_output --partial libcuda
	}
	replay "$PROBE; cat /etc/ld.so.conf.d/00-compat-ocidec.conf 2>/dev/null || echo no compat" no_compat abs climb
	# raced: the directory a link to the host's between the hook's looks
	flip='rm -rf usr/local/cuda/compat; mkdir usr/local/cuda/compat; cp "$BATS_FILE_TMPDIR/libcuda.so.999.1" usr/local/cuda/compat/
		rm -rf usr/local/cuda/compat; ln -s "$HOST/compat" usr/local/cuda/compat'
	for p in $RACE_PATHS; do
		race "$p" "$GENUINE_COMPAT" "$flip"
	done
}

@test "CVE-2025-23359: a parent directory that is, or is swapped for, a link to the host (0132's fix bypassed) gets nothing written or mounted there" {
	# the published shape: the checks pass on the path's last component,
	# the write or mount goes through a directory above it that is a link
	# (or becomes one after the look): /etc (the cache, the conf.d
	# drop-in), /opt/demo/lib (the driver's links, the hook's mounts)
	mkdir -p "$HOST/etc/ld.so.conf.d"
	up=../../../../../../../../../..
	abs='rm -rf etc && ln -s "$HOST/etc" etc && mkdir -p opt/demo && ln -s "$HOST/lib" opt/demo/lib'
	climb='rm -rf etc && ln -s "'$up'$HOST/etc" etc && mkdir -p opt/demo && ln -s "'$up'$HOST/lib" opt/demo/lib'
	watch_catches "$abs" 'echo x >etc/ld.so.cache'
	watch_catches "$climb" 'touch opt/demo/lib/libdemo.so.1.0'
	for p in $PATHS; do
		for image in abs climb; do
			# (the image's /etc is nowhere in it: the cache cannot be made, the start fails)
			by "$p" "${!image}" "$PROBE"
			refute_output --partial "host mount:"
		done
	done
	# swapped between the hook's look and its write, while containers start
	etc_flip='rm -rf etc; mkdir -p etc/ld.so.conf.d; rm -rf etc; ln -s "$HOST/etc" etc; sleep 0.002'
	lib_flip='rm -rf opt/demo/lib; mkdir -p opt/demo/lib; rm -rf opt/demo/lib; ln -s "$HOST/lib" opt/demo/lib; sleep 0.002'
	for p in $RACE_PATHS; do
		race "$p" 'mkdir -p etc/ld.so.conf.d' "$etc_flip"
	done
	# the mounts' and links' directory: the prestart hook's mounts and the
	# CDI hook's links (the shim's and the plugin's mounts are the runtime's)
	for p in hook:openat2 hook:fallback cdi:openat2 cdi:fallback; do
		race "$p" 'mkdir -p opt/demo/lib' "$lib_flip"
	done
}

# hook_env_own FILE: every hook of the JSON FILE (a CDI spec, a config.json,
# NRI's adjustment) has an env of its own, PATH alone: a createContainer
# hook without one is run by runc with the container's environment
hook_env_own() {
	python3 - "$1" <<-'PY'
		import json, sys
		def hooks(o):
		    if isinstance(o, dict):
		        if "path" in o and "args" in o:
		            yield o
		        for v in o.values():
		            yield from hooks(v)
		    elif isinstance(o, list):
		        for v in o:
		            yield from hooks(v)
		found = list(hooks(json.load(open(sys.argv[1]))))
		assert found, "no hook in " + sys.argv[1]
		for h in found:
		    env = h.get("env", [])
		    assert env, "%s: a hook without env (%s): the runtime gives it the container's" % (sys.argv[1], " ".join(h["args"][:2]))
		    bad = [e for e in env if not e.startswith("PATH=")]
		    assert not bad, "%s: a hook's env carries %s" % (sys.argv[1], bad)
		PY
}

# The image of CVE-2025-23266: ENV LD_PRELOAD (and LD_LIBRARY_PATH,
# LD_AUDIT) naming a library in the image, reached as /proc/self/cwd/...
# (a createContainer hook runs in the runtime's init, whose working
# directory is the rootfs; a prestart hook's is the bundle) or anywhere the
# host's hook could open it; its constructor writes a marker on the host
evil_image() {
	printf '#include <stdio.h>\n__attribute__((constructor)) static void f(void) { FILE *m = fopen("%s/marker", "w"); if (m) fclose(m); }\n' \
		"$BATS_TEST_TMPDIR" | gcc -shared -fPIC -x c - -o "$BATS_TEST_TMPDIR/evil.so"
	PLANT='cp "$BATS_TEST_TMPDIR/evil.so" . && cp "$BATS_TEST_TMPDIR/evil.so" ..'
	EVIL="LD_PRELOAD=/proc/self/cwd/evil.so:/proc/self/cwd/rootfs/evil.so:$BATS_TEST_TMPDIR/evil.so LD_LIBRARY_PATH=/proc/self/cwd LD_AUDIT=/proc/self/cwd/evil.so"
}

@test "CVE-2025-23266: LD_PRELOAD in the image's environment never reaches a hook" {
	evil_image
	# the check can fail: a dynamic program in the hook's place, given the
	# container's environment as NVIDIA's hook was, writes the marker
	EDIT='$c->{hooks}{prestart} = [{ path => "/usr/bin/true", args => ["true"], env => [@{$c->{process}{env}}] }]' \
		ENVS=$EVIL attack openat2 "$PLANT" true
	assert_file_exists "$BATS_TEST_TMPDIR/marker"
	rm "$BATS_TEST_TMPDIR/marker"
	cdi -c "$CFG" demo >"$BATS_TEST_TMPDIR/spec.json"
	for p in $PATHS; do
		if [[ $p == cdi:* ]] && ! is_static && ! hook_env_own "$BATS_TEST_TMPDIR/spec.json" 2>/dev/null; then
			# runc gives the spec's hook the container's environment, and
			# glibc's loader of this dynamic build would take LD_PRELOAD
			echo "# $p: not replayed against the dynamically linked $OCIDEC: the CDI spec's hook has no env (issue 46, the next test)" >&3
			continue
		fi
		ENVS=$EVIL by "$p" "$PLANT" "$PROBE"
		contained
		assert_file_not_exists "$BATS_TEST_TMPDIR/marker"
		# the hooks ocidec writes carry an env of their own, nothing of the
		# container's: the shim's in config.json, the NRI plugin's answer
		case $p in
		shim:*) hook_env_own "$B/config.json" ;;
		nri:*) hook_env_own "$BATS_TEST_TMPDIR/nri.json" ;;
		esac
	done
	# whatever environment the hook is given (the container's, all of it:
	# a hook entry without env, as the CDI spec's, at createContainer), the
	# static hook loads nothing (the sanitizer build is glibc's, dynamic)
	if ! is_static; then
		echo "# $OCIDEC is dynamically linked: a hook given the container's environment is not replayed" >&3
		return 0
	fi
	for p in hook:openat2 hook:fallback cdi:openat2 cdi:fallback; do
		EDIT='for my $s (values %{$c->{hooks}}) { $_->{env} = [@{$c->{process}{env}}] for @$s }' ENVS=$EVIL \
			by "$p" "$PLANT" "$PROBE"
		contained
		assert_file_not_exists "$BATS_TEST_TMPDIR/marker"
	done
}

@test "CVE-2025-23266: the CDI spec's hooks carry an env of their own, so that the runtime hands them nothing of the container's (NVIDIA's fix)" {
	cdi -c "$CFG" demo >"$BATS_TEST_TMPDIR/spec.json"
	hook_env_own "$BATS_TEST_TMPDIR/spec.json"
	# and, whatever the build, the image's LD_PRELOAD reaches nothing
	evil_image
	for p in cdi:openat2 cdi:fallback; do
		ENVS=$EVIL by "$p" "$PLANT" "$PROBE"
		contained
		assert_file_not_exists "$BATS_TEST_TMPDIR/marker"
	done
}

# The runtime's tmpfs at /dev taken away: the image's own /dev is the one
# the nodes go into (an engine configured so, or a runtime without one)
OWN_DEV='@{$c->{mounts}} = grep { $_->{destination} ne "/dev" } @{$c->{mounts}};'

@test "CVE-2025-31133: where a device node goes, the image's link to a host path is replaced, never written, bound or chmod'ed through" {
	# runc's advisory: the container's /dev/null a link, so that runc's
	# bind of it went elsewhere. Here: the image's own /dev (no tmpfs of
	# the runtime's) holding links where ocidec binds the vendor's nodes,
	# to a host file, dangling to a host path (absolute, climbing out),
	# and a link where NVIDIA's spec chmods a directory (/dev/dri)
	mkdir -m 0700 "$HOST/dri"
	# a vendor whose node is in a directory of /dev (a GPU's render node)
	mkdir -p "$BATS_TEST_TMPDIR/dri-root/dev/dri"
	mknod -m 0666 "$BATS_TEST_TMPDIR/dri-root/dev/dri/renderD128" c 226 128
	printf '[vendor]\nname = dri\nactivation_flag = OCI_DEMO\ndriver_root = %s\ndriver_feature = base\n\n[feature.base]\ndevices = /dev/dri/renderD128\n' \
		"$BATS_TEST_TMPDIR/dri-root" | write_ini dri
	nodes='mkdir -p dev && ln -s "$HOST/file" dev/democtl && ln -s "../../../../../../../../../..$HOST/made-node" dev/demo0 &&
		ln -s "$HOST/made-node1" dev/demo1 && ln -s "$HOST/dri" dev/dri'
	watch_catches "$nodes" 'touch dev/demo0'
	watch_catches "$nodes" 'chmod 0777 dev/dri'
	watch_catches "$nodes" 'touch dev/dri/renderD128'
	# (NVIDIA's hook without the sanitizer build's leak check, which cannot
	# run in the container's PID namespace, as in test/cdi.bats)
	ln -s "$OCIDEC" "$BATS_TEST_TMPDIR/nvidia-cdi-hook"
	chmod_dri='push @{$c->{hooks}{createContainer}}, { path => "'"$BATS_TEST_TMPDIR/nvidia-cdi-hook"'",
		args => ["nvidia-cdi-hook", "chmod", "--mode", "0777", "--path", "/dev/dri"], env => ["ASAN_OPTIONS=detect_leaks=0"] };'
	# the chmod is done where it may be: the image's own directory
	EDIT="$OWN_DEV $chmod_dri" by cdi:openat2 'mkdir -p -m 0700 dev/dri' 'stat -c %a /dev/dri'
	assert_success
	assert_output 777
	for p in $PATHS; do
		EDIT="$OWN_DEV $chmod_dri" by "$p" "$nodes" 'stat -L -c "%t:%T %F" /dev/democtl /dev/demo0 /dev/demo1; stat -L -c "%t:%T" /dev/dri/renderD128 2>/dev/null || echo "no render node"'
		assert_success
		assert_line --index 0 "a:ed character special file"
		assert_line --index 1 "1:3 character special file"
		assert_line --index 2 "1:5 character special file"
		# (the render node's vendor is not in the demo vendor's CDI spec)
		if [[ $p == cdi:* ]]; then assert_line --index 3 "no render node"; else assert_line --index 3 "e2:80"; fi
	done
	# the host's /dev bound in (docker -v /dev:/dev): ocidec makes nothing
	# there and chmods nothing of it
	mkdir -p "$HOST/dev"
	mv "$HOST/dri" "$HOST/dev/dri"
	mknod -m 0666 "$HOST/dev/null" c 1 3
	mknod -m 0666 "$HOST/dev/democtl" c 10 237
	mknod -m 0666 "$HOST/dev/demo0" c 1 3
	mknod -m 0666 "$HOST/dev/demo1" c 1 5
	mknod -m 0666 "$HOST/dev/dri/renderD128" c 226 128
	hostdev='@{$c->{mounts}} = grep { $_->{destination} !~ m{^/dev} } @{$c->{mounts}};
		push @{$c->{mounts}}, { destination => "/dev", type => "bind", source => "'"$HOST/dev"'", options => ["rbind", "rw"] };'
	for p in $PATHS; do
		EDIT="$hostdev $chmod_dri" by "$p" ':' 'ls /dev'
		assert_success
		assert_line democtl
	done
}

@test "CVE-2025-52565: a node's place an image link into /proc or /sys (runc's /dev/console): the node is bound on the image's own file, nothing of procfs or sysfs covered or written" {
	# runc's advisory: /dev/console a link, so that runc's bind of the
	# console went onto a procfs file the container could then write.
	# Here: the image's own /dev, the links where ocidec binds the nodes
	# (the prestart hook's: on the other paths the runtime makes them)
	procs='mkdir -p dev && ln -s /proc/sys/kernel/core_pattern dev/democtl && ln -s /proc/sysrq-trigger dev/demo0 &&
		ln -s /sys/kernel/uevent_helper dev/demo1'
	see='stat -L -c "%t:%T %F" /dev/democtl /dev/demo0 /dev/demo1; grep -E " /(proc/sys/kernel/core_pattern|proc/sysrq-trigger|sys/kernel/uevent_helper) " /proc/self/mountinfo | sed "s/^/covered: /"'
	core=$(cat /proc/sys/kernel/core_pattern)
	# the check can fail: a hook that binds the node where the link leads
	# (inside the root, as a resolver confined to it would) covers the
	# container's procfs file, and the container sees it
	printf '#!/bin/sh\npid=$(sed -n "s/.*\\"pid\\": *\\([0-9]*\\).*/\\1/p")\nexec nsenter -t "$pid" -m mount --bind %s %s\n' \
		"$DR/dev/democtl" "$B/rootfs/proc/sys/kernel/core_pattern" >"$BATS_TEST_TMPDIR/naive-hook"
	chmod 0755 "$BATS_TEST_TMPDIR/naive-hook"
	EDIT="$OWN_DEV"' $c->{hooks}{prestart} = [{ path => "'"$BATS_TEST_TMPDIR/naive-hook"'" }]' \
		attack openat2 "$procs" "$see"
	assert_output --regexp "covered: .* /proc/sys/kernel/core_pattern "
	for p in hook:openat2 hook:fallback; do
		EDIT=$OWN_DEV by "$p" "$procs" "$see"
		assert_success
		assert_output $'a:ed character special file\n1:3 character special file\n1:5 character special file'
	done
	# and swapped in while the hook works
	for p in hook:openat2 hook:fallback; do
		EDIT=$OWN_DEV race "$p" 'mkdir -p dev' 'rm -f dev/democtl; : >dev/democtl; rm -f dev/democtl; ln -s /proc/sys/kernel/core_pattern dev/democtl'
	done
	assert_equal "$(cat /proc/sys/kernel/core_pattern)" "$core"
}

@test "CVE-2025-52881: ocidec writes nothing through the container's /proc; its view of the driver's proc directory, in a /proc shared with the host, stays the container's" {
	# runc's advisory: its writes to /proc/sys/... redirected (a racing
	# mount, a procfs shared with the host) onto other files. ocidec's only
	# doing under the container's /proc is the driver's view (proc_view: a
	# tmpfs of its own over /proc/driver/nvidia, the files written into it,
	# the container's own entries bound in); under /sys nothing (the cgroup
	# rules go to the host's /sys/fs/cgroup, by the engine's cgroup path).
	# The container's /proc here a procfs of the host's, shared, its
	# driver's directory in the watched one
	HP=$BATS_TEST_TMPDIR/hostproc
	mkdir -p "$HP" "$HOST/driver/nvidia/gpus/0000:01:00.0"
	printf 'Model: Demo\nDevice Minor: 0\nGPU UUID: GPU-aaa\n' >"$HOST/driver/nvidia/gpus/0000:01:00.0/information"
	printf 'ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 1\n' >"$HOST/driver/nvidia/params"
	mount -t proc proc "$HP"
	mount --bind "$HOST/driver" "$HP/driver"
	mount --make-rshared "$HP"
	sed -i '/^\[vendor\]/a proc_view = /proc/driver/nvidia\nproc_view_set = params ModifyDeviceFiles: 0' "$CFG/demo.ini"
	shared_proc='@{$c->{mounts}} = grep { $_->{destination} ne "/proc" } @{$c->{mounts}};
		unshift @{$c->{mounts}}, { destination => "/proc", type => "bind", source => "'"$HP"'", options => ["rbind", "rshared"] };'
	# a CDI spec's view is NVIDIA's hook's (ocidec's own specs make none;
	# the sanitizer build's leak check cannot run in the container's PID
	# namespace, as test/cdi.bats says)
	ln -s "$OCIDEC" "$BATS_TEST_TMPDIR/nvidia-cdi-hook"
	nv_view='push @{$c->{hooks}{createContainer}}, { path => "'"$BATS_TEST_TMPDIR/nvidia-cdi-hook"'",
		args => ["nvidia-cdi-hook", "disable-device-node-modification"], env => ["ASAN_OPTIONS=detect_leaks=0"] };'
	see='cat /proc/driver/nvidia/params; busybox awk '\''$5 == "/proc/driver/nvidia" { for (i = 7; $i != "-"; i++); print $6, $(i + 1) }'\'' /proc/self/mountinfo'
	# the check can fail: a hook that edits the driver's file in place, in
	# the container's /proc, writes the host's
	printf '#!/bin/sh\npid=$(sed -n "s/.*\\"pid\\": *\\([0-9]*\\).*/\\1/p")\nexec nsenter -t "$pid" -m sh -c "echo ModifyDeviceFiles: 0 >%s"\n' \
		"$B/rootfs/proc/driver/nvidia/params" >"$BATS_TEST_TMPDIR/naive-hook"
	chmod 0755 "$BATS_TEST_TMPDIR/naive-hook"
	EDIT="$shared_proc"' $c->{hooks}{prestart} = [{ path => "'"$BATS_TEST_TMPDIR/naive-hook"'" }]' attack_bundle openat2 "$see"
	attack_start openat2
	assert_output "ModifyDeviceFiles: 0"
	assert_equal "$(cat "$HOST/driver/nvidia/params")" "ModifyDeviceFiles: 0"
	printf 'ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 1\n' >"$HOST/driver/nvidia/params"
	for p in $PATHS; do
		edit=$shared_proc
		[[ $p != cdi:* ]] || edit+=$nv_view
		EDIT=$edit by "$p" ':' "$see"
		assert_success
		# the view is there, read-only, a tmpfs of its own
		assert_output $'ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 0\nro,nosuid,nodev,noexec,relatime tmpfs'
	done
}

# dev_link MODE IMAGE: IMAGE's container by attack_bundle's path, the
# watched directory first put back as it was (HOST.saved); it must then be
# as the runtime alone leaves it (RUNTIME_ALONE), the host's mounts as they
# were
dev_link() {
	local mode=$1 mounts
	attack_bundle "$mode" "$PROBE"
	(cd "$B/rootfs" && eval "$2")
	rm -rf "$HOST" && cp -a "$BATS_TEST_TMPDIR/host.saved" "$HOST"
	mounts=$(host_mounts)
	attack_start "$mode"
	assert_equal "$(fingerprint "$HOST")" "$RUNTIME_ALONE"
	assert_equal "$(host_mounts)" "$mounts"
}

@test "/dev a link in the image (to a host directory, or climbing out with ..): no node is made or bound there, nothing of the host's written" {
	abs='rmdir dev && ln -s "$HOST/sub" dev'
	climb='rmdir dev && ln -s "../../../../../../../../../..$HOST/sub" dev'
	watch_catches "$abs" 'touch dev/democtl'
	watch_catches "$climb" 'touch dev/democtl'
	cp -a "$HOST" "$BATS_TEST_TMPDIR/host.saved"
	pristine=$(fingerprint "$HOST")
	for image in abs climb; do
		# the runtime alone (no ocidec): Debian 12's runc 1.1.5 itself writes
		# its /dev links (fd, stdin, stdout, stderr, ptmx) through the image's
		# /dev link, before any hook runs; that is the runtime's, allowed for
		rm -rf "$B"
		"$FIXTURES/bundle.sh" "$B" -- true >/dev/null
		(cd "$B/rootfs" && eval "${!image}")
		run bash -c "cd '$B' && timeout 60 runc run '$ID' 2>&1"
		runc delete -f "$ID" >/dev/null 2>&1 || true
		RUNTIME_ALONE=$(fingerprint "$HOST")
		[ "$RUNTIME_ALONE" = "$pristine" ] ||
			echo "# $image: $(runc --version | head -n 1) alone wrote into the host directory: $(diff <(echo "$pristine") <(echo "$RUNTIME_ALONE") | grep '^>' | cut -d' ' -f2 | grep -v '^\.$' | tr '\n' ' ')" >&3
		for p in $PATHS; do
			via "$p" dev_link "${!image}"
			case $p in
			hook:*)
				# the prestart hook's nodes would go there: refused
				assert_failure
				assert_output --partial "/dev: leads out of the root file system or into another mount" ;;
			*)
				# the runtime makes them, in the container's own /dev
				contained ;;
			esac
		done
	done
}
