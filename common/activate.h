/* activate.h: which vendors a container asks for, with which devices and
 * features (ocidec(1), ACTIVATION). Reads only the container's config (env,
 * annotations) and, for NVIDIA-style UUIDs, the vendor's information files.
 *
 * Per vendor: its annotation (in config.json or the state) wins; else the
 * first of activation_flag and activation_aliases set in process.env. Empty
 * or "void": inactive. With env_needs_cap_sys_admin, an env request from a
 * container without CAP_SYS_ADMIN in its bounding set is refused (warned
 * about, not an error): Kubernetes grants devices through annotations.
 * The value: "all", "none", or devices by index or UUID; features from
 * feature_env ("all" allowed; unknown names warned about and dropped),
 * else the vendor's driver_feature.
 */
#ifndef OCIDEC_ACTIVATE_H
#define OCIDEC_ACTIVATE_H

#include "common/config.h"
#include "common/oci.h"

struct activation {
	const struct vendor *v;
	char *devices;       /* "all", "none", or indices "0,2" */
	char *features;      /* NULL: driver_feature */
	char *source;        /* "env OCI_NVIDIA", "annotation ocidec.io/nvidia": for logs */
};

/* Fill ACT (array of cfg->n) with the active vendors; returns their number
 * or -1 (a device the vendor does not have: EXIT_FAIL). */
int activate(const struct config *cfg, const struct oci_config *oc, const struct strv *state_ann,
	     struct activation *act, struct oerr *err);
void activation_free(struct activation *a, size_t n);

/* For each device vendor V's device_uuids files describe ("GPU UUID: U" and
 * "Device Minor: M", NVIDIA's /proc/driver/nvidia/gpus/BUS/information):
 * FN(U, M, ARG), until FN returns nonzero, which is returned; 0 at the end. */
int vendor_uuid_each(const struct vendor *v, int (*fn)(const char *uuid, int minor, void *arg), void *arg);

#endif
