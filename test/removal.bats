#!/usr/bin/env bats
# The package's removal on a node whose systemd runs Docker 26 and
# containerd 1.7 with ocidec their default runtime (issue 47): the deb
# (dpkg -r, its prerm) and the rpm (rpm -e, its %preun) run
# conf/package/remove.sh for real; every docker run and every CRI pod must
# still start after it, and after the purge no engine's configuration names
# ocidec. In the Debian 13 bed (test/fixtures/bed.sh) booted by systemd,
# with the packages `make deb` and `make rpm` build from this checkout
# (built here when missing or older than the sources; OCIDEC_DEB=FILE,
# OCIDEC_RPM=FILE test others) installed by their package managers, not by
# make install: the bed's make-install files are taken out first. The
# rpm's database is one of its own in the same bed (Debian 13's rpm, its
# .debs fetched once into build/test-data). Once, in the static build's
# pass (the packages build their own binary).

load helpers

TOP=$BATS_TEST_DIRNAME/..

# stale FILE: FILE missing, or older than a source the packages are built from
stale() {
	[ ! -e "$1" ] || [ -n "$(find "$TOP/ocidec.c" "$TOP/base" "$TOP/safety" "$TOP/formats" "$TOP/devices" "$TOP/pipeline" "$TOP/engines" "$TOP/applets" "$TOP/conf" "$TOP/man" "$TOP/deb" \
		"$TOP/rpm" "$TOP/Makefile" "$TOP/VERSION" -newer "$1" -print -quit)" ]
}

setup_file() {
	is_static || return 0
	export SD DEB RPM DEBLOG RPMLOG RPMDEBS
	local version d f
	version=$(cat "$TOP/VERSION")
	DEB=${OCIDEC_DEB:-$TOP/build/deb/ocidec_${version}_$(dpkg --print-architecture).deb}
	RPM=${OCIDEC_RPM:-$TOP/build/rpm/RPMS/$(uname -m)/ocidec-$version-1.$(uname -m).rpm}
	DEBLOG=$BATS_FILE_TMPDIR/deb.log RPMLOG=$BATS_FILE_TMPDIR/rpm.log
	if [ -z "${OCIDEC_DEB:-}" ] && command -v dpkg-buildpackage >/dev/null && stale "$DEB"; then
		make -C "$TOP" deb >"$DEBLOG" 2>&1 || echo "make deb failed" >>"$DEBLOG"
	fi
	if [ -z "${OCIDEC_RPM:-}" ] && command -v rpmbuild >/dev/null && stale "$RPM"; then
		make -C "$TOP" rpm >"$RPMLOG" 2>&1 || echo "make rpm failed" >>"$RPMLOG"
	fi
	[ -e "$DEB" ] || [ -e "$RPM" ] || return 0   # (no package: each test skips)
	# (no "ocidec" in the bed's path: the engines' files name it, and the
	# test looks for that name in them)
	SD=$(mktemp -d /tmp/removal-bed.XXXXXX)
	d=$SD
	mkdir -p "$d/pkg"
	for f in "$DEB" "$RPM"; do
		[ ! -e "$f" ] || cp "$f" "$d/pkg/"
	done
	"$BATS_TEST_DIRNAME/fixtures/cri-proto.sh" >/dev/null
	"$BATS_TEST_DIRNAME/fixtures/bed-setup.sh" "$d" systemd "$OCIDEC"
	# Debian 13's rpm for the rpm's test: its .debs as the bed's apt picks
	# them, fetched once for this bed's package set (none fetched: skipped)
	RPMDEBS=$TOP/build/test-data/trixie-rpm-$(md5sum <"$d/root/var/lib/dpkg/status" | cut -c1-8)
	if [ ! -e "$RPMDEBS/.complete" ]; then
		rm -rf "$RPMDEBS" "$d/root/var/cache/apt/archives/"*.deb
		unshare -m --propagation private sh -c 'mount --rbind /proc "$0/proc" && exec chroot "$0" sh -c "
			export DEBIAN_FRONTEND=noninteractive
			apt-get update -qq && apt-get install -y -qq --no-install-recommends --download-only rpm"' \
			"$d/root" >"$BATS_FILE_TMPDIR/rpm-debs.log" 2>&1 &&
			mkdir -p "$RPMDEBS" && mv "$d/root/var/cache/apt/archives/"*.deb "$RPMDEBS/" && touch "$RPMDEBS/.complete"
	fi
	# bed-setup.sh's make install taken out (make uninstall with its
	# variables), and the CDI spec it wrote: the package is the only ocidec
	# here; the demo vendor's config stays (the administrator's)
	make -s -C "$TOP" uninstall DESTDIR="$d/root" PREFIX=/usr >/dev/null
	rm -f "$d/root/etc/cdi/ocidec.io-demo.json"
	# the node: images for Docker and the CRI (the pod sandbox's too), and
	# its own engine configuration
	/usr/bin/python3 "$FIXTURES/cri.py" image "$d/b/rootfs" "$d/node-image.tar" docker.io/library/node-test:1 -- \
		sh -c 'trap "exit 0" TERM; while :; do sleep 1; done'
	mkdir -p "$d/node" "$d/ctrd" "$d/logs" "$d/docker"
	# containerd on its default socket (Docker's too); disable_cgroup: on
	# a hybrid host the bed's cgroup2 has no controllers (they are v1's)
	cat >"$d/node/config.toml" <<-EOF
	version = 2
	root = "$d/ctrd/root"
	state = "$d/ctrd/state"
	[plugins."io.containerd.grpc.v1.cri"]
	  sandbox_image = "docker.io/library/node-test:1"
	  restrict_oom_score_adj = true
	  disable_cgroup = true
	EOF
	cat >"$d/node/daemon.json" <<-EOF
	{
	    "data-root": "$d/docker/data",
	    "bridge": "none",
	    "iptables": false,
	    "ip-forward": false,
	    "log-level": "warn"
	}
	EOF
	# the bed's Debian units for containerd and Docker (masked by
	# bed-setup.sh) run as a node runs them (a negative OOMScoreAdjust
	# needs CAP_SYS_RESOURCE, which this machine refuses)
	for f in containerd.service docker.service docker.socket; do rm -f "$d/root/etc/systemd/system/$f"; done
	for f in containerd docker; do
		mkdir -p "$d/root/etc/systemd/system/$f.service.d"
		printf '[Service]\nOOMScoreAdjust=0\n' >"$d/root/etc/systemd/system/$f.service.d/bed.conf"
	done
	cp "$d/node/config.toml" "$d/root/etc/containerd/config.toml"
	cp "$d/node/daemon.json" "$d/root/etc/docker/daemon.json"
	bed "$d" systemctl daemon-reload
	bed "$d" systemctl start containerd.service docker.service
	bed "$d" sh -c "ctr -n k8s.io images import $d/node-image.tar && tar -C $d/b/rootfs -c . | docker import - node-test:1" >/dev/null
}

teardown_file() {
	[ -n "${SD:-}" ] || return 0
	"$BATS_TEST_DIRNAME/fixtures/bed.sh" stop "$SD"
	rm -rf "$SD"
}

setup() {
	common_setup
	is_static || skip "the packages are built and removed once, in the static build's pass"
}

SEE='demo-tool; ls /dev | grep demo; head -c 0 /dev/democtl && echo opened'
# what a container sees that asked for the demo vendor with ocidec gone
NOTHING='echo started; ls /dev | grep -c demo; command -v demo-tool; exit 0'

# exits CMD...: CMD's output, then its exit status as a line "exit N" (a
# container that does not start is its engine's error and that line: no
# bats warning for docker's 127, a runtime binary gone)
exits() {
	local rc=0
	"$@" || rc=$?
	echo "exit $rc"
}

# node_pod ARGS...: test/fixtures/cri.py run against the bed's containerd
# on its default socket (reached through the bed's root)
node_pod() {
	timeout 300 /usr/bin/python3 "$FIXTURES/cri.py" run "/proc/$(cat "$SD/anchor.pid")/root/run/containerd/containerd.sock" \
		--logs "$SD/logs" "$@"
}

# leftovers: what of ocidec is in the bed's root: files named after it
# (the demo vendor's config, the administrator's, aside) and the engines'
# files, CDI specs, hooks.d files and units that name it
leftovers() {
	local r=$SD/root
	find "$r" -xdev \( -name '*ocidec*' -o -lname '*ocidec*' \) ! -path "$r/etc/ocidec" ! -path "$r/etc/ocidec/ocidec.d" \
		! -path "$r/var/lib/apt/*" ! -path "$r/var/cache/apt/*" -printf '/%P\n'
	[ ! -e "$r/usr/local/bin/nvidia-container-runtime-hook" ] || echo /usr/local/bin/nvidia-container-runtime-hook
	bed "$SD" sh -c 'grep -rl ocidec /etc/docker /etc/containerd /etc/cdi /var/run/cdi /usr/share/containers/oci/hooks.d \
		/etc/containers/oci/hooks.d /etc/systemd/system 2>/dev/null; exit 0'
}

# node_fresh: the node as it was before ocidec came (what an earlier test
# that failed half-way left taken out): no package of ocidec, the node's
# own daemon.json and config.toml, docker and containerd restarted on them
node_fresh() {
	local d=$SD
	if [ -n "$(leftovers)" ]; then
		bed "$d" sh -c 'dpkg --purge ocidec; ! command -v rpm || rpm --dbpath /var/lib/rpm -e --noscripts ocidec
			systemctl disable --now ocidec-cdi-refresh.path ocidec-cdi-refresh.service; rm -rf /var/lib/ocidec /etc/containerd/conf.d
			rm -f /usr/local/bin/nvidia-container-runtime-hook /etc/docker/*.ocidec-orig /etc/containerd/*.ocidec-orig /var/run/cdi/*ocidec*' \
			>/dev/null 2>&1 || true
		bed "$d" systemctl daemon-reload
	fi
	cp "$d/node/config.toml" "$d/root/etc/containerd/config.toml"
	cp "$d/node/daemon.json" "$d/root/etc/docker/daemon.json"
	bed "$d" systemctl reset-failed containerd.service docker.service
	bed "$d" systemctl restart containerd.service docker.service
	run leftovers
	assert_output ""
	run bed "$d" docker info --format '{{.DefaultRuntime}}'
	assert_output runc
}

# registered: ocidec install as issue 47 has it, with the running engines
# made to read it; docker run without --runtime and pods without a runtime
# handler get the demo vendor's devices (by its variable, by CDI)
registered() {
	local d=$SD
	run bed "$d" ocidec install --runtime docker,containerd --set-as-default --enable-cdi --restart
	assert_success
	assert_line "ocidec install: restarted dockerd (systemctl restart docker.service)"
	assert_line "ocidec install: restarted containerd (systemctl restart containerd.service)"
	run bed "$d" docker info --format '{{.DefaultRuntime}}'
	assert_output ocidec
	run bed "$d" docker run --rm --network none -e OCI_DEMO=all node-test:1 sh -c "$SEE"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
	run bed "$d" docker run --rm --network none --device ocidec.io/demo=1 node-test:1 sh -c "$SEE"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl\nopened'
	run node_pod --env OCI_DEMO=all docker.io/library/node-test:1 sh -c "$SEE"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
	run node_pod --cdi ocidec.io/demo=0 docker.io/library/node-test:1 sh -c "$SEE"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemoctl\nopened'
}

# removed: the removal's output (in $output) says what it gave back; the
# engines' files are the node's own again, byte for byte (remove.sh: ocidec
# install --uninstall); docker run and pods, asking for the vendor or not,
# start and get nothing; Docker's default runtime is runc again; both
# daemons up
removed() {
	local d=$SD
	[ -n "$output" ] || fail "the removal printed nothing: remove.sh did not run, or did nothing"
	assert_line --regexp "^ocidec: stopped (and disabled )?ocidec-cdi-refresh.path$"
	assert_line "restored /etc/docker/daemon.json"
	assert_line "restored /etc/containerd/config.toml"
	assert_line "removed /etc/containerd/conf.d/ocidec.toml"
	assert_line "removed /usr/local/bin/nvidia-container-runtime-hook"
	# restarted, not reloaded: on SIGHUP dockerd keeps a default runtime
	# daemon.json no longer names (ocidec-runtime, about to be gone)
	assert_line "ocidec install: restarted dockerd (systemctl restart docker.service)"
	assert_line "ocidec install: restarted containerd (systemctl restart containerd.service)"
	assert_line "ocidec: removed /var/run/cdi/ocidec.io-demo.json"
	cmp "$d/node/daemon.json" "$d/root/etc/docker/daemon.json"
	cmp "$d/node/config.toml" "$d/root/etc/containerd/config.toml"
	[ ! -e "$d/root/usr/bin/ocidec" ]
	for args in "" "-e OCI_DEMO=all"; do
		# shellcheck disable=SC2086
		run exits bed "$d" docker run --rm --network none $args node-test:1 sh -c "$NOTHING"
		assert_output $'started\n0\nexit 0'
	done
	run bed "$d" docker info --format '{{.DefaultRuntime}}'
	assert_output runc
	for args in "" "--env OCI_DEMO=all"; do
		# shellcheck disable=SC2086
		run exits node_pod $args docker.io/library/node-test:1 sh -c "$NOTHING"
		assert_output $'started\n0\nexit 0'
	done
	run bed "$d" systemctl is-active containerd.service docker.service
	assert_output $'active\nactive'
}

@test "the deb, removed on a node whose systemd runs Docker 26 and containerd with ocidec their default runtime: dpkg -i, ocidec install --set-as-default --enable-cdi --restart, containers get the devices; dpkg -r (its prerm) gives daemon.json and config.toml back byte for byte and every docker run and CRI pod still starts, Docker's default runtime runc; after dpkg --purge nothing names ocidec, both daemons up (issue 47)" {
	! grep -q "make deb failed" "$DEBLOG" 2>/dev/null || fail "make deb failed: $(tail -n 20 "$DEBLOG")"
	[ -e "$DEB" ] || skip "no deb to test: make deb needs dpkg-buildpackage"
	node_fresh
	run bed "$SD" dpkg -i "$SD/pkg/$(basename "$DEB")"
	assert_success
	# (its postinst enabled and started the CDI refresh: the specs that
	# CDI requests below name)
	run bed "$SD" systemctl is-enabled ocidec-cdi-refresh.path
	assert_output enabled
	registered
	# a container running through ocidec's runtime (Docker's default now):
	# the removal refuses, nothing changed, until it is stopped (its shim
	# would call the runtime gone for its kill and delete)
	bed "$SD" docker run -d --network none --name busy node-test:1 sh -c 'sleep 600' >/dev/null
	cp "$SD/root/etc/docker/daemon.json" "$SD/registered.json"
	run bed "$SD" dpkg -r ocidec
	assert_failure
	assert_output --regexp "ocidec: containers run through ocidec's runtime \(containerd namespace/id: moby/[0-9a-f]{64}; crictl pods --id, docker ps name them\): with it removed, neither Docker nor containerd nor kubelet could stop or delete them"
	cmp "$SD/registered.json" "$SD/root/etc/docker/daemon.json"
	run bed "$SD" dpkg-query -W -f '${db:Status-Status}' ocidec
	assert_output installed
	bed "$SD" docker rm -f busy >/dev/null
	# a user's process named as a shim, in a directory of its own naming
	# ocidec's runtime (a FIFO there would hang a reader): no hold on the
	# removal (review of issue 47)
	bed "$SD" sh -c 'mkdir -p /tmp/evil && cp /bin/sleep /tmp/evil/containerd-shim && mkfifo /tmp/evil/runtime &&
		chown -R nobody /tmp/evil && systemd-run -q --unit ocidec-test-evil -p User=nobody -p WorkingDirectory=/tmp/evil \
		/tmp/evil/containerd-shim 600'
	run bed "$SD" timeout 120 dpkg -r ocidec
	bed "$SD" sh -c 'systemctl stop ocidec-test-evil; rm -rf /tmp/evil'
	assert_success
	echo "# dpkg -r ocidec: $(grep -E '^ocidec: (reloaded|restarted)' <<<"$output" | paste -sd ';')" >&3
	# the deb's units stopped, their enablement left to dpkg (masked while
	# removed, as they were on a reinstall)
	assert_line "ocidec: stopped ocidec-cdi-refresh.path"
	removed
	run bed "$SD" dpkg -i "$SD/pkg/$(basename "$DEB")"
	assert_success
	run bed "$SD" systemctl is-enabled ocidec-cdi-refresh.path
	assert_output enabled
	run bed "$SD" dpkg -r ocidec
	assert_success
	run bed "$SD" dpkg --purge ocidec
	assert_success
	run bed "$SD" dpkg-query -W ocidec
	assert_failure
	run leftovers
	assert_output ""
	run bed "$SD" systemctl is-active containerd.service docker.service
	assert_output $'active\nactive'
}

@test "the rpm, in an rpm database of its own in the same bed, removed likewise: rpm -i, the CDI refresh enabled, ocidec install --set-as-default --enable-cdi --restart, containers get the devices; rpm -e (its %preun, no --noscripts) gives daemon.json and config.toml back byte for byte, every docker run and CRI pod still starts, Docker's default runtime runc; nothing names ocidec after, both daemons up (issue 47)" {
	local rpmdb=(--dbpath /var/lib/rpm)
	! grep -q "make rpm failed" "$RPMLOG" 2>/dev/null || fail "make rpm failed: $(tail -n 20 "$RPMLOG")"
	[ -e "$RPM" ] || skip "no rpm to test: make rpm needs rpmbuild"
	[ -e "$RPMDEBS/.complete" ] ||
		skip "Debian 13's rpm could not be fetched for the bed: $(tail -n 3 "$BATS_FILE_TMPDIR/rpm-debs.log" 2>/dev/null)"
	node_fresh
	if ! bed "$SD" sh -c 'command -v rpm' >/dev/null; then
		mkdir -p "$SD/rpm-debs"
		cp "$RPMDEBS"/*.deb "$SD/rpm-debs/"
		run bed "$SD" sh -c "dpkg -i $SD/rpm-debs/*.deb && rpm --dbpath /var/lib/rpm --initdb"
		assert_success
	fi
	run bed "$SD" rpm "${rpmdb[@]}" -i --nodeps "$SD/pkg/$(basename "$RPM")"
	assert_success
	# (the rpm enables no unit: the administrator does, as with NVIDIA's refresh)
	bed "$SD" systemctl enable --now ocidec-cdi-refresh.path ocidec-cdi-refresh.service 2>/dev/null
	registered
	run bed "$SD" rpm "${rpmdb[@]}" -e ocidec
	assert_success
	echo "# rpm -e ocidec: $(grep -E '^ocidec: (reloaded|restarted)' <<<"$output" | paste -sd ';')" >&3
	removed
	run bed "$SD" rpm "${rpmdb[@]}" -q ocidec
	assert_failure
	run leftovers
	assert_output ""
	run bed "$SD" systemctl is-active containerd.service docker.service
	assert_output $'active\nactive'
}

@test "the deb removed after ocidec install --uninstall without --restart (the engines still run ocidec's runtime): check says so, each with its restart; dpkg -r restarts them, as check says, while the runtime is there: every docker run and CRI pod still starts, Docker's default runtime runc (issue 47, review)" {
	local d=$SD
	! grep -q "make deb failed" "$DEBLOG" 2>/dev/null || fail "make deb failed: $(tail -n 20 "$DEBLOG")"
	[ -e "$DEB" ] || skip "no deb to test: make deb needs dpkg-buildpackage"
	node_fresh
	run bed "$d" dpkg -i "$d/pkg/$(basename "$DEB")"
	assert_success
	registered
	run bed "$d" ocidec install --uninstall
	assert_success
	assert_line --partial "once it restarts: systemctl restart docker"
	# the running dockerd still has ocidec's default runtime: not ready
	run bed "$d" ocidec check
	assert_failure 1
	assert_line --regexp '^PROBLEM +docker: the running dockerd has the default runtime "ocidec" \(/etc/docker/daemon.json names none: runc once it restarts, a reload keeps it\)'
	assert_line --regexp '^ +fix: systemctl restart docker$'
	assert_line --regexp '^ +fix: systemctl restart containerd$'
	# a container made with the runtime by its name: said, it will not start again
	bed "$d" docker create --runtime ocidec --network none --name kept node-test:1 true >/dev/null
	run bed "$d" dpkg -r ocidec
	assert_success
	assert_line "ocidec: Docker containers whose runtime was ocidec's (named at docker run, or the default when they were made), which will not start again: kept (ocidec); docker rm them, and run them anew"
	bed "$d" docker rm kept >/dev/null
	assert_line "ocidec: systemctl restart docker: the running engine had not read its files since ocidec was taken out"
	assert_line "ocidec: systemctl restart containerd: the running engine had not read its files since ocidec was taken out"
	cmp "$d/node/daemon.json" "$d/root/etc/docker/daemon.json"
	run bed "$d" docker info --format '{{.DefaultRuntime}}'
	assert_output runc
	for args in "" "-e OCI_DEMO=all"; do
		# shellcheck disable=SC2086
		run exits bed "$d" docker run --rm --network none $args node-test:1 sh -c "$NOTHING"
		assert_output $'started\n0\nexit 0'
	done
	run exits node_pod --env OCI_DEMO=all docker.io/library/node-test:1 sh -c "$NOTHING"
	assert_output $'started\n0\nexit 0'
	run bed "$d" dpkg --purge ocidec
	assert_success
	run leftovers
	assert_output ""
}
