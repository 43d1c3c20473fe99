/* procview.h: what a container sees of its vendor's proc directory
 * (proc_view: NVIDIA's /proc/driver/nvidia).
 *
 * A container's procfs shows the driver's directory whole: every device's
 * entry (NVIDIA's gpus/BUS: UUID, bus, model) and the module's params, whose
 * "ModifyDeviceFiles: 1" tells the vendor's userspace it may make device
 * nodes for every GPU. A container that activates the vendor gets instead,
 * as NVIDIA's toolkit gives it, a read-only tmpfs there holding copies of
 * the directory's files (proc_view_set changing one line of one file:
 * "params ModifyDeviceFiles: 0"), and, bind-mounted read-only from its own
 * procfs, only the entries of the devices it was given. Everything is done
 * in the container's mount namespace, by descriptor: the container's /proc
 * must be a procfs, every component is opened without following a link.
 */
#ifndef OCIDEC_PROCVIEW_H
#define OCIDEC_PROCVIEW_H

#include "devices/config.h"
#include "devices/devices.h"
#include "base/util.h"

/* The entries (relative to V's proc_view, "gpus/0000:3b:00.0") of the
 * devices DEVICES selects (NULL: none at all), added to ENTRIES:
 * the directories of V's device_uuids files whose minor is selected. */
void proc_view_entries(const struct vendor *v, const struct selection *devices, struct strv *entries);
/* PATH's entry (a host path below V's proc_view: "gpus/0000:3b:00.0")
 * added to ENTRIES once, when the view covers it (ENTRIES or PATH NULL:
 * nothing) */
void proc_view_add(const struct vendor *v, const char *path, struct strv *entries);

/* In the container's mount namespace, ROOTFD its rootfs: the view of DIR
 * with ENTRIES (one "PREFIX/" "*": every directory in DIR/PREFIX); SET is
 * proc_view_set or NULL. Nothing when the container's
 * procfs has no DIR (the module not loaded), or when DIR is a view already
 * (a second run). */
int proc_view_apply(int rootfd, const char *dir, const char *set, const struct strv *entries, struct oerr *err);

#endif
