/* edits.h: what a container gets, as one plain value (the container edits).
 *
 * plan (host paths, held by descriptor) -> edits (this: container paths,
 * mount flags, links, device nodes and rules, library directories) ->
 * four consumers: inject() applies them, the dry run prints them (text or
 * JSON, dryrun.c), the runtime shim writes them into config.json
 * (edits_oci_apply), the cdi applet into a spec (edits_cdi_json); nothing
 * else derives these facts. Building edits changes
 * nothing: it reads the plan, and the driver root's links (readlinkat).
 */
#ifndef OCIDEC_EDITS_H
#define OCIDEC_EDITS_H

#include <stdbool.h>

#include "pipeline/devcg.h"
#include "pipeline/plan.h"

struct cJSON;

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
};

/* A driver's symlink to make in the container (libdemo.so.1 ->
 * libdemo.so.1.0): PATH there, with the text it has in the driver root,
 * made just before mount MOUNT, the file it resolves to. */
struct edit_link {
	size_t mount;
	const char *path;
	char *text;
};

struct edit_device {
	const char *path;        /* in the container (where the node is mounted) */
	const char *host;        /* driver_root + canonical path */
	char type;               /* 'c' or 'b' */
	unsigned major, minor, mode;
	unsigned gid;            /* the host node's group (a render group's
				  * members keep their access in the container) */
	bool cgroup;             /* the vendor's cgroup_devices: a rule to allow it */
};

struct edits {
	struct edit_mount *mounts;   /* one per container path, in plan order */
	size_t nmounts;
	struct edit_link *links;     /* in plan order */
	size_t nlinks;
	struct edit_device *devices;
	size_t ndevices;
	struct strv libdirs;         /* for the container's cache, in order */
	const char *compat_dir;      /* CUDA's compat directory in the image, and */
	const char *compat_host;     /* the host driver's version (the plan's) */
	const struct plan_view *views; /* proc views (the plan's), procview.h */
	size_t nviews;
	const struct strv *netdevs;    /* network interfaces to move in (the plan's) */
	bool netdevs_some;             /* from some devices, not all (the plan's) */
	const char *app_profile;       /* NVIDIA's application profile (the plan's) */
};

/* The edits of plan P (which must outlive them). */
void edits_build(const struct plan *p, struct edits *e);
void edits_free(struct edits *e);
/* The cache directory of a library at container path LIBRARY (its
 * directory) added to DIRS unless there. */
void edits_libdir_add(struct strv *dirs, const char *library);
/* The device cgroup rules: one per device whose vendor wants it (*N). */
struct devcg_rule *edits_rules(const struct edits *e, size_t *n);
/* "ro,nosuid,nodev" */
const char *edit_flags_text(unsigned flags);

/* The dry run's text, each name escaped (escape_bytes): "mount SOURCE
 * DESTINATION FLAGS", "symlink PATH TEXT" and "procview DIR [ENTRY...]"
 * lines; "ldcache DIR" and "ldcache-entry SONAME PATH" lines; appended to
 * LINES. */
void edits_text_mounts(const struct edits *e, struct strv *lines);
/* One such line, "WHAT A B" (B NULL: "WHAT A"), and a "procview DIR
 * ENTRY..." line, appended to LINES. */
void edits_line(struct strv *lines, const char *what, const char *a, const char *b);
void edits_line_procview(struct strv *lines, const char *dir, const struct strv *entries);
void edits_text_cache(const struct edits *e, struct strv *lines);
/* The dry run's JSON: the whole value as one object (see the man page). */
struct cJSON *edits_json(const struct edits *e);

/* ocidec cdi: E as a CDI spec's containerEdits (no field newer than
 * cdiVersion 0.5.0): deviceNodes (with hostPath when HOST_PATHS; without
 * it, a node whose host path differs is an error) and, when GIDS, their
 * groups as additionalGids (a non-root process can open a 0660
 * root:render node), bind mounts with their
 * options, and, when E has symlinks or libraries, one createContainer hook
 * running HOOK_PATH as `ocidec-hook --cdi --library PATH... --symlink
 * PATH::TEXT...`. NULL with ERR set on error. */
struct cdi_opts {
	const char *version;    /* cdiVersion, for messages */
	bool host_paths;        /* deviceNodes may have hostPath (>= 0.5.0) */
	bool gids;              /* containerEdits may have additionalGids (>= 0.7.0) */
	bool net_devices;       /* containerEdits may have netDevices (>= 1.1.0) */
	const char *hook_path;  /* the host's path of ocidec */
	bool rootless;          /* for a rootless engine (a user's own spec
				 * directory): a node whose host path is not its
				 * container path a bind mount, as the shim gives
				 * it in a user namespace (edits_oci_apply) */
};
/* ITEM (NULL: out of memory, fatal) added to TO under KEY, or appended to
 * the array TO when KEY is NULL; returns ITEM. */
struct cJSON *edits_json_add(struct cJSON *to, const char *key, struct cJSON *item);
struct cJSON *edits_cdi_json(const struct edits *e, const struct cdi_opts *o, struct oerr *err);
/* ocidec runtime: E written into an OCI config.json (CONFIG): device nodes
 * into linux.devices (replacing an entry for the same path; the host's
 * group, which is added to process.user.additionalGids), their allow
 * rules into linux.resources.devices, bind mounts with their options into
 * mounts, and the cache hook (as in a CDI spec, running HOOK_PATH) into
 * hooks.createContainer; network interfaces into linux.netDevices (runtime
 * spec 1.2: runc 1.3 and crun 1.16 move them into the container's network
 * namespace; an older runtime ignores the member). -1 (ERR) when CONFIG's
 * members have other types. */
int edits_oci_apply(const struct edits *e, struct cJSON *config, const char *hook_path, struct oerr *err);
/* Nothing to edit? */
bool edits_empty(const struct edits *e);

#endif
