#!/usr/bin/env bats
# ocidec nri failing closed: containerd 2.2 (NRI v0.10 and later), whose
# builtin default validator refuses a container that a required plugin did
# not see. The node's config.toml names ocidec in required_plugins (every
# container; a pod annotated tolerate-missing-plugins.ocidec.io=true, as
# ocidec's own DaemonSet pod must be, exempt), or a pod names it in the
# annotation required-plugins.noderesource.dev (that pod only). Containerd
# 2.2 built from source (test/fixtures/containerd22.sh: skipped where no
# source is at hand), in the Debian 13 bed (test/fixtures/bed.sh, the hybrid
# layout) as test/nri.bats runs containerd 2.x, its CRI driven as kubelet
# drives it (test/fixtures/cri.py). CRI-O (1.34 and later: the same
# validator, in crio.conf's [crio.nri.default_validator]; it injects a
# plugin's CDI devices) the same, built from source
# (test/fixtures/crio-build.sh: skipped where no source is at hand), in the
# same bed. Once, in the static build's pass.

load helpers

setup_file() {
	is_static || return 0
	export NB
	NB=$(mktemp -d /tmp/ocidec-bedc.XXXXXX)
}

teardown_file() {
	[ -n "${NB:-}" ] || return 0
	"$BATS_TEST_DIRNAME/fixtures/bed.sh" stop "$NB"   # (none started: nothing)
	rm -rf "$NB"
}

setup() {
	common_setup
}

teardown() {
	[ -e "${NB:-}/.up" ] || return 0
	nri_stop "$NB"
	nri_group_only "$NB" off
	containerd2_out
	containerd_stop "$NB"
	crio_stop "$NB"
}

# built VAR SCRIPT WHAT: the root test/fixtures/SCRIPT prints (an engine
# built from source once, then reused) in VAR; the test skipped, saying
# why, where it cannot be built (exit 3: no WHAT)
built() {
	local rc=0 root
	is_static || skip "the engines run once, in the static build's pass"
	root=$("$FIXTURES/$2" 2>"$BATS_TEST_TMPDIR/built.err") || rc=$?
	[ "$rc" -ne 3 ] || skip "no $3: $(tail -n 1 "$BATS_TEST_TMPDIR/built.err")"
	[ "$rc" -eq 0 ] || { cat "$BATS_TEST_TMPDIR/built.err" >&2; return 1; }
	sed 's/^/# /' "$BATS_TEST_TMPDIR/built.err" >&3
	printf -v "$1" %s "$root"
}

# bed_up [crio]: containerd 2.2 (C22), or CRI-O (CRIO), at hand, the bed
# (DIR $NB, the hybrid layout) built by the first test that needs it
bed_up() {
	if [ "${1:-}" = crio ]; then
		built CRIO crio-build.sh "CRI-O 1.34 or later (NRI's default validator)"
	else
		built C22 containerd22.sh "containerd 2.2 (NRI's default validator)"
	fi
	[ ! -e "$NB/.up" ] || return 0
	"$BATS_TEST_DIRNAME/fixtures/cri-proto.sh" >/dev/null
	"$BATS_TEST_DIRNAME/fixtures/bed-setup.sh" "$NB" hybrid "$OCIDEC"
	touch "$NB/.up"
}

# ctrd22 DIR [TOML]: containerd 2.2 as a node runs it, in the bed's
# /usr/local/bin (where upstream's release goes: first on PATH; teardown's
# containerd2_out takes it out), NRI on (its default), TOML appended to
# its config.toml; the test image imported
ctrd22() {
	local d=$1
	cp "$C22/usr/bin/containerd" "$C22/usr/bin/containerd-shim-runc-v2" "$C22/usr/bin/ctr" "$d/root/usr/local/bin/"
	# shellcheck disable=SC2034 # (helpers.bash's containerd2_out reads it)
	C2_BED=$d
	{
		containerd3_config "$d" 22
		printf '%s\n' "${2:-}"
	} >"$d/root/etc/containerd/config.toml"
	containerd_start "$d"
	bed "$d" ctr -a "$d/ctrd/ctrd.sock" -n k8s.io images import "$d/image.tar" >/dev/null
}

# The node's config: the default validator on, ocidec required of every
# container, the pods annotated tolerate-missing-plugins.ocidec.io=true
# exempt (ocidec's DaemonSet pod, static pods)
REQUIRED='[plugins."io.containerd.nri.v1.nri".default_validator]
  enable = true
  required_plugins = ["ocidec"]
  tolerate_missing_plugins_annotation = "tolerate-missing-plugins.ocidec.io"'
# the validator on, nothing required of every container: a pod's annotation
# required-plugins.noderesource.dev requires plugins of its own containers
VALIDATOR='[plugins."io.containerd.nri.v1.nri".default_validator]
  enable = true'

SEE='ls /dev | grep demo; grep -c " /opt/demo/lib" /proc/mounts; demo-tool'
DEMO1=$'demo1\ndemoctl\n1\ndemo-tool: the answer is 42'
# the CRI's error when the validator refuses (cri.py prints the RPC's details)
ERR='failed to create containerd container: failed to get NRI adjustment for container: validator "00-default-validator" rejected container adjustment, reason: validation error: required plugin "ocidec" not present'
REFUSED="details = \"$ERR\""

# pod_steps DIR STEP...: one pod, containers created in it one after
# another (as kubelet starts a pod's next container, or restarts one), each
# STEP "ctr:K=V" a container with that environment showing its demo
# devices (its output, "none" for none; or "refused: " and the CRI's error),
# or "host:CMD" CMD (a shell command) run here between two, its output
pod_steps() {
	local d=$1
	shift
	timeout 300 /usr/bin/python3 - "$FIXTURES" "$d/ctrd/ctrd.sock" "$d/logs" "$@" <<-'EOF'
	import os, subprocess, sys, time, uuid
	sys.path.insert(0, sys.argv[1])
	import cri
	import api_pb2 as pb
	import grpc
	rt = cri.connect(sys.argv[2])
	name = "ocidec-" + uuid.uuid4().hex[:8]
	logs = os.path.join(sys.argv[3], name)
	ns = pb.NamespaceOption(network=pb.NODE, pid=pb.CONTAINER, ipc=pb.POD)
	sconf = pb.PodSandboxConfig(metadata=pb.PodSandboxMetadata(name=name, uid=uuid.uuid4().hex, namespace="default"),
	                            log_directory=logs, linux=pb.LinuxPodSandboxConfig(
	                                security_context=pb.LinuxSandboxSecurityContext(namespace_options=ns)))
	sid = rt.RunPodSandbox(pb.RunPodSandboxRequest(config=sconf), timeout=120).pod_sandbox_id
	try:
	    for n, step in enumerate(sys.argv[4:]):
	        kind, arg = step.split(":", 1)
	        if kind == "host":
	            sys.stdout.write(subprocess.run(["sh", "-c", arg], stdout=subprocess.PIPE, text=True).stdout)
	            continue
	        k, v = arg.split("=", 1)
	        cconf = pb.ContainerConfig(
	            metadata=pb.ContainerMetadata(name="c%d" % n), image=pb.ImageSpec(image="docker.io/library/ocidec-test:1"),
	            command=["sh", "-c", "ls /dev | grep demo || echo none"], envs=[pb.KeyValue(key=k, value=v)],
	            log_path="c%d.log" % n, linux=pb.LinuxContainerConfig(
	                security_context=pb.LinuxContainerSecurityContext(namespace_options=ns)))
	        try:
	            cid = rt.CreateContainer(pb.CreateContainerRequest(pod_sandbox_id=sid, config=cconf, sandbox_config=sconf),
	                                     timeout=120).container_id
	        except grpc.RpcError as e:
	            print("refused: " + e.details())
	            continue
	        rt.StartContainer(pb.StartContainerRequest(container_id=cid), timeout=120)
	        for _ in range(600):
	            if rt.ContainerStatus(pb.ContainerStatusRequest(container_id=cid), timeout=30).status.state == pb.CONTAINER_EXITED:
	                break
	            time.sleep(0.1)
	        time.sleep(0.2)
	        with open(os.path.join(logs, "c%d.log" % n)) as f:
	            print(" ".join(l.rstrip("\n").split(" ", 3)[3] for l in f))
	finally:
	    rt.StopPodSandbox(pb.StopPodSandboxRequest(pod_sandbox_id=sid), timeout=120)
	    rt.RemovePodSandbox(pb.RemovePodSandboxRequest(pod_sandbox_id=sid), timeout=120)
	EOF
}

# none_connected DIR POD REFUSED: ocidec required of every container and no
# plugin connected, on the runtime that POD (pod, crio_pod) drives: a pod's
# container refused, the CRI's error carrying REFUSED, whether it asks for a
# device or for nothing; a pod annotated tolerate-missing-plugins.ocidec.io=true
# starts, without devices
none_connected() {
	local d=$1 pod=$2 refused=$3
	run "$pod" "$d" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c "$SEE"
	assert_failure
	assert_output --partial "$refused"
	echo "# the CRI's error: $(sed -n 's/^[[:space:]]*details = //p' <<<"$output" | head -n 1)" >&3
	run "$pod" "$d" docker.io/library/ocidec-test:1 echo started
	assert_failure
	assert_output --partial "$refused"
	run "$pod" "$d" --pod-ann tolerate-missing-plugins.ocidec.io=true --env OCI_DEMO=1 docker.io/library/ocidec-test:1 \
		sh -c 'echo started; ls /dev | grep -c demo || true'
	assert_success
	assert_output $'started\n0'
}

# nri_start DIR [ARGS...]: ocidec nri in the bed, its pid (the bed's) in
# DIR/nri.pid, its log DIR/nri.log (as test/nri.bats)
@test "containerd 2.2, required_plugins = [\"ocidec\"] and no plugin connected: a pod's container is refused, the CRI's error naming the missing plugin ocidec, whether it asks for a device or for nothing; a pod annotated tolerate-missing-plugins.ocidec.io=true starts (without devices)" {
	bed_up
	d=$NB
	ctrd22 "$d" "$REQUIRED"
	run bed "$d" containerd --version
	echo "# $output" >&3
	none_connected "$d" pod "$REFUSED"
}

@test "containerd 2.2, required_plugins = [\"ocidec\"], ocidec nri connected: the same pod's container starts with its device (envvar, cdi-annotations); a pod asking for nothing starts" {
	bed_up
	d=$NB
	: >"$d/nri.log"
	ctrd22 "$d" "$REQUIRED"
	nri_start "$d"
	wait_until -t 10 'nri_registered "$d" 1'
	grep -q '^ocidec nri: info: registered with containerd v2\.2\.[0-9]* as 50-ocidec$' "$d/nri.log"
	run pod "$d" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c "$SEE"
	assert_success
	assert_output "$DEMO1"
	run pod "$d" --ann cdi.k8s.io/ocidec=ocidec.io/demo=1 docker.io/library/ocidec-test:1 sh -c "$SEE"
	assert_success
	assert_output "$DEMO1"
	run pod "$d" docker.io/library/ocidec-test:1 echo started
	assert_success
	assert_output started
}

@test "containerd 2.2, required_plugins = [\"ocidec\"]: ocidec nri stopped, a new pod's container is refused again, naming ocidec (fail closed, not started without its devices); started again, the device again" {
	bed_up
	d=$NB
	: >"$d/nri.log"
	ctrd22 "$d" "$REQUIRED"
	nri_start "$d"
	wait_until -t 10 'nri_registered "$d" 1'
	run pod "$d" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c "$SEE"
	assert_output "$DEMO1"
	nri_stop "$d"
	run pod "$d" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c "$SEE"
	assert_failure
	assert_output --partial "$REFUSED"
	run pod "$d" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c "$SEE"
	assert_failure
	assert_output --partial "$REFUSED"
	nri_start "$d"
	wait_until -t 10 'nri_registered "$d" 2'
	run pod "$d" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c "$SEE"
	assert_success
	assert_output "$DEMO1"
}

@test "containerd 2.2, the validator on and nothing required of every container: a pod annotated required-plugins.noderesource.dev='[\"ocidec\"]' is refused while no plugin is connected, naming ocidec, a pod without it starts; ocidec nri connected, the annotated pod gets its device" {
	bed_up
	d=$NB
	: >"$d/nri.log"
	ctrd22 "$d" "$VALIDATOR"
	run pod "$d" --pod-ann 'required-plugins.noderesource.dev=["ocidec"]' --env OCI_DEMO=1 \
		docker.io/library/ocidec-test:1 sh -c "$SEE"
	assert_failure
	assert_output --partial "$REFUSED"
	run pod "$d" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c 'echo started; ls /dev | grep -c demo || true'
	assert_success
	assert_output $'started\n0'
	nri_start "$d"
	wait_until -t 10 'nri_registered "$d" 1'
	run pod "$d" --pod-ann 'required-plugins.noderesource.dev=["ocidec"]' --env OCI_DEMO=1 \
		docker.io/library/ocidec-test:1 sh -c "$SEE"
	assert_success
	assert_output "$DEMO1"
}

# NRI's window (v0.11, containerd 2.2; NRI's main branch alike): a plugin
# whose connection closed stays in NRI's list until a request to the
# plugins ends, and CreateContainer lists every plugin of that list for the
# validator before calling it; a call that fails for a closed connection or
# the 2 s timeout closes the plugin and is let through. So the first
# CreateContainer after the plugin is lost, when no other request (a new
# pod's RunPodSandbox) came first, is validated as if ocidec had seen it.
# These pin that down: a runtime that closes it fails them.

@test "NRI's window: required_plugins = [\"ocidec\"], ocidec nri killed while a pod runs: that pod's next container (the first CreateContainer since) starts without its device; the next is refused, naming ocidec" {
	bed_up
	d=$NB
	: >"$d/nri.log"
	ctrd22 "$d" "$REQUIRED"
	nri_start "$d"
	wait_until -t 10 'nri_registered "$d" 1'
	hp=$(host_pid "$d" "$(cat "$d/nri.pid")")
	run pod_steps "$d" ctr:OCI_DEMO=1 "host:kill $hp; while kill -0 $hp 2>/dev/null; do sleep 0.1; done; echo killed" \
		ctr:OCI_DEMO=1 ctr:OCI_DEMO=1
	rm -f "$d/nri.pid"
	assert_success
	assert_output "demo1 democtl
killed
none
refused: $ERR"
}

@test "NRI's window: required_plugins = [\"ocidec\"], ocidec nri frozen (SIGSTOP) while a pod runs: its next container starts without its device after the runtime's 2 s, the plugin dropped; the next is refused, naming ocidec; thawed, the plugin connects again and the pod's next container has its device" {
	bed_up
	d=$NB
	: >"$d/nri.log"
	ctrd22 "$d" "$REQUIRED"
	nri_start "$d"
	wait_until -t 10 'nri_registered "$d" 1'
	hp=$(host_pid "$d" "$(cat "$d/nri.pid")")
	run pod_steps "$d" ctr:OCI_DEMO=1 "host:kill -STOP $hp; echo stopped" ctr:OCI_DEMO=1 ctr:OCI_DEMO=1 \
		"host:kill -CONT \$(awk '/^PPid:/ { print \$2 }' /proc/$hp/status) $hp
		timeout 15 sh -c 'until [ \$(grep -c \"registered with\" $d/nri.log) -ge 2 ]; do sleep 0.1; done' && echo thawed" \
		ctr:OCI_DEMO=1
	assert_success
	assert_output "demo1 democtl
stopped
none
refused: $ERR
thawed
demo1 democtl"
	grep -q 'closing plugin 50-ocidec, failed to handle CreateContainer request: context deadline exceeded' "$d/containerd.log"
}

# no_hooks_cdi DIR POD REGISTERED DESC: NRI's default validator rejecting
# OCI hooks and requiring ocidec, on the runtime that POD (pod, crio_pod)
# drives and whose registrations REGISTERED (nri_registered,
# crio_registered) counts: ocidec nri --no-cdi (the edits with the cache
# hook) refused by the validator, naming the hook; ocidec nri with its CDI
# devices (--cdi-dir): a GPU pod gets exactly its devices, a pod asking for
# nothing is untouched, a refused request is ocidec's line in the CRI's
# error after DESC (what the runtime puts before it); the plugin left running
no_hooks_cdi() {
	local d=$1 pod=$2 registered=$3 desc=$4
	bed "$d" rm -rf /var/run/cdi
	# the cache hook as an OCI hook: what the validator's first rule rejects
	nri_start "$d" --no-cdi
	wait_until -t 10 '"$registered" "$d" 1'
	run "$pod" "$d" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c "$SEE"
	assert_failure
	assert_output --regexp 'validator "00-default-validator" rejected container adjustment, reason: validation error: plugin "[0-9-]*ocidec" attempted restricted OCI hook injection'
	echo "# --no-cdi: $(grep -o 'validator "00-default-validator" rejected[^"]*"[^"]*"[^"]*' <<<"$output" | head -n 1)" >&3
	nri_stop "$d"
	# ocidec's CDI devices: no hook in the adjustment
	nri_start "$d" --cdi-dir /var/run/cdi
	wait_until -t 10 '"$registered" "$d" 2'
	wait_until -t 10 'bed "$d" test -s /var/run/cdi/ocidec.io-demo.json'
	run "$pod" "$d" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c "$SEE"
	assert_success
	assert_output "$DEMO1"
	run "$pod" "$d" --env OCI_DEMO=all docker.io/library/ocidec-test:1 sh -c "$SEE"
	assert_success
	assert_output $'demo0\ndemo1\ndemoctl\n1\ndemo-tool: the answer is 42'
	run "$pod" "$d" docker.io/library/ocidec-test:1 sh -c 'echo started; ls /dev | grep -c demo || true'
	assert_success
	assert_output $'started\n0'
	run "$pod" "$d" --env OCI_DEMO=7 docker.io/library/ocidec-test:1 true
	assert_failure
	assert_output --regexp "details = \"[^\"]*${desc}ocidec: container c in pod default/ocidec-[0-9a-f]+: demo: no device 7: $d/dr/dev/demo7 not found \(this host has 0, 1\)\""
	echo "# the CRI's error: $(grep -o 'details = "[^"]*' <<<"$output" | head -n 1)" >&3
	grep -q "container c in pod default/ocidec-[0-9a-f]*: CDI devices ocidec.io/demo=1 (ocidec's specs in /var/run/cdi)" "$d/nri.log"
	grep -q "container c in pod default/ocidec-[0-9a-f]*: CDI devices ocidec.io/demo=all (" "$d/nri.log"
}

# The node's config: the default validator on and rejecting OCI hooks (its
# first rule), ocidec required of every container
NOHOOKS="$REQUIRED
  reject_oci_hook_adjustment = true"

@test "containerd 2.2, NRI's default validator rejecting OCI hooks (reject_oci_hook_adjustment = true) and requiring ocidec: ocidec nri --no-cdi (the edits with the cache hook) is refused by the validator, naming the hook; with its CDI devices (--cdi-dir) the GPU pod starts with exactly its devices, a pod asking for nothing is untouched, a refused request is ocidec's line in the CRI's error; ocidec check reads the NRI section (issue 49)" {
	bed_up
	d=$NB
	: >"$d/nri.log"
	ctrd22 "$d" "$NOHOOKS"
	no_hooks_cdi "$d" pod nri_registered 'rpc error: code = Unknown desc = '
	sed -n 's/^ocidec nri: info: \(registered with\|container c in pod default\/ocidec-[0-9a-f]*: \)/\1/p' "$d/nri.log" | sed 's/^/# /' >&3
	# check: the NRI section as containerd's dump has it, the plugin registered
	run bed "$d" ocidec check
	echo "$output" | grep -i 'nri' | sed 's/^/# check: /' >&3
	assert_output --regexp "NRI on, ocidec's plugin registered with containerd v2\.2\.[0-9]+ as 50-ocidec: a container's devices go as CDI devices"
	assert_output --regexp "NRI's default validator on \(reject_oci_hook_adjustment true, required_plugins \[['\"]ocidec['\"]\]\)"
	assert_output --partial "NRI's default validator rejects OCI hooks"
	nri_stop "$d"
	bed "$d" rm -rf /var/run/cdi
	run bed "$d" ocidec check
	assert_output --partial "NRI's default validator requires the plugin ocidec (required_plugins), and none is registered"
}

# the plugin's lines of a group-only node (engines/nri.c nri_say_groups):
# one container's, where the runtime sends its user (NRI 0.11's), and the
# plugin's one line where it does not
GROUP_CTR='^ocidec nri: warn: container c in pod default/ocidec-[0-9a-f]*: its process (uid 1000, gid 1000) is neither root nor in group 44 of /dev/demo1 (no access for others): it cannot open it, and NRI cannot add the group; the pod needs runAsGroup or supplementalGroups 44$'
GROUP_ONCE="^ocidec nri: warn: a device node of group 44 only: NRI cannot add that group to the container's process, and this runtime does not send the container's user (NRI 0.11's: containerd 2.3, CRI-O 1.36): a non-root container needs runAsGroup or supplementalGroups 44$"

@test "containerd 2.2 (NRI 0.11 vendored, the container's user not sent: 2.3 sends it), ocidec nri --no-cdi: a device node of group 44 only (0660): a pod run as uid 1000 without the group has the node and cannot open it, with supplementalGroups 44 or runAsGroup 44 (or as root) opens it; the plugin says once that the runtime does not send the user, no container's line" {
	bed_up
	d=$NB
	: >"$d/nri.log"
	nri_group_only "$d" on
	ctrd22 "$d" "$REQUIRED"
	nri_start "$d" --no-cdi
	wait_until -t 10 'nri_registered "$d" 1'
	nri_group_pods "$d" pod
	run grep -c "$GROUP_ONCE" "$d/nri.log"
	assert_output 1
	run grep -c 'neither root nor in group' "$d/nri.log"
	assert_output 0
	grep 'group 44' "$d/nri.log" | sed 's/^/# /' >&3
}

# ---- CRI-O ----

# crio_start DIR [TOML]: CRI-O as a node runs it, from the bed's
# /usr/local/bin (with pinns, its helper), the test image in the bed's
# containers/storage (podman's, which CRI-O shares), its socket
# DIR/crio/crio.sock, its log DIR/crio.log, NRI on (its socket
# /var/run/nri/nri.sock, where ocidec nri looks), TOML appended to its
# crio.conf. runc (crun refuses the hybrid layout), cgroupfs (no systemd in
# the bed), no OCI hooks directory (the bed's hooks.d has ocidec's hook: a
# device would then come from it, not from NRI), no CNI (the pods share the
# node's network), the test image as the pause image (none is needed: a pod
# with a PID namespace per container has no infra container)
crio_start() {
	local d=$1
	mkdir -p "$d/crio" "$d/logs" "$d/root/etc/crio"
	cp "$CRIO/usr/bin/crio" "$CRIO/usr/bin/pinns" "$d/root/usr/local/bin/"
	[ -e "$d/.crio-image" ] || bed "$d" sh -c 'podman load -q -i "$1/image.tar" >/dev/null &&
		podman tag "$(podman images -q | head -n 1)" docker.io/library/ocidec-test:1' sh "$d"
	touch "$d/.crio-image"
	cat >"$d/root/etc/crio/crio.conf" <<-EOF
	[crio]
	log_dir = "$d/logs"
	[crio.api]
	listen = "$d/crio/crio.sock"
	[crio.runtime]
	default_runtime = "runc"
	cgroup_manager = "cgroupfs"
	conmon_cgroup = "pod"
	pinns_path = "/usr/local/bin/pinns"
	hooks_dir = []
	[crio.runtime.runtimes.runc]
	runtime_path = "/usr/bin/runc"
	monitor_path = "/usr/bin/conmon"
	[crio.image]
	pause_image = "docker.io/library/ocidec-test:1"
	[crio.nri]
	enable_nri = true
	nri_listen = "/var/run/nri/nri.sock"
	${2:-}
	EOF
	bed "$d" sh -c "exec crio >$d/crio.log 2>&1" &
	wait_until -t 30 '[ -S "$d/crio/crio.sock" ] && timeout 5 /usr/bin/python3 "$FIXTURES/cri.py" status "$d/crio/crio.sock" >/dev/null 2>&1' &&
		return 0
	echo "CRI-O did not come up: $(tail -n 5 "$d/crio.log")" >&2
	return 1
}

crio_stop() {
	bed "$1" sh -c 'pkill -x crio || exit 0; for i in $(seq 100); do pgrep -x crio >/dev/null || exit 0; sleep 0.1; done'
}

# crio_pod DIR ARGS...: test/fixtures/cri.py run against the bed's CRI-O
crio_pod() {
	local d=$1
	shift
	timeout 300 /usr/bin/python3 "$FIXTURES/cri.py" run "$d/crio/crio.sock" --logs "$d/logs" --daemon-log "$d/crio.log" "$@"
}

# crio_registered DIR N: the plugin's log says it registered with CRI-O N times
crio_registered() {
	[ "$(grep -c '^ocidec nri: info: registered with cri-o ' "$1/nri.log")" -ge "$2" ]
}

# The node's crio.conf: the default validator on, rejecting OCI hooks,
# ocidec required of every container, the pods annotated
# tolerate-missing-plugins.ocidec.io=true exempt (ocidec's DaemonSet pod)
CRIO_NRI='[crio.nri.default_validator]
nri_enable_default_validator = true
nri_validator_reject_oci_hook_adjustment = true
nri_validator_required_plugins = ["ocidec"]
nri_validator_tolerate_missing_plugins_annotation = "tolerate-missing-plugins.ocidec.io"'

# the validator's refusal: CRI-O's error is NRI's line as it is
MISSING='validator "00-default-validator" rejected container adjustment, reason: validation error: required plugin "ocidec" not present'

@test "CRI-O, NRI's default validator requiring ocidec and no plugin connected: a pod's container is refused, the CRI's error naming the missing plugin ocidec, whether it asks for a device or for nothing; a pod annotated tolerate-missing-plugins.ocidec.io=true starts (without devices)" {
	bed_up crio
	d=$NB
	crio_start "$d" "$CRIO_NRI"
	run bed "$d" crio --version
	echo "# $(head -n 1 <<<"$output")" >&3
	none_connected "$d" crio_pod "$MISSING"
}

@test "CRI-O, NRI's default validator rejecting OCI hooks and requiring ocidec: ocidec nri --no-cdi (the edits with the cache hook) is refused by the validator, naming the hook; with its CDI devices (CRI-O 1.34 and later take them) the GPU pod starts with exactly its devices, a pod asking for nothing is untouched, a refused request is ocidec's line in the CRI's error; stopped, a pod is refused again (fail closed)" {
	bed_up crio
	d=$NB
	: >"$d/nri.log"
	crio_start "$d" "$CRIO_NRI"
	no_hooks_cdi "$d" crio_pod crio_registered ''
	grep -q '^ocidec nri: info: registered with cri-o 1\.[0-9]*\.[0-9]* as 50-ocidec$' "$d/nri.log"
	grep -q "^ocidec nri: info: cri-o 1\.[0-9]*\.[0-9]* takes CDI devices from a plugin" "$d/nri.log"
	sed -n 's/^ocidec nri: info: \(registered with\|cri-o \|container c in pod default\/ocidec-[0-9a-f]*: \)/\1/p' "$d/nri.log" | sed 's/^/# /' >&3
	# the plugin gone: fail closed
	nri_stop "$d"
	run crio_pod "$d" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c "$SEE"
	assert_failure
	assert_output --partial "$MISSING"
}

# the validator on, ocidec required, OCI hooks allowed (ocidec nri --no-cdi's
# cache hook)
CRIO_HOOKS='[crio.nri.default_validator]
nri_enable_default_validator = true
nri_validator_required_plugins = ["ocidec"]'

@test "CRI-O 1.36 (NRI 0.11: the container's user sent), ocidec nri --no-cdi (the edits: root's nodes): a device node of group 44 only (0660): a pod run as uid 1000 without the group starts, has the node and cannot open it, the plugin naming that container, the group and the pod's fix (runAsGroup or supplementalGroups 44); with supplementalGroups 44 or runAsGroup 44, or as root, it opens it and nothing is said; as ocidec's CDI devices (the node the process's: CDI's) it opens it without the group, nothing said" {
	bed_up crio
	d=$NB
	: >"$d/nri.log"
	nri_group_only "$d" on
	crio_start "$d" "$CRIO_HOOKS"
	nri_start "$d" --no-cdi
	wait_until -t 10 'crio_registered "$d" 1'
	nri_group_pods "$d" crio_pod
	run grep -c "$GROUP_CTR" "$d/nri.log"
	assert_output 1
	run grep -c 'group 44 of\|group 44 only: NRI' "$d/nri.log"
	assert_output 1
	grep 'group 44 of' "$d/nri.log" | sed 's/^/# /' >&3
	nri_stop "$d"
	: >"$d/nri.log"
	bed "$d" rm -rf /var/run/cdi
	nri_start "$d" --cdi-dir /var/run/cdi
	wait_until -t 10 'crio_registered "$d" 1'
	wait_until -t 10 'bed "$d" test -s /var/run/cdi/ocidec.io-demo.json'
	nri_group_pods "$d" crio_pod cdi
	run grep -c "CDI devices ocidec.io/demo=1 (" "$d/nri.log"
	assert_output 4
	run grep -c 'group 44 of\|group 44 only: NRI' "$d/nri.log"
	assert_output 0
	bed "$d" rm -rf /var/run/cdi
}
