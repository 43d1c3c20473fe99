/* activate.h: which vendors a container asks for, with which devices and
 * features (ocidec(1), ACTIVATION). Reads only the container's config (env,
 * annotations) and, for NVIDIA-style UUIDs, the vendor's information files.
 *
 * Per vendor: a device plugin's mounts win, then its annotation (in
 * config.json or the state); else process.env, where each of
 * activation_flag and activation_aliases that is set narrows the request
 * (no variable widens another's; "void" in any: inactive). Empty or
 * "void": inactive. With env_needs_cap_sys_admin, an env request from a
 * container without CAP_SYS_ADMIN in its bounding set is refused (warned
 * about, not an error): Kubernetes grants devices through annotations.
 * The value: "all", "none", or devices by index or UUID; features from
 * feature_env ("all" allowed; unknown names warned about and dropped),
 * else the vendor's driver_feature. A switch (activation_value: NVIDIA's
 * NVIDIA_GDS=enabled) takes its one value from any source, and every
 * other asks nothing; a vendor with only_with is kept only beside one of
 * those vendors in the same container (NVIDIA's gated features: beside a
 * GPU request), else dropped with a warning.
 */
#ifndef OCIDEC_ACTIVATE_H
#define OCIDEC_ACTIVATE_H

#include "devices/config.h"
#include "devices/devices.h"
#include "pipeline/oci.h"

struct activation {
	const struct vendor *v;
	struct selection sel; /* the devices (devices.h): all, none, indices; MIG devices */
	char *features;      /* NULL: driver_feature */
	char *source;        /* "env OCI_NVIDIA", "annotation ocidec.io/nvidia": for logs */
	struct strv requires; /* the image's requirement expressions (requirements_env) */
	unsigned mig_caps;   /* MIG_CAP_CONFIG, MIG_CAP_MONITOR */
};
enum { MIG_CAP_CONFIG = 1, MIG_CAP_MONITOR = 2 };

/* Fill ACT (array of cfg->n) with the active vendors; returns their number
 * or -1 (a device the vendor does not have: EXIT_FAIL). */
int activate(const struct config *cfg, const struct oci_config *oc, const struct strv *state_ann,
	     struct activation *act, struct oerr *err);
void activation_free(struct activation *a, size_t n);

/* The idle path (hook, runtime), for every container on the host: could
 * any of KEYS (config_activation_keys) activate a vendor, given the
 * config.json TEXT (LEN bytes, unparsed) and the state's annotations? No
 * JSON is parsed. LENS: the keys' lengths, or NULL. */
bool activation_possible(const struct strv *keys, const size_t *lens, const struct strv *state_ann, const char *text,
			 size_t len);

/* The decision (hook, runtime): DIR's vendor files loaded each on its own
 * into CFG (config_free it), a broken one failing only a container that
 * names it (-1, ERR its error; else a warning), then activate() into *ACT
 * (allocated for CFG's vendors; free it). Returns the number of active
 * vendors, or -1. */
int activation_decide(const char *dir, const struct oci_config *oc, const struct strv *state_ann,
		      struct config *cfg, struct activation **act, struct oerr *err);

/* A device selection as a container gives it (indices, ranges, UUIDs, PCI
 * addresses, MIG names, all, none), typed, into *SEL; -1 (ERR): a device
 * the vendor does not have */
int vendor_select(const struct vendor *v, const char *value, struct selection *sel, struct oerr *err);
#endif
