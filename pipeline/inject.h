/* inject.h: apply the container edits to a container (ocidec-hook(1)).
 *
 * On the host: every source is opened and cloned as a detached mount
 * (open_tree), its flags set (mount_setattr: files ro,nosuid,nodev; devices
 * nosuid,noexec; sockets nosuid,nodev,noexec; propagation private), and the
 * device cgroup (v1) opened to the injected devices. Then the process enters
 * the container's mount namespace, opens the rootfs once, creates what is
 * missing (directories 0755, empty files 0644, with O_EXCL/O_NOFOLLOW-style
 * calls in directories resolved inside the rootfs) and attaches each mount to
 * a target it holds as a descriptor (move_mount), never by path. A target
 * already carrying the same file is left alone, so a second run changes
 * nothing. Last, the rootfs's ld.so.cache gets the library directories
 * (ldconfig_add). Kernels without the new mount API get bind mounts between
 * /proc/self/fd paths instead.
 */
#ifndef OCIDEC_INJECT_H
#define OCIDEC_INJECT_H

#include <stdbool.h>

#include "pipeline/cachehook.h"
#include "pipeline/edits.h"

struct inject_opts {
	int pid;             /* whose mount namespace (and cgroup) */
	const char *rootfs;  /* the rootfs as seen in that namespace */
	bool rootfs_is_host_path; /* (the hook) ROOTFS is the host's path of the
			      * rootfs: once the process has pivoted into it, "/"
			      * of its namespace is used instead */
	bool in_container;   /* the process is in the container's namespaces
			      * already (a createContainer hook): ROOTFS is
			      * its path here, before pivot_root */
	bool standalone;     /* (nvidia-container-cli, inject without --pid) the
			      * caller is in the container's mount namespace
			      * already, ROOTFS its path here, before pivot_root:
			      * as in_container, but asked for, so done */
	bool no_cgroups;     /* leave the device cgroup alone (--no-cgroups) */
	const char *cgroups_path; /* config.json's linux.cgroupsPath, or NULL */
};

/* "legacy" (the hook's --mount-api, OCIDEC_MOUNT_API elsewhere): bind
 * mounts as on kernels before 5.2, for tests; NULL or anything else: the
 * new mount API where the kernel has it. */
void inject_mount_api(const char *mode);

/* The edits E (edits.h) applied to the container O names. */
int inject(const struct edits *e, const struct inject_opts *o, struct oerr *err);

/* What a CDI spec leaves to its hook (ocidec hook --cdi): the engine made
 * the spec's mounts and device nodes; the hook makes the driver's symlinks
 * and adds the mounted libraries' directories to the container's cache
 * (with the drop-ins), under every rule of inject(): rootfs confined, the
 * only other mounts read being those found at LIBRARIES. */
int inject_cache(const struct cache_edits *c, const struct inject_opts *o, struct oerr *err);
/* The directories inject_cache adds to the container's cache: the
 * libraries' and the folders, each once (pushed to DIRS) */
void inject_cache_dirs(const struct cache_edits *c, struct strv *dirs);

#endif
