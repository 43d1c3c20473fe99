/* draserve.h: what `ocidec dra serve` prepares claims with (a struct
 * dra_backend, draplugin.h), and what keeps the node's state current.
 *
 * Prepare: the claim fetched from the API server and resolved against the
 * node (draclaim.h: only the results of the driver the kubelet called);
 * the answer kept in a checkpoint of the driver's, PLUGIN_DIR/DRIVER/
 * claims.json (root's, 0600, written whole or not at all): the kubelet
 * asking again, after the plugin's restart too, gets the same answer
 * without the API server. Unprepare forgets it (nothing else was written
 * for a claim: its CDI IDs are the vendor's refreshed spec's). Calls are
 * serialized (one process, one call at a time).
 *
 * The tick: the vendors' CDI specs refreshed into CDI_DIR (in a child of
 * its own: the plugin goes on answering), and the node's ResourceSlices
 * published (draslice.h) where they changed. */
#ifndef OCIDEC_DRASERVE_H
#define OCIDEC_DRASERVE_H

#include "devices/config.h"
#include "engines/draplugin.h"

#include <stdbool.h>
#include <sys/types.h>

struct kube;

struct dra_server {
	struct kube *k;
	const struct config *cfg;
	const char *node;          /* this node's name */
	const struct strv *drivers; /* the drivers served (their slices alone published) */
	const char *plugin_dir;    /* the checkpoints' (DRA_PLUGIN_DIR) */
	const char *config_dir;    /* for the refresh */
	const char *cdi_dir;       /* the refreshed specs (NULL: none written) */
	const char *hook;          /* the specs' hook: the node's path of ocidec */
	bool publish;              /* the slices published at each tick */
	pid_t refresh;             /* the refresh's child, or 0 */
};

/* arg: a struct dra_server */
extern const struct dra_backend dra_server_backend;
void dra_server_tick(void *arg);
/* When serving ends: each of DRIVERS' checkpoint and directory removed where no
 * claim is kept there (prepared claims stay for the next plugin), the
 * refresh's child waited for; the CDI specs stay (containers of prepared
 * claims and other pods name them) */
void dra_server_end(struct dra_server *s, const char *const *drivers, size_t n);

#endif
