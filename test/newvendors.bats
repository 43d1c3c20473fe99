#!/usr/bin/env bats
# Seven accelerator vendors that are one INI file each (issue 48): AWS
# Neuron, Huawei Ascend, Tenstorrent, Intel's NPU, AMD's XDNA NPU,
# Qualcomm's Cloud AI 100 and Rebellions, the shipped conf/*.ini pointed at
# one fake host with all seven (test/fixtures/accel-hosts.sh: each vendor's
# nodes and files as its documents lay them out; the three accel drivers
# sharing /dev/accel). Each vendor's variable gives exactly its documented
# nodes and nothing without it, under the prestart hook's dry run, the hook
# with runc and the runtime shim; its CDI spec is valid CDI and gives a runc
# container the nodes; under the Kubernetes tenant policy a pod's own
# variable gives nothing; ocidec list and check see the fixture. No such
# hardware here: checked against documents and fixtures. To add a vendor,
# copy a block of this file (docs/adding-a-vendor.md).

load helpers

# the vendors of this file, as conf/NAME.ini
NEW="neuron ascend tenstorrent intel-npu amd-xdna qaic rebellions"

setup_file() {
	export H
	H=$(mktemp -d /tmp/ocidec-accel.XXXXXX)
	"$BATS_TEST_DIRNAME/fixtures/accel-hosts.sh" "$H"
	cdi_schemas
}

teardown_file() {
	rm -rf "${H:-/nonexistent}"
}

setup() {
	common_setup
	B=$BATS_TEST_TMPDIR/bundle
	ID=ocidec-newv-$$-$BATS_TEST_NUMBER
	SPEC=$BATS_TEST_TMPDIR/spec.json
	for v in $NEW; do gpu_ini "$v" "$H"; done
}

teardown() {
	runc --root "$BATS_TEST_TMPDIR/runc-root" delete -f "$ID" >/dev/null 2>&1 || true
}

# nodes ENV...: the device nodes the hook's dry run gives, sorted, one line
nodes() {
	dry "$@" | sed -n "s|^mount [^ ]*/root\(/dev/[^ ]*\) .*|\1|p" | sort | tr '\n' ' ' | sed 's/ $//'
}

# files ENV...: the other files the dry run mounts (their container paths), sorted, one line
files() {
	dry "$@" | sed -n "s|^mount [^ ]*/root\(/[^ ]*\) .*|\1|p" | grep -v '^/dev/' | sort | tr '\n' ' ' | sed 's/ $//'
}

# SEE: what a container lists of the seven vendors' nodes and files
# shellcheck disable=SC2016
SEE='ls /dev/neuron* /dev/davinci* /dev/devmm_svm /dev/hisi_hdc /dev/tenstorrent/* /dev/accel/* /dev/rbln* /dev/rsd* 2>/dev/null
for f in /usr/local/bin/npu-smi /usr/bin/rbln-smi /opt/qti-aic/tools/qaic-util; do [ -x $f ] && $f; done
[ -e /usr/local/Ascend/driver/lib64/driver/libascend_hal.so ] && echo ascend-hal
[ -e /usr/lib/x86_64-linux-gnu/librbln-ml.so.1 ] && echo librbln-ml; true'

# in_container ENGINE ENV...: what a runc container given ENV under ENGINE
# (hook: runc with the prestart hook; shim: ocidec runtime) sees (SEE),
# sorted, one line
in_container() {
	local engine=$1
	shift
	rm -rf "$B"   # (a fresh rootfs: the mount targets and links of the last run stay in it)
	HOOK=$([ "$engine" = hook ] && echo "$OCIDEC ocidec-hook -c $CFG prestart") "$FIXTURES/bundle.sh" "$B" "$@" -- \
		sh -c "$SEE" >/dev/null
	if [ "$engine" = hook ]; then
		(cd "$B" && runc --root "$BATS_TEST_TMPDIR/runc-root" run "$ID" 2>&1) | sort | tr '\n' ' ' | sed 's/ $//'
	else
		ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/runc-root" run --bundle "$B" "$ID" 2>&1 |
			sort | tr '\n' ' ' | sed 's/ $//'
	fi
	runc --root "$BATS_TEST_TMPDIR/runc-root" delete -f "$ID" >/dev/null 2>&1 || true
}

@test "AWS Neuron: AWS_NEURON_VISIBLE_DEVICES=1 gives /dev/neuron1 only; ALL (any case), a list, a range and OCI_NEURON as well; an index the host lacks fails in one line; nothing without the variable" {
	assert_equal "$(nodes AWS_NEURON_VISIBLE_DEVICES=1)" "/dev/neuron1"
	assert_equal "$(files AWS_NEURON_VISIBLE_DEVICES=1)" ""
	assert_equal "$(nodes AWS_NEURON_VISIBLE_DEVICES=ALL)" "/dev/neuron0 /dev/neuron1 /dev/neuron2"
	assert_equal "$(nodes AWS_NEURON_VISIBLE_DEVICES=all)" "/dev/neuron0 /dev/neuron1 /dev/neuron2"
	assert_equal "$(nodes AWS_NEURON_VISIBLE_DEVICES=0,2)" "/dev/neuron0 /dev/neuron2"
	assert_equal "$(nodes AWS_NEURON_VISIBLE_DEVICES=1-2)" "/dev/neuron1 /dev/neuron2"
	assert_equal "$(nodes OCI_NEURON=0)" "/dev/neuron0"
	run dry AWS_NEURON_VISIBLE_DEVICES=3
	assert_failure 1
	assert_output "ocidec hook: container : neuron: no device 3: $H/root/dev/neuron3 not found (this host has 0, 1, 2)"
	run dry
	assert_success
	assert_output ""
}

@test "Huawei Ascend: ASCEND_VISIBLE_DEVICES=1 gives /dev/davinci1 and the three control nodes, the driver's lib64 and include, DCMI and npu-smi read-only; a range as Ascend's runtime parses it; its Ascend910-N names are refused in one line" {
	assert_equal "$(nodes ASCEND_VISIBLE_DEVICES=1)" "/dev/davinci1 /dev/davinci_manager /dev/devmm_svm /dev/hisi_hdc"
	assert_equal "$(files ASCEND_VISIBLE_DEVICES=1)" \
		"/usr/local/Ascend/driver/include /usr/local/Ascend/driver/lib64 /usr/local/bin/npu-smi /usr/local/dcmi"
	run dry ASCEND_VISIBLE_DEVICES=1
	assert_line "mount $H/root/usr/local/Ascend/driver/lib64 /usr/local/Ascend/driver/lib64 ro,nosuid,nodev"
	assert_equal "$(nodes ASCEND_VISIBLE_DEVICES=0-1)" "/dev/davinci0 /dev/davinci1 /dev/davinci_manager /dev/devmm_svm /dev/hisi_hdc"
	assert_equal "$(nodes OCI_ASCEND=0)" "/dev/davinci0 /dev/davinci_manager /dev/devmm_svm /dev/hisi_hdc"
	run dry ASCEND_VISIBLE_DEVICES=Ascend910-1
	assert_failure 1
	assert_output "ocidec hook: ascend: no device 'Ascend910-1'"
	run dry
	assert_output ""
}

@test "Tenstorrent: OCI_TENSTORRENT indexes the cards in PCI order, the UMD's logical IDs (index 0 is /dev/tenstorrent/1, probed second), or by PCI address; the by-id links are no devices; TT_VISIBLE_DEVICES, the UMD's own filter, selects nothing" {
	assert_equal "$(nodes OCI_TENSTORRENT=0)" "/dev/tenstorrent/1"
	assert_equal "$(nodes OCI_TENSTORRENT=1)" "/dev/tenstorrent/0"
	assert_equal "$(nodes OCI_TENSTORRENT=0000:02:00.0)" "/dev/tenstorrent/0"
	assert_equal "$(nodes OCI_TENSTORRENT=all)" "/dev/tenstorrent/0 /dev/tenstorrent/1"
	run dry OCI_TENSTORRENT=2
	assert_failure 1
	assert_output "ocidec hook: container : tenstorrent: no device 2: pci_devices finds 2"
	run dry TT_VISIBLE_DEVICES=1
	assert_success
	assert_output ""
}

@test "/dev/accel shared by three drivers: intel-npu, amd-xdna and qaic each give only the accelN of the PCI functions their own driver (intel_vpu, amdxdna, qaic) is bound to, for an index and for all; QAIC_VISIBLE_DEVICES selects nothing" {
	assert_equal "$(nodes OCI_INTEL_NPU=all)" "/dev/accel/accel0"
	assert_equal "$(nodes OCI_INTEL_NPU=0)" "/dev/accel/accel0"
	assert_equal "$(nodes OCI_AMD_XDNA=all)" "/dev/accel/accel1"
	assert_equal "$(nodes OCI_AMD_XDNA=0000:c5:00.1)" "/dev/accel/accel1"
	assert_equal "$(nodes OCI_QAIC=all)" "/dev/accel/accel2 /dev/accel/accel3"
	assert_equal "$(nodes OCI_QAIC=1)" "/dev/accel/accel3"
	assert_equal "$(nodes OCI_INTEL_NPU=all OCI_AMD_XDNA=all)" "/dev/accel/accel0 /dev/accel/accel1"
	run dry OCI_INTEL_NPU=1
	assert_failure 1
	assert_output "ocidec hook: container : intel-npu: no device 1: pci_devices finds 1"
	run dry QAIC_VISIBLE_DEVICES=0
	assert_output ""
	# the Platform SDK only when asked for (its platform feature)
	assert_equal "$(files OCI_QAIC=0)" ""
	assert_equal "$(files OCI_QAIC=0 OCI_QAIC_FEATURES=platform)" "/opt/qti-aic"
	assert_equal "$(nodes OCI_QAIC=0 OCI_QAIC_FEATURES=platform)" "/dev/accel/accel2"
}

@test "Rebellions: OCI_REBELLIONS=1 gives /dev/rbln1 with the driver package's librbln-* (in the container's cache) and tools; the RSD group nodes only by the rsd feature, and not to a container without CAP_SYS_ADMIN" {
	assert_equal "$(nodes OCI_REBELLIONS=1)" "/dev/rbln1"
	assert_equal "$(files OCI_REBELLIONS=1)" "/usr/bin/rbln-smi /usr/bin/rbln-stat /usr/lib/x86_64-linux-gnu/librbln-ml.so.1.0"
	run dry OCI_REBELLIONS=1
	assert_line "ldcache-entry librbln-ml.so.1 /usr/lib/x86_64-linux-gnu/librbln-ml.so.1"
	assert_equal "$(CAPS=CAP_SYS_ADMIN nodes OCI_REBELLIONS=all OCI_REBELLIONS_FEATURES=rsd)" "/dev/rbln0 /dev/rbln1 /dev/rsd0"
	run dry OCI_REBELLIONS=all OCI_REBELLIONS_FEATURES=rsd
	assert_line "ocidec hook: warn: rebellions: feature 'rsd' dropped: a container without CAP_SYS_ADMIN may not ask for it (unprivileged_features)"
	refute_line --partial /dev/rsd0
	run dry
	assert_output ""
}

@test "under runc: each vendor's variable gives a container exactly its nodes and files, by the prestart hook and by the runtime shim; a container asking for nothing gets none of them" {
	local want
	for engine in hook shim; do
		assert_equal "$(in_container $engine AWS_NEURON_VISIBLE_DEVICES=1)" "/dev/neuron1"
		assert_equal "$(in_container $engine ASCEND_VISIBLE_DEVICES=1)" \
			"/dev/davinci1 /dev/davinci_manager /dev/devmm_svm /dev/hisi_hdc ascend-hal npu-smi: no device here"
		assert_equal "$(in_container $engine OCI_TENSTORRENT=1)" "/dev/tenstorrent/0"
		assert_equal "$(in_container $engine OCI_INTEL_NPU=0)" "/dev/accel/accel0"
		assert_equal "$(in_container $engine OCI_AMD_XDNA=all)" "/dev/accel/accel1"
		assert_equal "$(in_container $engine OCI_QAIC=1 OCI_QAIC_FEATURES=platform)" "/dev/accel/accel3 qaic-util: no device here"
		assert_equal "$(in_container $engine OCI_REBELLIONS=1)" "/dev/rbln1 librbln-ml rbln-smi: no device here"
		assert_equal "$(in_container $engine)" ""
	done
}

@test "CDI: ocidec cdi -c DIR VENDOR gives each vendor's spec in its own kind, a device per index and all, the control nodes and files in the common edits; valid CDI (0.5.0's schema and types, and the newest schema); a runc container given one device by the spec has its nodes" {
	declare -A kind=([neuron]=aws.amazon.com/neuron [ascend]=huawei.com/Ascend910 [tenstorrent]=tenstorrent.com/device
		[intel-npu]=npu.intel.com/accel [amd-xdna]=amd.com/npu [qaic]=qualcomm.com/qaic [rebellions]=rebellions.ai/npu)
	declare -A devs=([neuron]="0 /dev/neuron0|1 /dev/neuron1|2 /dev/neuron2|all /dev/neuron0 /dev/neuron1 /dev/neuron2|common"
		[ascend]="0 /dev/davinci0|1 /dev/davinci1|all /dev/davinci0 /dev/davinci1|common /dev/davinci_manager /dev/devmm_svm /dev/hisi_hdc"
		[tenstorrent]="0 /dev/tenstorrent/1|1 /dev/tenstorrent/0|all /dev/tenstorrent/1 /dev/tenstorrent/0|common"
		[intel-npu]="0 /dev/accel/accel0|all /dev/accel/accel0|common"
		[amd-xdna]="0 /dev/accel/accel1|all /dev/accel/accel1|common"
		[qaic]="0 /dev/accel/accel2|1 /dev/accel/accel3|all /dev/accel/accel2 /dev/accel/accel3|common"
		[rebellions]="0 /dev/rbln0|1 /dev/rbln1|all /dev/rbln0 /dev/rbln1|common")
	declare -A pick=([neuron]="1:/dev/neuron1" [ascend]="1:/dev/davinci1 /dev/davinci_manager /dev/devmm_svm /dev/hisi_hdc ascend-hal npu-smi: no device here"
		[tenstorrent]="0:/dev/tenstorrent/1" [intel-npu]="0:/dev/accel/accel0" [amd-xdna]="0:/dev/accel/accel1"
		[qaic]="1:/dev/accel/accel3" [rebellions]="0:/dev/rbln0 librbln-ml rbln-smi: no device here")
	for v in $NEW; do
		run cdi -c "$CFG" -o "$SPEC" "$v"
		assert_success
		run python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["kind"])
for d in s["devices"]: print(d["name"], " ".join(n["path"] for n in d["containerEdits"].get("deviceNodes", [])))
print(" ".join(["common"] + [n["path"] for n in s["containerEdits"].get("deviceNodes", [])]))' "$SPEC"
		assert_output "${kind[$v]}
$(tr '|' '\n' <<<"${devs[$v]}")"
		run cdi_check "$SPEC"
		assert_success
		# the spec applied as an engine applies it, one device
		rm -rf "$B"
		"$FIXTURES/bundle.sh" "$B" -- sh -c "$SEE" >/dev/null
		"$FIXTURES/cdi-apply.py" "$SPEC" "$B/config.json" "${pick[$v]%%:*}"
		run bash -c "cd '$B' && runc --root '$BATS_TEST_TMPDIR/runc-root' run '$ID' 2>&1"
		runc --root "$BATS_TEST_TMPDIR/runc-root" delete -f "$ID" >/dev/null 2>&1 || true
		assert_success
		assert_equal "$(sort <<<"$output" | tr '\n' ' ' | sed 's/ $//')" "${pick[$v]#*:}"
	done
	# Ascend's driver files in its common edits, Rebellions' library and its cache hook
	cdi -c "$CFG" -o "$SPEC" ascend 2>/dev/null
	run python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(" ".join(sorted(m["containerPath"] for m in s["containerEdits"]["mounts"])))' "$SPEC"
	assert_output "/usr/local/Ascend/driver/include /usr/local/Ascend/driver/lib64 /usr/local/bin/npu-smi /usr/local/dcmi"
	cdi -c "$CFG" -o "$SPEC" rebellions 2>/dev/null
	run python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(" ".join(s["containerEdits"]["hooks"][0]["args"]))' "$SPEC"
	assert_output --partial "ocidec-hook --cdi --library /usr/lib/x86_64-linux-gnu/librbln-ml.so.1.0"
}

@test "the Kubernetes tenant policy (selection = mounts annotation env, unprivileged_selection = mounts annotation): a pod's own variable gets nothing, said; CAP_SYS_ADMIN keeps it; the device plugin's list (mounts of /dev/null in device_list_dir) still selects" {
	declare -A var=([neuron]=AWS_NEURON_VISIBLE_DEVICES [ascend]=ASCEND_VISIBLE_DEVICES [tenstorrent]=OCI_TENSTORRENT
		[intel-npu]=OCI_INTEL_NPU [amd-xdna]=OCI_AMD_XDNA [qaic]=OCI_QAIC [rebellions]=OCI_REBELLIONS)
	declare -A want=([neuron]=/dev/neuron0 [ascend]="/dev/davinci0 /dev/davinci_manager /dev/devmm_svm /dev/hisi_hdc"
		[tenstorrent]=/dev/tenstorrent/1 [intel-npu]=/dev/accel/accel0 [amd-xdna]=/dev/accel/accel1
		[qaic]=/dev/accel/accel2 [rebellions]=/dev/rbln0)
	for v in $NEW; do
		sed -i '/^\[vendor\]/a selection = mounts annotation env\nunprivileged_selection = mounts annotation' "$CFG/$v.ini"
	done
	for v in $NEW; do
		run dry "${var[$v]}=0"
		assert_success
		assert_output "ocidec hook: warn: $v: ${var[$v]}=0 ignored: the vendor takes no device selection from 'env' for a container without CAP_SYS_ADMIN (unprivileged_selection)"
		assert_equal "$(CAPS=CAP_SYS_ADMIN nodes "${var[$v]}=0")" "${want[$v]}"
		assert_equal "$(MOUNTS=/var/run/ocidec-devices/$v/0 nodes)" "${want[$v]}"
	done
	# ocidec check finds none of them open to a pod's variable
	run check -c "$CFG"
	refute_line --partial "selects devices through its own environment"
}

@test "ocidec list and ocidec check -c DIR on the fixture: each vendor's nodes and files, and each found with its devices, no problem of theirs" {
	run list -c "$CFG" neuron
	assert_success
	assert_output "$H/root/dev/neuron0
$H/root/dev/neuron1
$H/root/dev/neuron2"
	run list -c "$CFG" --devices 1 ascend
	assert_success
	assert_line "$H/root/dev/davinci1"
	refute_line "$H/root/dev/davinci0"
	assert_line "$H/root/dev/hisi_hdc"
	assert_line "$H/root/usr/local/bin/npu-smi"
	assert_line "$H/root/usr/local/dcmi/libdcmi.so"
	run list -c "$CFG" intel-npu amd-xdna qaic
	assert_success
	assert_output "$H/root/dev/accel/accel1
$H/root/dev/accel/accel0
$H/root/dev/accel/accel2
$H/root/dev/accel/accel3
$H/root/opt/qti-aic
$H/root/opt/qti-aic/exec
$H/root/opt/qti-aic/exec/qaic-runner
$H/root/opt/qti-aic/tools
$H/root/opt/qti-aic/tools/qaic-util"
	run list -c "$CFG" --features runtime rebellions
	assert_success
	assert_line "$H/root/usr/lib/x86_64-linux-gnu/librbln-ml.so.1.0"
	refute_line "$H/root/dev/rsd0"
	run check -c "$CFG"
	for line in "amd-xdna: driver_root $H/root: 1 device node" "ascend: driver_root $H/root: 5 device nodes" \
		"intel-npu: driver_root $H/root: 1 device node" "neuron: driver_root $H/root: 3 device nodes" \
		"qaic: driver_root $H/root: 2 device nodes" "rebellions: driver_root $H/root: 3 device nodes" \
		"tenstorrent: driver_root $H/root: 2 device nodes"; do
		assert_line --regexp "^ok +${line}"
	done
	for v in $NEW; do refute_line --regexp "^PROBLEM +$v:"; done
	# and the shipped files as they are (driver_root /) load with every other shipped one
	mkdir -m 0755 "$BATS_TEST_TMPDIR/all"
	cp "$CONF"/*.ini "$BATS_TEST_TMPDIR/all/" && chmod 0644 "$BATS_TEST_TMPDIR"/all/*.ini
	# shellcheck disable=SC2086
	run list -c "$BATS_TEST_TMPDIR/all" $NEW
	assert_success
}
