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
#include <stdint.h>
#include <sys/types.h>

#include "devices/devices.h"
#include "base/util.h"

/* (struct devcg_rule: devices.h) */

/* Where the rules for a process's devices go: the container's systemd
 * unit (the systemd driver: its DeviceAllow=, sdbus.h), the v1 cgroup's
 * devices.allow, the v2 cgroup with its device programs. Each NULL (0)
 * when that does not apply: a root or allow-all v1 cgroup, a v2 cgroup
 * without programs, a cgroup (devices v1, unified, systemd's) the process
 * shares with the one calling this (its runtime's: a rule there would
 * open the device to the runtime's other processes), and everything
 * outside the initial user namespace or without a pid. */
#define DEVCG_MAX_PROGS 64  /* device programs on one cgroup: more is refused */

struct devcg_target {
	char *unit;        /* "crun-ID.scope" */
	char *v1_allow;    /* /sys/fs/cgroup/devices/.../devices.allow */
	char *v2_dir;      /* the cgroup2 directory */
	int v2_fd;         /* open, or -1 */
	uint32_t v2_progs; /* device programs attached there: */
	uint32_t v2_ids[DEVCG_MAX_PROGS];
};

/* The target of process PID, whose config.json's linux.cgroupsPath is
 * CGROUPS_PATH (or NULL). -1 (ERR) when /proc/PID/cgroup cannot be read or
 * the v2 cgroup has more device programs than ocidec patches. */
int devcg_target(int pid, const char *cgroups_path, struct devcg_target *t, struct oerr *err);
void devcg_target_free(struct devcg_target *t);
/* Allow RULES at T: the systemd unit first, then the cgroups. */
int devcg_allow(const struct devcg_target *t, const struct devcg_rule *rules, size_t n, struct oerr *err);
/* What devcg_allow would do, as lines ("systemd UNIT DeviceAllow=PATH
 * rwm", "cgroup FILE RULE", "cgroup2 DIR RULE", one per program) appended
 * to LINES (the dry run). */
void devcg_describe(const struct devcg_target *t, const struct devcg_rule *rules, size_t n, struct strv *lines);

#endif
