# Shared setup for the suites: bats libraries, the binary under test reached
# through symlinks named after its applets (so argv[0] dispatch always runs),
# and small builders for config directories and driver roots.
bats_require_minimum_version 1.5.0
load /usr/lib/bats/bats-support/load.bash
load /usr/lib/bats/bats-assert/load.bash
load /usr/lib/bats/bats-file/load.bash

FIXTURES=$BATS_TEST_DIRNAME/fixtures
CONF=$BATS_TEST_DIRNAME/../conf

common_setup() {
	: "${OCIDEC:?set OCIDEC to the binary under test}"
	BIN=$BATS_TEST_TMPDIR/bin
	mkdir -p "$BIN"
	# ocidec: the binary under test (as "ocidec"); `ocidec check` in a PID
	# namespace of its own, so that it sees the daemons a test starts and
	# not this machine's (it looks for a running dockerd and containerd)
	printf '#!/bin/bash\nif [ "${1:-}" = check ]; then\n\texec unshare -p -f --mount-proc bash -c %s "$@"\nfi\nexec -a ocidec "%s" "$@"\n' \
		"'exec -a ocidec \"\$0\" \"\$@\"' \"$OCIDEC\"" "$OCIDEC" >"$BIN/ocidec"
	chmod 0755 "$BIN/ocidec"
	for a in $("$OCIDEC" --list); do
		# a bare "install" would hide coreutils' (make install runs it)
		[ "$a" = install ] || ln -s "$OCIDEC" "$BIN/$a"
		ln -s "$OCIDEC" "$BIN/ocidec-$a"
	done
	PATH=$BIN:$PATH
	CFG=$BATS_TEST_TMPDIR/conf.d
	mkdir -m 0755 "$CFG"
}

# The applets, from the table the dispatcher and the Makefile read
APPLETS=$(sed -n 's/^APPLET("\([^"]*\)".*/\1/p' "$BATS_TEST_DIRNAME/../applets/applets.def")

# mounts_under DIR: the mount points at or below DIR, sorted, in the test's
# own mount namespace (the one runc and the hook start from, where a leaked
# mount would land; the host's when the suite runs there). A test compares
# only these, under its own directory: whatever else runs on the machine may
# mount and unmount elsewhere meanwhile.
mounts_under() {
	awk -v d="${1%/}" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo |
		LC_ALL=C sort
}

# podman_conf: CONTAINERS_CONF for the test's podman: no default ulimits
# (podman's fail here) and runc pinned (crun, once installed, is podman's
# choice and fails on hybrid-cgroup hosts)
podman_conf() {
	export CONTAINERS_CONF=$BATS_TEST_TMPDIR/containers.conf
	printf '[containers]\ndefault_ulimits = []\n[engine]\nruntime = "runc"\n' >"$CONTAINERS_CONF"
}

# podman_hooks DIR: a hooks.d directory DIR holding the shipped hooks.d
# file, running the binary under test with the vendors of $CFG
podman_hooks() {
	mkdir -p "$1"
	OCIDEC=$OCIDEC CFG=$CFG perl -MJSON::PP -e '
		local $/; my $h = decode_json(<STDIN>);
		$h->{hook}{path} = $ENV{OCIDEC};
		splice @{$h->{hook}{args}}, 1, 0, "-c", $ENV{CFG};
		print encode_json($h);' <"$BATS_TEST_DIRNAME/../conf/hooks.d/ocidec.json" >"$1/ocidec.json"
}

# is_static: the binary under test is the static build (not the sanitizer one)
is_static() {
	file -L "$OCIDEC" | grep -q 'statically linked'
}

# write_ini NAME: stdin becomes $CFG/NAME.ini, root-owned, mode 0644
write_ini() {
	cat >"$CFG/$1.ini"
	chmod 0644 "$CFG/$1.ini"
}

# nvidia_ini ROOT: the shipped nvidia.ini pointed at a fake driver root
# (its information files too)
nvidia_ini() {
	sed "s|^driver_root = /\$|driver_root = $1|; s|^version_file.*|version = 550.54.15|; s|^device_uuids = |device_uuids = $1|" \
		"$CONF/nvidia.ini" | write_ini nvidia
}

# mig_ini ROOT: nvidia_ini, its MIG files (mig_minors, mig_caps) those of
# the fake driver root (test/fixtures/mig-host.sh), its map ROOT/mig.map
mig_ini() {
	nvidia_ini "$1"
	sed -i "s|^mig_minors = |mig_minors = $1|; s|^mig_caps = |mig_caps = $1|; s|^mig_map = .*|mig_map = $1/mig.map|" \
		"$CFG/nvidia.ini"
}

# gpu_ini NAME DIR: the shipped NAME.ini (amd, intel, habana) pointed at
# the fake host test/fixtures/gpu-sysfs.sh made in DIR (its sysfs, its
# driver root)
gpu_ini() {
	sed "s|^driver_root = /\$|driver_root = $2/root|; /^\(pci_devices\|partition_devices\|partition_topology\)/s| /sys/| $2/sys/|g" \
		"$CONF/$1.ini" | write_ini "$1"
}

# configs DR NAME...: the shipped NAMEs with driver_root DR, into $CFG
# (platforms.bats, gated.bats)
configs() {
	local dr=$1 n
	shift
	for n in "$@"; do
		sed "s|^driver_root = /\$|driver_root = $dr|" "$CONF/$n.ini" | write_ini "$n"
	done
}

# run_container SCRIPT KEY=VALUE...: SCRIPT in a runc container (bundle $B,
# id $ID) with the hook and the vendors of $CFG
run_container() {
	local script=$1
	shift
	rm -rf "$B"
	HOOK="$OCIDEC ocidec-hook -c $CFG prestart" "$FIXTURES/bundle.sh" "$B" "$@" -- sh -c "$script" >/dev/null
	run bash -c "cd '$B' && runc run '$ID' 2>&1"
	runc delete -f "$ID" >/dev/null 2>&1 || true
}

# cdi_container SPEC SCRIPT: SCRIPT in a runc container given SPEC's device
# "all" as a CDI engine applies it (no hook)
cdi_container() {
	rm -rf "$B"
	"$FIXTURES/bundle.sh" "$B" -- sh -c "$2" >/dev/null
	"$FIXTURES/cdi-apply.py" "$1" "$B/config.json" all
	run bash -c "cd '$B' && runc run '$ID' 2>&1"
	runc delete -f "$ID" >/dev/null 2>&1 || true
}

# cdi_schemas (setup_file): REF, the CDI project's reference
# (test/fixtures/cdi-reference.sh: v0.5.2's schema and Go types), and
# CDI_SCHEMA, the newest schema as well, where a copy of CDI's schema/ is
# at hand: CDI_SCHEMA=DIR, or a checkout's sibling shared/cdi
cdi_schemas() {
	REF=$("$FIXTURES/cdi-reference.sh" "$BATS_TEST_DIRNAME/../build/test-data")
	export REF
	if [ -z "${CDI_SCHEMA:-}" ] && [ -f "$BATS_TEST_DIRNAME/../../shared/cdi/schema.json" ]; then
		CDI_SCHEMA=$(cd "$BATS_TEST_DIRNAME/../../shared/cdi" && pwd)
		export CDI_SCHEMA
	fi
}

# cdi_check_newest SPEC...: the specs against the newest schema alone
# (cdi_schemas' CDI_SCHEMA), for a spec newer than v0.5.2 knows (CDI 1.1's
# netDevices); where none is at hand (Debian's newest CDI library, 1.0.1,
# has no 1.1), said on the TAP stream and not checked
cdi_check_newest() {
	if [ -z "${CDI_SCHEMA:-}" ]; then
		echo "# no CDI schema newer than Debian's here (CDI_SCHEMA=DIR names one): $* not checked against it" >&3
		return 0
	fi
	"$FIXTURES/cdi-check.py" - "$@" --schema "$CDI_SCHEMA"
}

# cdi_check SPEC...: the specs against cdi_schemas' schema, v0.5.2's types
# and versions (and the newest schema too, where CDI_SCHEMA names it)
cdi_check() {
	"$FIXTURES/cdi-check.py" "$REF" "$@" ${CDI_SCHEMA:+--schema "$CDI_SCHEMA"}
}

# driver_root: build the fake NVIDIA driver root once per file, in $DR
driver_root() {
	DR=$BATS_FILE_TMPDIR/dr
	[ -d "$DR" ] || "$FIXTURES/driver-root.sh" "$DR" >/dev/null
}

# demo_vendor [DR [CFG]]: the demo vendor (test/fixtures/demo-vendor.sh):
# its driver root built in DR (default $DR), its INI in CFG (default $CFG);
# EXTRA, if set, adds [vendor] keys
demo_vendor() {
	"$FIXTURES/demo-vendor.sh" "${1:-$DR}" "${2:-$CFG}" >/dev/null
}

# SELinux contexts the relabel and selinux-check suites expect, and the demo
# vendor naming them: demo_vendor_with_contexts [DIR] (default: $DR set to
# $BATS_TEST_TMPDIR/dr), its INI in $CFG
DEVCTX=system_u:object_r:xserver_misc_device_t:s0
FILECTX=system_u:object_r:container_ro_file_t:s0
demo_vendor_with_contexts() {
	local dir=${1:-$BATS_TEST_TMPDIR/dr}
	[ $# -gt 0 ] || DR=$dir
	EXTRA="selinux_device_context = $DEVCTX
selinux_file_context = $FILECTX" demo_vendor "$dir"
}

# DEMO_SEE: what a container given the demo vendor sees (the program through
# the cache, the devices, the read-only mounts, the control device opening);
# DEMO_SEEN_ALL: its output for OCI_DEMO=all (test/fixtures/demo-vendor.sh)
DEMO_SEE='demo-tool; ls /dev | grep demo; grep -E " /(usr/bin/demo-tool|opt/demo/lib/libdemo.so.1.0|etc/demo/demo.conf) " /proc/self/mountinfo | cut -d" " -f5,6; head -c 0 /dev/democtl && echo opened'
DEMO_SEEN_ALL="demo-tool: the answer is 42
demo0
demo1
democtl
/usr/bin/demo-tool ro,nosuid,nodev,relatime
/opt/demo/lib/libdemo.so.1.0 ro,nosuid,nodev,relatime
/etc/demo/demo.conf ro,nosuid,nodev,relatime
opened"

# wait_until [-t SEC] CMD...: run CMD (a shell command line) every 0.1 s
# until it succeeds, at most SEC seconds (default 10); its status (1: it
# never did)
wait_until() {
	local i n=100
	if [ "$1" = -t ]; then
		n=$(($2 * 10))
		shift 2
	fi
	for i in $(seq "$n"); do
		eval "$*" && return 0
		sleep 0.1
	done
	return 1
}

# dry ENV...: the hook's --dry-run (vendors in $CFG) on a config.json in
# bundle $B with these env entries (and $CAPS as the bounding set, $ANN as
# annotations JSON, $MOUNTS as destinations of /dev/null bind mounts: a
# device plugin's list)
dry() {
	mkdir -p "$B/rootfs"
	ENVS=$(printf '%s\037' "$@") perl -MJSON::PP -e '
		my @env = grep { length } split /\037/, $ENV{ENVS};
		my @caps = split / /, ($ENV{CAPS} // "");
		my @mounts = map { { destination => $_, type => "bind", source => "/dev/null", options => ["bind"] } }
			split / /, ($ENV{MOUNTS} // "");
		print encode_json({ ociVersion => "1.0.2", root => { path => "rootfs" }, mounts => \@mounts,
			process => { env => \@env, capabilities => { bounding => \@caps } },
			linux => { namespaces => [ { type => "mount" }, ($ENV{USERNS} ? { type => "user" } : ()) ] },
			annotations => decode_json($ENV{ANN} // "{}") });' >"$B/config.json"
	${TRACE:+env ASAN_OPTIONS=detect_leaks=0 strace -f -qq -s 512 -e trace=write,writev -o "$TRACE"} \
		"$OCIDEC" hook -c "$CFG" --dry-run ${LOG:+--log "$LOG"} <<<"{\"bundle\": \"$B\", \"pid\": ${DRYPID:-$$}}"
}

# pivot_bed ROOTFS FAKE: a "container" for the proc view: ROOTFS as / of a
# private mount and PID namespace, a procfs with FAKE (a driver's proc
# files) over its /proc/driver; its process (busybox sleep, the init of
# its PID namespace: only SIGKILL ends it) in $PID
pivot_bed() {
	unshare -m -p --fork --propagation private sh -c '
		mount --bind "$1" "$1"; mount -t proc proc "$1/proc"; mount --bind "$2" "$1/proc/driver"
		cd "$1" && mkdir -p .old && pivot_root . .old &&
			exec /bin/busybox sh -c "/bin/busybox umount -l /.old; exec /bin/busybox sleep 600"' sh "$1" "$2" \
		</dev/null >/dev/null 2>&1 3>&- &
	PID=
	wait_until 'PID=$(pgrep -P $! | head -n 1); [ -n "$PID" ] &&
		[ "$(tr "\\0" " " <"/proc/$PID/cmdline" 2>/dev/null)" = "/bin/busybox sleep 600 " ]'
}

# inside CMD...: CMD in pivot_bed's "container"
inside() { nsenter -t "$PID" -m -p -- "$@"; }

# The Debian 13 bed's engines (test/fixtures/bed.sh): engines.bats, nri.bats.
# bed DIR CMD...: CMD in the bed
bed() {
	local d=$1
	shift
	timeout 300 "$FIXTURES/bed.sh" exec "$d" "$@"
}

# pod DIR ARGS...: test/fixtures/cri.py run against the bed's containerd
pod() {
	local d=$1
	shift
	timeout 300 /usr/bin/python3 "$FIXTURES/cri.py" run "$d/ctrd/ctrd.sock" --logs "$d/logs" --daemon-log "$d/containerd.log" "$@"
}

# containerd_start DIR: containerd 1.7 as a node runs it (/etc/containerd/config.toml)
# containerd_config DIR: the bed's containerd's own settings, the CRI
# plugin's table last (restrict_oom_score_adj: this machine has no
# CAP_SYS_RESOURCE; disable_cgroup on cgroup2 only: the controllers are
# this host's v1 hierarchies')
containerd_config() {
	local d=$1
	mkdir -p "$d/ctrd" "$d/logs"
	cat <<-EOF
	version = 2
	root = "$d/ctrd/root"
	state = "$d/ctrd/state"
	[grpc]
	  address = "$d/ctrd/ctrd.sock"
	[plugins."io.containerd.grpc.v1.cri"]
	  sandbox_image = "docker.io/library/ocidec-test:1"
	  restrict_oom_score_adj = true
	  disable_cgroup = $([ "$d" = "${V2:-}" ] && echo true || echo false)
	EOF
}

# containerd3_config DIR [SUFFIX]: the same for containerd 2.x (config
# version 3; its state in DIR/ctrd/rootSUFFIX, stateSUFFIX: apart from 1.7's
# in a bed that runs both)
containerd3_config() {
	"$FIXTURES/containerd3-config.sh" "$@"
}

containerd_start() {
	local d=$1
	bed "$d" sh -c "exec containerd >$d/containerd.log 2>&1" &
	wait_until -t 30 'bed "$d" ctr -a "$d/ctrd/ctrd.sock" version >/dev/null 2>&1' && return 0
	echo "containerd did not come up: $(tail -n 5 "$d/containerd.log")" >&2
	return 1
}

containerd_stop() {
	local d=$1
	bed "$d" sh -c 'pkill -x containerd || exit 0; for i in $(seq 100); do pgrep -x containerd >/dev/null || exit 0; sleep 0.1; done'
	# its pods' shims go with the bed; the ones of this test are stopped by cri.py
}

# containerd 2.x (Debian unstable's, test/fixtures/containerd2.sh) in the
# bed D's /usr/local/bin, where upstream's release goes (first on PATH, so
# containerd, its shim and ctr are 2.x's); teardown takes it out again
containerd2_in() {
	local c2 rc=0
	c2=$("$FIXTURES/containerd2.sh") || rc=$?
	[ "$rc" -ne 3 ] || skip "Debian's unstable archive has no containerd 2.x"
	[ "$rc" -eq 0 ]
	C2_BED=$1
	cp "$c2/usr/bin/containerd" "$c2/usr/bin/containerd-shim-runc-v2" "$c2/usr/bin/ctr" "$1/root/usr/local/bin/"
}

# containerd2_out: what containerd2_in put in the bed taken out (teardown)
containerd2_out() {
	[ -n "${C2_BED:-}" ] || return 0
	containerd_stop "$C2_BED"
	rm -f "$C2_BED/root/usr/local/bin/containerd" "$C2_BED/root/usr/local/bin/containerd-shim-runc-v2" \
		"$C2_BED/root/usr/local/bin/ctr"
	C2_BED=
}

# ---- hostile images (test/hostile.bats, test/advisories.bats) ----
# A suite's setup gives HOST (a host directory the image points at: watched),
# B (the bundle), ID (the container) and CFG (the demo vendor's).

# fingerprint DIR: the names, types, link texts, sizes and modes under DIR,
# and its files' contents
fingerprint() {
	(cd "$1" && find . -printf '%p %y %l %s %m\n' | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}

# the host's mount points under this test's own directory
host_mounts() { mounts_under "$BATS_TEST_TMPDIR"; }

# edit_config PERL: run PERL on the bundle's config.json, decoded as $c
edit_config() {
	(cd "$B" && CODE=$1 perl -MJSON::PP -e '
		local $/; open my $f, "<", "config.json" or die; my $c = decode_json(<$f>); close $f;
		eval $ENV{CODE}; die $@ if $@;
		open $f, ">", "config.json" or die; print $f JSON::PP->new->canonical->pretty->encode($c);')
}

# attack MODE PREPARE [SCRIPT]: a fresh bundle, PREPARE run in its rootfs
# (cwd; $B is the bundle, EDIT a perl edit of config.json, HOOK_ARGS more
# hook options), the container started with OCI_DEMO=all (ENVS: more);
# sets $status/$output. Asserts the host directory and the host's mounts
# did not change.
#
# CDI_STAGE=createContainer|prestart: the container gets demo=all through
# its CDI spec instead (ocidec cdi, applied as an engine applies it), the
# spec's hook at that stage.
# VIA=shim: started by the runtime shim (ocidec runtime, then runc; MODE
# fallback: its hook given --resolver fallback by test/fixtures/runc-resolver.sh
# as the real runtime). VIA=nri: the container's edits are the NRI plugin's
# answer (ocidec nri, asked by the stand-in runtime, the bundle mode of
# test/fixtures/nri-runtime.py, applied to config.json as containerd
# applies it: the adjustment in $BATS_TEST_TMPDIR/nri.json, the plugin's
# log nri.log), then runc.
attack() {
	local mode=$1 prepare=$2 script=${3:-demo-tool}
	attack_bundle "$mode" "$script"
	(cd "$B/rootfs" && eval "$prepare")
	local before mounts
	before=$(fingerprint "$HOST")
	mounts=$(host_mounts)
	attack_start "$mode"
	assert_equal "$(fingerprint "$HOST")" "$before"
	assert_equal "$(host_mounts)" "$mounts"
}

# attack_bundle MODE SCRIPT: attack's fresh bundle, SCRIPT its process,
# the edits (CDI's, the hook's) as CDI_STAGE and VIA say, EDIT done
attack_bundle() {
	local mode=$1 script=$2
	rm -rf "$B"
	if [ -n "${CDI_STAGE:-}" ]; then
		"$FIXTURES/bundle.sh" "$B" ${ENVS:-} -- sh -c "$script" >/dev/null
		cdi -c "$CFG" demo | sed "s/\"createContainer\"/\"$CDI_STAGE\"/" >"$BATS_TEST_TMPDIR/spec.json"
		# shellcheck disable=SC2086
		"$FIXTURES/cdi-apply.py" "$BATS_TEST_TMPDIR/spec.json" "$B/config.json" all \
			--hook-args --resolver "$mode" ${HOOK_ARGS:-}
	elif [ -n "${VIA:-}" ]; then
		"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all ${ENVS:-} -- sh -c "$script" >/dev/null
	else
		HOOK="$OCIDEC ocidec-hook -c $CFG --resolver $mode ${HOOK_ARGS:-}prestart" \
			"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all ${ENVS:-} -- sh -c "$script" >/dev/null
	fi
	[ -z "${EDIT:-}" ] || edit_config "$EDIT"
	# the shim and the plugin's runtime edit it: each start from this one
	cp "$B/config.json" "$B/config.json.orig"
}

# attack_start MODE: attack_bundle's container started (and deleted) by
# VIA's path (the shim's and the plugin's from attack_bundle's config.json);
# sets $status/$output
# hook_path_copy: a path of the binary under test that ocidec nri takes for
# its cache hook (--hook-path: every directory up to / root's alone, as a
# runtime will run it as root): $OCIDEC itself where it is such (a checkout
# under /root, /work), else a copy in a directory of its own under /run
# (a checkout under /tmp), which the caller removes
hook_path_copy() {
	local d=$OCIDEC
	while d=$(dirname "$d") && [ -n "$(find "$d" -maxdepth 0 -user 0 ! -perm /022)" ]; do
		[ "$d" != / ] || { echo "$OCIDEC"; return; }
	done
	d=$(mktemp -d /run/ocidec-hook.XXXXXX)
	cp "$OCIDEC" "$d/ocidec"
	echo "$d/ocidec"
}

attack_start() {
	local mode=$1
	[ -z "${VIA:-}" ] || cp "$B/config.json.orig" "$B/config.json"
	case ${VIA:-} in
	shim)
		printf '[runtime]\npath = %s\n' "$FIXTURES/runc-resolver.sh" >"$CFG/runtime.conf"
		chmod 0644 "$CFG/runtime.conf"
		run bash -c "cd '$B' && OCIDEC_TEST_RESOLVER=$mode timeout 60 ocidec-runtime --ocidec-config-dir '$CFG' run --bundle '$B' '$ID' 2>&1"
		rm -f "$CFG/runtime.conf" ;;
	nri)
		local hp
		hp=$(hook_path_copy)
		# shellcheck disable=SC2086
		run bash -c "NRI_RUNTIME_PROTO='$BATS_FILE_TMPDIR/nri-proto' timeout 60 '$FIXTURES/nri-runtime.py' bundle '$BATS_TEST_TMPDIR/nri.sock' '$B/config.json' \
				--hook-args --resolver $mode ${HOOK_ARGS:-} -- sh -c 'exec \"\$@\" 2>>\"$BATS_TEST_TMPDIR/nri.log\"' sh \
				'$OCIDEC' nri -c '$CFG' --socket '$BATS_TEST_TMPDIR/nri.sock' --name 'test-$$-$BATS_TEST_NUMBER' \
				--hook-path '$hp' >'$BATS_TEST_TMPDIR/nri.json' && cd '$B' && timeout 60 runc run '$ID' 2>&1"
		[ "$hp" = "$OCIDEC" ] || rm -rf "${hp%/*}" ;;
	*)
		run bash -c "cd '$B' && timeout 60 runc run '$ID' 2>&1" ;;
	esac
	runc delete -f "$ID" >/dev/null 2>&1 || true
}

# watch_catches PREPARE WRITE: the check of attack can fail: the image
# PREPARE makes (a bundle's rootfs, no container), and WRITE run in that
# rootfs from the host, as a tool that follows the image's links there
# would (touch, cp, mkdir through them), changes the watched host directory
# (which is then put back as it was)
watch_catches() {
	local before
	rm -rf "$B"
	"$FIXTURES/bundle.sh" "$B" -- true >/dev/null
	(cd "$B/rootfs" && eval "$1")
	rm -rf "$BATS_TEST_TMPDIR/host.saved"
	cp -a "$HOST" "$BATS_TEST_TMPDIR/host.saved"
	before=$(fingerprint "$HOST")
	(cd "$B/rootfs" && eval "$2") || true
	[ "$(fingerprint "$HOST")" != "$before" ] || fail "the naive write ($2) did not reach the watched directory: the image ($1) attacks nothing there"
	rm -rf "$HOST"
	mv "$BATS_TEST_TMPDIR/host.saved" "$HOST"
}

# refused_by_hook_and_shim SHIM_TEXT HOOK_ASSERT...: the bundle $B's
# config.json refused by the hook's dry run (its line matching
# assert_output HOOK_ASSERT...) and by the runtime shim (its output holding
# SHIM_TEXT); $ID the shim's container, $CFG the vendors
refused_by_hook_and_shim() {
	local shim_text=$1
	shift
	run hook -c "$CFG" --dry-run <<<"{\"bundle\": \"$B\"}"
	assert_failure
	assert_output "$@"
	run ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/rr" run --bundle "$B" "$ID"
	assert_failure
	assert_output --partial "$shim_text"
}

# ---- ocidec nri in a bed (test/nri.bats, test/nri-closed.bats) ----

# nri_start DIR [ARGS...]: ocidec nri in the bed, its pid (the bed's) in
# DIR/nri.pid, its log DIR/nri.log; waits until a runtime took it
nri_start() {
	local d=$1
	shift
	rm -f "$d/nri.pid"
	bed "$d" sh -c 'echo $$ >"$0/nri.pid"; exec ocidec nri "$@" >>"$0/nri.log" 2>&1' "$d" "$@" &
	wait_until -t 10 '[ -s "$d/nri.pid" ]'
}

nri_stop() {
	local d=$1 hp
	[ -s "$d/nri.pid" ] || return 0
	# (one a test froze: thawed, with the nsenter that stopped with it)
	if hp=$(host_pid "$d" "$(cat "$d/nri.pid")"); then
		kill -CONT "$(awk '/^PPid:/ { print $2 }' "/proc/$hp/status")" "$hp" 2>/dev/null || true
	fi
	bed "$d" sh -c 'kill "$1"; while kill -0 "$1" 2>/dev/null; do sleep 0.1; done' sh "$(cat "$d/nri.pid")" || true
	rm -f "$d/nri.pid"
}

# host_pid DIR PID: this host's pid of the bed's process PID
host_pid() {
	local ns p
	ns=$(readlink "/proc/$(cat "$1/anchor.pid")/ns/pid")
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] &&
			[ "$(awk '/^NSpid:/ { print $NF }' "$p/status" 2>/dev/null)" = "$2" ] && { echo "${p#/proc/}"; return 0; }
	done
	return 1
}

# nri_group_only DIR on|off: the demo's demo1 (DIR/dr/dev/demo1) a node of
# group 44 only (0660, as a render node; before the plugin starts: its CDI
# spec then has it), or back as demo-vendor.sh makes it
nri_group_only() {
	if [ "$2" = on ]; then
		chgrp 44 "$1/dr/dev/demo1" && chmod 0660 "$1/dr/dev/demo1"
	elif [ -e "$1/dr/dev/demo1" ]; then
		chgrp 0 "$1/dr/dev/demo1" && chmod 0666 "$1/dr/dev/demo1"
	fi
}

# nri_group_pods DIR POD [OWNER]: pods that POD (pod, crio_pod) runs asking
# for demo1 (nri_group_only on): run as uid 1000 and gid 1000 (kubelet's
# runAsUser, runAsGroup) the container has the node (group 44, 0660) and
# cannot open it; with supplementalGroups 44, or runAsGroup 44, it opens
# it; as root it opens it. OWNER "cdi": the node comes from a CDI spec (no
# uid in it: CDI makes it the process's), which the process opens as its
# owner, without the group. Each one's groups (id -G) to the TAP output.
nri_group_pods() {
	local d=$1 pod=$2 ids first=denied see='id -G; stat -c "%a %g" /dev/demo1; head -c 0 /dev/demo1 2>/dev/null && echo opened || echo denied'
	[ "${3:-}" = cdi ] && first=opened
	for ids in "1000 1000 $first" "1000 1000 44 opened" "1000 44 opened" "0 0 opened"; do
		set -- $ids
		local args=(--run-as-user "$1" --run-as-group "$2")
		[ $# -eq 4 ] && args+=(--supplemental-group "$3")
		run "$pod" "$d" "${args[@]}" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c "$see"
		assert_success
		assert_line --index 1 '660 44'
		assert_line --index 2 "${!#}"
		echo "# uid $1 gid $2${4:+ supplementalGroups $3}: groups $(head -n 1 <<<"$output"), /dev/demo1 ${!#}" >&3
	done
}

# nri_registered DIR N: the plugin's log says it registered N times
nri_registered() {
	[ "$(grep -c '^ocidec nri: info: registered with containerd' "$1/nri.log")" -ge "$2" ]
}
