#!/bin/sh
# remove.sh: what the package's removal runs (deb prerm, rpm %preun) before
# ocidec's files go, so that no engine is left naming them:
# - what `ocidec install` registered (its record /var/lib/ocidec/install.json)
#   given back, byte for byte (ocidec install --uninstall): Docker's and
#   containerd's runtime and default runtime, CDI as it was, the hooks.d
#   files; then, where systemd runs them, the engines made to read it:
#   Docker reloaded (its runtimes and default runtime: no container stops),
#   containerd restarted (its containers go on);
# - the CDI specs of ocidec's refresh (/var/run/cdi: their hook is ocidec)
#   removed; one of ocidec's in /etc/cdi is said and left to its writer.
# An uninstall that fails stops the removal, saying so: the engines would
# otherwise fail every container. (make install sets the binary's path below.)
set -u
bin=/usr/bin/ocidec
record=/var/lib/ocidec/install.json
# the package's own services first: the NRI plugin would go on giving
# containers a hook that is about to be gone
if [ -d /run/systemd/system ]; then
	for u in ocidec-nri.service ocidec-cdi-refresh.path ocidec-cdi-refresh.service; do
		systemctl -q is-enabled "$u" 2>/dev/null || systemctl -q is-active "$u" 2>/dev/null || continue
		systemctl disable --now "$u" >/dev/null 2>&1 && echo "ocidec: stopped and disabled $u"
	done
fi
if [ -e "$record" ]; then
	out=$("$bin" install --uninstall 2>&1)
	rc=$?
	[ -z "$out" ] || printf '%s\n' "$out"
	if [ "$rc" -ne 0 ]; then
		echo "ocidec: the engines still name ocidec (ocidec install --uninstall: exit $rc): not removed. Give them back as said above, then remove the package; or move $record aside (the engines' files then stay as they are, naming ocidec) and remove it again" >&2
		exit 1
	fi
	# the engines made to read what was given back: Docker reloaded (its
	# runtimes and default runtime: no container stops; what wants a
	# restart the lines above say), containerd restarted (its containers
	# go on), the unit's start limit cleared first
	if [ -d /run/systemd/system ]; then
		case $out in *daemon.json*)
			systemctl -q is-active docker.service 2>/dev/null && systemctl reload docker.service &&
				echo "ocidec: reloaded docker: its runtimes as they were" ;;
		esac
		case $out in *containerd*)
			systemctl -q is-active containerd.service 2>/dev/null && systemctl reset-failed containerd.service 2>/dev/null
			systemctl -q is-active containerd.service 2>/dev/null && systemctl restart containerd.service &&
				echo "ocidec: restarted containerd: its runtimes as they were" ;;
		esac
	fi
fi
# the specs whose hook is this binary (not a toolkit container's copy, a
# DRA claim's of another path)
for f in /var/run/cdi/* /etc/cdi/*; do
	[ -f "$f" ] && [ ! -L "$f" ] && grep -qF -e "\"$bin\"" -e "path: $bin" "$f" 2>/dev/null && grep -q 'ocidec-hook' "$f" 2>/dev/null || continue
	case $f in
	/var/run/cdi/*) rm -f "$f" && echo "ocidec: removed $f" ;;
	*) echo "ocidec: $f names ocidec's hook, which is going: remove it, or make it anew with the toolkit that replaces ocidec" >&2 ;;
	esac
done
exit 0
