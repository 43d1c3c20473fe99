#!/bin/sh
# build.sh: build ocidec on a fresh Debian or Ubuntu machine.
#
# 1. installs the Debian packages the build needs, when missing (with `demo`
#    what the demo runs too, with `check`, `test`, `test-asan` or `fuzz`
#    what the tests need); apt never removes a package for them;
# 2. fetches the cJSON, inih, protobuf-c, nghttp2 and mbed TLS *source
#    packages* from the distribution's archive through a private apt
#    configuration under build/apt (derived from the system's own sources,
#    which stay untouched); apt checks every file against the signed index
#    and the .dsc. nghttp2 (its lib/ only: HTTP/2 and HPACK) carries the
#    kubelet's gRPC for `ocidec dra`; mbed TLS (its library/, configured by
#    formats/mbedtls_config.h to a TLS 1.2/1.3 client) its HTTPS to the
#    Kubernetes API server;
# 3. fetches Debian's musl for the other architecture (arm64 on amd64, amd64
#    on arm64) as binary packages, unpacked under build/deps/ARCH/sysroot,
#    never installed; with Debian's cross gcc it builds build/ARCH/ocidec;
# 4. runs make: build/ocidec (static musl, stripped) and the libraries it
#    links, and build/ARCH/ocidec (the same for the other architecture).
#
# A second run works offline: nothing is fetched while build/deps/src is there.
# Usage: ./build.sh [make arguments...]
#        ./build.sh sources   print the lines of its private apt setup, derived
#                             from the system's apt sources (APT_CONFIG
#                             honoured): deb-src, then the binary ones (NRI's
#                             api.proto, the other architecture's musl); nothing else
set -eu
cd "$(dirname "$0")"
top=$(pwd)

# Versions known to download whole here; the first one apt offers is used.
# bookworm's libinih 55 orig tarball answered 404, hence trixie's deb-src too.
CJSON_VERSIONS="1.7.18-3.1+deb13u1 1.7.15-1+deb12u4"
INIH_VERSIONS="59-1"
# The NRI plugin's wire format: protobuf-c's runtime (the version of the
# system's protoc-c first), and NRI's api.proto from Debian unstable's
# golang-github-containerd-nri-dev (0.8.0: its ContainerAdjustment's CDI
# devices, which containerd 2.1 and later inject; 0.8 only adds fields to
# 0.6.1's, so the same messages serve containerd 1.7's NRI 0.6, to which
# the plugin never sends the new ones).
# (|| true: under set -e an assignment takes its substitution's status, and
# dpkg-query fails where protoc-c is not installed yet: a fresh machine)
PROTOBUFC_VERSIONS="$(dpkg-query -W -f='${source:Version}' protobuf-c-compiler 2>/dev/null || true) 1.4.1-1 1.5.1-1"
NRI_VERSIONS="0.8.0-1"
# `ocidec dra`: nghttp2 with Debian's patches (the security fixes), trixie's
# then bookworm's; mbed TLS: trixie's 3.6 (TLS 1.3; bookworm's 2.28 has none).
NGHTTP2_VERSIONS="1.64.0-1.1+deb13u2 1.52.0-1+deb12u3"
MBEDTLS_VERSIONS="3.6.6-0.1~deb13u1"

# Building: a C compiler, musl, make; dpkg-dev: dpkg-source for the
# dependency sources; file: the size line; protobuf-c-compiler: protoc-c,
# the NRI plugin's messages (engines/nriplugin.c) as C; the cross gcc for the
# other architecture (its musl comes from the archive, unpacked, step 3).
# (gcc-N-multilib, not gcc-multilib, for the 32-bit tests below: Debian's
# gcc-multilib conflicts with every cross gcc, gcc-N-multilib does not.)
case $(dpkg --print-architecture 2>/dev/null) in
amd64) CROSS_ARCH=arm64 CROSS_GCC=gcc-aarch64-linux-gnu ;;
arm64) CROSS_ARCH=amd64 CROSS_GCC=gcc-x86-64-linux-gnu ;;
*) CROSS_ARCH= CROSS_GCC= ;;
esac
# the system gcc's major version (from the archive: gcc may not be here yet)
GCC_MAJOR=$(apt-cache show --no-all-versions gcc 2>/dev/null |
	sed -n 's/^Version: \([0-9]*:\)\{0,1\}\([0-9]*\).*/\2/p' | head -n 1)
BUILD_PACKAGES="gcc libc6-dev make musl-tools dpkg-dev file libc-bin protobuf-c-compiler $CROSS_GCC"
# The demo: runc, a busybox-static + glibc rootfs, perl for its config.json.
DEMO_PACKAGES="runc busybox-static perl"
# The packages (./build.sh deb, ./build.sh rpm: make deb, make rpm): debhelper
# for dpkg-buildpackage; rpmbuild, and the SELinux policy's devel files for
# ocidec-selinux (selinux/Makefile)
DEB_PACKAGES="debhelper"
RPM_PACKAGES="rpm selinux-policy-dev checkpolicy semodule-utils"
# The tests: bats; clang and its runtime: the libFuzzer targets in
# test/fuzz; util-linux: setpriv, nsenter; podman: the hook under podman;
# the selinux-policy and setools packages: the policy module test;
# selinux-utils: matchpathcon, libselinux's own labels (test/selinux-check.bats); strace:
# the hostile-image test that nothing in a container is opened by path;
# uidmap: rootless podman (test/rootless.bats); python3: a syslog stand-in;
# python3-jsonschema, python3-yaml: the CDI spec checks (test/cdi.bats);
# docker.io, containerd: private daemons in test/docker.bats; rpm, rpmlint,
# debhelper, lintian, debootstrap, git: the packages (test/package.bats);
# python3-kubernetes: the manifests' check (test/install.bats);
# python3-grpcio, python3-grpc-tools: the CRI client (test/engines.bats);
# gcc-N-multilib: the 32-bit API probe (compat32, test/vendors.bats);
# qemu-user-static: the other architecture's binary run (test/arm64.bats);
# qemu-system-arm: the arm64 VM (qemu-system-aarch64, test/arm64-vm.bats);
# qemu-system-x86, e2fsprogs (mkfs.ext4 -d, debugfs): the VM booted SELinux
# enforcing (test/selinux-vm.bats, its disk made with debootstrap).
TEST_PACKAGES="perl bc bats bats-assert bats-support bats-file
	clang libclang-rt-dev util-linux podman
	selinux-policy-dev selinux-policy-src selinux-policy-default setools policycoreutils selinux-utils
	semodule-utils checkpolicy zstd attr bpftool strace uidmap python3
	python3-jsonschema python3-yaml docker.io containerd
	rpm rpmlint debhelper lintian debootstrap git python3-kubernetes
	python3-grpcio python3-grpc-tools gcc-${GCC_MAJOR:-12}-multilib
	qemu-user-static qemu-system-arm qemu-system-x86 e2fsprogs"
PACKAGES=$BUILD_PACKAGES
for a in "$@"; do
	case $a in
	demo) PACKAGES="$BUILD_PACKAGES $DEMO_PACKAGES" ;;
	deb) PACKAGES="$PACKAGES $DEB_PACKAGES" ;;
	rpm) PACKAGES="$PACKAGES $RPM_PACKAGES" ;;
	check | test | test-asan | fuzz) PACKAGES="$BUILD_PACKAGES $DEMO_PACKAGES $TEST_PACKAGES"; break ;;
	esac
done

say() { printf 'build.sh: %s\n' "$*" >&2; }
die() { say "fatal: $*"; exit 1; }

install_packages() {
	missing=
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	[ "$(id -u)" = 0 ] || die "missing packages:$missing (run as root or install them)"
	say "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || die "apt-get update failed"
	# Daemons in these packages (docker, containerd) are not started: the
	# tests start private ones. A policy-rc.d of the machine's own is kept.
	rcd=
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d && rcd=1
	fi
	rc=0
	# --no-remove: a conflict (a Docker CE host's containerd.io against
	# Debian's runc) stops here, nothing is removed to resolve it
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends --no-remove $missing >/dev/null || rc=$?
	[ -z "$rcd" ] || rm -f /usr/sbin/policy-rc.d
	[ "$rc" = 0 ] || die "apt-get install$missing failed"
}

# The private apt setup: only deb-src lines, its own lists and cache.
APT_DIR=$top/build/apt
apt_private() {
	tool=$1
	shift
	"$tool" -o Dir::Etc::SourceList="$APT_DIR/sources.list" \
		-o Dir::Etc::SourceParts="$APT_DIR/sources.list.d" \
		-o Dir::Etc::Preferences="$APT_DIR/preferences" \
		-o Dir::Etc::PreferencesParts="$APT_DIR/preferences.d" \
		-o Dir::State="$APT_DIR/state" \
		-o Dir::State::Lists="$APT_DIR/lists" \
		-o Dir::State::status="$APT_DIR/state/status" \
		-o Dir::Cache="$APT_DIR/cache" \
		-o APT::Sandbox::User=root \
		-o Debug::NoLocking=1 \
		-o APT::Architectures::="$(dpkg --print-architecture)" \
		${CROSS_ARCH:+-o APT::Architectures::="$CROSS_ARCH"} \
		"$@"
}

write_private_sources() {
	mkdir -p "$APT_DIR/sources.list.d" "$APT_DIR/preferences.d" \
		"$APT_DIR/state" "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
	: >"$APT_DIR/state/status"
	: >"$APT_DIR/preferences"
	keyring= signed=
	if [ -r /usr/share/keyrings/debian-archive-keyring.gpg ]; then
		signed=" signed-by=/usr/share/keyrings/debian-archive-keyring.gpg"
		keyring=" [${signed# }]"
	fi
	# Every Debian or Ubuntu archive the system uses, as deb-src. The
	# origin comes last: it may have spaces ("Debian Backports").
	apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT) $(ORIGIN)' |
		sort -u | while read -r uri suite comp origin; do
		case $origin in
		Debian | "Debian Backports") echo "deb-src$keyring $uri $suite $comp" ;;
		Ubuntu) echo "deb-src $uri $suite $comp" ;;
		esac
	done >"$APT_DIR/sources.list"
	# Debian: the next stable's sources too, from the same mirror.
	mirror=$(apt-get indextargets --format '$(RELEASE) $(REPO_URI) $(ORIGIN)' |
		awk '$3 == "Debian" && NF == 3 && $1 !~ /-/ { print $2; exit }')
	if [ -n "$mirror" ]; then
		# (and bookworm's: a version of Debian 12 where Debian 13's files
		# do not download)
		for suite in trixie bookworm; do
			grep -q " $mirror $suite " "$APT_DIR/sources.list" ||
				echo "deb-src$keyring $mirror $suite main" >>"$APT_DIR/sources.list"
		done
		# and its binary packages, and unstable's: NRI's api.proto (fetch_deb)
		native=$(dpkg --print-architecture)
		echo "deb [arch=$native$signed] $mirror trixie main" >"$APT_DIR/sources.list.d/trixie-binary.list"
		# (unstable's Release is valid a week: a mirror that is a snapshot
		# outlives it, and apt would refuse the index; the packages are
		# still checked against the archive's signature)
		echo "deb [arch=$native$signed check-valid-until=no] $mirror unstable main" \
			>"$APT_DIR/sources.list.d/unstable-binary.list"
	fi
	# the system's own release, binary, for the other architecture: its musl
	# (fetch_sysroot)
	rm -f "$APT_DIR/sources.list.d/cross.list"
	if [ -n "$CROSS_ARCH" ]; then
		apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT) $(ORIGIN)' |
			sort -u | while read -r uri suite comp origin; do
			case $origin in
			Debian | "Debian Backports") echo "deb [arch=$CROSS_ARCH$signed] $uri $suite $comp" ;;
			# Ubuntu keeps arm64 (and the other ports) on a mirror of its own
			Ubuntu) case $uri in
				*ubuntu-ports*) echo "deb [arch=$CROSS_ARCH] http://archive.ubuntu.com/ubuntu/ $suite $comp" ;;
				*) echo "deb [arch=$CROSS_ARCH] http://ports.ubuntu.com/ubuntu-ports/ $suite $comp" ;;
				esac ;;
			esac
		done >"$APT_DIR/sources.list.d/cross.list"
	fi
	[ -s "$APT_DIR/sources.list" ] || die "no Debian or Ubuntu archive in the system's apt sources"
}

# fetch SOURCE-PACKAGE DEST "VERSIONS" [--skip-patches]
fetch() {
	pkg=$1 dest=$2 versions=$3 extract=${4:-}
	work=$APT_DIR/src/$pkg
	rm -rf "$work" && mkdir -p "$work"
	offered=$(apt_private apt-cache showsrc "$pkg" 2>/dev/null | awk '/^Version:/ { print $2 }')
	# the pinned versions the archive offers, in their order, then its
	# newest: the first whose files download (a mirror may index a
	# version whose files answer 404)
	tries=
	for v in $versions; do
		if printf '%s\n' "$offered" | grep -qxF "$v"; then tries="$tries $v"; fi
	done
	newest=$(printf '%s\n' "$offered" | sort -V | tail -n 1)
	[ -n "$newest" ] || die "the archive offers no source package $pkg"
	[ -n "$tries" ] || say "warning: none of the pinned $pkg versions ($versions) is offered; using $newest"
	chosen=
	for v in $tries $newest; do
		say "fetching $pkg $v"
		if (cd "$work" && apt_private apt-get -qq source --download-only "$pkg=$v" >"$work.get.log" 2>&1); then
			chosen=$v
			break
		fi
		say "warning: apt-get source $pkg=$v failed: $(grep -m 1 '404\|^E:' "$work.get.log")"
		rm -f "$work"/*
	done
	rm -f "$work.get.log"
	[ -n "$chosen" ] || die "apt-get source $pkg failed for every version offered ($tries $newest)"
	dsc=$(ls "$work"/*.dsc)
	# shellcheck disable=SC2086
	# apt has checked the .dsc against the signed Sources index, and
	# dpkg-source checks each file against the .dsc; the .dsc's own OpenPGP
	# signature would need debian-keyring, so its "cannot verify" goes to the log.
	(cd "$work" && dpkg-source -x $extract "$(basename "$dsc")" tree >"$work.log" 2>&1) ||
		die "dpkg-source -x $dsc failed: $(tail -n 3 "$work.log")"
	rm -rf "$dest" && mv "$work/tree" "$dest"
	echo "$pkg $chosen" >"$dest/.ocidec-source"
}

# fetch_deb PACKAGE DEST "VERSIONS" FILE...: FILEs of a binary package
# (its usr/share/... paths) into DEST, flat; apt checks the .deb against the
# signed Packages index. (The NRI source package's files answered 404 here.)
fetch_deb() {
	pkg=$1 dest=$2 versions=$3
	shift 3
	work=$APT_DIR/deb/$pkg
	rm -rf "$work" && mkdir -p "$work"
	offered=$(apt_private apt-cache madison "$pkg" 2>/dev/null | awk -F' *[|] *' '{ print $2 }')
	chosen=
	for v in $versions; do
		if printf '%s\n' "$offered" | grep -qxF "$v"; then chosen=$v; break; fi
	done
	[ -n "$chosen" ] || chosen=$(printf '%s\n' "$offered" | sort -V | tail -n 1)
	[ -n "$chosen" ] || die "the archive offers no package $pkg"
	say "fetching $pkg $chosen"
	(cd "$work" && apt_private apt-get -qq download "$pkg=$chosen" >/dev/null) ||
		die "apt-get download $pkg=$chosen failed"
	dpkg-deb -x "$work"/*.deb "$work/x" || die "dpkg-deb -x $pkg failed"
	rm -rf "$dest" && mkdir -p "$dest"
	for f in "$@"; do
		cp "$work/x/$f" "$dest/" || die "$pkg has no $f"
	done
	echo "$pkg $chosen" >"$dest/.ocidec-source"
	rm -rf "$work"
}

# fetch_sysroot ARCH VERSION: Debian's musl and musl-dev for ARCH (the
# system's version: the same C library on both architectures), unpacked into
# build/deps/ARCH/sysroot; apt checks each .deb against the signed index.
# Nothing is installed: the Makefile points the cross gcc at it.
fetch_sysroot() {
	arch=$1 version=$2
	work=$APT_DIR/deb/musl-$arch dest=$DEPS/$arch/sysroot
	rm -rf "$work" && mkdir -p "$work"
	say "fetching musl-dev:$arch $version"
	(cd "$work" && apt_private apt-get -qq download "musl:$arch=$version" "musl-dev:$arch=$version" >/dev/null) ||
		die "apt-get download musl-dev:$arch=$version failed (is $arch in the archive the system uses?)"
	rm -rf "$dest" && mkdir -p "$dest"
	for d in "$work"/*.deb; do
		dpkg-deb -x "$d" "$dest" || die "dpkg-deb -x $d failed"
	done
	ls "$dest"/usr/lib/*-linux-musl/musl-gcc.specs >/dev/null 2>&1 || die "musl-dev:$arch has no musl-gcc.specs"
	echo "musl $version $arch" >"$dest/.ocidec-source"
	rm -rf "$work"
}

if [ "${1:-}" = sources ]; then
	APT_DIR=$(mktemp -d)
	trap 'rm -rf "$APT_DIR"' EXIT
	write_private_sources
	cat "$APT_DIR/sources.list" "$APT_DIR"/sources.list.d/*.list
	exit 0
fi

install_packages

DEPS=$top/build/deps
have() { [ -f "$DEPS/src/$1/.ocidec-source" ]; }
# (NRI's api.proto: of a pinned version; an older one is fetched anew)
have_nri() {
	for v in $NRI_VERSIONS; do
		grep -qxF "golang-github-containerd-nri-dev $v" "$DEPS/src/nri/.ocidec-source" 2>/dev/null && return 0
	done
	return 1
}
MUSL_VERSION=$(dpkg-query -W -f='${Version}' musl-dev)
have_sysroot() {
	[ -z "$CROSS_ARCH" ] ||
		grep -qxF "musl $MUSL_VERSION $CROSS_ARCH" "$DEPS/$CROSS_ARCH/sysroot/.ocidec-source" 2>/dev/null
}
if ! have cjson || ! have inih || ! have protobuf-c || ! have nghttp2 || ! have mbedtls ||
	! have_nri || ! have_sysroot; then
	write_private_sources
	say "updating the private source index (build/apt)"
	apt_private apt-get -qq update >/dev/null 2>"$APT_DIR/update.log" ||
		die "apt-get update (private) failed: $(tail -n 3 "$APT_DIR/update.log")"
	mkdir -p "$DEPS/src"
	# cJSON with Debian's patches (they carry the security fixes).
	have cjson || fetch cjson "$DEPS/src/cjson" "$CJSON_VERSIONS"
	# inih as released upstream: Debian's runtime-options patch hard-wires
	# the new-section callback off, which config.c needs to see empty sections.
	have inih || fetch libinih "$DEPS/src/inih" "$INIH_VERSIONS" --skip-patches
	have protobuf-c || fetch protobuf-c "$DEPS/src/protobuf-c" "$PROTOBUFC_VERSIONS"
	have nghttp2 || fetch nghttp2 "$DEPS/src/nghttp2" "$NGHTTP2_VERSIONS"
	have mbedtls || fetch mbedtls "$DEPS/src/mbedtls" "$MBEDTLS_VERSIONS"
	have_nri || fetch_deb golang-github-containerd-nri-dev "$DEPS/src/nri" "$NRI_VERSIONS" \
		usr/share/gocode/src/github.com/containerd/nri/pkg/api/api.proto
	have_sysroot || fetch_sysroot "$CROSS_ARCH" "$MUSL_VERSION"
fi

make -j"$(nproc)" "$@"
