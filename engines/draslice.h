/* draslice.h: the node's devices as Kubernetes ResourceSlices
 * (resource.k8s.io/v1), one a vendor, published through the API server
 * (ocidec dra publish, and ocidec dra serve's loop; ocidec-dra(1)).
 *
 * A vendor's slice: driver VENDOR.ocidec.io (draclaim.h), nodeName and
 * pool the node's name, one slice in the pool, owned by the Node; a device
 * for each index the vendor's CDI spec names (dra_device_name: gpu-0),
 * with what the inventory knows of it: index, uuid, pciBusID,
 * resource.kubernetes.io/pcieRoot, productName, driverVersion (a valid
 * semantic version only: the API server refuses a whole slice for one bad
 * attribute). */
#ifndef OCIDEC_DRASLICE_H
#define OCIDEC_DRASLICE_H

#include <stdbool.h>
#include <stddef.h>

#include "cJSON.h"
#include "base/util.h"
#include "devices/config.h"

struct kube;

/* At most this many devices in a slice (the API's limit) */
#define DRA_SLICE_MAX_DEVICES 128

/* Vendor V's devices on this node as a slice's spec.devices (a cJSON
 * array, *N devices; empty: none), read from the host's inventory */
cJSON *dra_slice_devices(const struct vendor *v, size_t *n);
/* The ResourceSlice of DRIVER on NODE (the Node's uid NODE_UID): DEVICES
 * (taken), the pool at GENERATION; NAME its metadata.name (NULL:
 * generateName "NODE-DRIVER'S FIRST LABEL-") and RESOURCE_VERSION (an
 * update's; NULL: none) */
cJSON *dra_slice_new(const char *driver, const char *node, const char *node_uid, long long generation,
		     cJSON *devices, const char *name, const char *resource_version);

/* One slice of a list the API server gave: what publishing compares */
struct dra_slice_seen {
	const char *name, *driver, *resource_version;
	long long generation;
	const cJSON *slice;   /* the whole object (its spec compared) */
};
/* A ResourceSliceList's JSON (TEXT, LEN bytes) as the slices of NODE whose
 * driver is ocidec's (*.ocidec.io), into *SEEN (*N of them; pointing into
 * *DOC, which the caller frees): 0, or -1 (ERR, EXIT_USAGE: no JSON, no
 * items list, an item of ours without its name, resourceVersion and pool
 * generation). Slices of other nodes or drivers are left out. */
int dra_slices_parse(const char *text, size_t len, const char *node, cJSON **doc, struct dra_slice_seen **seen,
		     size_t *n, struct oerr *err);

/* NODE's slices made what CFG's vendors have now: for each vendor with
 * devices its slice created, or updated with the pool's generation one up
 * where its devices (or anything of its spec) changed, left alone where
 * nothing did; slices of ocidec's drivers with no device here (a vendor
 * without devices or no longer configured) and second slices of one driver
 * deleted. Each change said on stdout (out), a line each. 0, or -1 (ERR:
 * the first request that failed, naming what it was for; what was done
 * before it stays done, and the next run takes up from there). */
/* ONLY (NULL: every vendor's): the drivers published (a plugin's served
 * ones); a slice of another of ocidec's drivers on NODE is deleted (no
 * plugin here prepares its claims) */
int dra_publish(struct kube *k, const struct config *cfg, const char *node, const struct strv *only,
		struct oerr *err);

/* A DeviceClass (resource.k8s.io/v1) for each vendor of CFG with a
 * driver name: named after the driver (nvidia.ocidec.io), its one selector
 * the CEL `device.driver == "nvidia.ocidec.io"`; as a List (kubectl apply
 * -f takes it, and kustomize) */
cJSON *dra_device_classes(const struct config *cfg);

#endif
