/* draplugin.h: the kubelet's side of `ocidec dra serve`, a DRA driver's
 * kubelet plugin. Per driver name two unix sockets: the registration
 * socket in the kubelet's plugin registry directory (service
 * pluginregistration.Registration: GetInfo, NotifyRegistrationStatus) and
 * the DRA service socket it names (k8s.io.kubelet.pkg.apis.dra.v1 and
 * v1beta1 DRAPlugin: NodePrepareResources, NodeUnprepareResources). gRPC
 * over h2c (formats/grpc.h); the messages formats/pluginregistration.proto
 * and formats/dra.proto.
 *
 * What a claim gets is a backend's (struct dra_backend): the plugin parses,
 * checks and answers; the backend prepares and unprepares one claim at a
 * time (calls are serialized: one process, one call at a time). */
#ifndef OCIDEC_DRAPLUGIN_H
#define OCIDEC_DRAPLUGIN_H

#include "base/util.h"

#include <stddef.h>

#define DRA_PLUGIN_DIR "/var/lib/kubelet/plugins"
#define DRA_REGISTRY_DIR "/var/lib/kubelet/plugins_registry"
#define DRA_SOCKET "dra.sock"           /* in PLUGIN_DIR/DRIVER/ */
#define DRA_REG_SUFFIX "-reg.sock"      /* REGISTRY_DIR/DRIVER-reg.sock */
#define DRA_MAX_CONNS 16                /* connections at a time, all sockets (a kubelet
					 * keeps one or two) */
#define DRA_CONN_HELD (2u << 20)        /* a connection's held bytes: 16 of them under
					 * the DaemonSet's 64 MiB */

/* A claim as the kubelet names it (strings of the request: valid during
 * the call) */
struct dra_claim {
	const char *ns, *uid, *name;
};

/* One device a claim got */
struct dra_given {
	struct strv requests;   /* the claim's requests it serves (none: all) */
	char *pool, *device;
	struct strv cdi_ids;    /* vendor.com/class=name, what the runtime injects */
};
struct dra_prepared {
	struct dra_given *v;
	size_t n;
};
/* A device added to P (POOL, DEVICE copied); returned to fill its lists */
struct dra_given *dra_prepared_add(struct dra_prepared *p, const char *pool, const char *device);
void dra_prepared_free(struct dra_prepared *p);

/* What prepares claims. DRIVER: the driver name the kubelet called. 0, or
 * -1 with ERR: that claim's error string (the kubelet retries it). */
struct dra_backend {
	void *arg;
	int (*prepare)(void *arg, const char *driver, const struct dra_claim *claim, struct dra_prepared *out,
		       struct oerr *err);
	int (*unprepare)(void *arg, const char *driver, const struct dra_claim *claim, struct oerr *err);
};
/* Until the claim logic is plugged in: every claim answered with an error
 * saying so */
extern const struct dra_backend dra_backend_unwired;

struct dra_opts {
	const char *plugin_dir;     /* DRA_PLUGIN_DIR */
	const char *registry_dir;   /* DRA_REGISTRY_DIR */
	const char *const *drivers; /* the driver names, at least one */
	size_t ndrivers;
	const struct dra_backend *backend;
	/* Called between calls every TICK_MS (0: never), and at once when
	 * serving begins: what keeps the node's state current (the CDI
	 * specs, the slices) */
	void (*tick)(void *arg);
	void *tick_arg;
	int tick_ms;
};

/* A driver name: a DNS subdomain (lowercase letters, digits, '-', '.',
 * labels of 63 at most beginning and ending with a letter or digit, 253
 * in all) */
bool dra_driver_name_ok(const char *name);

/* Serve every driver's two sockets until SIGTERM or SIGINT (then 0, the
 * sockets removed); -1 (ERR) when a socket cannot be made. */
int dra_serve(const struct dra_opts *o, struct oerr *err);

#endif
