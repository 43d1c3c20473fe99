/* devcg.h: the device cgroup of a container, v1 and v2.
 *
 * v1: "TYPE MAJOR:MINOR rwm" written to devices.allow of the process's
 * devices cgroup (from /proc/PID/cgroup; the root cgroup allows all).
 * v2: runtimes (runc, crun) attach an eBPF program (BPF_CGROUP_DEVICE) to
 * the container's cgroup, and every attached program must allow an access,
 * so a program of our own could only deny more. Instead each attached
 * program is read back (its translated instructions), a prefix that allows
 * the injected devices and leaves the context register untouched is put in
 * front, and the result replaces it (BPF_F_REPLACE): the runtime's rules
 * stay, the devices are added. The prefix starts with a marker; a second run
 * merges its device list instead of stacking prefixes. A cgroup with no
 * device program restricts nothing and is left alone.
 */
#ifndef OCIDEC_DEVCG_H
#define OCIDEC_DEVCG_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/util.h"

struct devcg_rule {
	char type;       /* 'c' or 'b' */
	unsigned major, minor;
};

/* Allow RULES for process PID, whose config.json's linux.cgroupsPath is
 * CGROUPS_PATH (or NULL): under the systemd driver, first in the DeviceAllow=
 * of the container's unit (sdbus.h), then in its cgroups. DRY_RUN prints
 * "systemd UNIT DeviceAllow=PATH rwm", "cgroup FILE RULE" and "cgroup2 DIR
 * RULE" lines instead. */
int devcg_allow(int pid, const char *cgroups_path, const struct devcg_rule *rules, size_t n, bool dry_run,
		struct oerr *err);

#endif
