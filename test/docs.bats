#!/usr/bin/env bats
# The man pages document what the code takes: every long option of every
# applet's getopt table in the applet's own page (man/ocidec-APPLET.1), the
# same options as its --help, and every key of the vendor schema in
# ocidec(1). (The tables are read from the sources: what a user can type.)

load helpers

TOP=$BATS_TEST_DIRNAME/..

# The long options of the OPTIONS section of man/ocidec-APPLET.1 (or of the
# page FILE), one per line ("--config-dir"): the option names that start a
# .TP entry's tag
page_options() {
	local f=$TOP/man/ocidec-$1.1
	[ -f "$1" ] && f=$1
	sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$f" | grep -A1 '^\.TP' | grep -v '^\.TP\|^--' |
		grep -o '\\-\\-[a-z0-9]*\(\\-[a-z0-9]*\)*' | sed 's/\\-/-/g' | sort -u
}

# The long options ocidec APPLET --help names, one per line
usage_options() {
	local help=--help
	[ "$1" = runtime ] && help=--ocidec-help
	"$OCIDEC" "$1" "$help" | grep -E '^ +(-[a-zA-Z], )?--[a-z]' | grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

# applets/FILE.c's applet (applets.def: APPLET("NAME", FILE, ...))
applet_of() {
	sed -n "s/^APPLET(\"\([a-z-]*\)\", $1, .*/\1/p" "$TOP/applets/applets.def"
}

@test "every long option of every applet's getopt table is in its own page's OPTIONS" {
	missing=()
	for f in "$TOP"/applets/*.c; do
		a=$(applet_of "$(basename "$f" .c)")
		[ -n "$a" ] || continue
		documented=$(page_options "$a")
		table=$(sed -n '/struct option opts\[\]/,/{ 0 }/p' "$f")
		# the hooks' shared entries (pipeline/hookio.h)
		grep -q HOOKIO_LONG_OPTS <<<"$table" && table+=$(sed -n '/define HOOKIO_LONG_OPTS/,/[^\\]$/p' "$TOP/pipeline/hookio.h")
		for o in $(grep -o '{ "[a-z0-9-]*"' <<<"$table" | sed 's/{ "//; s/"//'); do
			[ "$o" = cdi ] && [ "$a" = cdi-hook ] && continue  # `ocidec-hook --cdi`, the specs' spelling
			grep -qx -- "--$o" <<<"$documented" || missing+=("$a --$o")
		done
	done
	[ "${#missing[@]}" -gt 0 ] && printf 'not in its OPTIONS: %s\n' "${missing[@]}"
	[ "${#missing[@]}" -eq 0 ]
	# the check can fail: a page without one of its options' entries is
	# found out (the hooks' shared table included)
	grep -qx -- --syslog <<<"$(page_options cdi-hook)"
	sed '/^\\fB\\-\\-syslog/d' "$TOP/man/ocidec-cdi-hook.1" >"$BATS_TEST_TMPDIR/page.1"
	! grep -qx -- --syslog <<<"$(page_options "$BATS_TEST_TMPDIR/page.1")"
	! page_options hook | grep -qx -- --no-such-option
}

@test "each applet has a page, reachable as ocidec-APPLET, whose OPTIONS are exactly its --help's" {
	: "${OCIDEC:?set OCIDEC to the binary under test}"
	[ "$("$OCIDEC" --list | wc -l)" -ge 10 ]
	for a in $("$OCIDEC" --list); do
		assert_file_exist "$TOP/man/ocidec-$a.1"
		# troff has nothing to say but where a long path fills a line: well formed
		run sh -c "MANWIDTH=80 man -l '$TOP/man/ocidec-$a.1' 2>&1 >/dev/null | grep -v 'cannot adjust line'"
		assert_output ""
		run grep -c '^\.SH \(NAME\|SYNOPSIS\|DESCRIPTION\|OPTIONS\|EXIT STATUS\|EXAMPLES\|SEE ALSO\)$' "$TOP/man/ocidec-$a.1"
		assert_output 7
		run diff <(usage_options "$a") <(page_options "$a")
		assert_success
	done
	# ocidec(1) names each page
	for a in $("$OCIDEC" --list); do
		grep -qF ".BR ocidec\\-$(sed 's/-/\\-/g' <<<"$a") (1)" "$TOP/man/ocidec.1"
	done
}

@test "every vendor config key the loader knows is in the man page" {
	# the schema table the loader and the idle scan read (config.c)
	keys=$(sed -n '/^static const struct key_def schema\[\] = {/,/^};/p' "$TOP/devices/config.c" |
		grep -oE '^	(V|VL|F|FL)\("[a-z_0-9]*"' | sed 's/.*"\(.*\)"/\1/')
	[ "$(wc -w <<<"$keys")" -gt 30 ]
	missing=()
	for k in $keys; do
		grep -qE "^\.B[RI]? (.* )?\"?$k( |\"|$)" "$TOP/man/ocidec.1" || missing+=("$k")
	done
	[ "${#missing[@]}" -gt 0 ] && printf 'not a .B entry in man/ocidec.1: %s\n' "${missing[@]}"
	[ "${#missing[@]}" -eq 0 ]
}

# every "ocidec APPLET ..." command of FILE's code (spans and blocks), one a line
doc_commands() {
	python3 - "$1" <<-'PY'
		import re, sys
		text = open(sys.argv[1]).read()
		spans = re.findall(r"```[a-z]*\n(.*?)```", text, re.S) + re.findall(r"`([^`\n]+)`", text)
		for s in spans:
		    for line in s.splitlines():
		        line = line.split("#")[0]
		        # a command: at the line's start or after a shell separator
		        for m in re.finditer(r"(?:^|[;|&(]\s*)\s*(ocidec(?:-[a-z-]+)?(?: [^|;&)]*)?)", line):
		            cmd = m.group(1).strip()
		            if cmd.split()[0] != "ocidec" or len(cmd.split()) > 1:
		                print(cmd)
		PY
}

@test "every ocidec command in the README and the migration guide parses: its applet exists and takes each of its long options (issue 33, finding 8)" {
	bad=()
	for f in "$TOP/README.md" "$TOP/docs/migrating-from-nvidia.md"; do
		while read -r cmd; do
			read -r -a w <<<"$cmd"
			applet=${w[1]}
			[ "${w[0]}" = ocidec ] || applet=${w[0]#ocidec-}
			[ "${w[0]}" = ocidec ] || grep -qx -- "$applet" <<<"$APPLETS" || continue   # an image's name
			[[ $applet == -* ]] && continue   # ocidec's own --list, --version
			grep -qx -- "$applet" <<<"$APPLETS" || { bad+=("$f: $cmd: no applet '$applet'"); continue; }
			help=$(usage_options "$applet")
			for o in "${w[@]}"; do
				o=${o%%=*}
				[[ $o == --* ]] || continue
				# a spelling of another applet (applets.def's OPTION_ALIAS)
				grep -q "^OPTION_ALIAS(\"$applet\", \"$o\"" "$TOP/applets/applets.def" && break
				grep -qx -- "$o" <<<"$help" || bad+=("$f: $cmd: $applet takes no $o")
			done
		done < <(doc_commands "$f")
	done
	[ "$(doc_commands "$TOP/docs/migrating-from-nvidia.md" | wc -l)" -ge 10 ]
	[ ${#bad[@]} -eq 0 ] || { printf '%s\n' "${bad[@]}"; false; }
}

@test "every NVIDIA variable the migration guide calls supported is one the shipped configs read (issue 33, finding 8)" {
	vars=$(sed -n '/^## Environment variables/,/^## /p' "$TOP/docs/migrating-from-nvidia.md" |
		grep '| supported' | cut -d'|' -f2 | grep -o '`[A-Z_]*\*\?`' | tr -d '`*')
	[ "$(wc -l <<<"$vars")" -ge 8 ]
	for v in $vars; do
		[[ $v == NVIDIA_REQUIRE_* ]] && v=NVIDIA_REQUIRE_   # requirements_env: a prefix
		grep -qE "^[a-z_]+ = ([^;]* )?$v( |\$)" "$TOP"/conf/nvidia*.ini || { echo "not read by conf/nvidia*.ini: $v"; false; }
	done
}

# The tree's paths FILE names ("pipeline/plan.c", "test/hook.bats",
# "base/"): a word of letters, digits, _, - and . with a / inside, not an
# absolute path nor a URL, nor one with a placeholder (conf/VENDOR.ini),
# one per line
doc_paths() {
	grep -oE '(^|[^a-zA-Z0-9_./:-])[a-zA-Z0-9_.-]+/([a-zA-Z0-9_.-]+/?)*' "$1" | sed -E 's/^[^a-zA-Z0-9_.]//' |
		grep -vE '^(etc|usr|var|run|dev|proc|sys|tmp|opt|lib|lib64|bin|sbin)/|[A-Z]{2,}' |
		grep -E '\.[a-z]+$|/$' | sort -u
}

@test "docs/architecture.md and docs/adding-a-vendor.md name only paths that exist (issue 48)" {
	for doc in architecture adding-a-vendor; do
		missing=
		for p in $(doc_paths "$TOP/docs/$doc.md"); do
			[ -e "$TOP/$p" ] || missing="$missing $p"
		done
		[ -z "$missing" ] || { echo "docs/$doc.md names paths that do not exist:$missing"; false; }
	done
	# they name some (the check reads them), and it can fail
	[ "$(doc_paths "$TOP/docs/architecture.md" | wc -l)" -ge 20 ]
	printf 'see `pipeline/nowhere.c` and base/\n' >"$BATS_TEST_TMPDIR/doc.md"
	run doc_paths "$BATS_TEST_TMPDIR/doc.md"
	assert_output $'base/\npipeline/nowhere.c'
}
