#!/bin/sh
# remove.sh: what the package's removal runs (deb prerm, rpm %preun) before
# ocidec's files go, so that no engine is left naming them:
# - what `ocidec install` registered (its record /var/lib/ocidec/install.json)
#   given back, byte for byte (ocidec install --uninstall): Docker's and
#   containerd's runtime and default runtime, CDI as it was, the hooks.d
#   files; then, where systemd runs them, the engines made to read it
#   (--restart: Docker restarted where a reload does not give its default
#   runtime back, containerd restarted, its containers going on);
# - the CDI specs of ocidec's refresh (/var/run/cdi: their hook is ocidec)
#   removed; one of ocidec's in /etc/cdi is said and left to its writer.
# An uninstall that fails stops the removal, saying so: the engines would
# otherwise fail every container; so does a container that runs through
# ocidec's runtime, before anything is changed. (make install sets the
# binary's path below.)
set -u
bin=/usr/bin/ocidec
record=/var/lib/ocidec/install.json
# containers whose shim runs this ocidec as their runtime (containerd's
# runc shim runs in its task's bundle, where it keeps its runtime's path,
# and calls it for every kill and delete): with it gone neither the engine
# nor kubelet could stop or delete them again. Nothing is changed while any
# runs: drained first (OCIDEC_REMOVE_BUSY=1: removed all the same)
busy=
hostroot=$(stat -L -c %d:%i /proc/1/root/ 2>/dev/null)
for p in /proc/[0-9]*; do
	case $(cat "$p/comm" 2>/dev/null) in containerd-shim*) ;; *) continue ;; esac
	# the host's shims: root's, in the host's root directory (not a
	# container's process of that name, nor a user's)
	[ "$(stat -c %u "$p" 2>/dev/null)" = 0 ] && [ "$(stat -L -c %d:%i "$p/root/" 2>/dev/null)" = "$hostroot" ] ||
		continue
	[ -f "$p/cwd/runtime" ] && [ ! -L "$p/cwd/runtime" ] || continue
	rt=$(head -c 4096 "$p/cwd/runtime" 2>/dev/null) || continue
	[ -n "$rt" ] && [ "$(readlink -f "$rt" 2>/dev/null)" = "$(readlink -f "$bin")" ] || continue
	t=$(readlink "$p/cwd")
	busy="$busy $(basename "$(dirname "$t")" | tr -cd 'A-Za-z0-9._-')/$(basename "$t" | tr -cd 'A-Za-z0-9._-')"
done
if [ -n "$busy" ] && [ "${OCIDEC_REMOVE_BUSY:-}" != 1 ]; then
	echo "ocidec: containers run through ocidec's runtime (containerd namespace/id:$busy; crictl pods --id, docker ps name them): with it removed, neither Docker nor containerd nor kubelet could stop or delete them. Stop them first (docker stop; on a Kubernetes node, drain it, then stop kubelet and remove what is left, DaemonSets' and static pods: crictl stopp and rmp), then remove the package; or remove it all the same with OCIDEC_REMOVE_BUSY=1 in its environment (sudo OCIDEC_REMOVE_BUSY=1 apt remove ocidec). Nothing was changed." >&2
	exit 1
fi
[ -z "$busy" ] || echo "ocidec: removed all the same (OCIDEC_REMOVE_BUSY=1), containers running through ocidec's runtime:$busy. To stop and delete one afterwards, give its shim a runtime at that path for the while: ln -s runc /usr/bin/ocidec-runtime (where runc is /usr/bin/runc), stop and delete them, then rm /usr/bin/ocidec-runtime" >&2
# the package's own services first: the NRI plugin would go on giving
# containers a hook that is about to be gone
# (--keep-enabled, the deb's: stopped only, their enablement the package
# manager's, which masks them on removal and gives them back as they were
# on a reinstall; the rpm's: disabled too, or their links would stay)
if [ -d /run/systemd/system ]; then
	# the udev rule's timer (static: stopped where it is armed), before the
	# service it would start
	systemctl -q is-active ocidec-cdi-refresh.timer 2>/dev/null &&
		systemctl stop ocidec-cdi-refresh.timer >/dev/null 2>&1 && echo "ocidec: stopped ocidec-cdi-refresh.timer"
	for u in ocidec-nri.service ocidec-cdi-refresh.path ocidec-cdi-refresh.service; do
		systemctl -q is-enabled "$u" 2>/dev/null || systemctl -q is-active "$u" 2>/dev/null || continue
		if [ "${1:-}" = --keep-enabled ]; then
			systemctl stop "$u" >/dev/null 2>&1 && echo "ocidec: stopped $u"
		else
			systemctl disable --now "$u" >/dev/null 2>&1 && echo "ocidec: stopped and disabled $u"
		fi
	done
fi
if [ -e "$record" ]; then
	# where systemd runs the engines, made to read what was given back
	# (ocidec install --restart: the units' start limit cleared first,
	# Docker restarted where a reload leaves ocidec its default runtime,
	# containerd restarted, each waited for until it answers); a
	# restart stops Docker's containers unless its live-restore is on:
	# those of ocidec's runtime are stopped while its binary is still here
	restart=
	[ -d /run/systemd/system ] && restart=--restart
	out=$("$bin" install --uninstall $restart 2>&1)
	rc=$?
	[ -z "$out" ] || printf '%s\n' "$out"
	if [ "$rc" -ne 0 ] && [ -e "$record" ]; then
		echo "ocidec: the engines still name ocidec (ocidec install --uninstall: exit $rc): not removed. Give them back as said above, then remove the package; or move $record aside (the engines' files then stay as they are, naming ocidec) and remove it again" >&2
		exit 1
	fi
	# given back, an engine not restarted (said above): removed all the same,
	# its files no longer name ocidec
	[ "$rc" -eq 0 ] || echo "ocidec: the engines' files are given back; restart those named above yourself" >&2
fi
# an engine still running what its files no longer say (an uninstall run
# earlier without --restart, a restart that failed): Docker keeps ocidec's
# default runtime until it restarts, containerd its runtimes; ocidec check
# names the command, run here while ocidec's runtime is still there to
# stop what it started
if [ -d /run/systemd/system ]; then
	"$bin" check 2>/dev/null | sed -n 's/^ *fix: \(systemctl \(restart\|reload\) \(docker\|containerd\)\)$/\1/p' |
		sort -u | while read -r cmd; do
		$cmd && echo "ocidec: $cmd: the running engine had not read its files since ocidec was taken out"
	done
fi
rm -f /run/ocidec/containerd-restart
# Docker's containers whose runtime Docker will not have (ocidec's: named
# at docker run, or the default runtime when they were made: Docker keeps
# its name in each container), which will not start again: said
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
	keep=
	for kv in $(docker info --format '{{range $k, $v := .Runtimes}}{{$k}}={{$v.Path}} {{end}}' 2>/dev/null); do
		p=${kv#*=}
		case $p in /*) ;; *) p=$(command -v "$p" 2>/dev/null || echo "$p") ;; esac
		[ "$(readlink -f "$p" 2>/dev/null)" = "$(readlink -f "$bin")" ] || keep="$keep ${kv%%=*}"
	done
	ids=$(docker ps -aq 2>/dev/null)
	[ -z "$ids" ] || docker inspect --format '{{.HostConfig.Runtime}} {{.Name}}' $ids 2>/dev/null |
		awk -v keep="$keep runc" 'BEGIN { n = split(keep, a, " "); for (i = 1; i <= n; i++) k[a[i]] = 1 }
			$1 != "" && !k[$1] { sub(/^\//, "", $2); names = names (names ? ", " : "") $2 " (" $1 ")" }
			END { if (names) print "ocidec: Docker containers whose runtime was ocidec'"'"'s (named at docker run, or the default when they were made), which will not start again: " names "; docker rm them, and run them anew" }' >&2
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
# the hook's index of the configs (a cache in /run, made again by whoever
# runs next)
rm -f /run/ocidec/keys-*
rmdir /run/ocidec 2>/dev/null
exit 0
