#!/usr/bin/env bats
# deploy/kubernetes on a real single-node Kubernetes: kube-apiserver,
# kube-controller-manager, kube-scheduler and kubelet built from
# Kubernetes' source (test/fixtures/k8s-build.sh; Debian ships none of
# them), etcd and kubectl from Debian 13, containerd 1.7 (NRI on) and 2.x as
# the node's runtime, in a Debian 13 root of its own
# (test/fixtures/k8s-cluster.sh). A device plugin on the kubelet's API
# (test/fixtures/device-plugin.py) hands out the demo vendor's two devices as
# nvidia.com/gpu by each of NVIDIA's strategies. These tests run where that
# build is (build/k8s, or $OCIDEC_K8S) and skip, saying so, elsewhere: CI on
# a fresh machine cannot have it (test/nri.bats covers the same through the
# CRI there). Once, in the static build's pass.

load helpers

setup_file() {
	is_static || return 0
	K8S_DIR=${OCIDEC_K8S:-$BATS_TEST_DIRNAME/../build/k8s}
	[ -x "$K8S_DIR/bin/kubelet" ] || return 0
	export KB PROTO
	PROTO=$K8S_DIR/src/kubernetes/staging/src/k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto
	KB=$(mktemp -d /tmp/ocidec-k8s.XXXXXX)
	"$BATS_TEST_DIRNAME/fixtures/k8s-cluster.sh" start "$KB" 1.7 >"$KB/start.log" 2>&1 ||
		{ cat "$KB/start.log" >&2; return 1; }
	# the manifests as a user has them, where the node's kubectl sees them
	mkdir -p "$KB/deploy"
	cp -r "$BATS_TEST_DIRNAME/../deploy/kubernetes" "$KB/deploy/"
}

teardown_file() {
	[ -n "${KB:-}" ] || return 0
	dp_stop
	"$BATS_TEST_DIRNAME/fixtures/k8s-cluster.sh" stop "$KB"
	rm -rf "$KB"
}

setup() {
	common_setup
	is_static || skip "the cluster runs once, in the static build's pass"
	[ -n "${KB:-}" ] || skip "no Kubernetes build here (build/k8s or OCIDEC_K8S, made by test/fixtures/k8s-build.sh): kubelet and the API server are not in Debian; test/nri.bats checks the same through the CRI"
}

kc() { timeout 150 "$FIXTURES/k8s-cluster.sh" kubectl "$KB" "$@"; }
node() { timeout 60 "$FIXTURES/k8s-cluster.sh" exec "$KB" "$@"; }

# dp_start STRATEGY: the device plugin, from this host (its socket in the
# node's kubelet directory), until it has listed its devices
dp_start() {
	dp_stop
	/usr/bin/python3 "$FIXTURES/device-plugin.py" --proto "$PROTO" --resource nvidia.com/gpu --devices 0,1 \
		--strategy "$1" --plugin-dir "$KB/root/var/lib/kubelet/device-plugins" >"$KB/dp.log" 2>&1 &
	echo $! >"$KB/dp.pid"
	wait_until -t 60 'grep -q "^listed 0,1" "$KB/dp.log"' || { cat "$KB/dp.log" >&2; return 1; }
}

dp_stop() {
	[ -s "$KB/dp.pid" ] || return 0
	kill "$(cat "$KB/dp.pid")" 2>/dev/null || true
	while kill -0 "$(cat "$KB/dp.pid")" 2>/dev/null; do sleep 0.1; done
	rm -f "$KB/dp.pid"
}

# pod_yaml NAME GPUS CMD [ENV [RUNTIMECLASS]]: a pod of the test image
# running CMD, asking for GPUS of the device plugin's nvidia.com/gpu (0:
# none), ENV (NAME=VALUE) in its own spec, in RUNTIMECLASS
pod_yaml() {
	local name=$1 n=$2 cmd=$3 env=${4:-} rc=${5:-} res='' envs=''
	[ "$n" = 0 ] || res="resources: {limits: {nvidia.com/gpu: $n}}"
	[ -z "$env" ] || envs="env: [{name: ${env%%=*}, value: \"${env#*=}\"}]"
	cat <<-EOF
	apiVersion: v1
	kind: Pod
	metadata: {name: $name}
	spec:
	  ${rc:+runtimeClassName: $rc}
	  restartPolicy: Never
	  containers:
	  - name: cuda
	    image: docker.io/library/ocidec-test:1
	    imagePullPolicy: Never
	    command: ["sh", "-c", "$cmd"]
	    $res
	    $envs
	EOF
}

# gpu_pod NAME GPUS [ENV [RUNTIMECLASS]]: pod_yaml's pod listing the demo
# nodes it has and running the driver's tool; waits until it has run;
# prints its log. The pod is deleted.
gpu_pod() {
	local name=$1
	pod_yaml "$name" "$2" "ls /dev | grep demo; demo-tool 2>/dev/null; true" "${3:-}" "${4:-}" | kc apply -f - >/dev/null
	kc wait --for=jsonpath='{.status.phase}'=Succeeded "pod/$name" --timeout=90s >/dev/null ||
		kc describe pod "$name" >&2
	kc logs "$name"
	kc delete pod "$name" --wait=false >/dev/null
}

# gate: the init container deploy/kubernetes/README.md gives a device
# plugin's pod (ocidec nri --status --any in the toolkit image), run once
# as a pod: its exit status
gate() {
	kc delete pod gate --ignore-not-found --wait=true >/dev/null
	kc apply -f - >/dev/null <<-EOF
	apiVersion: v1
	kind: Pod
	metadata: {name: gate}
	spec:
	  restartPolicy: Never
	  containers:
	  - name: wait-for-ocidec
	    image: registry.invalid/ocidec-toolkit:0.1.0
	    imagePullPolicy: Never
	    command: ["/usr/bin/ocidec", "nri", "--status", "--any", "--host-root=/host"]
	    securityContext: {privileged: true}
	    volumeMounts: [{name: host, mountPath: /host}]
	  volumes:
	  - {name: host, hostPath: {path: /, type: Directory}}
	EOF
	kc wait --for=jsonpath='{.status.phase}'=Succeeded pod/gate --timeout=30s >/dev/null 2>&1 ||
		kc wait --for=jsonpath='{.status.phase}'=Failed pod/gate --timeout=30s >/dev/null
	kc logs gate
	[ "$(kc get pod gate -o 'jsonpath={.status.phase}')" = Succeeded ]
}

# last_id: the device id of the device plugin's last Allocate (one device)
last_id() {
	grep '^allocate ' "$KB/dp.log" | tail -n 1 | grep -oE '(devices/|gpu=|DEVICES=)[01]' | grep -o '[01]$' | head -n 1
}

# the node's files ocidec could touch, listed with their contents' sums
node_state() {
	node sh -c 'for d in /usr/local /etc/containerd /etc/cdi /var/run/cdi /run/ocidec; do
		[ -d "$d" ] && find "$d" -xdev \( -type f -o -type l \) -exec sh -c "for f; do printf \"%s \" \"\$f\"; [ -L \"\$f\" ] && readlink \"\$f\" || md5sum <\"\$f\"; done" sh {} +
	done | LC_ALL=C sort'
}

@test "kubectl apply -f deploy/kubernetes/ on a fresh node (containerd 1.7, NRI on; selected by NFD's PCI label): the DaemonSet becomes ready once the node's runtime took its plugin; pods asking for the device plugin's nvidia.com/gpu get exactly their devices by volume-mounts, cdi-annotations and cdi-cri, no RuntimeClass; envvar's and a pod's own NVIDIA_VISIBLE_DEVICES get nothing under the kubernetes policy; a pod asking for nothing is untouched (issue 35)" {
	node_state >"$KB/before"
	run kc label node k8s-bed feature.node.kubernetes.io/pci-10de.present=true
	assert_success
	run kc apply -f "$KB/deploy/kubernetes/"
	assert_success
	assert_line "namespace/ocidec created"
	assert_line "daemonset.apps/ocidec-toolkit created"
	run kc rollout status -n ocidec daemonset/ocidec-toolkit --timeout=120s
	assert_success
	run kc get pods -n ocidec -o 'jsonpath={.items[0].status.containerStatuses[0].ready}'
	assert_output true
	# the node's runtime has the plugin
	run node /usr/local/ocidec/bin/ocidec nri --status --any
	assert_output --regexp '^registered with containerd 1\.7\.[^ ]+ as 50-ocidec$'
	# the device plugin's gate (README) opens
	run gate
	assert_success
	assert_output --regexp '^registered with containerd 1\.7\.'

	i=0
	for strategy in volume-mounts cdi-annotations cdi-cri; do
		dp_start "$strategy"
		i=$((i + 1))
		run gpu_pod "gpu-$i" 1
		assert_success
		id=$(last_id)
		assert_output "demo$id"$'\ndemoctl\ndemo-tool: the answer is 42'
		echo "# $strategy: $(grep '^allocate ' "$KB/dp.log" | tail -n 1) -> $(head -n 1 <<<"$output")" >&3
		run gpu_pod "gpu-$i-both" 2
		assert_output $'demo0\ndemo1\ndemoctl\ndemo-tool: the answer is 42'
	done
	# the envvar strategy: a variable the tenant policy cannot tell from
	# the pod's own; said in the plugin's log
	dp_start envvar
	run gpu_pod gpu-env 1
	assert_output ''
	run kc logs -n ocidec daemonset/ocidec-toolkit
	assert_output --partial "nvidia: NVIDIA_VISIBLE_DEVICES=$(last_id) ignored: the vendor takes no device selection from 'env' for a container without CAP_SYS_ADMIN"
	# a pod of its own: the variable, no resource; a pod asking for nothing
	run gpu_pod tenant 0 NVIDIA_VISIBLE_DEVICES=all
	assert_output ''
	run gpu_pod idle 0
	assert_output ''
}

@test "the ConfigMap's tenant policy open, then kubectl rollout restart: the envvar strategy gives its device; the policy back to kubernetes (issue 35)" {
	run kc patch configmap -n ocidec ocidec-toolkit --type merge -p '{"data": {"OCIDEC_TENANT_POLICY": "open"}}'
	assert_success
	kc rollout restart -n ocidec daemonset/ocidec-toolkit
	run kc rollout status -n ocidec daemonset/ocidec-toolkit --timeout=120s
	assert_success
	dp_start envvar
	run gpu_pod gpu-env-open 1
	id=$(last_id)
	assert_output "demo$id"$'\ndemoctl\ndemo-tool: the answer is 42'
	kc patch configmap -n ocidec ocidec-toolkit --type merge -p '{"data": {"OCIDEC_TENANT_POLICY": "kubernetes"}}'
	kc rollout restart -n ocidec daemonset/ocidec-toolkit
	run kc rollout status -n ocidec daemonset/ocidec-toolkit --timeout=120s
	assert_success
	run gpu_pod gpu-env-closed 1
	assert_output ''
}

@test "kubectl rollout restart of the DaemonSet while a GPU pod is created every second: none lost, each with exactly its device; the plugin handed over, not registered twice (issue 35)" {
	dp_start volume-mounts
	regs=$(grep -c 'registered as \\"50-ocidec\\"' "$KB/log/containerd.log")
	(
		for n in $(seq 1 20); do
			pod_yaml "roll-$n" 1 "ls /dev | grep demo" | kc apply -f - >/dev/null
			sleep 1
		done
	) &
	maker=$!
	sleep 4
	kc rollout restart -n ocidec daemonset/ocidec-toolkit
	run kc rollout status -n ocidec daemonset/ocidec-toolkit --timeout=120s
	assert_success
	wait "$maker"
	for n in $(seq 1 20); do
		kc wait --for=jsonpath='{.status.phase}'=Succeeded "pod/roll-$n" --timeout=120s >/dev/null
		run kc logs "roll-$n"
		assert_output --regexp $'^demo[01]\ndemoctl$'
	done
	kc delete pod $(printf 'roll-%s ' $(seq 1 20)) --wait=false >/dev/null
	run kc logs -n ocidec daemonset/ocidec-toolkit
	assert_output --partial "took the connection to containerd"
	# containerd saw no second registration: one plugin throughout
	[ "$(grep -c 'registered as \\"50-ocidec\\"' "$KB/log/containerd.log")" = "$regs" ]
	echo "# $(grep -c '^allocate ' "$KB/dp.log") allocations during the rollout, every pod its device" >&3
}

@test "kubectl delete -f deploy/kubernetes/: the last pod's SIGTERM leaves the node as it was (no /usr/local/ocidec, no CDI spec, no plugin); pods go on starting (issue 35)" {
	run kc delete -f "$KB/deploy/kubernetes/" --timeout=120s
	assert_success
	wait_until -t 90 '[ -z "$(kc get pods -n ocidec -o name 2>/dev/null)" ]'
	node_state >"$KB/after"
	run diff "$KB/before" "$KB/after"
	assert_success
	run node sh -c 'ls /run/ocidec 2>/dev/null; true'
	refute_output --partial nri-
	run gpu_pod after 0
	assert_success
	dp_stop
	# and the device plugin's gate is shut again
	run gate
	assert_failure
	assert_output "no ocidec nri plugin ocidec runs here"
	kc delete pod gate --wait=false >/dev/null
}

@test "containerd 2.x as the node's runtime (NRI as it comes): kubectl apply -f deploy/kubernetes/, ready, the device plugin's volume-mounts and cdi-cri answers give exactly their devices; kubectl delete leaves the node as it was (issue 35)" {
	dp_stop
	"$FIXTURES/k8s-cluster.sh" stop "$KB"
	"$FIXTURES/k8s-cluster.sh" start "$KB" 2 >"$KB/start2.log" 2>&1 || { cat "$KB/start2.log"; false; }
	run kc get node k8s-bed -o 'jsonpath={.status.nodeInfo.containerRuntimeVersion}'
	assert_output --regexp '^containerd://2\.'
	echo "# $output" >&3
	node_state >"$KB/before2"
	kc label node k8s-bed ocidec.io/accelerator=true >/dev/null
	run kc apply -f "$KB/deploy/kubernetes/"
	assert_success
	run kc rollout status -n ocidec daemonset/ocidec-toolkit --timeout=120s
	assert_success
	for strategy in volume-mounts cdi-cri; do
		dp_start "$strategy"
		run gpu_pod "gpu2-$strategy" 1
		id=$(last_id)
		assert_output "demo$id"$'\ndemoctl\ndemo-tool: the answer is 42'
	done
	dp_stop
	run kc delete -f "$KB/deploy/kubernetes/" --timeout=120s
	assert_success
	wait_until -t 90 '[ -z "$(kc get pods -n ocidec -o name 2>/dev/null)" ]'
	node_state >"$KB/after2"
	run diff "$KB/before2" "$KB/after2"
	assert_success
}

# claim_pod NAME CMD [TEMPLATE [CLAIM]]: a pod of the test image running CMD
# with a claim CLAIM (default gpu) from the ResourceClaimTemplate TEMPLATE
# (default one-gpu: the DeviceClass nvidia.ocidec.io)
claim_pod() {
	kc apply -f - >/dev/null <<-EOF
	apiVersion: v1
	kind: Pod
	metadata: {name: $1}
	spec:
	  restartPolicy: Never
	  resourceClaims: [{name: ${4:-gpu}, resourceClaimTemplateName: ${3:-one-gpu}}]
	  containers:
	  - name: cuda
	    image: docker.io/library/ocidec-test:1
	    imagePullPolicy: Never
	    command: ["sh", "-c", "$2"]
	    resources: {claims: [{name: ${4:-gpu}}]}
	EOF
}

@test "DRA (resource.k8s.io/v1, Kubernetes 1.34 and later; containerd 2.x's CDI): kubectl apply -k deploy/overlays/dra/: the node's devices published as a ResourceSlice, the kubelet registers ocidec's driver; a pod's claim from a ResourceClaimTemplate on nvidia.ocidec.io gets exactly its device and the driver's files, a second pod the other, a third waits, a pod asking for nothing gets none; a deleted pod's claim unprepared; a claim of two drivers (a second plugin for a second vendor) prepared by each for its own device; NVIDIA's fixture GPUs (Debian's userspace) published with their attributes, a claim's pod with its GPU and NVIDIA's libraries; an admission policy refuses its token another node's slice or another driver's; kubectl delete leaves the node as it was (issue 50)" {
	kc api-versions | grep -qx resource.k8s.io/v1 ||
		skip "this Kubernetes build serves no resource.k8s.io/v1 (1.34 and later do: test/fixtures/k8s-build.sh on a 1.34 tree)"
	dp_stop
	if ! kc get node k8s-bed -o 'jsonpath={.status.nodeInfo.containerRuntimeVersion}' | grep -q '^containerd://2\.'; then
		"$FIXTURES/k8s-cluster.sh" stop "$KB"
		"$FIXTURES/k8s-cluster.sh" start "$KB" 2 >"$KB/start-dra.log" 2>&1 || { cat "$KB/start-dra.log"; false; }
	fi
	echo "# $(kc get node k8s-bed -o 'jsonpath={.status.nodeInfo.kubeletVersion} {.status.nodeInfo.containerRuntimeVersion}')" >&3
	node_state >"$KB/before-dra"
	kc label node k8s-bed ocidec.io/accelerator=true ocidec.io/dra=true --overwrite >/dev/null
	# the fixture has no kube-proxy: the pod reaches the API server at the
	# node's address, not at the kubernetes Service's (a test overlay)
	mkdir -p "$KB/deploy/overlays/dra-test"
	cp -r "$BATS_TEST_DIRNAME/../deploy/overlays/dra" "$KB/deploy/overlays/"
	cp -r "$BATS_TEST_DIRNAME/../deploy/kubernetes/dra" "$KB/deploy/kubernetes/"
	cat >"$KB/deploy/overlays/dra-test/Kustomization" <<-EOF
	apiVersion: kustomize.config.k8s.io/v1beta1
	kind: Kustomization
	resources: [../dra]
	patches:
	  - target: {kind: DaemonSet, name: ocidec-dra}
	    patch: |-
	      - {op: add, path: /spec/template/spec/containers/0/args/-, value: "--server=https://10.254.0.1:6443"}
	EOF
	run kc apply -k "$KB/deploy/overlays/dra-test"
	assert_success
	assert_line "deviceclass.resource.k8s.io/nvidia.ocidec.io created"
	assert_line "validatingadmissionpolicy.admissionregistration.k8s.io/ocidec-dra-slices created"
	run kc rollout status -n ocidec daemonset/ocidec-dra --timeout=120s
	assert_success
	wait_until -t 60 '[ -n "$(kc get resourceslices -o name)" ]'
	run kc get resourceslices -o 'jsonpath={range .items[*]}{.spec.driver} {.spec.nodeName} {.spec.pool.name} {.spec.devices[*].name} {.metadata.ownerReferences[0].kind}{"\n"}{end}'
	assert_output "nvidia.ocidec.io k8s-bed k8s-bed gpu-0 gpu-1 Node"
	wait_until -t 30 'kc logs -n ocidec daemonset/ocidec-dra | grep -q "registered with the kubelet"'
	kc apply -f - >/dev/null <<-EOF
	apiVersion: resource.k8s.io/v1
	kind: ResourceClaimTemplate
	metadata: {name: one-gpu}
	spec:
	  spec:
	    devices:
	      requests: [{name: gpu, exactly: {deviceClassName: nvidia.ocidec.io}}]
	EOF
	see='ls /dev | grep demo; demo-tool 2>/dev/null; sleep 600'
	claim_pod dra1 "$see"
	claim_pod dra2 "$see"
	for p in dra1 dra2; do
		kc wait --for=condition=Ready "pod/$p" --timeout=90s >/dev/null || { kc describe pod "$p"; false; }
	done
	wait_until -t 10 '[ "$(kc logs dra1 | wc -l)" = 3 ] && [ "$(kc logs dra2 | wc -l)" = 3 ]'
	run kc logs dra1
	assert_output --regexp $'^demo[01]\ndemoctl\ndemo-tool: the answer is 42$'
	one=${lines[0]}
	run kc logs dra2
	assert_output --regexp $'^demo[01]\ndemoctl\ndemo-tool: the answer is 42$'
	[ "${lines[0]}" != "$one" ]
	echo "# dra1: $one, dra2: ${lines[0]}" >&3
	# both devices taken: a third pod's claim waits for one
	claim_pod dra3 "$see"
	sleep 5
	run kc get pod dra3 -o 'jsonpath={.status.phase}'
	assert_output Pending
	# a pod asking for nothing: no device
	pod_yaml none 0 "ls /dev | grep -c demo; true" | kc apply -f - >/dev/null
	kc wait --for=jsonpath='{.status.phase}'=Succeeded pod/none --timeout=90s >/dev/null
	run kc logs none
	assert_output 0
	# what the plugin keeps: two claims; dra1 deleted: its claim unprepared,
	# and dra3 gets its device
	run node sh -c 'tr "," "\n" </var/lib/kubelet/plugins/nvidia.ocidec.io/claims.json | grep -c "\"device\":\"gpu-"'
	assert_output 2
	kc delete pod dra1 --grace-period=1 >/dev/null
	kc wait --for=condition=Ready pod/dra3 --timeout=120s >/dev/null || { kc describe pod dra3; false; }
	wait_until -t 10 '[ "$(kc logs dra3 | wc -l)" = 3 ]'
	run kc logs dra3
	assert_line --index 0 "$one"
	wait_until -t 30 'kc logs -n ocidec daemonset/ocidec-dra | grep -q "claim default/dra1-gpu-.* unprepared"'
	kc logs -n ocidec daemonset/ocidec-dra | grep -E "prepared|unprepared" | sed 's/^/# /' >&3
	# the admission policy: the plugin's own token (its ServiceAccount's,
	# bound to its pod and so to this node) writes no other node's slice,
	# nor another driver's
	local pod uid tok
	pod=$(kc get pods -n ocidec -l app.kubernetes.io/name=ocidec-dra -o 'jsonpath={.items[0].metadata.name}')
	uid=$(kc get pod -n ocidec "$pod" -o 'jsonpath={.metadata.uid}')
	tok=$(kc create token -n ocidec ocidec-dra --bound-object-kind Pod --bound-object-name "$pod" --bound-object-uid "$uid")
	for s in 'k8s-bed2 nvidia.ocidec.io' 'k8s-bed nic.example.com'; do
		set -- $s
		run node kubectl --kubeconfig /dev/null --server https://10.254.0.1:6443 --certificate-authority "$KB/pki/ca.crt" \
			--token "$tok" create -f - <<-EOF
		apiVersion: resource.k8s.io/v1
		kind: ResourceSlice
		metadata: {name: forged}
		spec: {driver: $2, nodeName: $1, pool: {name: $1, generation: 1, resourceSliceCount: 1}, devices: [{name: gpu-9}]}
		EOF
		assert_failure
		assert_output --partial "ValidatingAdmissionPolicy 'ocidec-dra-slices'"
	done
	# (its own node's, of a driver of ocidec's: taken, and deleted)
	run node kubectl --kubeconfig /dev/null --server https://10.254.0.1:6443 --certificate-authority "$KB/pki/ca.crt" \
		--token "$tok" create -f - <<-EOF
	apiVersion: resource.k8s.io/v1
	kind: ResourceSlice
	metadata: {name: own}
	spec: {driver: test.ocidec.io, nodeName: k8s-bed, pool: {name: k8s-bed, generation: 1, resourceSliceCount: 1}, devices: [{name: gpu-9}]}
	EOF
	assert_success
	run node kubectl --kubeconfig /dev/null --server https://10.254.0.1:6443 --certificate-authority "$KB/pki/ca.crt" \
		--token "$tok" delete resourceslice own
	assert_success
	kc delete pod dra2 dra3 none --grace-period=1 >/dev/null
	# a claim of two drivers: a second plugin on the node serving a second
	# vendor (demo2, the same driver root), its own token bound to the
	# DaemonSet's pod; each plugin prepares its own device of the claim
	wait_until -t 60 '[ -z "$(kc get pods -o name)" ]'
	mkdir -p "$KB/root/etc/ocidec-second"
	sed 's/^name = nvidia$/name = demo2/; s/^activation_flag = NVIDIA_VISIBLE_DEVICES$/activation_flag = OCI_DEMO2/; /^cdi_kind/d; /^device_list_dir/d' \
		"$KB/root/usr/local/ocidec/etc/ocidec.d/nvidia.ini" >"$KB/root/etc/ocidec-second/demo2.ini"
	chmod 0644 "$KB/root/etc/ocidec-second/demo2.ini"
	# and NVIDIA's fixture GPUs (Debian's NVIDIA userspace, two A100s as
	# the kernel module shows them: test/fixtures/nvidia-gpus.sh), the
	# shipped nvidia.ini on them as a vendor of its own (nvfix: its kind
	# ocidec.io/nvfix, beside the node's nvidia.com/gpu)
	"$FIXTURES/debian-nvidia.sh" "$KB/nv" >/dev/null
	"$FIXTURES/nvidia-gpus.sh" "$KB/nv" >/dev/null
	sed "s|^name = nvidia\$|name = nvfix|; /^cdi_kind/d; s|^driver_root = /\$|driver_root = $KB/nv|; s|^version_file.*|version = 550.54.15|; s|^device_uuids = |device_uuids = $KB/nv|" \
		"$BATS_TEST_DIRNAME/../conf/nvidia.ini" >"$KB/root/etc/ocidec-second/nvfix.ini"
	chmod 0644 "$KB/root/etc/ocidec-second/nvfix.ini"
	echo "$tok" >"$KB/root/etc/ocidec-second/token"
	"$FIXTURES/k8s-cluster.sh" exec "$KB" sh -c 'setsid /usr/local/ocidec/bin/ocidec dra serve -c /etc/ocidec-second --node-name k8s-bed \
		--server https://10.254.0.1:6443 --ca-file "$1/pki/ca.crt" --token-file /etc/ocidec-second/token \
		--hook-path /usr/local/ocidec/bin/ocidec </dev/null >/etc/ocidec-second/log 2>&1 & echo $! >/etc/ocidec-second/pid' sh "$KB"
	node /usr/local/ocidec/bin/ocidec dra classes -c /etc/ocidec-second | kc apply -f - >/dev/null
	wait_until -t 60 'kc get resourceslices -o jsonpath="{.items[*].spec.driver}" | grep -q demo2.ocidec.io'
	kc apply -f - >/dev/null <<-EOF
	apiVersion: resource.k8s.io/v1
	kind: ResourceClaimTemplate
	metadata: {name: two-drivers}
	spec:
	  spec:
	    devices:
	      requests:
	      - {name: gpu, exactly: {deviceClassName: nvidia.ocidec.io}}
	      - {name: acc, exactly: {deviceClassName: demo2.ocidec.io}}
	EOF
	claim_pod multi "ls /dev | grep demo; sleep 600" two-drivers both
	kc wait --for=condition=Ready pod/multi --timeout=90s >/dev/null || { kc describe pod multi; cat "$KB/root/etc/ocidec-second/log"; false; }
	run kc get resourceclaims -o 'jsonpath={range .items[0].status.allocation.devices.results[*]}{.request} {.driver} {.device}{"\n"}{end}'
	echo "# the claim of two drivers: $(tr '\n' ';' <<<"$output")" >&3
	assert_line --regexp '^gpu nvidia\.ocidec\.io gpu-[01]$'
	assert_line --regexp '^acc demo2\.ocidec\.io demo2-[01]$'
	# each plugin prepared its own part: one device each
	kc logs -n ocidec daemonset/ocidec-dra | grep -q "claim default/multi-both-[a-z0-9]* (.*) prepared: 1 devices"
	grep -q "claim default/multi-both-[a-z0-9]* (.*) prepared: 1 devices" "$KB/root/etc/ocidec-second/log"
	run node sh -c 'cat /var/lib/kubelet/plugins/nvidia.ocidec.io/claims.json; echo; cat /var/lib/kubelet/plugins/demo2.ocidec.io/claims.json'
	assert_line --regexp '"cdi":\["nvidia\.com/gpu=[01]"\]'
	assert_line --regexp '"cdi":\["ocidec\.io/demo2=[01]"\]'
	refute_line --regexp 'nvidia.*demo2|demo2.*nvidia'
	kc delete pod multi --grace-period=1 >/dev/null
	wait_until -t 60 '[ -z "$(kc get pods -o name)" ]'
	# NVIDIA's fixture GPUs: the slice with their attributes, a claim's
	# pod with exactly its GPU's node and NVIDIA's libraries
	wait_until -t 60 'kc get resourceslices -o jsonpath="{.items[*].spec.driver}" | grep -q nvfix.ocidec.io' ||
		{ cat "$KB/root/etc/ocidec-second/log"; false; }
	run kc get resourceslices -o 'jsonpath={range .items[?(@.spec.driver=="nvfix.ocidec.io")].spec.devices[*]}{.name} {.attributes.uuid.string} {.attributes.productName.string}{"\n"}{end}'
	assert_output "nvfix-0 GPU-00000000-1111-2222-3333-444444444444 NVIDIA A100-SXM4-40GB
nvfix-1 GPU-11111111-1111-2222-3333-444444444444 NVIDIA A100-SXM4-40GB"
	kc apply -f - >/dev/null <<-EOF
	apiVersion: resource.k8s.io/v1
	kind: ResourceClaimTemplate
	metadata: {name: one-a100}
	spec:
	  spec:
	    devices:
	      requests: [{name: gpu, exactly: {deviceClassName: nvfix.ocidec.io}}]
	EOF
	claim_pod a100 "ls /dev | grep nvidia; find /usr -name 'libnvidia-ml.so*' | grep -c .; ls /usr/bin | grep -c nvidia-smi" one-a100
	kc wait --for=jsonpath='{.status.phase}'=Succeeded pod/a100 --timeout=90s >/dev/null ||
		{ kc describe pod a100; cat "$KB/root/etc/ocidec-second/log"; false; }
	run kc logs a100
	echo "# NVIDIA's fixture GPU through DRA: $(tr '\n' ' ' <<<"$output")" >&3
	assert_output --regexp $'^nvidia-uvm\nnvidia[01]\nnvidiactl\n[1-9][0-9]*\n1$'
	kc delete pod a100 --grace-period=1 >/dev/null
	kc delete resourceclaimtemplate one-a100 >/dev/null
	wait_until -t 60 '[ -z "$(kc get pods -o name)" ]'
	node sh -c 'kill $(cat /etc/ocidec-second/pid); while kill -0 $(cat /etc/ocidec-second/pid) 2>/dev/null; do sleep 0.1; done'
	node /usr/local/ocidec/bin/ocidec dra classes -c /etc/ocidec-second | kc delete -f - >/dev/null
	node sh -c "rm -rf /etc/ocidec-second /var/run/cdi/*ocidec.io-demo2.json /var/run/cdi/*ocidec.io-nvfix.json"
	rm -rf "$KB/nv"
	kc delete resourceclaimtemplate two-drivers >/dev/null
	kc delete resourceclaimtemplate one-gpu >/dev/null
	run kc delete -k "$KB/deploy/overlays/dra-test" --timeout=120s
	assert_success
	wait_until -t 90 '[ -z "$(kc get pods -n ocidec -o name 2>/dev/null)" ]'
	# the kubelet wipes a driver's slices once its plugin is gone
	wait_until -t 120 '[ -z "$(kc get resourceslices -o name)" ]'
	node_state >"$KB/after-dra"
	run diff "$KB/before-dra" "$KB/after-dra"
	assert_success
	run node find /var/lib/kubelet/plugins /var/lib/kubelet/plugins_registry -mindepth 1
	assert_output ""
}

@test "the shim's mode (OCIDEC_RUNTIME=containerd, containerd 1.7): the DaemonSet installs and registers the runtime, ready by ocidec check; containerd restarted by hand, as the README says; a pod with runtimeClassName ocidec gets exactly the device plugin's device; kubectl delete gives config.toml back and leaves the node as it was (issue 35)" {
	dp_stop
	"$FIXTURES/k8s-cluster.sh" stop "$KB"
	"$FIXTURES/k8s-cluster.sh" start "$KB" 1.7 >"$KB/start3.log" 2>&1 || { cat "$KB/start3.log"; false; }
	node_state >"$KB/before3"
	# the manifests as the README says to change them for the shim
	mkdir -p "$KB/shim"
	sed 's/^  OCIDEC_RUNTIME: nri$/  OCIDEC_RUNTIME: containerd/
		s|command: \["/usr/bin/ocidec", "nri", "--status", "--host-root=/host"\]|command: ["/usr/bin/ocidec", "check", "--host-root=/host", "-c", "/host/usr/local/ocidec/etc/ocidec.d"]|' \
		"$KB/deploy/kubernetes/ocidec-toolkit.yaml" >"$KB/shim/ocidec-toolkit.yaml"
	grep -q '"check"' "$KB/shim/ocidec-toolkit.yaml"
	cp "$KB/deploy/kubernetes/shim/runtimeclass.yaml" "$KB/shim/"
	kc label node k8s-bed ocidec.io/accelerator=true >/dev/null
	run kc apply -f "$KB/shim/"
	assert_success
	assert_line "runtimeclass.node.k8s.io/ocidec created"
	run kc rollout status -n ocidec daemonset/ocidec-toolkit --timeout=120s
	assert_success
	run kc logs -n ocidec daemonset/ocidec-toolkit
	assert_output --partial 'containerd runs runtime "ocidec" once it restarts'
	"$FIXTURES/k8s-cluster.sh" restart-containerd "$KB"
	kc wait --for=condition=Ready node/k8s-bed --timeout=60s >/dev/null
	dp_start volume-mounts
	run gpu_pod shim-gpu 1 "" ocidec
	assert_output "demo$(last_id)"$'\ndemoctl\ndemo-tool: the answer is 42'
	dp_stop
	run kc delete -f "$KB/shim/" --timeout=120s
	assert_success
	wait_until -t 90 '[ -z "$(kc get pods -n ocidec -o name 2>/dev/null)" ]'
	node_state >"$KB/after3"
	run diff "$KB/before3" "$KB/after3"
	assert_success
}
