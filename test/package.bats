#!/usr/bin/env bats
# The packages, built from this checkout as a packager would: `make rpm`
# (rpmbuild, rpmlint) and `make deb` (dpkg-buildpackage, lintian); the rpm
# installed into an empty --root and run from there; the deb installed with
# apt-get into a fresh bookworm made by debootstrap, then purged. Once, in
# the static build's pass: they build their own binary from the sources.

load helpers

TOP=$BATS_TEST_DIRNAME/..

# other_arch: the architecture ./build.sh cross-builds here (Debian's names)
other_arch() {
	case $(dpkg --print-architecture) in amd64) echo arm64 ;; arm64) echo amd64 ;; esac
}

setup_file() {
	is_static || return 0
	export VERSION RPMLOG DEBLOG
	VERSION=$(cat "$TOP/VERSION")
	RPMLOG=$BATS_FILE_TMPDIR/rpm.log DEBLOG=$BATS_FILE_TMPDIR/deb.log
	make -C "$TOP" rpm >"$RPMLOG" 2>&1 || echo "make rpm failed" >>"$RPMLOG"
	make -C "$TOP" deb >"$DEBLOG" 2>&1 || echo "make deb failed" >>"$DEBLOG"
	# the other architecture's, where ./build.sh fetched its musl
	export XRPMLOG=$BATS_FILE_TMPDIR/xrpm.log XDEBLOG=$BATS_FILE_TMPDIR/xdeb.log
	if [ -d "$TOP/build/deps/$(other_arch)/sysroot" ]; then
		make -C "$TOP" rpm ARCH="$(other_arch)" >"$XRPMLOG" 2>&1 || echo "make rpm failed" >>"$XRPMLOG"
		make -C "$TOP" deb ARCH="$(other_arch)" >"$XDEBLOG" 2>&1 || echo "make deb failed" >>"$XDEBLOG"
	fi
	for f in "$TOP"/build/rpm/RPMS/*/*.rpm "$TOP"/build/rpm/SRPMS/*.rpm "$TOP"/build/deb/*.deb \
		"$TOP"/build/*/rpm/RPMS/*/*.rpm "$TOP"/build/*/deb/*.deb; do
		if [ -e "$f" ]; then echo "# $(stat -c %s "$f") bytes  ${f#"$TOP"/}" >&3; fi
	done
}

setup() {
	common_setup
	is_static || skip "the packages are built once, in the static build's pass"
	RPM=$TOP/build/rpm/RPMS/x86_64/ocidec-$VERSION-1.x86_64.rpm
	RPMSE=$TOP/build/rpm/RPMS/noarch/ocidec-selinux-$VERSION-1.noarch.rpm
	DEB=$TOP/build/deb/ocidec_${VERSION}_amd64.deb
}

# the package's files (no directories), compared across formats: no doc,
# license, lintian or build-id paths, man pages without their compression
# suffix, systemd's units and udev's rules in /usr/lib (bookworm's debhelper
# wants /lib)
payload() {
	grep -Ev '^/usr/share/(doc|licenses|lintian)/|^/usr/lib/\.build-id/' | sed 's/\.gz$//; s|^/lib/systemd/|/usr/lib/systemd/|; s|^/lib/udev/|/usr/lib/udev/|' |
		LC_ALL=C sort
}

@test "make rpm: ocidec and ocidec-selinux built by rpmbuild from the source tarballs; rpmlint 0 errors" {
	run grep 'specfiles checked' "$RPMLOG"
	assert_output --regexp '^ 3 packages and 1 specfiles checked; 0 errors, [0-9]+ warnings'
	assert_file_exists "$RPM"
	assert_file_exists "$RPMSE"
	assert_file_exists "$TOP/build/rpm/SRPMS/ocidec-$VERSION-1.src.rpm"
	run rpm -qp --qf '%{VERSION} %{LICENSE}\n' "$RPM"
	assert_output "$VERSION Apache-2.0 AND MIT AND BSD-3-Clause AND BSD-2-Clause"
	run sh -c 'rpm -qcp "$1" | LC_ALL=C sort' sh "$RPM"
	assert_output "$(ls "$TOP"/conf/*.ini | sed 's|.*/|/etc/ocidec/ocidec.d/|' | LC_ALL=C sort)"
	run rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$RPM"
	assert_line "cn /etc/ocidec/ocidec.d/nvidia.ini"  # %config(noreplace)
	run rpm -qlp "$RPMSE"
	assert_line /usr/share/selinux/packages/targeted/ocidec.pp
	run rpm -qp --scripts "$RPMSE"
	assert_output --partial "semodule -n -s targeted -X 200 -i /usr/share/selinux/packages/targeted/ocidec.pp"
	assert_output --partial "semodule -n -s targeted -X 200 -r ocidec"
	assert_output --partial "/usr/bin/ocidec list --restorecon | restorecon -i -f -"
	assert_output --partial "restorecon -i /usr/bin/ocidec"
}

@test "make deb: dpkg-buildpackage, conffiles, lintian 0 errors and 0 warnings; both formats carry the same files" {
	run grep -c "make deb failed" "$DEBLOG"
	assert_output 0
	run lintian --fail-on error,warning "$TOP/build/deb/ocidec_${VERSION}_amd64.changes"
	assert_success
	refute_output --regexp '^[EW]: '
	run dpkg-deb -f "$DEB" Version
	assert_output "$VERSION"
	run sh -c 'dpkg-deb --ctrl-tarfile "$1" | tar -xO ./conffiles | LC_ALL=C sort' sh "$DEB"
	assert_output "$(ls "$TOP"/conf/*.ini | sed 's|.*/|/etc/ocidec/ocidec.d/|' | LC_ALL=C sort)"
	diff <(rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$RPM" | awk '!/^d/ { print $2 }' | payload) \
		<(dpkg-deb -c "$DEB" | awk '!/^d/ { print substr($6, 2) }' | payload)
}

@test "rpm -i into an empty --root: the static binary runs there, the hook file names it; rpm -e leaves nothing" {
	R=$BATS_TEST_TMPDIR/root
	mkdir "$R"
	rpm --root "$R" --dbpath /var/lib/rpm --initdb
	run rpm --root "$R" --dbpath /var/lib/rpm -i --nodeps "$RPM"
	assert_success
	run chroot "$R" /usr/bin/ocidec --version
	assert_output "ocidec $VERSION"
	run chroot "$R" /usr/libexec/oci/hooks.d/ocidec-hook --version
	assert_output "ocidec $VERSION"
	run chroot "$R" ocidec list -c /etc/ocidec/ocidec.d
	assert_success
	run python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hook"]["path"])' \
		"$R/usr/share/containers/oci/hooks.d/ocidec.json"
	assert_output /usr/libexec/oci/hooks.d/ocidec-hook
	# (--noscripts: an empty root has no shell for %preun's remove.sh,
	# which the deb's test below runs)
	rpm --root "$R" --dbpath /var/lib/rpm -e --nodeps --noscripts ocidec
	# (directories rpm made as parents stay: on a real system the filesystem package owns them)
	run find "$R" -not -type d -not -path "$R/var/lib/rpm/*"
	assert_output ""
}

@test "the deb in a fresh bookworm (debootstrap): apt-get install, ocidec runs, the hook file is in place; apt-get purge leaves nothing" {
	command -v debootstrap >/dev/null || skip "debootstrap is not installed"
	C=$BATS_TEST_TMPDIR/bookworm
	"$FIXTURES/chroot.sh" "$C"
	files() {
		(cd "$C" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp -o -path ./run \
			-o -path ./var/lib/dpkg -o -path ./var/lib/apt -o -path ./var/cache -o -path ./var/log \) -prune \
			-o -type d -printf '%p %y %m\n' -o -printf '%p %y %m %s\n' | LC_ALL=C sort)
		# (a directory's size is its entries' high water: ext4 never
		# shrinks one; its entries are listed)
	}
	# the node's own Docker configuration, which ocidec install edits
	mkdir -p "$C/etc/docker"
	echo '{"log-level": "warn"}' >"$C/etc/docker/daemon.json"
	files >"$BATS_TEST_TMPDIR/before"
	cp "$DEB" "$C/tmp/"
	in_chroot() {
		unshare -m sh -c 'mount -t proc proc "$1/proc" && chroot "$1" sh -c "$2"' sh "$C" "$1"
	}
	run in_chroot "apt-get install -y -q /tmp/$(basename "$DEB")"
	assert_success
	run in_chroot 'ocidec --version; ocidec list; echo "list: $?"; ls /usr/share/containers/oci/hooks.d; readlink -f /usr/libexec/oci/hooks.d/ocidec-hook; dpkg-query -W -f="\${Conffiles}\n" ocidec'
	assert_success
	assert_line "ocidec $VERSION"
	assert_line "list: 0"
	assert_line ocidec.json
	assert_line /usr/bin/ocidec
	assert_line --regexp '^ /etc/ocidec/ocidec.d/nvidia.ini [0-9a-f]{32}$'
	# installing again is fine (nothing in the package runs twice wrongly)
	run in_chroot "apt-get install -y -q --reinstall /tmp/$(basename "$DEB")"
	assert_success
	# ocidec Docker's default runtime, a spec of the refresh's: the removal
	# gives daemon.json back and removes the spec, so no docker run names
	# a binary that is gone (issue 47, finding 2)
	run in_chroot 'ocidec install --runtime docker --set-as-default && grep -c ocidec-runtime /etc/docker/daemon.json &&
		mkdir -p /var/run/cdi && printf "%s\n" "{\"cdiVersion\": \"0.5.0\", \"kind\": \"nvidia.com/gpu\", \"devices\": [],
		  \"containerEdits\": {\"hooks\": [{\"hookName\": \"createContainer\", \"path\": \"/usr/bin/ocidec\", \"args\": [\"ocidec-hook\", \"--cdi\"]}]}}" \
			>/var/run/cdi/nvidia.com-gpu.json &&
		printf "{\"cdiVersion\": \"0.5.0\", \"kind\": \"x.io/y\", \"devices\": []}\n" >/var/run/cdi/other.json'
	assert_line 1
	run in_chroot 'apt-get remove -y -q ocidec; cat /etc/docker/daemon.json; ls /var/run/cdi'
	assert_success
	assert_line --partial "restored /etc/docker/daemon.json"
	assert_line '{"log-level": "warn"}'
	assert_line "ocidec: removed /var/run/cdi/nvidia.com-gpu.json"
	assert_line other.json
	refute_line nvidia.com-gpu.json
	rm "$C/run/cdi/other.json"
	run in_chroot 'apt-get purge -y -q ocidec; dpkg-query -W ocidec'
	assert_line --partial "no packages found matching ocidec"
	rm "$C/tmp/$(basename "$DEB")"
	files >"$BATS_TEST_TMPDIR/after"
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "make rpm ARCH=arm64 and make deb ARCH=arm64 on this amd64 machine (the cross gcc and Debian's arm64 musl): rpmlint 0 errors, lintian clean, the packages' architecture, the same files as this architecture's, build/arm64/ocidec in them; the deb installs with apt into Debian 12 arm64 (under qemu-user), runs there and purges to nothing (issue 36)" {
	A=$(other_arch)
	[ -d "$TOP/build/deps/$A/sysroot" ] || skip "no musl for $A under build/deps ($A is not built here)"
	RA=$([ "$A" = arm64 ] && echo aarch64 || echo x86_64)
	XRPM=$TOP/build/$A/rpm/RPMS/$RA/ocidec-$VERSION-1.$RA.rpm
	XDEB=$TOP/build/$A/deb/ocidec_${VERSION}_$A.deb
	run grep -c "make rpm failed\|make deb failed" "$XRPMLOG" "$XDEBLOG"
	assert_output "$XRPMLOG:0
$XDEBLOG:0"
	run grep 'specfiles checked' "$XRPMLOG"
	assert_output --regexp '^ 3 packages and 1 specfiles checked; 0 errors, [0-9]+ warnings'
	run lintian --fail-on error,warning "$TOP/build/$A/deb/ocidec_${VERSION}_$A.changes"
	assert_success
	refute_output --regexp '^[EW]: '
	assert_equal "$(rpm -qp --qf '%{ARCH}' "$XRPM")" "$RA"
	assert_equal "$(dpkg-deb -f "$XDEB" Architecture)" "$A"
	# the same files as this architecture's packages
	diff <(rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$RPM" | awk '!/^d/ { print $2 }' | payload) \
		<(rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$XRPM" | awk '!/^d/ { print $2 }' | payload)
	diff <(dpkg-deb -c "$DEB" | awk '!/^d/ { print substr($6, 2) }' | payload) \
		<(dpkg-deb -c "$XDEB" | awk '!/^d/ { print substr($6, 2) }' | payload)
	# their binary: the rpm's is the one make builds for that architecture;
	# the deb's the same sources with dpkg-buildflags' CFLAGS (hardening)
	mkdir "$BATS_TEST_TMPDIR/r" "$BATS_TEST_TMPDIR/d"
	(cd "$BATS_TEST_TMPDIR/r" && rpm2cpio "$XRPM" | cpio -id --quiet ./usr/bin/ocidec)
	dpkg-deb -x "$XDEB" "$BATS_TEST_TMPDIR/d"
	cmp "$BATS_TEST_TMPDIR/r/usr/bin/ocidec" "$TOP/build/$A/ocidec"
	file -b "$BATS_TEST_TMPDIR/d/usr/bin/ocidec" | grep -q "$([ "$A" = arm64 ] && echo "ARM aarch64" || echo x86-64), .*statically linked"
	# the deb in Debian 12 of that architecture, its own apt and dpkg
	# emulated (the root test/arm64.bats uses)
	C=$BATS_TEST_TMPDIR/root
	rc=0
	ARCH=$A "$FIXTURES/debian-nvidia.sh" "$C" 2>"$BATS_TEST_TMPDIR/why" || rc=$?
	[ "$rc" != 77 ] || skip "$(cat "$BATS_TEST_TMPDIR/why")"
	[ "$rc" = 0 ]
	cp "$XDEB" "$C/tmp/"
	in_root() {
		"$FIXTURES/qemu-user.sh" "$A" unshare -m sh -c 'mount --rbind /proc "$1/proc" && chroot "$1" sh -c "$2"' sh "$C" "$1"
	}
	run in_root "{ apt-get install -y -q /tmp/$(basename "$XDEB") >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }; } && ocidec --version && uname -m && readlink -f /usr/libexec/oci/hooks.d/ocidec-hook && ocidec list -c /etc/ocidec/ocidec.d | grep -c libcuda"
	assert_success
	assert_output "ocidec $VERSION
$RA
/usr/bin/ocidec
3"
	run in_root 'apt-get purge -y -q ocidec >/dev/null 2>&1; dpkg-query -W ocidec; ls /etc/ocidec /usr/bin/ocidec'
	assert_line --partial "no packages found matching ocidec"
	assert_line --partial "cannot access '/etc/ocidec'"
	assert_line --partial "cannot access '/usr/bin/ocidec'"
}
