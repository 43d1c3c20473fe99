/* edits.h: what a container gets, as one plain value (the container edits).
 *
 * plan (host paths, held by descriptor) -> edits (this: container paths,
 * mount flags, links, device nodes and rules, library directories) ->
 * three consumers: inject() applies them, --dry-run prints them (text or
 * JSON), and nothing else derives these facts. Building edits changes
 * nothing: it reads the plan, and the driver root's links (readlinkat).
 */
#ifndef OCIDEC_EDITS_H
#define OCIDEC_EDITS_H

#include <stdbool.h>
#include <stdio.h>

#include "common/devcg.h"
#include "common/plan.h"

/* Mount flags: every mount is read-only; a device node's metadata and an
 * IPC directory's entries are the host's, and reading and writing a
 * device or connecting to a socket work on a read-only mount. */
#define EDIT_RDONLY 0x01u
#define EDIT_NOSUID 0x02u
#define EDIT_NODEV 0x04u
#define EDIT_NOEXEC 0x08u

struct edit_mount {
	const struct plan_item *it;  /* the source, held by descriptor */
	const char *source;          /* driver_root + canonical path (people, specs) */
	const char *destination;     /* in the container */
	unsigned flags;              /* EDIT_* */
	/* the driver's symlink to make first (libdemo.so.1 -> libdemo.so.1.0):
	 * PATH in the container, with the text it has in the driver root */
	const char *link_path;
	char *link_target;
};

struct edit_device {
	const char *path;        /* in the container (where the node is mounted) */
	const char *host;        /* driver_root + canonical path */
	char type;               /* 'c' or 'b' */
	unsigned major, minor, mode;
	bool cgroup;             /* the vendor's cgroup_devices: a rule to allow it */
};

struct edits {
	struct edit_mount *mounts;   /* one per container path, in plan order */
	size_t nmounts;
	struct edit_device *devices;
	size_t ndevices;
	struct strv libdirs;         /* for the container's cache, in order */
};

/* The edits of plan P (which must outlive them). */
void edits_build(const struct plan *p, struct edits *e);
void edits_free(struct edits *e);
/* The device cgroup rules: one per device whose vendor wants it (*N). */
struct devcg_rule *edits_rules(const struct edits *e, size_t *n);
/* "ro,nosuid,nodev" */
const char *edit_flags_text(unsigned flags);

/* --dry-run, text: "mount SOURCE DESTINATION FLAGS" and "symlink PATH
 * TEXT" lines, then (after the caller's cgroup lines) "ldcache DIR" and
 * "ldcache-entry SONAME PATH" lines. */
void edits_print_mounts(const struct edits *e);
void edits_print_cache(const struct edits *e);
/* --dry-run --format json: the whole value as one JSON object (see the
 * man page). 0, or -1 when stdout fails. */
int edits_print_json(const struct edits *e);

#endif
