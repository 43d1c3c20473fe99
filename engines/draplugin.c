/* draplugin.c: see draplugin.h. */
#include "engines/draplugin.h"

#include "formats/grpc.h"
#include "base/log.h"
#include "base/util.h"

#include "dra.pb-c.h"
#include "pluginregistration.pb-c.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim PbClaim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest PbPrepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse PbPrepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry PbPrepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse PbPrepared;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device PbDevice;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest PbUnprepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse PbUnprepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse__ClaimsEntry PbUnprepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourceResponse PbUnprepared;
#define PB(x) k8s__io__kubelet__pkg__apis__dra__v1__##x

struct dra_given *dra_prepared_add(struct dra_prepared *p, const char *pool, const char *device)
{
	struct dra_given *d;

	p->v = xreallocarray(p->v, p->n + 1, sizeof(*p->v));
	d = &p->v[p->n++];
	memset(d, 0, sizeof(*d));
	d->pool = xstrdup(pool);
	d->device = xstrdup(device);
	return d;
}

void dra_prepared_free(struct dra_prepared *p)
{
	for (size_t i = 0; i < p->n; i++) {
		strv_free(&p->v[i].requests);
		strv_free(&p->v[i].cdi_ids);
		free(p->v[i].pool);
		free(p->v[i].device);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static int unwired_prepare(void *arg, const char *driver, const struct dra_claim *c, struct dra_prepared *out,
			   struct oerr *err)
{
	(void)arg;
	(void)driver;
	(void)out;
	return oerr_set(err, 0, "ocidec dra: claim %s/%s: preparing claims is not wired yet", c->ns, c->name);
}

static int unwired_unprepare(void *arg, const char *driver, const struct dra_claim *c, struct oerr *err)
{
	(void)arg;
	(void)driver;
	return oerr_set(err, 0, "ocidec dra: claim %s/%s: unpreparing claims is not wired yet", c->ns, c->name);
}

const struct dra_backend dra_backend_unwired = { .prepare = unwired_prepare, .unprepare = unwired_unprepare };

bool dra_driver_name_ok(const char *name)
{
	size_t n = strlen(name), label = 0;

	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');

		if (ch == '.') {
			if (label == 0 || name[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!alnum && (ch != '-' || label == 0))
			return false;
		if (++label > 63)
			return false;
	}
	return name[n - 1] != '-' && name[n - 1] != '.';
}

/* ---- one driver's two sockets ---- */

struct sock {
	int dfd;            /* its directory */
	char name[96];      /* in it */
	char path[108];     /* the whole path (sun_path's size) */
	int fd;             /* listening */
	dev_t dev;          /* the socket file we made (removed only if still ours) */
	ino_t ino;
	struct grpc_server srv;
	char what[160];     /* for the log */
};

struct driver {
	const char *name;
	const struct dra_backend *backend;
	struct sock reg, dra;
	struct grpc_method reg_m[2], dra_m[4];
};

/* ---- the calls ---- */

static void get_info(const ProtobufCMessage *req, struct grpc_reply *r, void *arg)
{
	struct driver *d = arg;
	static char *versions[] = { "v1.DRAPlugin", "v1beta1.DRAPlugin" };
	Pluginregistration__PluginInfo info = PLUGINREGISTRATION__PLUGIN_INFO__INIT;

	(void)req;
	info.type = "DRAPlugin";
	info.name = (char *)d->name;
	info.endpoint = d->dra.path;
	info.n_supported_versions = ARRAY_SIZE(versions);
	info.supported_versions = versions;
	log_info("driver %s: the kubelet asks for its info (endpoint %s)", d->name, d->dra.path);
	grpc_reply_pack(r, &info.base);
}

static void notify(const ProtobufCMessage *req, struct grpc_reply *r, void *arg)
{
	const Pluginregistration__RegistrationStatus *st = (const void *)req;
	struct driver *d = arg;
	Pluginregistration__RegistrationStatusResponse resp = PLUGINREGISTRATION__REGISTRATION_STATUS_RESPONSE__INIT;

	if (st->plugin_registered)
		log_info("driver %s: registered with the kubelet", d->name);
	else
		log_warn("driver %s: the kubelet did not register it: %s", d->name,
			 *st->error ? st->error : "(no reason given)");
	grpc_reply_pack(r, &resp.base);
}

/* The request's claims, each with a UID (the answers' keys): else the
 * whole call is refused */
static bool claims_ok(PbClaim **claims, size_t n, struct grpc_reply *r)
{
	for (size_t i = 0; i < n; i++) {
		if (!*claims[i]->uid) {
			grpc_reply_error(r, GRPC_INVALID_ARGUMENT, "claim %zu (%s/%s) has no UID", i,
					 claims[i]->namespace_, claims[i]->name);
			return false;
		}
	}
	return true;
}

static void prepare(const ProtobufCMessage *req, struct grpc_reply *r, void *arg)
{
	const PbPrepareReq *q = (const void *)req;
	struct driver *d = arg;
	PbPrepareResp resp = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__INIT;
	PbPrepareEntry *entries, **ep;
	PbPrepared *answers;
	struct dra_prepared *got;

	if (!claims_ok(q->claims, q->n_claims, r))
		return;
	entries = xcalloc(q->n_claims + 1, sizeof(*entries));
	ep = xcalloc(q->n_claims + 1, sizeof(*ep));
	answers = xcalloc(q->n_claims + 1, sizeof(*answers));
	got = xcalloc(q->n_claims + 1, sizeof(*got));
	for (size_t i = 0; i < q->n_claims; i++) {
		const PbClaim *c = q->claims[i];
		struct dra_claim claim = { .ns = c->namespace_, .uid = c->uid, .name = c->name };
		struct oerr err = { 0 };
		PbPrepared *a = &answers[i];

		PB(node_prepare_resource_response__init)(a);
		PB(node_prepare_resources_response__claims_entry__init)(&entries[i]);
		entries[i].key = c->uid;
		entries[i].value = a;
		ep[i] = &entries[i];
		if (d->backend->prepare(d->backend->arg, d->name, &claim, &got[i], &err) < 0) {
			a->error = xstrdup(err.msg);
			log_warn("driver %s: claim %s/%s (%s) not prepared: %s", d->name, c->namespace_, c->name, c->uid,
				 err.msg);
			dra_prepared_free(&got[i]);
			continue;
		}
		a->n_devices = got[i].n;
		a->devices = xcalloc(got[i].n + 1, sizeof(*a->devices));
		for (size_t k = 0; k < got[i].n; k++) {
			struct dra_given *g = &got[i].v[k];
			PbDevice *dev = xmalloc(sizeof(*dev));

			PB(device__init)(dev);
			dev->n_request_names = g->requests.n;
			dev->request_names = g->requests.v;
			dev->pool_name = g->pool;
			dev->device_name = g->device;
			dev->n_cdi_device_ids = g->cdi_ids.n;
			dev->cdi_device_ids = g->cdi_ids.v;
			a->devices[k] = dev;
		}
		log_info("driver %s: claim %s/%s (%s) prepared: %zu devices", d->name, c->namespace_, c->name, c->uid,
			 got[i].n);
	}
	resp.n_claims = q->n_claims;
	resp.claims = ep;
	grpc_reply_pack(r, &resp.base);
	for (size_t i = 0; i < q->n_claims; i++) {
		if (answers[i].error != protobuf_c_empty_string)
			free(answers[i].error);
		for (size_t k = 0; k < answers[i].n_devices; k++)
			free(answers[i].devices[k]);
		free(answers[i].devices);
		dra_prepared_free(&got[i]);
	}
	free(got);
	free(answers);
	free(ep);
	free(entries);
}

static void unprepare(const ProtobufCMessage *req, struct grpc_reply *r, void *arg)
{
	const PbUnprepareReq *q = (const void *)req;
	struct driver *d = arg;
	PbUnprepareResp resp = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_RESPONSE__INIT;
	PbUnprepareEntry *entries, **ep;
	PbUnprepared *answers;

	if (!claims_ok(q->claims, q->n_claims, r))
		return;
	entries = xcalloc(q->n_claims + 1, sizeof(*entries));
	ep = xcalloc(q->n_claims + 1, sizeof(*ep));
	answers = xcalloc(q->n_claims + 1, sizeof(*answers));
	for (size_t i = 0; i < q->n_claims; i++) {
		const PbClaim *c = q->claims[i];
		struct dra_claim claim = { .ns = c->namespace_, .uid = c->uid, .name = c->name };
		struct oerr err = { 0 };

		PB(node_unprepare_resource_response__init)(&answers[i]);
		PB(node_unprepare_resources_response__claims_entry__init)(&entries[i]);
		entries[i].key = c->uid;
		entries[i].value = &answers[i];
		ep[i] = &entries[i];
		if (d->backend->unprepare(d->backend->arg, d->name, &claim, &err) < 0) {
			answers[i].error = xstrdup(err.msg);
			log_warn("driver %s: claim %s/%s (%s) not unprepared: %s", d->name, c->namespace_, c->name,
				 c->uid, err.msg);
		} else {
			log_info("driver %s: claim %s/%s (%s) unprepared", d->name, c->namespace_, c->name, c->uid);
		}
	}
	resp.n_claims = q->n_claims;
	resp.claims = ep;
	grpc_reply_pack(r, &resp.base);
	for (size_t i = 0; i < q->n_claims; i++)
		if (answers[i].error != protobuf_c_empty_string)
			free(answers[i].error);
	free(answers);
	free(ep);
	free(entries);
}

/* ---- the sockets ---- */

/* DIR opened: the directory itself may be a link (a distribution's
 * /var/lib/kubelet), not the NAME made in it */
static int socket_make(struct sock *s, int dfd, const char *name, struct oerr *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t mask;
	int cwd, r;

	s->dfd = dfd;
	snprintf(s->name, sizeof(s->name), "%s", name);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return oerr_set(err, 0, "%s: there, and not a socket: left alone", s->path);
		if (unlinkat(dfd, name, 0) < 0)
			return oerr_set(err, errno, "%s: the stale socket could not be removed", s->path);
	} else if (errno != ENOENT) {
		return oerr_set(err, errno, "%s", s->path);
	}
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->fd < 0)
		return oerr_set(err, errno, "socket");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", name);
	/* bound in the directory held (a relative name: no path walked again),
	 * 0600 from the start */
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0 || fchdir(dfd) < 0) {
		if (cwd >= 0)
			close(cwd);
		return oerr_set(err, errno, "%s: its directory", s->path);
	}
	mask = umask(0177);
	r = bind(s->fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(mask);
	if (fchdir(cwd) < 0) {
		close(cwd);
		return oerr_set(err, errno, "fchdir back");
	}
	close(cwd);
	if (r < 0)
		return oerr_set(err, errno, "%s: bind", s->path);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || listen(s->fd, 16) < 0)
		return oerr_set(err, errno, "%s: listen", s->path);
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	return 0;
}

/* The socket removed, if it is still the one we made (a newer plugin's
 * left alone) */
static void socket_remove(struct sock *s)
{
	struct stat st;

	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (s->dfd >= 0 && fstatat(s->dfd, s->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_dev == s->dev && st.st_ino == s->ino)
		unlinkat(s->dfd, s->name, 0);
	if (s->dfd >= 0)
		close(s->dfd);
	s->dfd = -1;
}

static int dir_open(const char *path, struct oerr *err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return oerr_set(err, errno, "%s", path);
	return fd;
}

static int driver_open(struct driver *d, const struct dra_opts *o, struct oerr *err)
{
	int pdir, ddir;

	/* the DRA socket first: the registration names it */
	if (snprintf(d->dra.path, sizeof(d->dra.path), "%s/%s/" DRA_SOCKET, o->plugin_dir, d->name) >=
		    (int)sizeof(d->dra.path) ||
	    snprintf(d->reg.path, sizeof(d->reg.path), "%s/%s" DRA_REG_SUFFIX, o->registry_dir, d->name) >=
		    (int)sizeof(d->reg.path))
		return oerr_usage(err, "driver %s: its socket paths are longer than a unix socket's (107 bytes)",
				  d->name);
	pdir = dir_open(o->plugin_dir, err);
	if (pdir < 0)
		return oerr_prefix(err, "--plugin-dir");
	if (mkdirat(pdir, d->name, 0750) < 0 && errno != EEXIST) {
		close(pdir);
		return oerr_set(err, errno, "%s/%s", o->plugin_dir, d->name);
	}
	ddir = openat(pdir, d->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(pdir);
	if (ddir < 0)
		return oerr_set(err, errno, "%s/%s: not a directory of its own (a link is not followed)", o->plugin_dir,
				d->name);
	if (socket_make(&d->dra, ddir, DRA_SOCKET, err) < 0)
		return -1;
	{
		char name[300];
		int rdir = dir_open(o->registry_dir, err);

		if (rdir < 0)
			return oerr_prefix(err, "--registry-dir");
		snprintf(name, sizeof(name), "%s" DRA_REG_SUFFIX, d->name);
		if (socket_make(&d->reg, rdir, name, err) < 0)
			return -1;
	}
	return 0;
}

/* ---- the loop ---- */

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	stop = sig;
}

struct conn {
	struct grpc_conn *g;
	int fd;
};

static void driver_setup(struct driver *d, const char *name, const struct dra_backend *b)
{
	static const char *const dra_paths[4] = {
		"/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
		"/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources",
		"/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources",
		"/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources",
	};

	memset(d, 0, sizeof(*d));
	d->name = name;
	d->backend = b;
	d->reg.fd = d->dra.fd = d->reg.dfd = d->dra.dfd = -1;
	d->reg_m[0] = (struct grpc_method){ "/pluginregistration.Registration/GetInfo",
					    &pluginregistration__info_request__descriptor, get_info, d };
	d->reg_m[1] = (struct grpc_method){ "/pluginregistration.Registration/NotifyRegistrationStatus",
					    &pluginregistration__registration_status__descriptor, notify, d };
	for (int i = 0; i < 4; i++)
		d->dra_m[i] = (struct grpc_method){ dra_paths[i],
						    i % 2 ? &PB(node_unprepare_resources_request__descriptor)
							  : &PB(node_prepare_resources_request__descriptor),
						    i % 2 ? unprepare : prepare, d };
	snprintf(d->reg.what, sizeof(d->reg.what), "driver %s's registration socket", name);
	snprintf(d->dra.what, sizeof(d->dra.what), "driver %s's DRA socket", name);
	d->reg.srv = (struct grpc_server){ .methods = d->reg_m, .n = 2, .name = d->reg.what, .max_conn = DRA_CONN_HELD };
	d->dra.srv = (struct grpc_server){ .methods = d->dra_m, .n = 4, .name = d->dra.what, .max_conn = DRA_CONN_HELD };
}

static long long mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int dra_serve(const struct dra_opts *o, struct oerr *err)
{
	size_t nd = o->ndrivers, nsock = 2 * nd;
	struct driver *d = xcalloc(nd, sizeof(*d));
	struct conn conns[DRA_MAX_CONNS];
	size_t nconn = 0;
	struct pollfd *fds = xcalloc(nsock + DRA_MAX_CONNS, sizeof(*fds));
	struct sigaction sa = { .sa_handler = on_stop };
	sigset_t sigs, none;
	int r = 0;

	log_threshold = log_threshold < LOG_INFO ? LOG_INFO : log_threshold;  /* a daemon says what it does */
	for (size_t i = 0; i < nd; i++)
		driver_setup(&d[i], o->drivers[i], o->backend);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sigemptyset(&none);
	for (size_t i = 0; i < nd && r == 0; i++) {
		r = driver_open(&d[i], o, err);
		if (r == 0)
			log_info("driver %s: serving %s, registering through %s", d[i].name, d[i].dra.path, d[i].reg.path);
	}
	long long next = 0;  /* the next tick's time (ms, CLOCK_MONOTONIC) */

	while (r == 0 && !stop) {
		size_t n = 0;
		struct timespec wait, *tw = NULL;
		long long now = mono_ms();

		if (o->tick && o->tick_ms > 0) {
			if (now >= next) {
				o->tick(o->tick_arg);
				now = mono_ms();
				next = now + o->tick_ms;
			}
			wait = (struct timespec){ (next - now) / 1000, (next - now) % 1000 * 1000000 };
			tw = &wait;
		}

		for (size_t i = 0; i < nd; i++) {
			fds[n++] = (struct pollfd){ .fd = d[i].reg.fd, .events = POLLIN };
			fds[n++] = (struct pollfd){ .fd = d[i].dra.fd, .events = POLLIN };
		}
		for (size_t k = 0; k < nconn; k++)
			fds[n++] = (struct pollfd){ .fd = conns[k].fd, .events = grpc_conn_events(conns[k].g) };
		if (ppoll(fds, n, tw, &none) < 0) {
			if (errno == EINTR)
				continue;
			r = oerr_set(err, errno, "poll");
			break;
		}
		/* the connections first (their slots move as they close) */
		for (size_t k = nconn; k-- > 0;) {
			short rev = fds[nsock + k].revents;

			if (rev && grpc_conn_io(conns[k].g, rev) < 0) {
				grpc_conn_free(conns[k].g);
				conns[k] = conns[--nconn];
			}
		}
		for (size_t s = 0; s < nsock; s++) {
			struct sock *so = s % 2 ? &d[s / 2].dra : &d[s / 2].reg;
			int c;

			if (!(fds[s].revents & POLLIN))
				continue;
			c = accept4(so->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
			if (c < 0)
				continue;
			if (nconn == DRA_MAX_CONNS) {
				log_warn("%s: a connection refused: %d are open already", so->what, DRA_MAX_CONNS);
				close(c);
				continue;
			}
			conns[nconn].fd = c;
			conns[nconn].g = grpc_conn_new(&so->srv, c);
			/* its SETTINGS out at once */
			if (grpc_conn_io(conns[nconn].g, POLLOUT) < 0)
				grpc_conn_free(conns[nconn].g);
			else
				nconn++;
		}
	}
	for (size_t k = 0; k < nconn; k++)
		grpc_conn_free(conns[k].g);
	/* the registration first: the kubelet stops calling before the
	 * service goes */
	for (size_t i = 0; i < nd; i++) {
		socket_remove(&d[i].reg);
		socket_remove(&d[i].dra);
	}
	if (stop)
		log_info("signal %d: the plugin stops, its sockets removed", (int)stop);
	free(fds);
	free(d);
	return r;
}
