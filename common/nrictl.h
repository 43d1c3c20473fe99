/* nrictl.h: the NRI plugin's control socket, /run/ocidec/nri-NAME.sock
 * (root's directory, root's peers only). Through it:
 *
 *   's' (status): the plugin answers one line, "registered with RUNTIME
 *   VERSION as NN-NAME" once the runtime took it, else what it waits for
 *   (a readiness probe: ocidec nri --status);
 *   'h' (handoff): the plugin hands its connection to the runtime over to
 *   the asker, a newer plugin (a DaemonSet's surge pod): the socket's
 *   descriptor (SCM_RIGHTS) and the bytes it had read and not yet used,
 *   between two requests, so that the runtime sees one plugin throughout
 *   and no container is created without one. It serves no more. */
#ifndef OCIDEC_NRICTL_H
#define OCIDEC_NRICTL_H

#include "common/ttrpc.h"

#define NRICTL_STATUS 's'
#define NRICTL_HANDOFF 'h'

/* The control socket of plugin NAME, listening (an older one's path
 * replaced); -1 when ocidec's run directory is not usable (said). */
int nrictl_listen(const char *name);
void nrictl_unlink(const char *name);
/* A client of the listening LFD, when it is of our own user; else -1 */
int nrictl_accept(int lfd);
/* Plugin NAME's control socket asked WHAT: the connection, or -1 (no such
 * plugin, or not ours) */
int nrictl_ask(const char *name, char what);

struct nri_handoff {
	int fd;             /* the runtime's connection */
	struct mux_in in;   /* what had been read of it, not yet used */
	char runtime[128];  /* "containerd 2.1.9" */
};
/* To the asker C: the connection NRIFD, IN's unused bytes and RUNTIME. 0, or -1 */
int nrictl_give(int c, int nrifd, const struct mux_in *in, const char *runtime);
/* From the plugin answering C: H filled. 0, or -1 */
int nrictl_take(int c, struct nri_handoff *h);

#endif
