#!/usr/bin/env bats
# `ocidec dra`, the DRA driver of every vendor, against stand-ins of both
# its peers: the Kubernetes API server (test/fixtures/kube-apiserver.py:
# HTTP/2 over TLS, a CA and a server certificate made here by openssl, the
# bearer token checked) and the kubelet (test/fixtures/kubelet-dra.py:
# Debian's python3-grpcio, the messages from ocidec's own .proto files).
# claim and publish: claims of ours and of several drivers, every refusal
# with its line, ResourceSlices created, updated and deleted and their JSON
# checked, hostile servers and wrong certificates refused with one line.
# serve: registration (GetInfo, NotifyRegistrationStatus), the DRA service
# (v1 and v1beta1) preparing claims through the API server, answers kept
# across a restart, the CDI specs and the slices at start, and what a
# hostile or broken kubelet-side peer gets.

load helpers

# cert NAME CA SAN: NAME.crt/NAME.key in $BATS_FILE_TMPDIR signed by CA (its
# .crt/.key there) for the subjectAltName SAN
cert() {
	local d=$BATS_FILE_TMPDIR
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$d/$1.key" -out "$d/$1.csr" \
		-subj "/CN=$1" 2>/dev/null
	printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\n' "$3" >"$d/$1.ext"
	openssl x509 -req -in "$d/$1.csr" -CA "$d/$2.crt" -CAkey "$d/$2.key" -CAcreateserial -out "$d/$1.crt" \
		-days 2 -extfile "$d/$1.ext" 2>/dev/null
}

KD=/usr/bin/python3

setup_file() {
	local d=$BATS_FILE_TMPDIR
	# the kubelet fixture's Python stubs, made once for the suite
	export KUBELET_DRA_STUBS=$d/stubs
	mkdir -p "$KUBELET_DRA_STUBS"
	for ca in ca otherca; do
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$d/$ca.key" -out "$d/$ca.crt" \
			-subj "/CN=$ca" -days 2 2>/dev/null
	done
	cert server ca "IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc"
	cert dnsonly ca "DNS:127.0.0.1,DNS:other.example"
}

setup() {
	common_setup
	DR=$BATS_TEST_TMPDIR/dr
	demo_vendor
	API=$BATS_TEST_TMPDIR/api
	mkdir -p "$API/nodes" "$API/claims/ns1"
	echo "tok-$$-$RANDOM" >"$API/token"
	printf '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node1", "uid": "node-uid-1"}}' \
		>"$API/nodes/node1.json"
	# serve's
	PD=$BATS_TEST_TMPDIR/plugins
	RD=$BATS_TEST_TMPDIR/registry
	CD=$BATS_TEST_TMPDIR/cdi
	mkdir -p "$PD" "$RD"
	DRV=demo.ocidec.io
	REG=$RD/$DRV-reg.sock
	SOCK=$PD/$DRV/dra.sock
	LOG=$BATS_TEST_TMPDIR/dra.log
	KDRA="$KD $BATS_TEST_DIRNAME/fixtures/kubelet-dra.py"
}

teardown() {
	[ -z "${PID:-}" ] || kill "$PID" 2>/dev/null || true
	[ -z "${PID:-}" ] || wait "$PID" 2>/dev/null || true
	[ -z "${APIPID:-}" ] || kill "$APIPID" 2>/dev/null || true
}

# api [CERT] [MODE]: the stand-in started with CERT (default server) and MODE
# (none); PORT its port, OPTS the options dra's subcommands take
api() {
	cp "$BATS_FILE_TMPDIR/${1:-server}.crt" "$API/server.crt"
	cp "$BATS_FILE_TMPDIR/${1:-server}.key" "$API/server.key"
	[ -z "${2:-}" ] || echo "$2" >"$API/mode"
	rm -f "$API/port"
	/usr/bin/python3 "$FIXTURES/kube-apiserver.py" "$API" 2>"$API/stderr" &
	APIPID=$!
	for _ in $(seq 100); do [ -s "$API/port" ] && break; sleep 0.05; done
	PORT=$(cat "$API/port")
	OPTS=(-c "$CFG" --node-name node1 --server "https://127.0.0.1:$PORT" --token-file "$API/token"
		--ca-file "$BATS_FILE_TMPDIR/ca.crt")
}

# claim NAME RESULTS [NODESELECTOR] [UID]: claims/ns1/NAME.json, allocated
# with RESULTS (a JSON list; "none": not allocated)
claim() {
	local sel=${3:-'{"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node1"]}]}]}'}
	if [ "$2" = none ]; then
		printf '{"metadata": {"name": "%s", "namespace": "ns1", "uid": "%s"}, "status": {}}' "$1" "${4:-uid-$1}"
	else
		printf '{"metadata": {"name": "%s", "namespace": "ns1", "uid": "%s"}, "status": {"allocation": {"devices": {"results": %s}, "nodeSelector": %s}}}' \
			"$1" "${4:-uid-$1}" "$2" "$sel"
	fi >"$API/claims/ns1/$1.json"
}

# one line of stderr and status $2 (not a crash)
refused() {
	assert_equal "$status" "${2:-2}"
	assert_equal "${#stderr_lines[@]}" 1
	assert_equal "$stderr" "$1"
	assert_output ""
}

# slices EXPR: the Python expression EXPR over the stand-in's slices
# (a list s, sorted by name)
slices() {
	/usr/bin/python3 -c 'import json, sys; s = [v for _, v in sorted(json.load(open(sys.argv[1])).items())]; r = eval(sys.argv[2]); print("\n".join(map(str, r)) if isinstance(r, list) else r)' \
		"$API/slices.json" "$1"
}

DEMO0='{"request": "gpu", "driver": "demo.ocidec.io", "pool": "node1", "device": "demo-0"}'
DEMO1='{"request": "gpu", "driver": "demo.ocidec.io", "pool": "node1", "device": "demo-1"}'
OTHER='{"request": "nic", "driver": "nic.example.com", "pool": "node1", "device": "nic-0"}'

@test "dra claim: a claim of ours gives its devices with the CDI IDs of the demo vendor's spec" {
	api
	claim c1 "[$DEMO0, $DEMO1]"
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 c1 uid-c1
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$output" "claim ns1/c1 uid uid-c1: 2 devices of ocidec's
gpu	demo.ocidec.io	node1	demo-0	ocidec.io/demo=0
gpu	demo.ocidec.io	node1	demo-1	ocidec.io/demo=1"
	# the IDs are the spec's own
	run cdi --list -c "$CFG" demo
	assert_line ocidec.io/demo=0
	assert_line ocidec.io/demo=1
	# the request as the server received it: a GET with the token
	run /usr/bin/python3 -c 'import json, sys; [print(r["method"], r["path"], r["status"]) for r in map(json.loads, open(sys.argv[1]))]' "$API/requests.log"
	assert_output "GET /apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims/c1 200"
	# no UID given: any
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 c1
	assert_success
}

@test "dra claim: a claim of several drivers gives only ocidec's part; one of none of ours gives nothing" {
	api
	claim multi "[$OTHER, $DEMO1, {\"request\": \"x\", \"driver\": \"gpu.nvidia.com\", \"pool\": \"elsewhere\", \"device\": \"gpu-9\"}]"
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 multi
	assert_success
	assert_equal "$output" "claim ns1/multi uid uid-multi: 1 device of ocidec's
gpu	demo.ocidec.io	node1	demo-1	ocidec.io/demo=1"
	claim theirs "[$OTHER]"
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 theirs
	assert_success
	assert_equal "$output" "claim ns1/theirs uid uid-theirs: 0 devices of ocidec's"
}

@test "dra claim: each refusal is one line naming the claim, exit 2" {
	api
	claim c1 "[$DEMO0]"
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 c1 uid-other
	refused "ocidec dra: claim ns1/c1: its UID is uid-c1, not uid-other (the claim was made anew)"
	claim na none
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 na
	refused "ocidec dra: claim ns1/na: not allocated"
	claim away "[$DEMO0]" '{"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node2"]}]}]}'
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 away
	refused "ocidec dra: claim ns1/away: allocated on another node (node2), not node1"
	claim pool '[{"request": "gpu", "driver": "demo.ocidec.io", "pool": "node2", "device": "demo-0"}]'
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 pool
	refused "ocidec dra: claim ns1/pool: device demo-0 of demo.ocidec.io is in pool node2, not this node's (node1)"
	claim absent '[{"request": "gpu", "driver": "demo.ocidec.io", "pool": "node1", "device": "demo-7"}]'
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 absent
	refused "ocidec dra: claim ns1/absent: demo.ocidec.io: no device demo-7 on this node (nothing under $DR for it)"
	claim alien '[{"request": "gpu", "driver": "demo.ocidec.io", "pool": "node1", "device": "gpu-0"}]'
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 alien
	refused "ocidec dra: claim ns1/alien: demo.ocidec.io has no device gpu-0"
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 missing
	refused "ocidec dra: claim ns1/missing: the API server answers 404 NotFound: resourceclaims.resource.k8s.io \"missing\" not found"
	# a selector of labels alone cannot say: the pool decides
	claim labels "[$DEMO0]" '{"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}'
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 labels
	assert_success
	# a wrong token: the server's 401
	echo wrong >"$BATS_TEST_TMPDIR/token"
	run --separate-stderr ocidec dra claim "${OPTS[@]}" --token-file "$BATS_TEST_TMPDIR/token" ns1 c1
	refused "ocidec dra: claim ns1/c1: the API server answers 401 Unauthorized: Unauthorized"
	# usage: no node
	run --separate-stderr env -u NODE_NAME "$OCIDEC" dra claim -c "$CFG" --server "https://127.0.0.1:$PORT" ns1 c1
	refused "ocidec dra: no node name: give --node-name or set NODE_NAME (see ocidec dra --help)"
}

@test "dra claim: NVIDIA's fixture GPUs: gpu-N gives nvidia.com/gpu=N" {
	rm -f "$CFG/demo.ini"
	NV=$BATS_TEST_TMPDIR/nv
	"$FIXTURES/nvidia-gpus.sh" "$NV"
	nvidia_ini "$NV"
	api
	claim g '[{"request": "gpu", "driver": "nvidia.ocidec.io", "pool": "node1", "device": "gpu-1"}]'
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 g
	assert_success
	assert_line -n 1 "gpu	nvidia.ocidec.io	node1	gpu-1	nvidia.com/gpu=1"
	run cdi --list -c "$CFG" nvidia
	assert_line nvidia.com/gpu=1
	run --separate-stderr ocidec dra publish "${OPTS[@]}"
	assert_success
	assert_equal "$(slices '[d["name"] + " " + d["attributes"]["uuid"]["string"] + " " + d["attributes"]["pciBusID"]["string"] + " " + d["attributes"]["productName"]["string"] + " " + d["attributes"]["driverVersion"]["version"] for d in s[0]["spec"]["devices"]]')" \
		"gpu-0 GPU-00000000-1111-2222-3333-444444444444 0000:3b:00.0 NVIDIA A100-SXM4-40GB 550.54.15
gpu-1 GPU-11111111-1111-2222-3333-444444444444 0000:86:00.0 NVIDIA A100-SXM4-40GB 550.54.15"
}

# check_slices: every slice the stand-in holds as the API server would take
# it (names, attributes, versions, owner)
check_slices() {
	/usr/bin/python3 - "$API/slices.json" <<'EOF'
import json, re, sys
label = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
semver = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-((0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$")
ident = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")
for name, s in json.load(open(sys.argv[1])).items():
    assert s["apiVersion"] == "resource.k8s.io/v1" and s["kind"] == "ResourceSlice", name
    spec = s["spec"]
    drv = spec["driver"]
    assert len(drv) <= 63 and all(label.match(p) for p in drv.split(".")), drv
    assert spec["pool"]["name"] == spec["nodeName"] and spec["pool"]["resourceSliceCount"] == 1, name
    assert isinstance(spec["pool"]["generation"], int) and spec["pool"]["generation"] >= 1, name
    owners = s["metadata"]["ownerReferences"]
    assert owners == [{"apiVersion": "v1", "kind": "Node", "name": spec["nodeName"], "uid": "node-uid-1"}], owners
    devs = spec["devices"]
    assert 1 <= len(devs) <= 128 and len({d["name"] for d in devs}) == len(devs), name
    for d in devs:
        assert label.match(d["name"]), d["name"]
        attrs = d.get("attributes", {})
        assert len(attrs) + len(d.get("capacity", {})) <= 32
        for k, v in attrs.items():
            dom, _, idn = k.rpartition("/")
            assert ident.match(idn) and (not dom or all(label.match(p) for p in dom.split("."))), k
            assert len(v) == 1 and list(v)[0] in ("int", "bool", "string", "version"), v
            if "string" in v:
                assert 0 < len(v["string"]) <= 64, v
            if "version" in v:
                assert semver.match(v["version"]) and len(v["version"]) <= 64, v
print("ok")
EOF
}

@test "dra publish: the slice created, left alone, updated with the generation one up, then deleted; the JSON as the API server takes it" {
	api
	run --separate-stderr ocidec dra publish "${OPTS[@]}"
	assert_success
	assert_output --regexp '^demo\.ocidec\.io: slice node1-demo-[a-z0-9]{5} created \(2 devices, generation 1\)$'
	run check_slices
	assert_output ok
	assert_equal "$(slices '[d["name"] + " %d" % d["attributes"]["index"]["int"] for d in s[0]["spec"]["devices"]]')" "demo-0 0
demo-1 1"
	assert_equal "$(slices 's[0]["spec"]["nodeName"] + " " + s[0]["spec"]["driver"]')" "node1 demo.ocidec.io"
	# no version: no driverVersion
	assert_equal "$(slices 'sum("driverVersion" in d["attributes"] for d in s[0]["spec"]["devices"])')" 0
	# nothing changed: nothing written
	: >"$API/requests.log"
	run --separate-stderr ocidec dra publish "${OPTS[@]}"
	assert_success
	assert_output ""
	run /usr/bin/python3 -c 'import json, sys; print(" ".join(r["method"] for r in map(json.loads, open(sys.argv[1]))))' "$API/requests.log"
	assert_output "GET GET"
	assert_equal "$(slices '[r for r in map(__import__("json").loads, open(sys.argv[1].replace("slices.json", "requests.log")))][1]["query"]')" \
		"fieldSelector=spec.nodeName%3Dnode1"
	# a device more and a valid version: updated, generation 2
	name=$(slices 's[0]["metadata"]["name"]')
	mknod -m 0666 "$DR/dev/demo2" c 1 7
	sed -i 's/^driver_feature = base$/&\nversion = 1.2.3-rc.1+b7/' "$CFG/demo.ini"
	run --separate-stderr ocidec dra publish "${OPTS[@]}"
	assert_success
	assert_output "demo.ocidec.io: slice $name updated (3 devices, generation 2)"
	run check_slices
	assert_output ok
	assert_equal "$(slices '[d["name"] + " " + d["attributes"]["driverVersion"]["version"] for d in s[0]["spec"]["devices"]]')" "demo-0 1.2.3-rc.1+b7
demo-1 1.2.3-rc.1+b7
demo-2 1.2.3-rc.1+b7"
	assert_equal "$(slices 's[0]["spec"]["pool"]["generation"]')" 2
	# NVIDIA's spelling with a leading zero is no semantic version: left out
	sed -i 's/^version = .*/version = 535.104.05/' "$CFG/demo.ini"
	run --separate-stderr ocidec dra publish "${OPTS[@]}"
	assert_output "demo.ocidec.io: slice $name updated (3 devices, generation 3)"
	assert_equal "$(slices 'sum("driverVersion" in d["attributes"] for d in s[0]["spec"]["devices"])')" 0
	# the devices gone: the slice deleted
	rm "$DR"/dev/demo[012]
	run --separate-stderr ocidec dra publish "${OPTS[@]}"
	assert_success
	assert_output "demo.ocidec.io: slice $name deleted (no device here)"
	assert_equal "$(slices 'len(s)')" 0
}

@test "dra publish: a slice of a vendor no longer configured and a driver's second slice deleted; other drivers' and nodes' slices untouched" {
	mk() {  # mk NAME DRIVER NODE
		printf '"%s": {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "%s", "uid": "u-%s", "resourceVersion": "7"}, "spec": {"driver": "%s", "nodeName": "%s", "pool": {"name": "%s", "generation": 4, "resourceSliceCount": 1}, "devices": [{"name": "x-0"}]}}' \
			"$1" "$1" "$1" "$2" "$3" "$3"
	}
	printf '{%s, %s, %s, %s, %s}' "$(mk a-gone gone.ocidec.io node1)" "$(mk b-theirs gpu.nvidia.com node1)" \
		"$(mk c-demo demo.ocidec.io node1)" "$(mk d-demo demo.ocidec.io node1)" "$(mk e-demo demo.ocidec.io node2)" \
		>"$API/slices.json"
	api
	run --separate-stderr ocidec dra publish "${OPTS[@]}"
	assert_success
	assert_output "demo.ocidec.io: slice d-demo deleted (a second slice of the driver)
demo.ocidec.io: slice c-demo updated (2 devices, generation 5)
gone.ocidec.io: slice a-gone deleted (no such vendor here)"
	assert_equal "$(slices '[x["metadata"]["name"] + " " + x["spec"]["driver"] + " %d" % x["spec"]["pool"]["generation"] for x in s]')" \
		"b-theirs gpu.nvidia.com 4
c-demo demo.ocidec.io 5
e-demo demo.ocidec.io 4"
}

@test "dra: a hostile API server (too large, no JSON, hanging, no HTTP/2) is refused with one line, no crash" {
	claim c1 "[$DEMO0]"
	api server oversized
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 c1
	refused "ocidec dra: claim ns1/c1: API server 127.0.0.1:$PORT: an answer larger than 4 MiB: refused"
	run --separate-stderr ocidec dra publish "${OPTS[@]}"
	refused "ocidec dra: node node1: API server 127.0.0.1:$PORT: an answer larger than 4 MiB: refused"
	echo malformed >"$API/mode"
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 c1
	refused "ocidec dra: claim ns1/c1: the API server's answer is no JSON object"
	run --separate-stderr ocidec dra publish "${OPTS[@]}"
	refused "ocidec dra: node node1: GET /api/v1/nodes/node1: the API server's answer is no JSON object"
	echo hang >"$API/mode"
	SECONDS=0
	run --separate-stderr ocidec dra claim "${OPTS[@]}" --timeout 2 ns1 c1
	refused "ocidec dra: claim ns1/c1: API server 127.0.0.1:$PORT: no TLS handshake in time" 1
	[ "$SECONDS" -le 4 ]
	kill "$APIPID"
	api server noh2
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 c1
	refused "ocidec dra: claim ns1/c1: API server 127.0.0.1:$PORT does not speak HTTP/2 (no ALPN h2 in its TLS handshake)"
	# nothing listening
	kill "$APIPID"
	wait "$APIPID" 2>/dev/null || true
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 c1
	refused "ocidec dra: claim ns1/c1: API server 127.0.0.1:$PORT: Connection refused" 1
}

@test "dra: TLS is verified: another CA, a certificate for another name, an address only in a DNS name are refused; a name in a DNS SAN is taken (from /etc/hosts; one not there is refused)" {
	claim c1 "[$DEMO0]"
	api
	run --separate-stderr ocidec dra claim "${OPTS[@]}" --ca-file "$BATS_FILE_TMPDIR/otherca.crt" ns1 c1
	refused "ocidec dra: claim ns1/c1: API server 127.0.0.1:$PORT: its certificate is not signed by the CA of the CA file"
	# the name: localhost is in the server's DNS SANs
	run --separate-stderr ocidec dra claim "${OPTS[@]}" --server "https://localhost:$PORT" ns1 c1
	assert_success
	kill "$APIPID"
	# the address only as a DNS name: mbed TLS would match it as text; an
	# address must be in an IP SAN
	api dnsonly
	run --separate-stderr ocidec dra claim "${OPTS[@]}" ns1 c1
	refused "ocidec dra: claim ns1/c1: API server 127.0.0.1:$PORT: its certificate does not name the server (its address or name)"
	run --separate-stderr ocidec dra claim "${OPTS[@]}" --server "https://localhost:$PORT" ns1 c1
	refused "ocidec dra: claim ns1/c1: API server localhost:$PORT: its certificate does not name the server (its address or name)"
	# a name not in /etc/hosts: no DNS lookup, one line (localhost above is
	# in it)
	run --separate-stderr ocidec dra claim "${OPTS[@]}" --server "https://no-such-host.invalid:$PORT" ns1 c1
	refused "ocidec dra: API server no-such-host.invalid:$PORT: no address for no-such-host.invalid in /etc/hosts (names are not looked up in DNS): give --server https://ADDRESS:PORT"
	# no CA file
	run --separate-stderr ocidec dra claim "${OPTS[@]}" --ca-file "$BATS_TEST_TMPDIR/none" ns1 c1
	refused "ocidec dra: $BATS_TEST_TMPDIR/none: No such file or directory"
	# in-cluster: the environment's server
	run --separate-stderr env KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$PORT" \
		"$OCIDEC" dra claim -c "$CFG" --node-name node1 --token-file "$API/token" --ca-file "$BATS_FILE_TMPDIR/ca.crt" ns1 c1
	refused "ocidec dra: claim ns1/c1: API server 127.0.0.1:$PORT: its certificate does not name the server (its address or name)"
	run --separate-stderr env -u KUBERNETES_SERVICE_HOST "$OCIDEC" dra claim -c "$CFG" --node-name node1 ns1 c1
	refused "ocidec dra: no API server: not in a pod (KUBERNETES_SERVICE_HOST and _PORT unset); give --server https://HOST:PORT"
}

# serve [ARGS...]: the plugin in the background (PID), its sockets there,
# talking to the stand-in (api: started where it was not)
serve() {
	[ -n "${APIPID:-}" ] || api
	"$OCIDEC" dra serve "${OPTS[@]}" --plugin-dir "$PD" --registry-dir "$RD" --cdi-dir "$CD" "$@" \
		>>"$LOG" 2>&1 &
	PID=$!
	for _ in $(seq 100); do
		[ -S "$REG" ] && [ -S "$SOCK" ] && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$LOG"
	return 1
}

# stop: SIGTERM, and the plugin gone (its status 0)
stop() {
	kill -TERM "$PID"
	wait "$PID"
	PID=
}

@test "registration: GetInfo names a DRAPlugin, the driver, its socket and both versions; NotifyRegistrationStatus is logged" {
	serve
	run $KDRA info "$REG"
	assert_success
	assert_output "type DRAPlugin
name $DRV
endpoint $SOCK
versions v1.DRAPlugin v1beta1.DRAPlugin"
	run $KDRA notify "$REG"
	assert_success
	run $KDRA notify "$REG" "no such version"
	assert_success
	grep -qx "ocidec dra: info: driver $DRV: registered with the kubelet" "$LOG"
	grep -qx "ocidec dra: warn: driver $DRV: the kubelet did not register it: no such version" "$LOG"
	# both sockets 0600, the driver's directory made
	[ "$(stat -c %a "$REG")" = 600 ] && [ "$(stat -c %a "$SOCK")" = 600 ]
}

@test "serve: NodePrepareResources, v1 and v1beta1, through the API server: a claim of ours gets its devices' CDI IDs, a claim of several drivers only ours, a refused or missing claim its own error; unprepare forgets it; several calls at once" {
	claim c1 "[$DEMO0]"
	claim c2 "[$DEMO1, $OTHER]"
	claim c3 "[$DEMO0]" '{"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node2"]}]}]}'
	serve
	for v in v1 v1beta1; do
		run $KDRA prepare "$SOCK" $v ns1/c1/uid-c1 ns1/c2/uid-c2 ns1/c3/uid-c3 ns1/gone/uid-gone ns1/c1/uid-wrong
		assert_success
		assert_line "uid-c1 devices: node1/demo-0[gpu]=ocidec.io/demo=0"
		assert_line "uid-c2 devices: node1/demo-1[gpu]=ocidec.io/demo=1"
		assert_line "uid-c3 error: claim ns1/c3: allocated on another node (node2), not node1"
		assert_line "uid-gone error: claim ns1/gone: the API server answers 404 NotFound: resourceclaims.resource.k8s.io \"gone\" not found"
		assert_line "uid-wrong error: claim ns1/c1: its UID is uid-c1, not uid-wrong (the claim was made anew)"
		# what prepare answered is kept, the refused ones not
		run /usr/bin/python3 -c 'import json, sys; print(" ".join(sorted(json.load(open(sys.argv[1]))["claims"])))' "$PD/$DRV/claims.json"
		assert_output "uid-c1 uid-c2"
		[ "$(stat -c %a "$PD/$DRV/claims.json")" = 600 ]
		run $KDRA unprepare "$SOCK" $v ns1/c1/uid-c1 ns1/c2/uid-c2 ns1/gone/uid-gone
		assert_success
		assert_output "uid-c1 unprepared
uid-c2 unprepared
uid-gone unprepared"
		run /usr/bin/python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["claims"]))' "$PD/$DRV/claims.json"
		assert_output 0
	done
	# no claims: an empty answer; a claim without a UID: the call refused
	run $KDRA prepare "$SOCK" v1
	assert_success
	assert_output ""
	run $KDRA prepare "$SOCK" v1 ns/name/
	assert_failure
	assert_output "status INVALID_ARGUMENT: claim 0 (ns/name) has no UID"
	# several calls at once on one connection, each answered
	run $KDRA concurrent "$SOCK" 12
	assert_success
	assert_output "answered 12"
}

@test "serve: at its start the vendor's CDI spec is written and the node's slice published; a prepared claim's answer survives a restart with the API server gone, then unprepare forgets it" {
	claim c1 "[$DEMO0, $DEMO1]"
	serve
	for _ in $(seq 100); do [ -s "$CD/ocidec.io-demo.json" ] && [ -s "$API/slices.json" ] && break; sleep 0.05; done
	run /usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); [print(j["kind"] + "=" + d["name"]) for d in j["devices"]]' "$CD/ocidec.io-demo.json"
	assert_line ocidec.io/demo=0
	assert_line ocidec.io/demo=1
	run slices '[(x["spec"]["driver"], x["spec"]["nodeName"], [d["name"] for d in x["spec"]["devices"]]) for x in s]'
	assert_output "('demo.ocidec.io', 'node1', ['demo-0', 'demo-1'])"
	run $KDRA prepare "$SOCK" v1 ns1/c1/uid-c1
	assert_output "uid-c1 devices: node1/demo-0[gpu]=ocidec.io/demo=0 node1/demo-1[gpu]=ocidec.io/demo=1"
	gets=$(grep -c 'resourceclaims/c1' "$API/requests.log")
	# the kubelet asks again: the same answer, the API server not asked
	run $KDRA prepare "$SOCK" v1beta1 ns1/c1/uid-c1
	assert_output "uid-c1 devices: node1/demo-0[gpu]=ocidec.io/demo=0 node1/demo-1[gpu]=ocidec.io/demo=1"
	[ "$(grep -c 'resourceclaims/c1' "$API/requests.log")" = "$gets" ]
	# the plugin killed, the API server gone: the next one answers the same
	kill -KILL "$PID"
	wait "$PID" || true
	PID=
	kill "$APIPID"
	wait "$APIPID" 2>/dev/null || true
	serve
	run $KDRA prepare "$SOCK" v1 ns1/c1/uid-c1
	assert_output "uid-c1 devices: node1/demo-0[gpu]=ocidec.io/demo=0 node1/demo-1[gpu]=ocidec.io/demo=1"
	# an unprepared claim is asked of the API server again, which is gone:
	# that claim's error, the plugin serving on
	run $KDRA unprepare "$SOCK" v1 ns1/c1/uid-c1
	assert_output "uid-c1 unprepared"
	run $KDRA prepare "$SOCK" v1 ns1/c1/uid-c1
	assert_line --regexp "^uid-c1 error: .*"
	run $KDRA info "$REG"
	assert_success
	grep -q "the node's resource slices: " "$LOG"
}

@test "an unknown method is UNIMPLEMENTED, a registration call on the DRA socket too; the plugin serves on" {
	serve
	run $KDRA unknown "$SOCK"
	assert_failure
	assert_output "status UNIMPLEMENTED: unknown method /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NoSuchMethod"
	run $KDRA info "$SOCK"
	assert_failure
	assert_output "status UNIMPLEMENTED: unknown method /pluginregistration.Registration/GetInfo"
	grep -q "warn: driver $DRV's DRA socket: call /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NoSuchMethod refused: unknown method" "$LOG"
	run $KDRA info "$REG"
	assert_success
}

@test "an oversized message is refused with RESOURCE_EXHAUSTED, and the next call on the same connection is answered" {
	serve
	run $KDRA oversize "$SOCK" 2000000
	assert_success
	assert_output "status RESOURCE_EXHAUSTED: a message over 1048576 bytes
then uid-after"
	# one far larger: refused before it is read (the plugin's memory stays small)
	run $KDRA oversize "$SOCK" 100000000
	assert_success
	assert_line --index 0 "status RESOURCE_EXHAUSTED: a message over 1048576 bytes"
	[ "$(awk '/^VmHWM/ { print $2 }' /proc/$PID/status)" -lt 65536 ]
	# just under the bound: taken
	run $KDRA oversize "$SOCK" 1048000
	assert_success
	assert_line --index 0 "answered"
}

@test "bytes that are not HTTP/2 close that connection with a line; the plugin serves the next" {
	serve
	run $KDRA garbage "$SOCK"
	assert_success
	assert_output closed
	grep -qx "ocidec dra: warn: driver $DRV's DRA socket: a connection closed: its peer does not speak HTTP/2 (no client preface)" "$LOG"
	run $KDRA garbage "$REG"
	assert_output closed
	run $KDRA info "$REG"
	assert_success
	run $KDRA prepare "$SOCK" v1 ns/c/u
	assert_success
}

@test "SIGTERM removes both sockets and its directory where no claim is kept there, the CDI specs stay; a killed plugin's stale sockets are replaced by the next, which serves" {
	serve
	wait_until -t 10 '[ -s "$CD/ocidec.io-demo.json" ]'
	stop
	[ ! -e "$REG" ] && [ ! -e "$SOCK" ]
	grep -q "signal 15: the plugin stops, its sockets removed" "$LOG"
	# no claim prepared: its directory gone; the CDI spec stays (pods of
	# prepared claims, and the NRI plugin's, name it)
	[ ! -e "$PD/$DRV" ] && [ -s "$CD/ocidec.io-demo.json" ]
	# a claim prepared: kept for the next plugin
	claim c1 "[$DEMO0]"
	serve
	run $KDRA prepare "$SOCK" v1 ns1/c1/uid-c1
	assert_output "uid-c1 devices: node1/demo-0[gpu]=ocidec.io/demo=0"
	stop
	grep -q uid-c1 "$PD/$DRV/claims.json"
	serve
	kill -KILL "$PID"
	wait "$PID" || true
	PID=
	[ -S "$REG" ] && [ -S "$SOCK" ]   # left behind
	serve
	run $KDRA info "$REG"
	assert_success
	assert_line "endpoint $SOCK"
	run $KDRA prepare "$SOCK" v1beta1 ns/c/u
	assert_success
	stop
}

@test "what is not a socket where a socket goes is left alone, a link too: one line, exit 1, no socket made" {
	api
	mkdir -p "$PD/$DRV"
	echo keep >"$SOCK"
	run --separate-stderr "$OCIDEC" dra serve "${OPTS[@]}" --no-cdi --no-publish --plugin-dir "$PD" --registry-dir "$RD"
	assert_failure 1
	assert_equal "$stderr" "ocidec dra: $SOCK: there, and not a socket: left alone"
	[ "$(cat "$SOCK")" = keep ] && [ ! -e "$REG" ]
	rm "$SOCK"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$REG"
	run --separate-stderr "$OCIDEC" dra serve "${OPTS[@]}" --no-cdi --no-publish --plugin-dir "$PD" --registry-dir "$RD"
	assert_failure 1
	assert_equal "$stderr" "ocidec dra: $REG: there, and not a socket: left alone"
	[ -L "$REG" ] && [ ! -e "$BATS_TEST_TMPDIR/elsewhere" ]
	# the driver's directory a link: not followed
	rm -rf "${PD:?}/$DRV" "$REG"
	mkdir "$BATS_TEST_TMPDIR/other"
	ln -s "$BATS_TEST_TMPDIR/other" "$PD/$DRV"
	run --separate-stderr "$OCIDEC" dra serve "${OPTS[@]}" --no-cdi --no-publish --plugin-dir "$PD" --registry-dir "$RD"
	assert_failure 1
	[[ "$stderr" == "ocidec dra: $PD/$DRV: not a directory of its own (a link is not followed): "* ]]
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/other")" ]
}

@test "bad usage: one line, exit 2" {
	unset NODE_NAME
	for args in "" "nope" "serve" "serve --driver Bad_Name" "serve --driver a.io --driver a.io" \
		"serve --driver a.io extra" "serve --driver -a.io" "serve --no-such-option"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$OCIDEC" dra $args
		assert_failure 2
		[ "$(wc -l <<<"$stderr")" = 1 ] || { echo "dra $args: $stderr"; false; }
	done
	# a driver that is no vendor's: said, nothing made
	api
	run --separate-stderr "$OCIDEC" dra serve "${OPTS[@]}" --driver gpu.nvidia.ocidec.io --plugin-dir "$PD" --registry-dir "$RD"
	assert_failure 2
	assert_equal "$stderr" "ocidec dra: --driver gpu.nvidia.ocidec.io: no vendor's in $CFG (VENDOR.ocidec.io)"
	# a socket path too long: said, nothing made
	long=$BATS_TEST_TMPDIR/$(printf 'p%.0s' $(seq 90))
	run --separate-stderr "$OCIDEC" dra serve "${OPTS[@]}" --no-cdi --no-publish --plugin-dir "$long" --registry-dir "$RD"
	assert_failure 2
	assert_equal "$stderr" "ocidec dra: driver $DRV: its socket paths are longer than a unix socket's (107 bytes)"
	[ -z "$(find "$RD" -mindepth 1)" ] && [ ! -e "$long" ]
}

@test "serve --host-root: the node's root for everything but the pod's token and CA; a rotated token is read again" {
	claim c1 "[$DEMO1]"
	api
	# the node: the vendor's config and driver root at the same paths inside
	local node=$BATS_TEST_TMPDIR/node
	mkdir -p "$node$(dirname "$DR")" "$node$(dirname "$CFG")" "$node/usr/bin" "$node/plugins" "$node/registry"
	cp -a "$DR" "$node$DR"
	cp -a "$CFG" "$node$CFG"
	cp "$OCIDEC" "$node/usr/bin/ocidec"
	run --separate-stderr "$OCIDEC" dra serve "${OPTS[@]}" --host-root "$node"
	assert_failure 2
	assert_equal "$stderr" "ocidec dra: --host-root: give --hook-path, the node's path of ocidec (see ocidec dra --help)"
	"$OCIDEC" dra serve "${OPTS[@]}" --host-root "$node" --hook-path /usr/bin/ocidec --plugin-dir /plugins \
		--registry-dir /registry --cdi-dir /cdi >>"$LOG" 2>&1 &
	PID=$!
	wait_until -t 10 '[ -S "$node/registry/$DRV-reg.sock" ] && [ -s "$node/cdi/ocidec.io-demo.json" ]' || { cat "$LOG"; ls -R "$node" | head -30; false; }
	[ ! -e "$PD/$DRV" ] && [ ! -e "$CD" ]   # nothing outside the node's root
	grep -q '"/usr/bin/ocidec"' "$node/cdi/ocidec.io-demo.json"   # the hook, the node's path
	run $KDRA info "$node/registry/$DRV-reg.sock"
	assert_line "endpoint /plugins/$DRV/dra.sock"
	run $KDRA prepare "$node/plugins/$DRV/dra.sock" v1 ns1/c1/uid-c1
	assert_output "uid-c1 devices: node1/demo-1[gpu]=ocidec.io/demo=1"
	[ -s "$node/plugins/$DRV/claims.json" ]
	# the token rotated (the pod's projected one): the next request carries the new one
	sleep 0.02
	echo "tok-rotated-$RANDOM" >"$API/token.new" && mv "$API/token.new" "$API/token"
	claim c2 "[$DEMO0]"
	run $KDRA prepare "$node/plugins/$DRV/dra.sock" v1 ns1/c2/uid-c2
	assert_output "uid-c2 devices: node1/demo-0[gpu]=ocidec.io/demo=0"
}

@test "dra classes: a DeviceClass per vendor, its CEL on the driver's name; serve started before any vendor config waits for one, said once" {
	run --separate-stderr ocidec dra classes -c "$CFG"
	assert_success
	run /usr/bin/python3 -c 'import json, sys; j = json.load(sys.stdin); [print(c["apiVersion"], c["kind"], c["metadata"]["name"], c["spec"]["selectors"][0]["cel"]["expression"]) for c in j["items"]]' <<<"$output"
	assert_output 'resource.k8s.io/v1 DeviceClass demo.ocidec.io device.driver == "demo.ocidec.io"'
	# the toolkit's install not there yet: serve waits for the configs
	api
	"$OCIDEC" dra serve "${OPTS[@]}" -c "$BATS_TEST_TMPDIR/later" --plugin-dir "$PD" --registry-dir "$RD" \
		--cdi-dir "$CD" >>"$LOG" 2>&1 &
	PID=$!
	wait_until -t 5 'grep -q "waiting for it" "$LOG"'
	[ ! -e "$REG" ]
	cp -r "$CFG" "$BATS_TEST_TMPDIR/later"
	wait_until -t 15 '[ -S "$REG" ]'
	assert_equal "$(grep -c "no vendor config in $BATS_TEST_TMPDIR/later yet: waiting for it" "$LOG")" 1
	run $KDRA info "$REG"
	assert_line "name $DRV"
}

@test "serve: its drivers' slices alone: a vendor without devices at its start is served and published at a tick once they appear; --driver one of two publishes that one's, another ocidec driver's slice on the node deleted" {
	local dr2=$BATS_TEST_TMPDIR/dr2
	cp -a "$DR" "$dr2"
	rm -f "$dr2"/dev/demo[0-9]*
	sed "s|^name = demo\$|name = demo2|; s|^activation_flag = OCI_DEMO\$|activation_flag = OCI_DEMO2|; s|^driver_root = .*|driver_root = $dr2|" \
		"$CFG/demo.ini" >"$CFG/demo2.ini"
	chmod 0644 "$CFG/demo2.ini"
	drivers() { slices 'sorted((x["spec"]["driver"], [d["name"] for d in x["spec"]["devices"]]) for x in s)'; }
	# both vendors served; demo2's driver not loaded yet: registered, no slice
	serve --every 1
	wait_until -t 10 '[ -S "$RD/demo2.ocidec.io-reg.sock" ] && [ -s "$API/slices.json" ]'
	sleep 1.5
	run drivers
	assert_output "('demo.ocidec.io', ['demo-0', 'demo-1'])"
	# its device appears: the next tick publishes it
	cp -a "$DR/dev/demo0" "$dr2/dev/"
	wait_until -t 10 '[ "$(drivers | wc -l)" = 2 ]'
	run drivers
	assert_output "('demo.ocidec.io', ['demo-0', 'demo-1'])
('demo2.ocidec.io', ['demo2-0'])"
	stop
	# one of them given: only its slice; demo2's, which no plugin here
	# would prepare, deleted
	serve --driver demo.ocidec.io --every 1
	wait_until -t 10 '[ "$(drivers | wc -l)" = 1 ]'
	run drivers
	assert_output "('demo.ocidec.io', ['demo-0', 'demo-1'])"
	[ ! -e "$RD/demo2.ocidec.io-reg.sock" ]
}
