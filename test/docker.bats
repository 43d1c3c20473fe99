#!/usr/bin/env bats
# Docker 20.10 and containerd 1.6 (Debian's docker.io and containerd), for
# real: a private dockerd (test/fixtures/dockerd.sh) runs the demo vendor
# through `ocidec-runtime` (--runtime ocidec), Docker's --gpus through the
# nvidia-container-runtime-hook name, and containerd's ctr through
# --runc-binary. The image is made offline (docker import of the test rootfs).

load helpers

setup_file() {
	is_static || return 0
	export D
	D=$(mktemp -d /tmp/ocidec-docker.XXXXXX)
	mkdir -p "$D/bin"
	for n in ocidec-runtime nvidia-container-runtime-hook; do ln -s "$OCIDEC" "$D/bin/$n"; done
	# the demo vendor, its env aliases NVIDIA's, at the default config dir
	mkdir -p "$D/etc-upper/ocidec/ocidec.d"
	EXTRA="activation_aliases = NVIDIA_VISIBLE_DEVICES" \
		demo_vendor "$D/dr" "$D/etc-upper/ocidec/ocidec.d"
	"$BATS_TEST_DIRNAME/fixtures/dockerd.sh" start "$D"
	"$BATS_TEST_DIRNAME/fixtures/bundle.sh" "$D/b" >/dev/null
	tar -C "$D/b/rootfs" -c . | /usr/bin/docker -H "unix://$D/docker.sock" import - ocidec-test:1 >/dev/null
}

teardown_file() {
	[ -n "${D:-}" ] || return 0
	"$BATS_TEST_DIRNAME/fixtures/dockerd.sh" stop "$D"
	rm -rf "$D"
}

setup() {
	common_setup
	is_static || skip "the daemons run once, in the static build's pass"
}

dk() {
	timeout 120 /usr/bin/docker -H "unix://$D/docker.sock" "$@"
}


@test "docker run --runtime ocidec -e OCI_DEMO=all: device, program through the cache, read-only mounts" {
	run dk run --rm --network none --runtime ocidec -e OCI_DEMO=all ocidec-test:1 sh -c "$DEMO_SEE"
	assert_success
	assert_output "$DEMO_SEEN_ALL"
}

@test "docker run --runtime ocidec with a request that cannot be met: ocidec's line in the docker CLI's error, not runc's log.json complaint (issue 33, finding 1)" {
	run dk run --rm --network none --runtime ocidec -e OCI_DEMO=7 ocidec-test:1 true
	assert_failure
	assert_output --partial "ocidec runtime: demo: no device 7: $D/dr/dev/demo7 not found (this host has 0, 1)"
	refute_output --partial "unable to retrieve OCI runtime error"
	echo "# docker 20.10: $output" >&3
}

@test "docker run --runtime ocidec without activation: the container as runc runs it, its config.json without edits" {
	run dk run --rm --network none --runtime ocidec ocidec-test:1 sh -c 'ls /dev; grep -c " / " /proc/self/mountinfo; test -e /usr/bin/demo-tool || echo none'
	assert_success
	refute_line democtl
	assert_line none
	id=$(dk run -d --network none --runtime ocidec ocidec-test:1 sleep 30)
	config=$(find "$D/exec/containerd" -path "*$id*" -name config.json | head -n 1)
	[ -n "$config" ]
	run grep -c 'ocidec-hook\|/dev/demo' "$config"
	assert_output 0
	dk rm -f "$id" >/dev/null
}

@test "docker run --gpus all and --gpus '\"device=1\"': NVIDIA's hook name on PATH, NVIDIA_VISIBLE_DEVICES" {
	run dk run --rm --network none --gpus all ocidec-test:1 sh -c 'demo-tool; ls /dev | grep demo'
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl'
	run dk run --rm --network none --gpus '"device=1"' ocidec-test:1 sh -c 'demo-tool; ls /dev | grep demo'
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl'
	run dk run --rm --network none --gpus '"device=0","capabilities=compute,utility"' ocidec-test:1 sh -c 'ls /dev | grep demo; echo $NVIDIA_DRIVER_CAPABILITIES'
	assert_success
	assert_output $'demo0\ndemoctl\ncompute,utility'
}

@test "ctr run --runc-binary ocidec-runtime (containerd 1.6, a private runc root): the same injection" {
	pid=$(cat "$D/docker.pid")
	run timeout 120 nsenter -t "$pid" -m ctr -a "$D/exec/containerd/containerd.sock" -n ocidec-test run --rm \
		--rootfs --runc-binary "$D/bin/ocidec-runtime" --runc-root "$D/runc-root" --env OCI_DEMO=0 \
		"$D/b/rootfs" "ctr-$$" /bin/sh -c 'demo-tool; ls /dev | grep demo'
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemoctl'
}

@test "ocidec install --runtime docker: dockerd reads the merged daemon.json and runs the installed runtime" {
	E=$(mktemp -d /tmp/ocidec-docker-install.XXXXXX)
	H=$E/host
	mkdir -p "$H/etc/docker" "$E/cfg"
	# the administrator's settings, which the merge keeps and dockerd applies
	printf '{\n  "log-level": "warn",\n  "default-ulimits": { "nofile": { "Name": "nofile", "Hard": 4096, "Soft": 2048 } },\n  "runtimes": { "plain": { "path": "/usr/sbin/runc" } }\n}\n' \
		>"$H/etc/docker/daemon.json"
	demo_vendor "$E/dr" "$E/cfg"
	ocidec install --host-root "$H" -c "$E/cfg" --runtime docker >/dev/null
	HOST=$H "$BATS_TEST_DIRNAME/fixtures/dockerd.sh" start "$E" || { rm -rf "$E"; false; }
	tar -C "$D/b/rootfs" -c . | /usr/bin/docker -H "unix://$E/docker.sock" import - ocidec-test:1 >/dev/null
	run timeout 60 /usr/bin/docker -H "unix://$E/docker.sock" info --format '{{range $k, $v := .Runtimes}}{{$k}}={{$v.Path}} {{end}}'
	assert_output --partial "ocidec=/usr/local/ocidec/bin/ocidec-runtime"
	assert_output --partial "plain=/usr/sbin/runc"
	run timeout 120 /usr/bin/docker -H "unix://$E/docker.sock" run --rm --network none --runtime ocidec -e OCI_DEMO=all \
		ocidec-test:1 sh -c "ulimit -n; $DEMO_SEE"
	"$BATS_TEST_DIRNAME/fixtures/dockerd.sh" stop "$E"
	rm -rf "$E"
	assert_success
	assert_output "2048
$DEMO_SEEN_ALL"
}

@test "Docker 20.10, the package's way: ocidec installed as a package installs it, ocidec install on the host itself --set-as-default --enable-cdi (20.10 has no CDI: said, not set); dockerd started: docker run without --runtime and --gpus all get the devices; nothing copied; --uninstall gives daemon.json back (issue 33)" {
	E=$(mktemp -d /tmp/ocidec-docker-pkg.XXXXXX)
	H=$E/host
	mkdir -p "$H/etc/docker" "$H/etc/ocidec/ocidec.d" "$H/usr/bin" "$H/usr/sbin" "$H/usr/local/bin" "$H/proc" "$H/dev"
	mknod -m 0666 "$H/dev/null" c 1 3
	install -m 0755 "$OCIDEC" "$H/usr/bin/ocidec"
	for a in hook runtime; do ln -s ocidec "$H/usr/bin/ocidec-$a"; done
	# the host's dockerd (install asks it its version), with its libraries
	cp /usr/sbin/dockerd "$H/usr/sbin/"
	for l in $(ldd /usr/sbin/dockerd | grep -o '/[^ ]*'); do cp --parents -L "$l" "$H"; done
	# the demo vendor as NVIDIA's (its name and variable: --gpus)
	demo_vendor "$E/dr" "$E/cfg"
	sed 's/^name = demo$/name = nvidia/; s/^activation_flag = OCI_DEMO$/activation_flag = NVIDIA_VISIBLE_DEVICES/' \
		"$E/cfg/demo.ini" >"$H/etc/ocidec/ocidec.d/nvidia.ini"
	chmod 0644 "$H/etc/ocidec/ocidec.d/nvidia.ini"
	printf '{\n  "log-level": "warn"\n}\n' >"$H/etc/docker/daemon.json"
	had=$(sha256sum <"$H/etc/docker/daemon.json")
	run unshare -m sh -c 'mount -t proc proc "$1/proc" && chroot "$1" /usr/bin/ocidec install --runtime docker --set-as-default --enable-cdi' sh "$H"
	assert_success
	assert_line "ocidec install: warn: docker: Docker 20 has no CDI (Docker 25 or later): not enabled; docker run --device VENDOR/KIND=N needs 25, the runtime and --gpus work without"
	assert_line --partial "/usr/bin/ocidec registered, as it is installed"
	! grep -q '"cdi"' "$H/etc/docker/daemon.json"
	[ "$(readlink "$H/usr/local/bin/nvidia-container-runtime-hook")" = /usr/bin/ocidec ]
	# dockerd started on that configuration, the package's files where it looks
	HOST=$H PACKAGE=1 "$BATS_TEST_DIRNAME/fixtures/dockerd.sh" start "$E" || { rm -rf "$E"; false; }
	edk() { timeout 120 /usr/bin/docker -H "unix://$E/docker.sock" "$@"; }
	tar -C "$D/b/rootfs" -c . | edk import - ocidec-test:1 >/dev/null
	run edk info --format '{{.DefaultRuntime}} {{.Runtimes.ocidec.Path}}'
	assert_output "ocidec /usr/bin/ocidec-runtime"
	run edk run --rm --network none -e NVIDIA_VISIBLE_DEVICES=all ocidec-test:1 sh -c "$DEMO_SEE"
	out_env=$output
	run edk run --rm --network none --gpus all ocidec-test:1 sh -c "$DEMO_SEE"
	out_gpus=$output
	run edk run --rm --network none --device nvidia.com/gpu=all ocidec-test:1 true
	out_cdi=$output
	"$BATS_TEST_DIRNAME/fixtures/dockerd.sh" stop "$E"
	assert_equal "$out_env" "$DEMO_SEEN_ALL"
	assert_equal "$out_gpus" "$DEMO_SEEN_ALL"
	echo "# docker 20.10 --device nvidia.com/gpu=all: $out_cdi" >&3
	run unshare -m sh -c 'mount -t proc proc "$1/proc" && chroot "$1" /usr/bin/ocidec install --uninstall' sh "$H"
	assert_success
	assert_equal "$(sha256sum <"$H/etc/docker/daemon.json")" "$had"
	[ ! -e "$H/usr/local/bin/nvidia-container-runtime-hook" ]
	[ ! -e "$H/usr/local/ocidec" ]
	rm -rf "$E"
}
