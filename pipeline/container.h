/* container.h: from a container to its edits, the one path the hook and
 * the runtime shim share (ocidec(1), ACTIVATION).
 *
 *   container_decide: config.json's text -> the idle scan: no vendor's key
 *   in it, nothing parsed (CONTAINER_IDLE), the path every container on
 *   the host takes -> oci_config (oci.c) -> the decision (activate.c);
 *   container_plan: -> the plan (plan.c) -> the edits (edits.c).
 *
 * What the edits become is the caller's: applied to the running
 * container (inject.c), printed (the dry run), written into config.json
 * (the shim), or a CDI spec (the cdi applet, which starts at the plan).
 */
#ifndef OCIDEC_CONTAINER_H
#define OCIDEC_CONTAINER_H

#include "pipeline/activate.h"
#include "devices/config.h"
#include "pipeline/edits.h"
#include "pipeline/oci.h"
#include "pipeline/plan.h"

enum container_result {
	CONTAINER_IDLE,    /* no vendor could activate: nothing parsed or filled */
	CONTAINER_NONE,    /* parsed and decided: no vendor active */
	CONTAINER_ACTIVE,  /* C's act holds the active vendors (container_plan next) */
};

struct container {
	struct oci_config oc;     /* config.json as read */
	struct config cfg;        /* the vendor configs */
	struct activation *act;   /* the active vendors (nact) */
	int nact;
	struct plan plan;         /* (container_plan) */
	struct edits edits;       /* (container_plan) */
	bool by_path;             /* the edits go to an engine by path (the shim):
				   * plan_select's by_path */
};

/* The decision for the container whose config.json is TEXT (LEN bytes;
 * NULL: none, the state's root only) in BUNDLE, with the state ST (the
 * hook's; NULL for the shim, which has no state and no state
 * annotations), under the vendor configs in DIR: one of enum
 * container_result, or -1 (ERR). C is to be freed (container_free)
 * unless CONTAINER_IDLE. */
int container_decide(const char *dir, const struct oci_state *st, const char *bundle, const char *text,
		     size_t len, struct container *c, struct oerr *err);
/* The decision for a container already read into C->oc (the NRI plugin's,
 * from NRI's message; the rest of C zeroed), ANN its state annotations
 * (none: an empty list), ID (NULL: none) naming it in an error: as
 * container_decide, never CONTAINER_IDLE. */
int container_decide_config(const char *dir, const struct strv *ann, const char *id, struct container *c,
			    struct oerr *err);
/* C's active vendors (act, nact: the decision's, or the inject applet's
 * command line) planned, their edits built: 0, or -1 (ERR, prefixed
 * "container ID" when ID is not NULL). */
int container_plan(struct container *c, const char *id, struct oerr *err);
void container_free(struct container *c);

#endif
