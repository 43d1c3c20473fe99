#!/usr/bin/env bats
# `ocidec dra serve`, the kubelet's side of a DRA driver, driven as the
# kubelet drives a plugin (test/fixtures/kubelet-dra.py: Debian's
# python3-grpcio, the messages from ocidec's own .proto files): the
# registration socket (GetInfo, NotifyRegistrationStatus), the DRA
# service (v1 and v1beta1), and what a hostile or broken peer gets.

load helpers

KD=/usr/bin/python3

setup_file() {
	# the fixture's Python stubs, made once for the suite
	export KUBELET_DRA_STUBS=$BATS_FILE_TMPDIR/stubs
	mkdir -p "$KUBELET_DRA_STUBS"
}

setup() {
	common_setup
	PD=$BATS_TEST_TMPDIR/plugins
	RD=$BATS_TEST_TMPDIR/registry
	mkdir -p "$PD" "$RD"
	DRV=gpu.demo.ocidec.io
	REG=$RD/$DRV-reg.sock
	SOCK=$PD/$DRV/dra.sock
	LOG=$BATS_TEST_TMPDIR/dra.log
	KDRA="$KD $BATS_TEST_DIRNAME/fixtures/kubelet-dra.py"
}

teardown() {
	[ -z "${PID:-}" ] || kill "$PID" 2>/dev/null || true
	[ -z "${PID:-}" ] || wait "$PID" 2>/dev/null || true
}

# serve [ARGS...]: the plugin in the background (PID), its sockets there
serve() {
	"$OCIDEC" dra serve --driver "$DRV" --plugin-dir "$PD" --registry-dir "$RD" "$@" 2>>"$LOG" &
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

@test "NodePrepareResources and NodeUnprepareResources, v1 and v1beta1: an answer per claim, keyed by UID" {
	serve
	for v in v1 v1beta1; do
		run $KDRA prepare "$SOCK" $v ns1/claim-a/uid-a ns2/claim-b/uid-b
		assert_success
		# (until the claim logic is merged: each claim's own error)
		assert_output "uid-a error: ocidec dra: claim ns1/claim-a: preparing claims is not wired yet
uid-b error: ocidec dra: claim ns2/claim-b: preparing claims is not wired yet"
		run $KDRA unprepare "$SOCK" $v ns1/claim-a/uid-a
		assert_success
		assert_output "uid-a error: ocidec dra: claim ns1/claim-a: unpreparing claims is not wired yet"
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

@test "SIGTERM removes both sockets; a killed plugin's stale sockets are replaced by the next, which serves" {
	serve
	stop
	[ ! -e "$REG" ] && [ ! -e "$SOCK" ]
	grep -q "signal 15: the plugin stops, its sockets removed" "$LOG"
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
	mkdir -p "$PD/$DRV"
	echo keep >"$SOCK"
	run --separate-stderr "$OCIDEC" dra serve --driver "$DRV" --plugin-dir "$PD" --registry-dir "$RD"
	assert_failure 1
	assert_equal "$stderr" "ocidec dra: $SOCK: there, and not a socket: left alone"
	[ "$(cat "$SOCK")" = keep ] && [ ! -e "$REG" ]
	rm "$SOCK"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$REG"
	run --separate-stderr "$OCIDEC" dra serve --driver "$DRV" --plugin-dir "$PD" --registry-dir "$RD"
	assert_failure 1
	assert_equal "$stderr" "ocidec dra: $REG: there, and not a socket: left alone"
	[ -L "$REG" ] && [ ! -e "$BATS_TEST_TMPDIR/elsewhere" ]
	# the driver's directory a link: not followed
	rm -rf "${PD:?}/$DRV" "$REG"
	mkdir "$BATS_TEST_TMPDIR/other"
	ln -s "$BATS_TEST_TMPDIR/other" "$PD/$DRV"
	run --separate-stderr "$OCIDEC" dra serve --driver "$DRV" --plugin-dir "$PD" --registry-dir "$RD"
	assert_failure 1
	[[ "$stderr" == "ocidec dra: $PD/$DRV: not a directory of its own (a link is not followed): "* ]]
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/other")" ]
}

@test "bad usage: one line, exit 2" {
	for args in "" "nope" "serve" "serve --driver Bad_Name" "serve --driver a.io --driver a.io" \
		"serve --driver a.io extra" "serve --driver -a.io" "serve --no-such-option"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$OCIDEC" dra $args
		assert_failure 2
		[ "$(wc -l <<<"$stderr")" = 1 ] || { echo "dra $args: $stderr"; false; }
	done
	# a valid name (labels of 60) whose socket path is too long: said, nothing made
	long=$(printf 'a%.0s' $(seq 60)).$(printf 'b%.0s' $(seq 60)).io
	run --separate-stderr "$OCIDEC" dra serve --driver "$long" --plugin-dir "$PD" --registry-dir "$RD"
	assert_failure 2
	assert_equal "$stderr" "ocidec dra: driver $long: its socket paths are longer than a unix socket's (107 bytes)"
	[ -z "$(find "$PD" "$RD" -mindepth 1)" ]
}
