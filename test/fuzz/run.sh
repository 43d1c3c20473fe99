#!/bin/bash
# test/fuzz/run.sh RUNS [SECONDS [TARGET...]]: build the libFuzzer targets (clang,
# -fsanitize=fuzzer,address,undefined; `make fuzz-targets`) into build/fuzz,
# seed them from this machine (its ld.so.cache, caches and libraries the
# ldtree fixture makes, some system libraries, the shipped vendor configs, a
# `runc spec` config.json, a container state) and run each for RUNS inputs
# or SECONDS, whichever ends first (targets: ldcache elf config state
# ociconfig json ctrd ctrdimport sdbus dockerjson shimedit ldconf require mig hooksdir keycache ere
# globmatch nrimux ttrpc kfd grpc; default all). Exit 0 when no target found a crash; a crash's
# input is kept in build/fuzz/crash-*.
set -eu
runs=${1:-100000} secs=${2:-600}
shift $(( $# < 2 ? $# : 2 ))
targets=${*:-ldcache elf config state ociconfig json ctrd ctrdimport sdbus dockerjson shimedit ldconf require mig hooksdir keycache ere globmatch nrimux ttrpc kfd kubeapi draclaim grpc}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/fuzz
mkdir -p "$out"
make -C "$top" -s FUZZCC="${FUZZ_CC:-clang}" fuzz-targets

seeds=$out/seeds
if [ ! -d "$seeds/ldcache" ]; then
	mkdir -p "$seeds/ldcache" "$seeds/elf"
	head -c 8192 /etc/ld.so.cache >"$seeds/ldcache/host-head"
	tree=$(mktemp -d)
	"$top/test/fixtures/ldtree.sh" "$tree/t" >/dev/null 2>&1
	ldconfig -r "$tree/t" 2>/dev/null && cp "$tree/t/etc/ld.so.cache" "$seeds/ldcache/tree"
	i=0
	while read -r f; do
		i=$((i + 1))
		{ printf '\0'; head -c 65536 "$f"; } >"$seeds/elf/m$i"
		{ printf '\1'; cat "$f"; } >"$seeds/elf/f$i"
	done < <(find "$tree/t" -type f -name 'lib*.so*' | head -n 20; ls /lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null)
	rm -rf "$tree"
fi
if [ ! -d "$seeds/config" ]; then
	mkdir -p "$seeds/config" "$seeds/state" "$seeds/ociconfig"
	for f in "$top"/conf/*.ini "$top"/test/fixtures/good.ini; do cp "$f" "$seeds/config/"; done
	cat "$top/conf/nvidia.ini" <(printf '\n%%%%\n') "$top/conf/solarflare.ini" >"$seeds/config/two"
	printf '{"ociVersion": "1.0.2", "id": "c1", "status": "created", "pid": 42, "bundle": "/b", "root": "rootfs", "annotations": {"ocidec.io/nvidia": "0,GPU-1"}}' \
		>"$seeds/state/state"
	spec=$(mktemp -d)
	(cd "$spec" && runc spec 2>/dev/null) || echo '{"root": {"path": "rootfs"}}' >"$spec/config.json"
	perl -MJSON::PP -e 'local $/; my $c = decode_json(<STDIN>);
		push @{$c->{process}{env}}, "OCI_V=0,1", "V_CAPS=a,b,all";
		push @{$c->{mounts}}, {destination => "/var/run/v-devices/1", source => "/dev/null", type => "bind"};
		$c->{annotations}{"ocidec.io/v"} = "all";
		print encode_json($c);' <"$spec/config.json" >"$seeds/ociconfig/runc-spec"
	# the same, its keys spelled with escapes (the idle path decodes them)
	sed 's/"OCI_V=/"\\u004fCI\\u005fV=/; s|/var/run/v-devices|\\/var\\/run\\/v-devices|' \
		"$seeds/ociconfig/runc-spec" >"$seeds/ociconfig/escaped"
	rm -rf "$spec"
fi
if [ ! -d "$seeds/json" ]; then
	mkdir -p "$seeds/json"
	cp "$seeds/ociconfig/runc-spec" "$seeds/json/"
	printf '{"process":{"rlimits":[{"type":"RLIMIT_MEMLOCK","hard":18446744073709551615,"soft":18446744073709551615}]},"a":[-0.5e-3,1E+2,"x\\"1",9007199254740993]}' \
		>"$seeds/json/numbers"
fi
if [ ! -d "$seeds/ctrd" ]; then
	mkdir -p "$seeds/ctrd"
	cp "$top/test/fixtures/containerd/dump-v3.toml" "$seeds/ctrd/v3"
	containerd config default >"$seeds/ctrd/v2" 2>/dev/null || true
fi
if [ ! -d "$seeds/ctrdimport" ]; then
	mkdir -p "$seeds/ctrdimport"
	printf 'version = 2\nroot = "/var/lib/containerd"\n[grpc]\n  address = "/run/containerd/containerd.sock"\n' >"$seeds/ctrdimport/plain"
	printf 'version = 2\nimports = ["/etc/containerd/a.toml", "/etc/containerd/b/*.toml",]\n[plugins]\n' >"$seeds/ctrdimport/imports"
	printf 'imports = [\n  "/x.toml",\n]\nversion = 2\n' >"$seeds/ctrdimport/multiline"
	printf 'imports = []\n' >"$seeds/ctrdimport/empty"
fi
if [ ! -d "$seeds/sdbus" ]; then
	mkdir -p "$seeds/sdbus"
	# systemd's reply to a Get of DevicePolicy: a variant holding "strict"
	printf 'l\2\1\1\17\0\0\0\2\0\0\0\17\0\0\0\5\1u\0\1\0\0\0\10\1g\0\1v\0\0\1s\0\0\6\0\0\0strict\0' \
		>"$seeds/sdbus/return"
	# an error: its name, and a message as the body
	printf 'l\3\1\1\13\0\0\0\3\0\0\0\67\0\0\0\5\1u\0\2\0\0\0\4\1s\0\37\0\0\0org.freedesktop.DBus.Error.Fail\0\10\1g\0\1s\0\0\6\0\0\0no way\0' \
		>"$seeds/sdbus/error"
fi
if [ ! -d "$seeds/dockerjson" ]; then
	mkdir -p "$seeds/dockerjson" "$seeds/shimedit"
	printf '{\n  "log-level": "warn",\n  "default-ulimits": {"memlock": {"Name": "memlock", "Hard": 18446744073709551615, "Soft": -1}},\n  "runtimes": {"other": {"path": "/usr/bin/other"}, "ocidec": {"path": "/old"}}\n}\n' \
		>"$seeds/dockerjson/daemon"
	printf '{"runtimes": {}}' >"$seeds/dockerjson/empty-runtimes"
	printf '{"runtimes": {"ocidec": {"path": "/a"}, "x": {}, "ocidec": {"path": "/b"}}}' >"$seeds/dockerjson/repeated"
	cp "$seeds/ociconfig/runc-spec" "$seeds/shimedit/"
	printf '{"linux": {"devices": [{"path": "/dev/demo1", "type": "c", "major": 9, "minor": 9}]}, "process": {"rlimits": [{"type": "RLIMIT_CORE", "hard": 18446744073709551615}]}}' \
		>"$seeds/shimedit/image-device"
	printf '{"process":{"user":{"uid":1,"gid":1,"additionalGids":null}},"linux":{}}' >"$seeds/shimedit/null-gids"
	printf '{"process":{"env":[]},"linux":{"gidMappings":[{"containerID":0,"hostID":1000,"size":10}]}}' >"$seeds/shimedit/userns"
fi
if [ ! -d "$seeds/ldconf" ]; then
	mkdir -p "$seeds/ldconf"
	printf 'include /etc/ld.so.conf.d/*.conf\n/usr/local/lib\0/opt/lib\ninclude /etc/ld.so.conf\0include ../*.conf\n/lib/../opt\n' >"$seeds/ldconf/includes"
	printf '# comment\n/usr/lib/x86_64-linux-gnu\n  /lib64  \nhwcap 1 tls\n' >"$seeds/ldconf/plain"
fi
if [ ! -d "$seeds/kfd" ]; then
	mkdir -p "$seeds/kfd"
	printf 'cpu_cores_count 0\nlocation_id 1280\ndomain 0\ndrm_render_minor 130\nunique_id 1234605616436508552\n' >"$seeds/kfd/partition"
	printf 'cpu_cores_count 64\nlocation_id 0\ndomain 0\ndrm_render_minor 0\n' >"$seeds/kfd/cpu"
fi
if [ ! -d "$seeds/require" ]; then
	mkdir -p "$seeds/require"
	printf 'cuda>=12.2 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471' >"$seeds/require/cuda-image"
	printf 'cuda>=99.0' >"$seeds/require/high"
	printf 'xx Cuda compilation tools, release %%d.%%d, yy Cuda compilation tools, release 12.4, V12.4.131' >"$seeds/require/libcuda"
fi
if [ ! -d "$seeds/mig" ]; then
	mkdir -p "$seeds/mig"
	tree=$(mktemp -d)
	"$top/test/fixtures/mig-host.sh" "$tree" >/dev/null 2>&1 &&
		cat "$tree/smi-L.txt" "$tree/smi-q.txt" >"$seeds/mig/smi" && cp "$tree/smi-q.txt" "$seeds/mig/smi-q"
	rm -rf "$tree"
fi
if [ ! -d "$seeds/hooksdir" ]; then
	mkdir -p "$seeds/hooksdir"
	printf '[engine]\nhooks_dir = ["/usr/share/containers/oci/hooks.d", "/etc/containers/oci/hooks.d"]\n' >"$seeds/hooksdir/one-line"
	printf '[engine]\nhooks_dir = [\n  "/usr/share/containers/oci/hooks.d",\n  \x27/etc/containers/oci/hooks.d\x27,\n]\n' >"$seeds/hooksdir/lines"
	printf '[crio.runtime]\n# hooks_dir = ["/x"]\nhooks_dir_x = 1\nhooks_dir = [\n' >"$seeds/hooksdir/open"
fi
if [ ! -d "$seeds/keycache" ]; then
	mkdir -p "$seeds/keycache"
	printf 'ocidec activation keys 2 %s\nd 65024 11 4096 1764100000 5 1764100000 6\nf 65024 12 1206 1764000000 1 1764000000 2 amd.ini\nf 65024 13 7266 1764000000 3 1764000000 4 nvidia.ini\nk OCI_AMD\nk AMD_VISIBLE_DEVICES\nk NVIDIA_VISIBLE_DEVICES\nk /var/run/nvidia-container-devices\nend\n' "$(cat "$top/VERSION")" >"$seeds/keycache/index"
fi
if [ ! -d "$seeds/nrimux" ]; then
	mkdir -p "$seeds/nrimux" "$seeds/ttrpc"
	/usr/bin/python3 "$top/test/fixtures/nri-trunk.py" "$seeds/nrimux/session" || true
	printf '\1\0\0\0\1hello' >"$seeds/ttrpc/small"
	head -c 5000 "$seeds/nrimux/session" >"$seeds/ttrpc/large" 2>/dev/null || true
fi
if [ ! -d "$seeds/grpc" ]; then
	# what a gRPC client sends after its preface (python3-h2): SETTINGS,
	# calls on two streams (a request of two claims; an unknown method),
	# WINDOW_UPDATE, PING; the first byte: the preface put in front, whole
	mkdir -p "$seeds/grpc"
	/usr/bin/python3 - "$seeds/grpc" <<'PY' || true
import sys, h2.connection, h2.config
def msg(b): return b"\0" + len(b).to_bytes(4, "big") + b
claim = lambda ns, uid, name: b"\x0a" + bytes([len(ns)]) + ns + b"\x12" + bytes([len(uid)]) + uid + b"\x1a" + bytes([len(name)]) + name
req = b"".join(b"\x0a" + bytes([len(c)]) + c for c in (claim(b"ns", b"u1", b"a"), claim(b"ns", b"u2", b"b")))
c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
c.initiate_connection()
for sid, path in ((1, "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"), (3, "/x.Y/Z")):
    c.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "localhost"),
                         ("content-type", "application/grpc"), ("te", "trailers")])
    c.send_data(sid, msg(req), end_stream=True)
c.increment_flow_control_window(65535)
c.ping(b"12345678")
out = c.data_to_send()
assert out.startswith(b"PRI * HTTP/2.0")
open(sys.argv[1] + "/session", "wb").write(b"\0" + out[24:])
open(sys.argv[1] + "/chunks", "wb").write(b"\x85" + out[24:])
PY
fi
if [ ! -d "$seeds/hostfiles" ]; then
	# L4T's lists as test/fixtures/l4t-root.sh lays them out
	mkdir -p "$seeds/hostfiles"
	t=$(mktemp -d)
	"$top/test/fixtures/l4t-root.sh" "$t" >/dev/null 2>&1 || true
	cat "$t"/etc/nvidia-container-runtime/host-files-for-container.d/*.csv >"$seeds/hostfiles/l4t" 2>/dev/null ||
		printf 'dev, /dev/nvmap\nlib, /usr/lib/x.so\n' >"$seeds/hostfiles/l4t"
	rm -rf "$t"
fi
if [ ! -d "$seeds/ere" ]; then
	mkdir -p "$seeds/ere"
	printf '\005\001\003\002\000\007\001\002abc/./' >"$seeds/ere/one"
fi
if [ ! -d "$seeds/globmatch" ]; then
	mkdir -p "$seeds/globmatch"
	printf '\004\000\006\002\011abc.0' >"$seeds/globmatch/one"
fi
# scratch trees of the targets that need files (ldconf), gone at the end
OCIDEC_FUZZ_TMP=$(mktemp -d /dev/shm/ocidec-fuzz.XXXXXX 2>/dev/null || mktemp -d)
export OCIDEC_FUZZ_TMP
if [ ! -d "$seeds/draclaim" ]; then
	mkdir -p "$seeds/draclaim" "$seeds/kubeapi"
	r='{"request": "gpu", "driver": "nvidia.ocidec.io", "pool": "n1", "device": "gpu-1"}'
	printf '{"metadata": {"uid": "u1"}, "status": {"allocation": {"devices": {"results": [%s, {"request": "x", "driver": "demo.ocidec.io", "pool": "n1", "device": "demo-0"}]}, "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}}' \
		"$r" >"$seeds/draclaim/claim"
	printf '{"kind": "ResourceSliceList", "items": [{"metadata": {"name": "s", "resourceVersion": "7"}, "spec": {"driver": "demo.ocidec.io", "nodeName": "n1", "pool": {"name": "n1", "generation": 3, "resourceSliceCount": 1}, "devices": [{"name": "demo-0"}]}}]}' \
		>"$seeds/draclaim/slices"
	# a server's answer to the client's first stream: its SETTINGS, then
	# HEADERS (:status 200) and DATA, as Python's h2 writes them
	/usr/bin/python3 - "$seeds/kubeapi" <<'PY' || true
import os, sys, h2.config, h2.connection
for name, body, status in (("ok", b'{"kind": "Node", "metadata": {"uid": "u"}}', "200"),
                           ("status", b'{"kind": "Status", "reason": "NotFound", "message": "x not found"}', "404")):
    c = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding=None))
    c.initiate_connection()
    cl = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
    cl.initiate_connection()
    cl.send_headers(1, [(":method", "GET"), (":scheme", "https"), (":authority", "kube:443"), (":path", "/")], end_stream=True)
    c.receive_data(cl.data_to_send())
    out = c.data_to_send()
    c.send_headers(1, [(":status", status), ("content-type", "application/json")])
    c.send_data(1, body, end_stream=True)
    with open(os.path.join(sys.argv[1], name), "wb") as f:
        f.write(out + c.data_to_send())
PY
fi
trap 'rm -rf "$OCIDEC_FUZZ_TMP"' EXIT
status=0
for t in $targets; do
	mkdir -p "$out/corpus-$t"
	echo "# fuzz $t: up to $runs inputs or ${secs}s"
	if ! (cd "$out" && "./$t" -runs="$runs" -max_total_time="$secs" -max_len=65536 \
		-print_final_stats=1 "corpus-$t" "seeds/$t" >"$out/$t.log" 2>&1); then
		status=1
		tail -n 40 "$out/$t.log"
	fi
	grep -E '^stat::number_of_executed_units|^Done [0-9]+ runs' "$out/$t.log" | sed "s/^/# $t: /"
done
exit $status
