/* NVIDIA MIG: a GPU split into GPU instances (GI) and their compute
 * instances (CI), each pair a device of its own. The driver shows each
 * instance as a capability: a /proc file (mig_caps/gpuG/mig/giX[/ciY]/access,
 * G the GPU's minor) and a device node (/dev/nvidia-caps/nvidia-capN, N from
 * mig_minors' "gpuG/giX[/ciY]/access N" line). A container given a MIG
 * device gets its GPU's node, the GI's and the CI's cap nodes and files.
 *
 * A MIG device is named "MIG-<uuid>" (NVML's UUID), "G:M" (GPU index, MIG
 * device index: nvidia-smi -L) or "MIG-GPU-<gpu uuid>/GI/CI" (the old
 * form). The first two need NVML, which a static hook does not load: they
 * come from the MIG map (mig_map), written by `ocidec mig-map` from
 * nvidia-smi's output when MIG is set up, holding the set of instances it
 * saw and the boot. The hook takes a name from the map only while /proc
 * shows that same set in the same boot: after a reconfiguration that
 * changes the set, or a reboot, it refuses until the map is made again.
 * An instance destroyed and made again with the same IDs is the same to
 * /proc: the tool that sets MIG up removes the map first (mig-map
 * --invalidate). */
#ifndef OCIDEC_MIG_H
#define OCIDEC_MIG_H

#include <stdbool.h>

#include "devices/config.h"
#include "devices/devices.h"
#include "base/util.h"

/* Is TOK a MIG device's name (any of the three forms)? */
bool mig_name(const char *tok);

/* TOK (a MIG name) of vendor V as its GPU's index and its instances, in
 * *OUT. -1 (ERR): no MIG on the vendor, no such device, a map that is
 * stale, unsafe or unreadable, an instance /proc does not show. */
int mig_resolve(const struct vendor *v, const char *tok, struct mig_instance *out, struct oerr *err);

/* The instances /proc shows now, "gpuG/giX/ciY ..." sorted, one string */
char *mig_instances(const struct vendor *v);
/* What a current map holds after its comment line: "instances SET\nboot
 * BOOT_ID\n" */
char *mig_fingerprint(const struct vendor *v);

/* The cap node's minor of CAP ("gpu0/gi1/access", "config") from
 * mig_minors; -1 if it has none */
long mig_cap_minor(const struct vendor *v, const char *cap);

/* The proc file of CAP below mig_caps: "gpu0/gi1/ci0/access" ->
 * "gpu0/mig/gi1/ci0/access", "config" -> "mig/config" */
char *mig_cap_proc(const char *cap);

/* Vendor V's MIG devices as the device layer's values (devices.h), added
 * to OUT: each MIG device SEL names (its GPU's nodes, then its GPU
 * instance's and compute instance's cap nodes, required), with SEL NULL or
 * all every instance the driver shows (its caps, left out where they are
 * not there), and the global caps CAPS asks for (MIG_CAP_CONFIG,
 * MIG_CAP_MONITOR bits: config, monitor). Nothing for a vendor without
 * MIG. ROOTFD: its driver root. */
void mig_devices(const struct vendor *v, int rootfd, const struct selection *sel, unsigned caps, struct devices *out);

/* The MIG map's entries, for cdi: FN(mig uuid, gpu uuid, mig index, gi, ci)
 * for each line; -1 (ERR) as mig_resolve's map errors. */
int mig_map_each(const struct vendor *v, int (*fn)(const char *mig, const char *gpu, unsigned idx,
						    unsigned gi, unsigned ci, void *arg),
		 void *arg, struct oerr *err);

/* ocidec mig-map: the map from nvidia-smi -L and nvidia-smi -q output
 * (TEXT, LEN bytes, in either order), with the instances /proc shows now,
 * as the map file's text; -1 (ERR): a MIG device whose instances the text
 * does not give, a device, GPU or instance given twice (what follows a
 * section's "Processes", anyone's process names, is not read). */
int mig_map_text(const struct vendor *v, const char *text, size_t len, char **out, size_t *n, struct oerr *err);
/* Does the map text MAP (mig_map_text's) name exactly the instances the
 * driver shows now? 0 yes; -1 (ERR) no: nvidia-smi's output is older or
 * newer than the MIG layout, or names a GPU the host does not show */
int mig_map_current(const struct vendor *v, const char *map, struct oerr *err);

#endif
