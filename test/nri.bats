#!/usr/bin/env bats
# ocidec nri, the NRI plugin, against the runtimes that have NRI: Debian
# 13's containerd 1.7 (NRI turned on in its config) and Debian unstable's
# containerd 2.x (on by default), in the Debian 13 bed (test/fixtures/bed.sh,
# the hybrid layout: containerd 2.x needs this host's cgroup v1
# controllers), their CRI driven as kubelet drives it (test/fixtures/cri.py),
# with what a device plugin's Allocate answer puts in CreateContainer: the
# variable (envvar strategy), /dev/null mounts (volume-mounts), a CDI
# annotation (cdi-annotations) and the CRI's CDI field (cdi-cri). No runtime
# handler, no containerd config edit for ocidec. Once, in the static
# build's pass (the bed runs the static binary). The plugin's bounds (one
# request's time, its memory over many) with both builds, against
# test/fixtures/nri-runtime.py (its steps mode) standing in for the
# runtime: no bed.

load helpers

setup_file() {
	is_static || return 0
	export NB
	NB=$(mktemp -d /tmp/ocidec-bedn.XXXXXX)
}

teardown_file() {
	[ -n "${NB:-}" ] || return 0
	"$BATS_TEST_DIRNAME/fixtures/bed.sh" stop "$NB"   # (none started: nothing)
	rm -rf "$NB"
}

setup() {
	common_setup
}

# bed_up: a test of the engines, in the static build's pass only: the bed
# (DIR $NB, the hybrid layout) built by the first that needs it
bed_up() {
	is_static || skip "the engines run once, in the static build's pass"
	[ ! -e "$NB/.up" ] || return 0
	"$BATS_TEST_DIRNAME/fixtures/cri-proto.sh" >/dev/null
	"$BATS_TEST_DIRNAME/fixtures/bed-setup.sh" "$NB" hybrid "$OCIDEC"
	touch "$NB/.up"
}

teardown() {
	[ -e "${NB:-}/.up" ] || return 0
	nri_stop "$NB"
	nri_group_only "$NB" off
	containerd2_out
	containerd_stop "$NB"
}

SEE='ls /dev | grep demo; grep -c " /opt/demo/lib" /proc/mounts; demo-tool'

# ctrd_nri DIR 1.7|2: containerd of that version as a node runs it, with
# NRI (1.7: turned on, once per node; 2.x: its default) and CDI on
ctrd_nri() {
	local d=$1
	if [ "$2" = 2 ]; then
		containerd2_in "$d"
		containerd3_config "$d" 2 >"$d/root/etc/containerd/config.toml"
	else
		{
			containerd_config "$d"
			printf '  enable_cdi = true\n[plugins."io.containerd.nri.v1.nri"]\n  disable = false\n'
		} >"$d/root/etc/containerd/config.toml"
	fi
	containerd_start "$d"
	bed "$d" ctr -a "$d/ctrd/ctrd.sock" -n k8s.io images import "$d/image.tar" >/dev/null
}

@test "ocidec nri on containerd 1.7 (NRI on) and 2.x (by default), through the CRI: the device plugin's envvar, cdi-annotations and cdi-cri answers give exactly their devices, once; a pod asking for nothing gets nothing; a refusal is ocidec's line in the CRI's error; containerd restarted under the plugin, the plugin killed and started again: nothing hangs, the behaviour holds (issue 35)" {
	bed_up
	d=$NB
	for v in 1.7 2; do
		: >"$d/nri.log"
		ctrd_nri "$d" "$v"
		run bed "$d" containerd --version
		echo "# $output" >&3
		nri_start "$d"
		wait_until -t 10 'nri_registered "$d" 1'
		# envvar: the variable the device plugin (or the pod) sets
		run pod "$d" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c "$SEE"
		assert_success
		assert_output $'demo1\ndemoctl\n1\ndemo-tool: the answer is 42'
		# nothing asked: nothing there (stderr into stdout in the
		# container: the CRI's log orders two streams as they come)
		run -127 pod "$d" docker.io/library/ocidec-test:1 sh -c "{ $SEE; } 2>&1"
		assert_output $'0\nsh: demo-tool: not found'
		# cdi-cri and cdi-annotations: containerd's CDI gives the spec's
		# device and ocidec's hook; the plugin leaves it (no second mount)
		run pod "$d" --cdi ocidec.io/demo=1 docker.io/library/ocidec-test:1 sh -c "$SEE"
		assert_output $'demo1\ndemoctl\n1\ndemo-tool: the answer is 42'
		run pod "$d" --ann cdi.k8s.io/ocidec=ocidec.io/demo=0 docker.io/library/ocidec-test:1 sh -c "$SEE"
		assert_output $'demo0\ndemoctl\n1\ndemo-tool: the answer is 42'
		grep -q "has ocidec's edits already" "$d/nri.log"
		# a request that cannot be met: the pod's CreateContainer fails
		# with ocidec's line, which kubectl describe shows as the event
		run pod "$d" --env OCI_DEMO=7 docker.io/library/ocidec-test:1 true
		assert_failure
		assert_output --regexp "details = \"[^\"]*rpc error: code = Unknown desc = ocidec: container c in pod default/ocidec-[0-9a-f]+: demo: no device 7: $d/dr/dev/demo7 not found \(this host has 0, 1\)\""
		echo "# containerd $v: the CRI's error: $(grep -o 'details = "[^"]*' <<<"$output" | head -n 1)" >&3
		# containerd restarted under the plugin: it connects again
		containerd_stop "$d"
		containerd_start "$d"
		wait_until -t 15 'nri_registered "$d" 2'
		run pod "$d" --env OCI_DEMO=0 docker.io/library/ocidec-test:1 sh -c "$SEE"
		assert_output $'demo0\ndemoctl\n1\ndemo-tool: the answer is 42'
		# the plugin killed: a pod asking for nothing starts (NRI goes on
		# without a plugin); one asking for devices starts without them
		nri_stop "$d"
		run pod "$d" docker.io/library/ocidec-test:1 echo started
		assert_success
		assert_output started
		run pod "$d" --env OCI_DEMO=0 docker.io/library/ocidec-test:1 sh -c 'ls /dev | grep -c demo'
		assert_output 0
		# and started again: its devices again
		nri_start "$d"
		wait_until -t 10 'nri_registered "$d" 3'
		run pod "$d" --env OCI_DEMO=all docker.io/library/ocidec-test:1 sh -c "$SEE"
		assert_output $'demo0\ndemo1\ndemoctl\n1\ndemo-tool: the answer is 42'
		nri_stop "$d"
		containerd2_out
		containerd_stop "$d"
	done
}

@test "ocidec nri where the runtime takes CDI devices from a plugin (containerd 2.1 and later, NRI 0.8): with --cdi-dir the plugin keeps ocidec's specs there and a pod's devices come as their CDI devices (no node, mount or hook in the adjustment), exactly what it asked; a pod asking for nothing untouched; a refusal is ocidec's line in the CRI's error; a spec not current gives the edits, said; containerd 1.7 keeps the edits (issue 49)" {
	bed_up
	d=$NB
	for v in 2 1.7; do
		: >"$d/nri.log"
		ctrd_nri "$d" "$v"
		bed "$d" rm -rf /var/run/cdi
		nri_start "$d" --cdi-dir /var/run/cdi
		wait_until -t 10 'nri_registered "$d" 1'
		wait_until -t 10 'bed "$d" test -s /var/run/cdi/ocidec.io-demo.json'
		run pod "$d" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c "$SEE"
		assert_success
		assert_output $'demo1\ndemoctl\n1\ndemo-tool: the answer is 42'
		run pod "$d" --env OCI_DEMO=all docker.io/library/ocidec-test:1 sh -c "$SEE"
		assert_output $'demo0\ndemo1\ndemoctl\n1\ndemo-tool: the answer is 42'
		run -127 pod "$d" docker.io/library/ocidec-test:1 sh -c "{ $SEE; } 2>&1"
		assert_output $'0\nsh: demo-tool: not found'
		run pod "$d" --env OCI_DEMO=7 docker.io/library/ocidec-test:1 true
		assert_failure
		assert_output --regexp "details = \"[^\"]*rpc error: code = Unknown desc = ocidec: container c in pod default/ocidec-[0-9a-f]+: demo: no device 7: $d/dr/dev/demo7 not found \(this host has 0, 1\)\""
		sed -n 's/^ocidec nri: info: \(registered with\|container c in pod default\/ocidec-[0-9a-f]*: \)/\1/p' "$d/nri.log" |
			sed "s/^/# containerd $v: /" >&3
		if [ "$v" = 2 ]; then
			grep -q '^ocidec nri: info: containerd v\?2\.[1-9][^ ]* takes CDI devices from a plugin' "$d/nri.log"
			run grep -c "^ocidec nri: info: container c in pod default/ocidec-[0-9a-f]*: CDI devices ocidec.io/demo=1 (ocidec's specs in /var/run/cdi)$" "$d/nri.log"
			assert_output 1
			grep -q "CDI devices ocidec.io/demo=all (" "$d/nri.log"
			run grep -c 'device nodes,' "$d/nri.log"
			assert_output 0
			# a spec not kept by this plugin, not what the refresh writes
			# now: the edits, said
			nri_stop "$d"
			bed "$d" sh -c 'echo >>/var/run/cdi/ocidec.io-demo.json'
			nri_start "$d"
			wait_until -t 10 'nri_registered "$d" 2'
			run pod "$d" --env OCI_DEMO=0 docker.io/library/ocidec-test:1 sh -c "$SEE"
			assert_output $'demo0\ndemoctl\n1\ndemo-tool: the answer is 42'
			grep -q "its edits, not CDI devices: demo: /var/run/cdi/ocidec.io-demo.json is not the spec of the devices as they are now" "$d/nri.log"
			grep -q 'container c in pod default/ocidec-[0-9a-f]*: 2 device nodes' "$d/nri.log"
		else
			run grep -c 'CDI devices' "$d/nri.log"
			assert_output 0
			grep -q 'container c in pod default/ocidec-[0-9a-f]*: 2 device nodes' "$d/nri.log"
		fi
		nri_stop "$d"
		bed "$d" rm -rf /var/run/cdi
		containerd2_out
		containerd_stop "$d"
	done
}

@test "ocidec nri on containerd 1.7 and 2.x (NRI before 0.11: no container's user): a device node of group 44 only (0660): a pod run as uid 1000 without the group has the node and cannot open it, with supplementalGroups 44 or runAsGroup 44 (or as root) opens it; the plugin says once in its life that the runtime does not send the user, no container's line" {
	bed_up
	d=$NB
	nri_group_only "$d" on
	for v in 1.7 2; do
		: >"$d/nri.log"
		ctrd_nri "$d" "$v"
		nri_start "$d"
		wait_until -t 10 'nri_registered "$d" 1'
		nri_group_pods "$d" pod
		run grep -c "^ocidec nri: warn: a device node of group 44 only: NRI cannot add that group to the container's process, and this runtime does not send the container's user (NRI 0.11's: containerd 2.3, CRI-O 1.36): a non-root container needs runAsGroup or supplementalGroups 44$" "$d/nri.log"
		assert_output 1
		run grep -c 'neither root nor in group' "$d/nri.log"
		assert_output 0
		grep 'group 44' "$d/nri.log" | sed "s/^/# containerd $v: /" >&3
		nri_stop "$d"
		containerd2_out
		containerd_stop "$d"
	done
}

@test "ocidec nri under deploy/kubernetes' tenant policy (kubernetes), containerd 2.x: the device plugin's volume-mounts answer gives exactly its GPU, and the image's all does not widen it; a pod's own NVIDIA_VISIBLE_DEVICES gets nothing, said in the plugin's log (NRI passes no capabilities: every container is judged unprivileged); another plugin of the name with other configs is refused the connection and waits; a silent control-socket client holds nothing up; --status counts only this PID namespace's plugin (review of issue 35)" {
	bed_up
	d=$NB
	: >"$d/nri.log"
	mkdir -p "$d/nvk"
	# NVIDIA's file as the DaemonSet installs it, the demo vendor standing
	# in for the GPUs, with the shipped device-list dir and the policy
	sed "/^activation_flag/a $(grep '^device_list_dir' "$BATS_TEST_DIRNAME/../conf/nvidia.ini")\nselection = mounts annotation env\nunprivileged_selection = mounts" \
		"$d/nv/nvidia.ini" >"$d/nvk/nvidia.ini"
	chmod 0644 "$d/nvk/nvidia.ini"
	ctrd_nri "$d" 2
	nri_start "$d" -c "$d/nvk"
	wait_until -t 10 'nri_registered "$d" 1'
	see='ls /dev | grep demo; true'
	run pod "$d" --env NVIDIA_VISIBLE_DEVICES=all docker.io/library/ocidec-test:1 sh -c "$see"
	assert_success
	assert_output ''
	grep -q "NVIDIA_VISIBLE_DEVICES=all ignored: the vendor takes no device selection from 'env' for a container without CAP_SYS_ADMIN" "$d/nri.log"
	run pod "$d" --mount /dev/null:/var/run/nvidia-container-devices/1 \
		--env NVIDIA_VISIBLE_DEVICES=/var/run/nvidia-container-devices docker.io/library/ocidec-test:1 sh -c "$see"
	assert_success
	assert_output $'demo1\ndemoctl'
	# even a privileged pod: NRI does not say it is one
	run pod "$d" --cap-add SYS_ADMIN --env NVIDIA_VISIBLE_DEVICES=all docker.io/library/ocidec-test:1 sh -c "$see"
	assert_output ''
	# another plugin of the name with other configs (a host's service
	# beside the DaemonSet's): refused the connection, it waits, said;
	# the serving one goes on with its own
	bed "$d" sh -c 'exec timeout 8 ocidec nri >"$0/other.log" 2>&1' "$d" &
	other=$!
	wait_until -t 10 'grep -q "another ocidec nri plugin named ocidec runs here" "$d/other.log"'
	run pod "$d" --env NVIDIA_VISIBLE_DEVICES=all docker.io/library/ocidec-test:1 sh -c "$see"
	assert_output ''
	grep -q "asked for the connection: refused" "$d/nri.log"
	wait "$other" || true
	# a client of the control socket that says nothing holds nothing up
	# (from this host: the bed has no python; its /run through its init's root)
	/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
time.sleep(6)' "/proc/$(cat "$d/anchor.pid")/root/run/ocidec/nri-ocidec.sock" &
	silent=$!
	sleep 0.5
	run pod "$d" --mount /dev/null:/var/run/nvidia-container-devices/0 docker.io/library/ocidec-test:1 sh -c "$see"
	assert_output $'demo0\ndemoctl'
	kill "$silent" 2>/dev/null || true
	# the status of another PID namespace's plugin: not this pod's
	run bed "$d" unshare -p -f --mount-proc ocidec nri --status
	assert_failure 1
	assert_line "(the plugin of another PID namespace: another pod's; --any takes it)"
	run bed "$d" unshare -p -f --mount-proc ocidec nri --status --any
	assert_success
}

# toolkit DIR NAME: the DaemonSet's container as deploy/kubernetes runs it
# (its args as the kubelet expands them from the ConfigMap: ocidec install
# --runtime=nri --wait ...), the node's root its /host: here the bed's /,
# the demo vendor standing in for NVIDIA's configs (DIR/nvk); in the
# background, its pid in DIR/NAME.pid, its output DIR/NAME.log
toolkit() {
	local d=$1 name=$2 a args=()
	while read -r a; do
		[ "$a" = --host-root=/host ] && a=--host-root=/
		args+=("$a")
	done < <("$FIXTURES/k8s-args.py" "$BATS_TEST_DIRNAME/../deploy/kubernetes/ocidec-toolkit.yaml")
	bed "$d" sh -c 'n=$1; shift; echo $$ >"$0/$n.pid"; exec ocidec install "$@" >"$0/$n.log" 2>&1' "$d" "$name" \
		-c "$d/nvk" "${args[@]}" &
	wait_until -t 10 '[ -s "$d/$name.pid" ]'
}

# ready DIR: the DaemonSet's readiness probe, as written (its /host the bed's /)
ready() {
	local cmd
	mapfile -t cmd < <(/usr/bin/python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d["kind"] == "DaemonSet":
        print("\n".join(d["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["exec"]["command"]))' \
		"$BATS_TEST_DIRNAME/../deploy/kubernetes/ocidec-toolkit.yaml")
	bed "$1" "${cmd[@]/#--host-root=\/host/--host-root=/}"
}

@test "the DaemonSet's rollout under NRI (deploy/kubernetes' args and readiness probe, containerd 2.x): a newer pod's plugin takes the connection over from the old one, the runtime sees one plugin throughout, the old pod's SIGTERM leaves the newer install; GPU pods created back to back all the while get exactly their GPU, none lost; the node's CDI specs kept true by the pod through a driver upgrade (cdi-cri); the last pod's SIGTERM leaves the node as it was, specs included (issue 35)" {
	bed_up
	d=$NB
	mkdir -p "$d/nvk" "$d/roll"
	sed "/^activation_flag/a $(grep '^device_list_dir' "$BATS_TEST_DIRNAME/../conf/nvidia.ini")" \
		"$d/nv/nvidia.ini" >"$d/nvk/nvidia.ini"
	chmod 0644 "$d/nvk/nvidia.ini"
	ctrd_nri "$d" 2
	# the driver container's root, where the ConfigMap says
	bed "$d" sh -c 'mkdir -p /run/nvidia/driver && mount --bind "$1/dr" /run/nvidia/driver' sh "$d"
	run ready "$d"
	assert_failure
	toolkit "$d" old
	wait_until -t 20 'ready "$d" >/dev/null'
	run ready "$d"
	assert_output --regexp '^registered with containerd 2\.[^ ]+ as 50-ocidec$'
	[ -x "$d/root/usr/local/ocidec/bin/ocidec" ]
	# the node's CDI specs, kept true by the pod: the cdi-cri strategy
	kind=$(bed "$d" ocidec cdi --list -c "$d/nvk" | head -n 1 | cut -d= -f1)
	wait_until -t 10 'bed "$d" test -s "/var/run/cdi/${kind/\//-}.json"'
	run pod "$d" --cdi "$kind=0" docker.io/library/ocidec-test:1 sh -c 'ls /dev | grep demo'
	assert_output $'demo0\ndemoctl'
	# GPU pods, one after another, through the rollout
	(
		for i in $(seq 1 12); do
			pod "$d" --mount /dev/null:/var/run/nvidia-container-devices/1 docker.io/library/ocidec-test:1 \
				sh -c 'ls /dev | grep demo' >"$d/roll/$i.out" 2>&1
			echo $? >>"$d/roll/$i.out"
		done
	) &
	roll=$!
	wait_until -t 60 '[ -s "$d/roll/3.out" ]'
	# the surge pod: installs over the old one's, takes the plugin's place
	toolkit "$d" new
	wait_until -t 20 'grep -q "took the connection to containerd" "$d/new.log"'
	wait_until -t 20 'grep -q "handed its connection over" "$d/old.log"'
	# then the old pod is deleted: it leaves the newer install in place
	bed "$d" kill "$(cat "$d/old.pid")"
	wait_until -t 30 'grep -q "a newer install owns /usr/local/ocidec: left in place" "$d/old.log"'
	run ready "$d"
	assert_success
	wait "$roll"
	for i in $(seq 1 12); do
		run cat "$d/roll/$i.out"
		assert_output $'demo1\ndemoctl\n0'
	done
	# a driver upgrade under the running pod: a new library version, the
	# link moved; no command run: the next pods get it, through the
	# plugin and through the spec it keeps true
	lib=$d/dr/opt/demo/lib
	cp "$lib/libdemo.so.1.0" "$lib/libdemo.so.1.1"
	ln -sfn libdemo.so.1.1 "$lib/libdemo.so.1"
	run pod "$d" --mount /dev/null:/var/run/nvidia-container-devices/1 docker.io/library/ocidec-test:1 \
		sh -c 'readlink /opt/demo/lib/libdemo.so.1; demo-tool'
	assert_output $'libdemo.so.1.1\ndemo-tool: the answer is 42'
	wait_until -t 15 'bed "$d" grep -q libdemo.so.1.1 "/var/run/cdi/${kind/\//-}.json"'
	run pod "$d" --cdi "$kind=1" docker.io/library/ocidec-test:1 sh -c 'readlink /opt/demo/lib/libdemo.so.1; demo-tool'
	assert_output $'libdemo.so.1.1\ndemo-tool: the answer is 42'
	ln -sfn libdemo.so.1.0 "$lib/libdemo.so.1"
	rm "$lib/libdemo.so.1.1"
	# one registration in containerd's log, for the whole rollout
	[ "$(grep -c 'registered as \\"50-ocidec\\"' "$d/containerd.log")" = 1 ]
	# kubectl delete: the last pod's SIGTERM takes everything off the node
	bed "$d" kill "$(cat "$d/new.pid")"
	wait_until -t 30 'grep -q "ocidec install: uninstalled from /usr/local/ocidec" "$d/new.log"'
	[ ! -e "$d/root/usr/local/ocidec" ]
	run bed "$d" ls /var/run/cdi
	refute_output --partial "${kind/\//-}"
	run ready "$d"
	assert_failure
	run pod "$d" --mount /dev/null:/var/run/nvidia-container-devices/1 docker.io/library/ocidec-test:1 sh -c 'ls /dev | grep -c demo'
	assert_output 0
	bed "$d" umount /run/nvidia/driver
	grep -v ': info: \(nvidia\|container\)' "$d/old.log" "$d/new.log" | sed 's/^/# /' >&3
}

# nri_pods CFG STEP...: the plugin under test, with the configs CFG and a
# name of its own, driven by test/fixtures/nri-runtime.py's steps mode as a
# runtime drives it (its STEPs); the plugin's log in
# $BATS_TEST_TMPDIR/nri.log. (The answer's hook is never run here:
# --hook-path is any file of root's.)
nri_pods() {
	local cfg=$1 sock=$BATS_TEST_TMPDIR/nri.sock
	shift
	/usr/bin/python3 "$FIXTURES/nri-runtime.py" steps "$sock" "$@" -- sh -c \
		'exec ocidec nri -c "$0" --socket "$1" --name "test$$" --hook-path "$2" 2>>"$3"' \
		"$cfg" "$sock" "$(readlink -f /bin/true)" "$BATS_TEST_TMPDIR/nri.log"
}

@test "ocidec nri bounds one request (issue 46): an environment of OCI_DEMO=0 entries as large as ttrpc carries (4 MiB) is refused within the runtime's 2 s, saying how many entries and the most taken; the next pod is answered at once, by the same plugin" {
	DR=$BATS_TEST_TMPDIR/dr demo_vendor
	run nri_pods "$CFG" flood:max:OCI_DEMO=0 pod:OCI_DEMO=0 alive
	assert_success
	assert_line --index 0 --regexp '^env of [0-9]+ entries, 419[0-9]{4} bytes$'
	n=$(sed -n '1s/^env of \([0-9]*\) .*/\1/p' <<<"$output")
	assert_line --index 1 --regexp "^refused [01]\.[0-9]+ s: ocidec: container c in pod default/pod1: demo: the container's environment: $n entries of OCI_DEMO, more than 64$"
	assert_line --index 2 --regexp '^answered 0\.[0-9]+ s: 2 devices, 4 mounts$'
	assert_line --index 3 --regexp '^alive [0-9]+$'
	grep -q "demo: the container's environment: $n entries of OCI_DEMO, more than 64" "$BATS_TEST_TMPDIR/nri.log"
	echo "# $n entries: ${lines[1]%%: *}; the next pod: ${lines[2]%%: *}" >&3
}

@test "ocidec nri: a decision that hangs (the vendor's version_file a FIFO no one writes) is stopped 1.5 s after the request, that container refused, saying so; the plugin lives on and answers the next pod at once (issue 46)" {
	mkfifo "$BATS_TEST_TMPDIR/version"
	DR=$BATS_TEST_TMPDIR/dr EXTRA="version_file = $BATS_TEST_TMPDIR/version" demo_vendor
	run nri_pods "$CFG" pod:OCI_DEMO=0 pod: alive
	assert_success
	assert_line --index 0 --regexp '^refused 1\.[5-9][0-9]* s: ocidec: container c in pod default/pod1: not decided within 1500 ms of the request \(the runtime waits 2 s\): stopped, the container refused'
	assert_line --index 1 --regexp '^answered 0\.[0-9]+ s: 0 devices, 0 mounts$'
	assert_line --index 2 --regexp '^alive [0-9]+$'
}

@test "ocidec nri's memory stays flat (issue 46): 1,000 CreateContainers each given a GPU by its UUID (NVIDIA's information files read for each) leave the plugin's RSS within 10 % of its RSS after the first 100" {
	driver_root
	nvidia_ini "$DR"
	gpu=NVIDIA_VISIBLE_DEVICES=GPU-11111111-2222-3333-4444-555555555555
	# (the sanitizer build: no quarantine, which holds what is freed)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0 \
		run nri_pods "$CFG" "pod:$gpu" "pods:99:$gpu" rss "pods:900:$gpu" rss
	assert_success
	assert_line --index 0 --regexp '^answered [0-9.]+ s: 3 devices, [0-9]+ mounts$'
	assert_line --index 1 --regexp '^99 pods [0-9.]+ s: 99 answered, 0 refused$'
	assert_line --index 3 --regexp '^900 pods [0-9.]+ s: 900 answered, 0 refused$'
	a=${lines[2]#rss } b=${lines[4]#rss }
	echo "# RSS after 100 requests: $a kB, after 1000: $b kB" >&3
	[ $((b * 100)) -le $((a * 110)) ]
}

@test "ocidec nri under the Kubernetes tenant policy as install writes it: a container annotation equal to its pod's is the pod's (CRI-O copies them all) and selects nothing, said; kubelet's own (a device plugin's) selects; a pod's other annotation takes nothing from it (issue 46, finding 2)" {
	DR=$BATS_TEST_TMPDIR/dr demo_vendor
	H=$BATS_TEST_TMPDIR/node
	mkdir "$H"
	ocidec install --host-root "$H" -c "$CFG" --tenant-policy kubernetes --runtime podman >/dev/null
	run nri_pods "$H/usr/local/ocidec/etc/ocidec.d" 'ann:ocidec.io/demo=all;ocidec.io/demo=all' \
		'ann:ocidec.io/demo=1;' 'ann:ocidec.io/demo=1;ocidec.io/demo=all' 'ann:;ocidec.io/demo=all'
	assert_success
	assert_line --index 0 --regexp '^answered [0-9.]+ s: 0 devices, 0 mounts$'
	assert_line --index 1 --regexp '^answered [0-9.]+ s: 2 devices, [0-9]+ mounts$'
	assert_line --index 2 --regexp '^answered [0-9.]+ s: 2 devices, [0-9]+ mounts$'
	assert_line --index 3 --regexp '^answered [0-9.]+ s: 0 devices, 0 mounts$'
	run grep -c "demo: annotation ocidec.io/demo ignored: the pod's own, which its tenant writes; a container without CAP_SYS_ADMIN takes no device selection from what its tenant writes (unprivileged_selection)" \
		"$BATS_TEST_TMPDIR/nri.log"
	assert_output 1
}
