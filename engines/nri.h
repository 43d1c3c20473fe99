/* nri.h: NRI's container (api.proto, made C by protoc-c) and ocidec's
 * path from a container to its edits (container.h), both ways:
 *
 *   NRI's Container -> struct oci_config, as the decision reads a
 *   config.json (nri_container_config);
 *   the edits -> NRI's ContainerAdjustment (nri_adjustment), made by the
 *   shim's own writer (edits_oci_apply) into a config.json of nothing,
 *   then read off it: the same device nodes, mounts, cgroup rules and cache
 *   hook as the shim writes.
 *
 * The plugin itself (the socket, the loop, the calls) is nriplugin.c;
 * the bytes under it, formats/ttrpc.c. */
#ifndef OCIDEC_NRI_H
#define OCIDEC_NRI_H

#include "api.pb-c.h"
#include "pipeline/edits.h"
#include "pipeline/oci.h"

typedef Nri__Pkg__Api__V1alpha1__Container NriContainer;
typedef Nri__Pkg__Api__V1alpha1__ContainerAdjustment NriAdjustment;

#define NRI_API "nri.pkg.api.v1alpha1"
/* ConfigureResponse.events: the events a plugin takes, 1 << (event - 1) */
#define NRI_EVENT_MASK(ev) (1 << ((ev) - 1))

/* C as the decision reads a config.json: process.env, the annotations, the
 * device plugin's mounts of /dev/null, linux.cgroupsPath. NRI says nothing
 * of a container's capabilities: OC is never privileged (cap_sys_admin
 * false), the stricter side of every tenant policy. */
void nri_container_config(const NriContainer *c, struct oci_config *oc);
/* The request's pod (NULL: none) into OC (after nri_container_config): its
 * annotations, which its tenant writes (activate.c tells a container's own
 * annotation from the pod's by them) */
void nri_pod_config(const Nri__Pkg__Api__V1alpha1__PodSandbox *pod, struct oci_config *oc);
/* Has C ocidec's cache hook already (its devices came by a CDI spec of
 * ocidec's, as the shim's edited())? */
bool nri_edited(const NriContainer *c);
/* E as the adjustment A (zeroed first; nri_adjustment_free) for C (its user
 * namespace, if any, as the shim reads linux.namespaces), the cache hook
 * running HOOK_PATH (the host's path of ocidec). 0, or -1 (ERR). */
int nri_adjustment(const struct edits *e, const NriContainer *c, const char *hook_path, NriAdjustment *a,
		   struct oerr *err);
void nri_adjustment_free(NriAdjustment *a);
/* The groups of E's group-only device nodes (a group other than root's,
 * neither read nor write for others) that the process of U (NRI 0.11's
 * Container.user) lacks: U not root, the group neither its gid nor one of
 * its additional gids; U NULL (not sent, NRI before 0.11 or containerd
 * 2.2): every such group. Each once, to GIDS (room for E's ndevices);
 * their count. */
size_t nri_groups_lacking(const struct edits *e, const Nri__Pkg__Api__V1alpha1__User *u, unsigned *gids);
/* Says what C's process (the container WHAT) lacks to open E's nodes
 * (nri_adjustment's: NRI has no member for the process's groups, and the
 * nodes are root's; not for CDI devices: CDI makes a spec's node without a
 * uid the process's):
 * each group it lacks, for that container, with the pod's fix; where the
 * runtime sends no user (or C has a user namespace of its own: its ids are
 * not the host's), the first group once in the plugin's life
 * (NRI_SAID_GROUPS). Never a refusal: the container may not open them. */
void nri_say_groups(const struct edits *e, const NriContainer *c, const char *what);
/* Does RUNTIME (ConfigureRequest's "NAME VERSION") inject the CDI devices
 * a plugin's adjustment names (NRI 0.8's ContainerAdjustment.CDI_devices)?
 * containerd 2.1 and later (2.0 has the field but drops it); CRI-O 1.34
 * and later ("cri-o 1.34.0": 1.32 and 1.33 have it and drop it). */
bool nri_takes_cdi(const char *runtime);
/* The devices the active vendors ACT (NACT) select, as A (zeroed first;
 * nri_adjustment_free): the CDI devices of ocidec's own specs in DIR (their
 * hook HOOK_PATH), nothing else: no device node, mount or OCI hook. 0, or
 * -1 with WHY when the specs cannot give exactly that (a spec missing or
 * not current, a selection it does not name, features or MIG caps asked,
 * a user namespace of the container's own): the caller takes
 * nri_adjustment's edits then. */
struct activation;
int nri_cdi_adjustment(const struct activation *act, int nact, const NriContainer *c, const char *dir,
		       const char *hook_path, NriAdjustment *a, struct oerr *why);

/* What nri_adjustment says once in a plugin's life (a bit each): a
 * container decided in a process of its own hands its bits back */
enum { NRI_SAID_USERNS_RULES = 1, NRI_SAID_GROUPS = 2 };
extern unsigned nri_said;

#endif
