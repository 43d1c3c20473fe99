/* sdbus.h: the container's systemd unit told of the devices it was given.
 *
 * Under the systemd cgroup driver (runc's and crun's "slice:prefix:name"
 * cgroupsPath) the runtime hands the container's device rules to systemd as
 * the DeviceAllow= of a transient scope, and systemd owns the device policy
 * of that scope: it attaches a device program of its own (crun keeps it and
 * puts the container in a "container" cgroup under the scope), and puts it
 * back whenever it re-applies the unit (daemon-reexec, set-property, a
 * sibling's start after either), replacing whatever the hook patched. So a
 * hook that only patched the cgroup's programs gives nothing under crun and
 * loses the devices later under runc. The devices are added to the unit's
 * DeviceAllow= instead (a runtime property: it goes with the scope), as
 * systemctl set-property --runtime does, over systemd's private socket
 * (root only, the D-Bus wire protocol, no bus daemon): one Get of the
 * unit's DevicePolicy and, when it is "strict" or "closed" (what runc and
 * crun set for a container they restrict), one SetUnitProperties. A unit
 * with DevicePolicy=auto is left alone: a DeviceAllow= would restrict one
 * that restricts nothing (a privileged container's).
 *
 * Paths are "/dev/char/MAJOR:MINOR" (systemd 245 and later read the numbers
 * from the name; NVIDIA's nodes have no such udev link).
 */
#ifndef OCIDEC_SDBUS_H
#define OCIDEC_SDBUS_H

#include <stddef.h>
#include <stdint.h>

#include "devices/devices.h"
#include "base/util.h"

#define SDBUS_SOCKET "/run/systemd/private"

/* The unit of a systemd-driver cgroupsPath "SLICE:PREFIX:NAME", as runc and
 * crun name it: "PREFIX-NAME.scope" (NAME.scope when PREFIX is empty); NULL
 * for any other cgroupsPath (cgroupfs: a path) and for NAME a slice. */
char *sdbus_unit(const char *cgroups_path);

/* The D-Bus object path of UNIT (systemd's label escaping). */
char *sdbus_unit_path(const char *unit);

/* A method call to systemd in BUF (CAP bytes), serial SERIAL; its length,
 * or 0 when it does not fit. */
size_t sdbus_get_property(uint8_t *buf, size_t cap, uint32_t serial, const char *unit_path, const char *iface,
			  const char *property);
size_t sdbus_set_device_allow(uint8_t *buf, size_t cap, uint32_t serial, const char *unit,
			      const struct devcg_rule *rules, size_t n);

/* One message at the start of BUF (LEN bytes): its length once all of it is
 * there, 0 while more is needed, -1 if it is no D-Bus message. *TYPE: 2 a
 * method's return, 3 an error, 4 a signal; *REPLY_TO: the serial it answers
 * (0: none); TEXT (CAP bytes): an error's name and message, or a return's
 * string (a variant holding a string, or a string), else "". */
long sdbus_parse(const uint8_t *buf, size_t len, int *type, uint32_t *reply_to, char *text, size_t cap);

/* Add RULES to UNIT's DeviceAllow= (SOCKET: systemd's private socket).
 * 1: added; 0: the unit's DevicePolicy is neither strict nor closed, left
 * alone; -1: ERR. */
int sdbus_allow_devices(const char *socket, const char *unit, const struct devcg_rule *rules, size_t n,
			struct oerr *err);

/* UNIT's ActiveState ("active", "failed", "inactive", "activating"...)
 * in STATE (CAP bytes), asked of systemd on FD, a stream connected to its
 * private socket (left open); -1: ERR. */
int sdbus_unit_state(int fd, const char *unit, char *state, size_t cap, struct oerr *err);

#endif
