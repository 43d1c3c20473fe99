/* nrictl.h: the NRI plugin's control socket, /run/ocidec/nri-NAME.sock
 * (root's directory, root's peers only). Through it:
 *
 *   's' (status): the plugin answers one line, "registered with RUNTIME
 *   VERSION as NN-NAME" once the runtime took it, else what it waits for
 *   (a readiness probe: ocidec nri --status);
 *   'h' (handoff) and the asker's struct nri_ident: when the asker is the
 *   same plugin (the same socket, configs and hook, a DaemonSet's surge
 *   pod), the plugin hands its connection to the runtime over: the
 *   socket's descriptor (SCM_RIGHTS) and the bytes it had read and not yet
 *   used, between two requests, so that the runtime sees one plugin
 *   throughout and no container is created without one; it serves no more.
 *   Another plugin of the name (other configs: a host's service beside a
 *   DaemonSet) is refused, with the reason.
 * The plugin gives a client NRICTL_WAIT_MS to ask, the client as long to
 * answer: a silent peer never holds the plugin. */
#ifndef OCIDEC_NRICTL_H
#define OCIDEC_NRICTL_H

#include "formats/ttrpc.h"

#define NRICTL_STATUS 's'
#define NRICTL_HANDOFF 'h'
#define NRICTL_WAIT_MS 200

/* Who asks for a handoff: what it would serve */
struct nri_ident {
	char socket[108], dir[1024], hook[1024];
};
void nrictl_ident(struct nri_ident *id, const char *socket, const char *dir, const char *hook);

/* The control socket of plugin NAME, listening (an older one's path
 * replaced); -1 when ocidec's run directory is not usable (said). */
int nrictl_listen(const char *name);
void nrictl_unlink(const char *name);
/* A client of the listening LFD, when it is of our own user; else -1 */
int nrictl_accept(int lfd);
/* Plugin NAME's control socket asked WHAT (with ID for a handoff): the
 * connection, or -1 (errno ENOENT or ECONNREFUSED: no such plugin; other:
 * not ours, or not answering); *PID the plugin's pid as
 * this process's PID namespace sees it (0: another namespace's, another
 * pod's), when PID is not NULL */
int nrictl_ask(const char *name, char what, const struct nri_ident *id, int *pid);
/* The asker's identity, read from C after 'h': 0, or -1 */
int nrictl_read_ident(int c, struct nri_ident *id);

struct nri_handoff {
	int fd;             /* the runtime's connection */
	struct mux_in in;   /* what had been read of it, not yet used */
	char runtime[128];  /* "containerd 2.1.9" */
};
/* To the asker C: the connection NRIFD, IN's unused bytes and RUNTIME. 0, or -1 */
int nrictl_give(int c, int nrifd, const struct mux_in *in, const char *runtime);
/* To the asker C: no handoff, for REASON */
void nrictl_refuse(int c, const char *reason);
/* From the plugin answering C: H filled: 0; -1: nothing taken; -2: refused,
 * its reason in H->runtime */
int nrictl_take(int c, struct nri_handoff *h);

#endif
