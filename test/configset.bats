#!/usr/bin/env bats
# ocidec config (ocidec-config(1)): a vendor file printed, a key read, keys
# set as nvidia-ctk config --set does: only the key's lines changed, the
# result loaded by the loader before anything is printed or written.

load helpers

setup() {
	common_setup
	DR=$BATS_TEST_TMPDIR/root
	mkdir -p "$DR/etc/acme"
	touch "$DR/etc/acme/a.conf" "$DR/etc/acme/b.conf" "$DR/etc/acme/c.conf"
	# a vendor whose list prints what it is set to: inline comments,
	# indentation and a value over continuation lines
	write_ini acme <<-EOF
		; the acme vendor
		[vendor]
		activation_flag = OCI_ACME   ; the flag
		driver_root = $DR
		log_level = warn

		[feature.base]
		miscellaneous = /etc/acme/a.conf
		    /etc/acme/b.conf
		; the end of base

		[feature.extra]
		include = base
	EOF
	ORIG=$BATS_TEST_TMPDIR/acme.orig
	cp "$CFG/acme.ini" "$ORIG"
}

# changed: the lines diff gives between the original and the file (or stdin)
changed() {
	diff "$ORIG" "${1:--}" | grep '^[<>]' || true
}

@test "without --set the file is printed as it is; the vendor is nvidia by default" {
	run --separate-stderr config -c "$CFG" acme
	assert_success
	[ "$output" = "$(cat "$ORIG")" ]
	run --separate-stderr config "$CFG/acme.ini"
	assert_success
	[ "$output" = "$(cat "$ORIG")" ]
	run --separate-stderr config -c "$CFG"
	assert_failure 2
	[ "$stderr" = "ocidec config: $CFG: no vendor 'nvidia'" ]
	nvidia_ini /
	run --separate-stderr config -c "$CFG"
	assert_success
	[ "$output" = "$(cat "$CFG/nvidia.ini")" ]
}

@test "--get: a key's value, a list's lines joined; a key not set is exit 1" {
	run --separate-stderr config -c "$CFG" --get activation_flag --get vendor.log_level \
		--get feature.base.miscellaneous acme
	assert_success
	assert_output "$(printf 'OCI_ACME\nwarn\n/etc/acme/a.conf /etc/acme/b.conf')"
	run --separate-stderr config -c "$CFG" --get feature.extra.devices acme
	assert_failure 1
	assert_output ""
	[ "$stderr" = "ocidec config: $CFG/acme.ini: feature.extra.devices is not set (in [feature.extra])" ]
	# nvidia-ctk's -c FILE and --config-file name the file
	run config -c "$CFG/acme.ini" --get driver_root
	assert_output "$DR"
	run config --config-file "$CFG/acme.ini" --get include
	assert_failure 1
	run config --config "$CFG/acme.ini" --get feature.extra.include
	assert_output base
}

@test "--set replaces a value: the key's line alone, its inline comment and spelling kept" {
	run --separate-stderr config -c "$CFG" --set activation_flag=OCI_ROCKET --set vendor.log_level=debug acme
	assert_success
	[ -z "$stderr" ]
	run changed <(config -c "$CFG" --set activation_flag=OCI_ROCKET --set vendor.log_level=debug acme)
	assert_output "$(printf '%s\n' '< activation_flag = OCI_ACME   ; the flag' '> activation_flag = OCI_ROCKET   ; the flag' \
		'< log_level = warn' '> log_level = debug')"
	# a key's last --set wins
	run config -c "$CFG" --set log_level=debug --set log_level=info acme
	assert_line "log_level = info"
	refute_line "log_level = debug"
}

@test "--set of a key the section lacks: after its last key (continuation lines included)" {
	run changed <(config -c "$CFG" --set feature.base.binaries=acme-smi acme)
	assert_output "> binaries = acme-smi"
	run config -c "$CFG" --set feature.base.binaries=acme-smi acme
	assert_success
	# after the list's last line, before the comment that ends the section
	[ "$(grep -A1 -F '/etc/acme/b.conf' <<<"$output" | tail -1)" = "binaries = acme-smi" ]
	run config -c "$CFG" --set vendor.cdi_kind=acme.com/gpu acme
	[ "$(grep -A1 '^log_level' <<<"$output" | tail -1)" = "cdi_kind = acme.com/gpu" ]
}

@test "--set in a section the file lacks: the section added at the end" {
	run config -c "$CFG" --set feature.tools.binaries=acme-top acme
	assert_success
	[ "$output" = "$(cat "$ORIG"; printf '\n[feature.tools]\nbinaries = acme-top')" ]
}

@test "--set of a value over continuation lines replaces all its lines" {
	run changed <(config -c "$CFG" --set feature.base.miscellaneous=/etc/acme/b.conf acme)
	assert_output "$(printf '%s\n' '< miscellaneous = /etc/acme/a.conf' '<     /etc/acme/b.conf' \
		'> miscellaneous = /etc/acme/b.conf')"
	config -c "$CFG" --set feature.base.miscellaneous=/etc/acme/b.conf --in-place acme
	run list -c "$CFG" acme
	assert_success
	assert_line "$DR/etc/acme/b.conf"
	refute_line "$DR/etc/acme/a.conf"
}

@test "a value the loader refuses: one line (file, line, key, why), exit 2, the file untouched" {
	for mode in --in-place ""; do
		run --separate-stderr config -c "$CFG" --set log_level=loud $mode acme
		assert_failure 2
		assert_output ""
		[ "$stderr" = "ocidec config: $CFG/acme.ini:5: log_level must be error, warn, info or debug (--set log_level=loud: nothing written)" ]
		cmp "$ORIG" "$CFG/acme.ini"
	done
	# the schema's unknown key, a new feature's bad name, a check across keys
	run --separate-stderr config -c "$CFG" --set vendor.drvier_root=/ -i acme
	assert_failure 2
	[ "$stderr" = "ocidec config: $CFG/acme.ini:6: unknown key 'drvier_root' in [vendor] (--set vendor.drvier_root=/: nothing written)" ]
	run --separate-stderr config -c "$CFG" --set feature.Bad.devices=x -i acme
	assert_failure 2
	[[ $stderr == *"invalid feature name in [feature.Bad]"* ]]
	run --separate-stderr config -c "$CFG" --set feature.extra.include=nothere -i acme
	assert_failure 2
	[[ $stderr == *"include names unknown feature 'nothere' (--set feature.extra.include=nothere: nothing written)" ]]
	# what the file could not hold as given; no key; no value
	run --separate-stderr config -c "$CFG" --set 'log_level=info ; x' -i acme
	assert_failure 2
	[[ $stderr == *"the value would not read back as given"* ]]
	run --separate-stderr config -c "$CFG" --set 'log level=info' -i acme
	assert_failure 2
	run --separate-stderr config -c "$CFG" --set env_all -i acme
	assert_failure 2
	[ "$stderr" = "ocidec config: --set env_all: give KEY=VALUE (a switch: KEY=true)" ]
	cmp "$ORIG" "$CFG/acme.ini"
}

@test "a symlink, a file not root's and a group-writable file are refused, as the loader refuses them" {
	mv "$CFG/acme.ini" "$BATS_TEST_TMPDIR/real.ini"
	ln -s "$BATS_TEST_TMPDIR/real.ini" "$CFG/acme.ini"
	run --separate-stderr config -c "$CFG" --set log_level=info -i acme
	assert_failure 2
	[ "$stderr" = "ocidec config: $CFG/acme.ini: refused: a symbolic link (name the file itself)" ]
	[ -L "$CFG/acme.ini" ]
	cmp "$ORIG" "$BATS_TEST_TMPDIR/real.ini"
	rm "$CFG/acme.ini"
	mv "$BATS_TEST_TMPDIR/real.ini" "$CFG/acme.ini"
	chown 1000 "$CFG/acme.ini"
	run --separate-stderr config -c "$CFG" --set log_level=info -i acme
	assert_failure 2
	[ "$stderr" = "ocidec config: $CFG/acme.ini: refused: owned by uid 1000, not root" ]
	chown 0 "$CFG/acme.ini"
	chmod 0664 "$CFG/acme.ini"
	run --separate-stderr config -c "$CFG" --set log_level=info acme
	assert_failure 2
	[ "$stderr" = "ocidec config: $CFG/acme.ini: refused: writable by group or others (mode 0664)" ]
	cmp "$ORIG" "$CFG/acme.ini"
}

@test "--in-place: atomically, mode and owner kept, loaded by list afterwards; nothing when unchanged" {
	chmod 0640 "$CFG/acme.ini"
	chgrp 100 "$CFG/acme.ini"
	run list -c "$CFG" acme
	refute_line "$DR/etc/acme/c.conf"
	run --separate-stderr config -c "$CFG" --set feature.extra.miscellaneous=/etc/acme/c.conf --in-place acme
	assert_success
	assert_output ""
	[ "$(stat -c '%a %u %g' "$CFG/acme.ini")" = "640 0 100" ]
	run changed "$CFG/acme.ini"
	assert_output "> miscellaneous = /etc/acme/c.conf"
	run --separate-stderr list -c "$CFG" acme
	assert_success
	assert_line "$DR/etc/acme/c.conf"
	# no temporary file left
	[ "$(ls -A "$CFG")" = acme.ini ]
	# the same value again: the file is not written
	ino=$(stat -c %i "$CFG/acme.ini")
	config -c "$CFG" -i --set feature.extra.miscellaneous=/etc/acme/c.conf acme
	[ "$(stat -c %i "$CFG/acme.ini")" = "$ino" ]
}

@test "stdout (no --in-place, no --output) writes nothing" {
	touch -d '2020-01-01' "$CFG/acme.ini" "$CFG"
	before=$(ls -lAi --full-time "$CFG")
	run --separate-stderr config -c "$CFG" --set log_level=debug acme
	assert_success
	assert_line "log_level = debug"
	[ "$(ls -lAi --full-time "$CFG")" = "$before" ]
	cmp "$ORIG" "$CFG/acme.ini"
}

@test "--output: another file (its directory made), the source untouched; not with --in-place" {
	run config -c "$CFG" --set log_level=info -o "$BATS_TEST_TMPDIR/new/conf.d/acme.ini" acme
	assert_success
	cmp "$ORIG" "$CFG/acme.ini"
	[ "$(stat -c %a "$BATS_TEST_TMPDIR/new/conf.d/acme.ini")" = 644 ]
	run config --get log_level "$BATS_TEST_TMPDIR/new/conf.d/acme.ini"
	assert_output info
	ln -s "$CFG/acme.ini" "$BATS_TEST_TMPDIR/link.ini"
	run --separate-stderr config -c "$CFG" --set log_level=info -o "$BATS_TEST_TMPDIR/link.ini" acme
	assert_failure 2
	[ "$stderr" = "ocidec config: $BATS_TEST_TMPDIR/link.ini: refused: a symbolic link" ]
	run config -c "$CFG" --set log_level=info -o "$BATS_TEST_TMPDIR/x.ini" -i acme
	assert_failure 2
	run config -c "$CFG" --get log_level -i acme
	assert_failure 2
}

@test "no two vendors of one name: the other files of the directory are loaded beside the result" {
	printf '[vendor]\nactivation_flag = OCI_BETA\n' | write_ini beta
	run --separate-stderr config -c "$CFG" --set name=beta -i acme
	assert_failure 2
	[ "$stderr" = "ocidec config: $CFG/acme.ini: vendor 'beta' is already defined in $CFG/beta.ini (nothing written)" ]
	cmp "$ORIG" "$CFG/acme.ini"
	# a vendor by its name, whatever its file is called
	config -c "$CFG" --set name=gamma -i beta
	run config -c "$CFG" --get activation_flag gamma
	assert_output OCI_BETA
}

@test "NVIDIA's config.toml keys: the three with a key of the same meaning set as theirs, the others said" {
	run --separate-stderr config -c "$CFG" --set nvidia-container-cli.root=/run/nvidia/driver \
		--set nvidia-container-cli.no-cgroups --set nvidia-container-runtime.log-level=debug acme
	assert_success
	assert_line "driver_root = /run/nvidia/driver"
	assert_line "cgroup_devices = false"
	assert_line "log_level = debug"
	[[ $stderr == *"NVIDIA's key nvidia-container-cli.no-cgroups is ocidec's vendor.cgroup_devices (the opposite) in nvidia.ini"* ]]
	run config -c "$CFG" --set nvidia-container-cli.no-cgroups=false acme
	assert_line "cgroup_devices = true"
	run --separate-stderr config -c "$CFG" --set nvidia-container-runtime.mode=cdi acme
	assert_failure 2
	[[ $stderr == *"NVIDIA's key nvidia-container-runtime.mode has none in nvidia.ini"* ]]
	# --get reads them too (review of issue 47); the switch of the opposite
	# sense is said
	run --separate-stderr config -c "$CFG" --get nvidia-container-cli.root acme
	assert_success
	assert_output "$(sed -n 's/^driver_root = //p' "$CFG/acme.ini")"
	[ "$stderr" = "ocidec config: warn: NVIDIA's key nvidia-container-cli.root is ocidec's vendor.driver_root in nvidia.ini" ]
	run --separate-stderr config -c "$CFG" --get nvidia-container-cli.no-cgroups acme
	assert_failure 2
	[[ $stderr == *"NVIDIA's key nvidia-container-cli.no-cgroups is ocidec's vendor.cgroup_devices in nvidia.ini (of the opposite sense)"* ]]
}
