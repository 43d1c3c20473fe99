/* oci.h: what the hook reads from the runtime: the container state on stdin
 * (runtime-spec "state") and the bundle's config.json, both bounded in size
 * and parsed with cJSON. Only the fields ocidec uses are kept. */
#ifndef OCIDEC_OCI_H
#define OCIDEC_OCI_H

#include <stdbool.h>

#include "base/util.h"

#define OCI_STATE_MAX (1024 * 1024)
#define OCI_CONFIG_MAX (8 * 1024 * 1024)

struct oci_state {
	char *id;
	int pid;
	char *bundle;         /* "bundle", or the old "bundlePath" */
	char *root;           /* crun's extra "root" (config.json's root.path), or NULL */
	struct strv ann;      /* annotations: key, value, key, value, ... */
};

struct oci_config {
	char *root;           /* root.path joined to the bundle when relative */
	struct strv env;      /* process.env, "NAME=value" */
	struct strv ann;      /* annotations: key, value, ... */
	struct strv mounts;   /* mounts[].destination of the mounts of /dev/null
			       * (a device plugin's device list) */
	bool cap_sys_admin;   /* CAP_SYS_ADMIN in process.capabilities.bounding */
	char *cgroups_path;   /* linux.cgroupsPath, or NULL */
	bool nri;             /* from an NRI request, which carries its pod: */
	struct strv pod_ann;  /* the pod's annotations (key, value, ...) */
};

int oci_state_parse(const char *buf, size_t len, struct oci_state *st, struct oerr *err);
/* Read BUNDLE/config.json's text (at most OCI_CONFIG_MAX bytes), for
 * oci_config_parse. */
int oci_config_read(const char *bundle, char **buf, size_t *len, struct oerr *err);
int oci_config_parse(const char *buf, size_t len, const char *bundle, struct oci_config *c,
		     struct oerr *err);
/* The state's bundle's config.json text (oci_config_read). When the
 * bundle may not be read (EACCES: podman --userns nomap) and the state
 * names the rootfs (crun's "root"), 0 with *BUF NULL: the hook goes on with
 * the state alone. */
int oci_bundle_read(const struct oci_state *st, char **buf, size_t *len, struct oerr *err);
/* The container as the hook sees it: BUF (LEN; NULL: no config.json, see
 * oci_bundle_read) parsed into C, the state's "root" winning over
 * root.path. */
int oci_container_config(const struct oci_state *st, const char *buf, size_t len, struct oci_config *c,
			 struct oerr *err);
void oci_state_free(struct oci_state *st);
void oci_config_free(struct oci_config *c);

/* The value of NAME in ENV (the first "NAME=" entry, as getenv finds it), or NULL. */
const char *oci_env(const struct strv *env, const char *name);
/* The value of annotation KEY in the list, or NULL. */
const char *oci_annotation(const struct strv *ann, const char *key);

#endif
