#!/bin/bash
# bench/dra.sh: what `ocidec dra` weighs and whether its memory stays flat.
#   the binary: the bytes of the static binary that are ocidec dra's
#     (bench/size.sh's rows: nghttp2, mbed TLS, and our modules of it:
#     the gRPC server, the kubelet plugin, its claims, the API client, the
#     slices, the applet), against the whole file;
#   the plugin's resident memory (VmRSS) over N prepares: `ocidec dra
#     serve` for the demo vendor, driven as the kubelet drives it
#     (test/fixtures/kubelet-dra.py cycle: NodePrepareResources then
#     NodeUnprepareResources of one claim, so each prepare fetches the
#     claim from the API server again: gRPC in, HTTP/2 over TLS out), the
#     API server the stand-in of test/dra.bats (test/fixtures/
#     kube-apiserver.py, a CA made here); RSS after the first 100 and after
#     all N, and their ratio (flat: about 1).
# Usage: bench/dra.sh [N]   (as root: the demo driver root has device nodes)
set -eu
cd "$(dirname "$0")/.."
N=${1:-1000}
. bench/lib.sh
fx=$PWD/test/fixtures

# the binary
bench/size.sh >"$work/size"
dra=$(awk '/^(nghttp2|mbed TLS|formats\/grpc\.c|engines\/(draplugin|draserve|draclaim|draslice|kubeapi)\.c|applets\/dra\.c) / { s += $(NF - 3) } END { print s }' \
	"$work/size")
printf '%-44s %9d bytes\n' "the static binary" "$(stat -c %s "$bin")"
grep -E '^(nghttp2|mbed TLS|formats/grpc\.c|engines/(draplugin|draserve|draclaim|draslice|kubeapi)\.c|applets/dra\.c) ' \
	"$work/size" | awk '{ n = $(NF - 3); sub(/ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ *$/, ""); printf "  %-42s %9d bytes\n", $0, n }'
printf '%-44s %9d bytes (the issue'"'"'s bound: 250 KB)\n' "ocidec dra's, in all" "$dra"

# the plugin's memory
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/ca.key" -out "$work/ca.crt" \
	-subj /CN=ca -days 1 2>/dev/null
mkdir -p "$work/api/nodes" "$work/api/claims/ns1" "$work/plugins" "$work/registry" "$work/cfg"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/api/server.key" -out "$work/csr" \
	-subj /CN=api 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$work/ext"
openssl x509 -req -in "$work/csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -out "$work/api/server.crt" \
	-days 1 -extfile "$work/ext" 2>/dev/null
echo "tok-bench" >"$work/api/token"
echo '{"metadata": {"name": "node1", "uid": "node-uid-1"}}' >"$work/api/nodes/node1.json"
echo '{"metadata": {"name": "c1", "namespace": "ns1", "uid": "uid-c1"}, "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "demo.ocidec.io", "pool": "node1", "device": "demo-1"}]}}}}' \
	>"$work/api/claims/ns1/c1.json"
"$fx/demo-vendor.sh" "$work/dr" "$work/cfg" >/dev/null
/usr/bin/python3 "$fx/kube-apiserver.py" "$work/api" 2>"$work/api.log" &
api=$!
trap 'kill $api ${dra_pid:-} 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s "$work/api/port" ] && break; sleep 0.05; done
"$bin" dra serve -c "$work/cfg" --node-name node1 --server "https://127.0.0.1:$(cat "$work/api/port")" \
	--token-file "$work/api/token" --ca-file "$work/ca.crt" --plugin-dir "$work/plugins" \
	--registry-dir "$work/registry" --no-cdi --no-publish 2>"$work/dra.log" &
dra_pid=$!
sock=$work/plugins/demo.ocidec.io/dra.sock
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
export KUBELET_DRA_STUBS=$work/stubs
mkdir -p "$KUBELET_DRA_STUBS"
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$dra_pid/status"; }
t0=$(date +%s%N)
got=$(/usr/bin/python3 "$fx/kubelet-dra.py" cycle "$sock" 100 ns1/c1/uid-c1)
a=$(rss)
got2=$(/usr/bin/python3 "$fx/kubelet-dra.py" cycle "$sock" $((N - 100)) ns1/c1/uid-c1)
b=$(rss)
t1=$(date +%s%N)
printf '%-44s %9s kB  (%s)\n' "the plugin's RSS after 100 prepares" "$a" "$got"
printf '%-44s %9s kB  (%s)  ratio %.3f\n' "the plugin's RSS after $N prepares" "$b" "$got2" "$(bc -l <<<"$b / $a")"
printf '%-44s %9.2f ms\n' "one prepare and unprepare, on average" "$(bc -l <<<"($t1 - $t0) / 1000000 / $N")"
