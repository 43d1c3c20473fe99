/* draclaim.h: Kubernetes DRA's names for ocidec's devices, and a
 * ResourceClaim's allocation as the devices and CDI IDs a kubelet plugin's
 * NodePrepareResources answers (ocidec dra claim, ocidec dra serve;
 * ocidec-dra(1)).
 *
 * One DRA driver per vendor: VENDOR.ocidec.io (the vendor's name, from its
 * INI file). Its devices, in the node's one pool (named after the node),
 * are named by index after the vendor's CDI class: nvidia.com/gpu's device 0
 * is gpu-0, ocidec.io/demo's demo-0; the CDI ID prepare gives for it is
 * the one the vendor's refreshed CDI spec defines (nvidia.com/gpu=0). MIG
 * devices are not published (a GPU is). */
#ifndef OCIDEC_DRACLAIM_H
#define OCIDEC_DRACLAIM_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"
#include "devices/config.h"

struct kube;

#define DRA_DOMAIN "ocidec.io"

/* Is S a DNS label (RFC 1123: 1 to 63 of a-z, 0-9 and '-', a letter or digit
 * at each end)? */
bool dra_dns_label(const char *s);
/* Is S a semantic version (semver.org 2.0.0: MAJOR.MINOR.PATCH, numbers
 * without leading zeros, then -PRERELEASE and +BUILD), at most 64
 * characters, as the API server takes a version attribute? */
bool dra_semver(const char *s);
/* Vendor V's DRA driver name, "NAME.ocidec.io" (its name lower-cased, '_'
 * and '.' as '-'), malloc'd; NULL when that is no DNS label of at most 53
 * characters (the driver name's 63 in all) */
char *dra_driver_name(const struct vendor *v);
/* Vendor V's device INDEX's name in its slices, "CLASS-INDEX" (CLASS its
 * CDI kind's class, made a DNS label: "gpu", "demo"; "dev" where none is
 * left); malloc'd */
char *dra_device_name(const struct vendor *v, unsigned long index);
/* The index NAME (dra_device_name's) names of V's devices, or -1 */
long dra_device_index(const struct vendor *v, const char *name);

/* Which claim, for which node. DRIVER: only that driver's results (the
 * kubelet calls a plugin per driver); NULL: every vendor's of ocidec. UID
 * NULL or "": any. */
struct dra_claim_ref {
	const char *ns, *name, *uid, *node, *driver;
};
/* One allocated device of ours */
struct dra_device {
	char *request, *driver, *pool, *device;  /* as the allocation names them */
	const struct vendor *v;                  /* its vendor (of the config given) */
	unsigned long index;                     /* its index there */
	struct strv cdi;                         /* its CDI IDs (after dra_claim_resolve) */
};
struct dra_result {
	char *uid;                /* the claim's */
	struct dra_device *v;
	size_t n;
};
void dra_result_free(struct dra_result *r);
#define _cleanup_dra_result_ __attribute__((cleanup(dra_result_free)))

/* A ResourceClaim's JSON (TEXT, LEN bytes, as the API server sends it) as
 * the devices REF's node has to prepare: the allocation's results whose
 * driver is a vendor's of CFG (REF->driver's alone where given), each
 * mapped to its vendor and index; other drivers' results left out. 0 with
 * *OUT (zeroed first; none of ours: OUT->n 0), or -1 with ERR
 * (EXIT_USAGE), one line naming the claim (NS/NAME), for: no JSON, a UID
 * not REF->uid, no allocation, an allocation for another node (its node
 * selector names nodes by metadata.name, REF->node not among them), a
 * result of ours in a pool not REF->node's, or naming a device we could
 * not have. Reads nothing of the host. */
int dra_claim_parse(const char *text, size_t len, const struct config *cfg, const struct dra_claim_ref *ref,
		    struct dra_result *out, struct oerr *err);
/* Each device of R checked against the node's inventory (its node under
 * the vendor's driver root, a device the vendor's CDI spec names) and given
 * its CDI IDs: 0, or -1 (ERR, EXIT_USAGE: the claim REF and the device it
 * names that this node does not have). */
int dra_claim_resolve(const struct dra_claim_ref *ref, struct dra_result *r, struct oerr *err);

/* NodePrepareResources for one claim: the ResourceClaim REF names fetched
 * from K's API server (GET .../namespaces/NS/resourceclaims/NAME), parsed
 * and resolved as above into *OUT: 0, or -1 with ERR, one line (what
 * NodePrepareResources answers as the claim's error): the refusals above,
 * or the API server's (kubeapi.h: EXIT_FAIL where it may pass). Serialized
 * by the caller; reads the config CFG as loaded. */
int dra_claim_prepare(struct kube *k, const struct config *cfg, const struct dra_claim_ref *ref,
		      struct dra_result *out, struct oerr *err);

#endif
