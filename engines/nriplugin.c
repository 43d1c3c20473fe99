/* nriplugin.c: see nriplugin.h.
 *
 * One process, one connection, one request at a time: the runtime's
 * socket, NRI's multiplexer and ttrpc under it (ttrpc.c); protobuf-c for
 * the messages. Each container is decided in a child process, bounded in
 * time, whose memory goes with it (NRI_BACKSTOP_MS). When the runtime
 * goes (restarted, upgraded), the plugin connects again; while the plugin
 * is gone, the runtime starts containers without it (NRI's rule), so a
 * container that asks for nothing never waits on ocidec. */
#include "engines/nriplugin.h"

#include "engines/cdispec.h"
#include "devices/config.h"
#include "pipeline/container.h"
#include "devices/devices.h"
#include "base/log.h"
#include "engines/nri.h"
#include "engines/nrictl.h"
#include "formats/ttrpc.h"
#include "base/util.h"
#include "ttrpc.pb-c.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* gRPC's status codes, as ttrpc carries them */
enum { RPC_UNKNOWN = 2, RPC_INVALID_ARGUMENT = 3, RPC_UNIMPLEMENTED = 12 };

/* The runtime waits 2 s for an answer (containerd's NRI timeout), then
 * creates the container without the plugin and drops the plugin. A
 * container is decided in a process of its own, under a deadline of
 * NRI_DEADLINE_S that every loop over its request asks (util.h); one
 * still deciding NRI_BACKSTOP_MS after the request came is killed, the
 * container refused, and the plugin answers the next one at once. What a
 * decision allocates (the configs, the devices read) goes with its
 * process: the plugin's own memory stays what it was. */
enum { NRI_DEADLINE_S = 1, NRI_BACKSTOP_MS = 1500 };

struct plugin {
	const struct nri_opts *o;
	const char *dir, *socket, *hook, *name, *index;
	int fd;               /* the runtime's connection, or -1 */
	int ctl;              /* the control socket (nrictl.h), or -1 */
	struct mux_in in;
	struct bbuf out;
	bool registered;      /* the runtime answered RegisterPlugin */
	bool broken;          /* a write failed: disconnected once the input is let go */
	char runtime[128];    /* "containerd 2.1.9", once configured */
	pid_t *stray;         /* decisions killed that have not ended yet (a read
			       * hanging in the kernel): reaped as they end */
	size_t nstray;
};

static int flush(struct plugin *p);

/* M packed: *LEN bytes */
static uint8_t *pack(const ProtobufCMessage *m, size_t *len)
{
	uint8_t *buf;

	*len = protobuf_c_message_get_packed_size(m);
	buf = xmalloc(*len + 1);
	protobuf_c_message_pack(m, buf);
	return buf;
}

/* BUF (LEN bytes) as a ttrpc message of TYPE on connection CONN, queued */
static void send_bytes(struct plugin *p, uint32_t conn, uint32_t stream, uint8_t type, const uint8_t *buf, size_t len)
{
	struct bbuf t = { 0 };

	ttrpc_put(&t, stream, type, buf, len);
	mux_put(&p->out, conn, t.p, t.len);
	bbuf_free(&t);
	if (p->out.len - p->out.off > (1u << 20))   /* many answers to one read: not all kept */
		flush(p);
}

/* M packed as a ttrpc message of TYPE on connection CONN, queued */
static void send_packed(struct plugin *p, uint32_t conn, uint32_t stream, uint8_t type, const ProtobufCMessage *m)
{
	size_t len;
	_cleanup_free_ uint8_t *buf = pack(m, &len);

	send_bytes(p, conn, stream, type, buf, len);
}

/* A ttrpc response, packed (*LEN bytes): REPLY, or (REPLY NULL) the error
 * CODE with MSG */
static uint8_t *response(const ProtobufCMessage *reply, int code, const char *msg, size_t *len)
{
	Ttrpc__Response r = TTRPC__RESPONSE__INIT;
	Ttrpc__Status st = TTRPC__STATUS__INIT;
	_cleanup_free_ uint8_t *payload = NULL;

	if (reply) {
		r.payload.data = payload = pack(reply, &r.payload.len);
	} else {
		st.code = code;
		st.message = (char *)msg;
		r.status = &st;
	}
	return pack(&r.base, len);
}

/* The answer to request STREAM: REPLY, or (REPLY NULL) the error CODE with MSG */
static void respond(struct plugin *p, uint32_t stream, const ProtobufCMessage *reply, int code, const char *msg)
{
	size_t len;
	_cleanup_free_ uint8_t *buf = response(reply, code, msg, &len);

	send_bytes(p, MUX_PLUGIN, stream, TTRPC_RESPONSE, buf, len);
}

/* "NAME in pod NAMESPACE/NAME", for the lines that name the container */
static char *container_name(const Nri__Pkg__Api__V1alpha1__CreateContainerRequest *req)
{
	const NriContainer *c = req->container;
	const Nri__Pkg__Api__V1alpha1__PodSandbox *pod = req->pod;

	if (pod && *pod->name)
		return xasprintf("%s in pod %s/%s", *c->name ? c->name : c->id, pod->namespace_, pod->name);
	return xstrdup(*c->name ? c->name : c->id);
}

/* CreateContainer: C's edits as the adjustment A, or nothing (A untouched)
 * for a container that asks for nothing. 0, or -1 (ERR, naming C) */
static int create_container(struct plugin *p, const Nri__Pkg__Api__V1alpha1__CreateContainerRequest *req,
			    NriAdjustment *a, struct oerr *err)
{
	static const struct strv no_ann;
	_cleanup_free_ char *what = container_name(req);
	struct container c = { 0 };
	struct oerr why = { 0 };
	int level = log_threshold, r;
	/* where the runtime takes CDI devices, ocidec's specs' directory */
	const char *cdi = p->o->no_cdi || !nri_takes_cdi(p->runtime) ? NULL
			  : p->o->cdi_dir ? p->o->cdi_dir : NRI_CDI_SPECS;

	if (nri_edited(req->container)) {
		log_info("container %s: has ocidec's edits already (a CDI spec of ocidec's)", what);
		return 0;
	}
	/* every loop over the request and the driver root asks the deadline:
	 * a container that takes longer is refused, saying what took the time */
	deadline_arm_sec(NRI_DEADLINE_S);
	nri_container_config(req->container, &c.oc);
	nri_pod_config(req->pod, &c.oc);
	r = container_decide_config(p->dir, &no_ann, what, &c, err);
	c.by_path = true;   /* the runtime mounts and makes the nodes later */
	if (r == CONTAINER_ACTIVE) {
		r = container_plan(&c, what, err);   /* (its errors: "container WHAT: ...") */
		/* the runtime injects CDI devices (containerd 2.1, CRI-O 1.34 and later):
		 * ocidec's own specs' devices, no OCI hook (NRI's validator) */
		if (r == 0 && cdi && nri_cdi_adjustment(c.act, c.nact, req->container, cdi, p->hook, a, &why) == 0) {
			_cleanup_free_ char *list = NULL;
			struct strv n = { 0 };

			for (size_t i = 0; i < a->n_cdi_devices; i++)
				strv_push(&n, a->cdi_devices[i]->name);
			list = strv_join(&n, ", ");
			strv_free(&n);
			/* (nothing to say of groups: a spec's node without a uid is
			 * the process's, CDI's, and the process opens it as its owner) */
			log_info("container %s: CDI devices %s (ocidec's specs in %s)", what, list, cdi);
		} else if (r == 0) {
			if (cdi)
				log_info("container %s: its edits, not CDI devices: %s", what, why.msg);
			if (nri_adjustment(&c.edits, req->container, p->hook, a, err) < 0)
				r = oerr_prefix(err, "container %s", what);
			else {
				log_info("container %s: %zu device nodes, %zu mounts", what,
					 a->linux ? a->linux->n_devices : 0, a->n_mounts);
				nri_say_groups(&c.edits, req->container, what);
			}
		}
	}
	if (r >= 0 && deadline_passed())
		r = oerr_set(err, 0, "container %s: not planned within the runtime's time (%d s): the driver root "
			     "too large or too slow to read", what, NRI_DEADLINE_S);
	deadline_arm_sec(0);
	container_free(&c);
	devices_forget();   /* the next container sees the host anew */
	log_threshold = level;   /* a vendor's log_level is for its container */
	return r < 0 ? -1 : 0;
}

/* The decision's process: REQ's answer (a packed ttrpc response) to OUT,
 * after one byte of nri_said; it exits */
static _Noreturn void decide(struct plugin *p, const Nri__Pkg__Api__V1alpha1__CreateContainerRequest *req, int out)
{
	Nri__Pkg__Api__V1alpha1__CreateContainerResponse rsp = NRI__PKG__API__V1ALPHA1__CREATE_CONTAINER_RESPONSE__INIT;
	NriAdjustment a = NRI__PKG__API__V1ALPHA1__CONTAINER_ADJUSTMENT__INIT;
	struct oerr err = { 0 };
	uint8_t *buf, said;
	size_t len;

	if (p->fd >= 0)
		close(p->fd);   /* (one that hangs keeps no connection open) */
	if (p->ctl >= 0)
		close(p->ctl);
	if (create_container(p, req, &a, &err) < 0) {
		_cleanup_free_ char *msg = xasprintf("ocidec: %s", err.msg);

		log_oerr(&err);   /* the plugin's log, and the system log */
		buf = response(NULL, RPC_UNKNOWN, msg, &len);
	} else {
		rsp.adjust = &a;
		buf = response(&rsp.base, 0, NULL, &len);
	}
	said = (uint8_t)nri_said;
	_exit(write_all(out, &said, 1) < 0 || write_all(out, buf, len) < 0 ? EXIT_FAIL : EXIT_OK);
}

/* PID, killed, reaped when it has ended; the strays that have since */
static void reap(struct plugin *p, pid_t pid)
{
	if (pid > 0 && waitpid(pid, NULL, WNOHANG) == 0) {
		p->stray = xreallocarray(p->stray, p->nstray + 1, sizeof(*p->stray));
		p->stray[p->nstray++] = pid;
	}
	for (size_t i = 0; i < p->nstray;) {
		if (waitpid(p->stray[i], NULL, WNOHANG) != 0)
			p->stray[i] = p->stray[--p->nstray];
		else
			i++;
	}
}

/* Milliseconds since T0 (CLOCK_MONOTONIC) */
static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* REQ (the container WHAT, asked at T0) decided in a process of its own:
 * its answer, a packed ttrpc response, into ANSWER: 0; -1 (ERR): none
 * within NRI_BACKSTOP_MS of T0 (the process killed), or none at all */
static int decided(struct plugin *p, const Nri__Pkg__Api__V1alpha1__CreateContainerRequest *req, const char *what,
		   const struct timespec *t0, struct bbuf *answer, struct oerr *err)
{
	int fds[2], st = 0;
	bool eof = false;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return oerr_set(err, errno, "container %s: a pipe", what);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		oerr_set(err, errno, "container %s: fork", what);
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		decide(p, req, fds[1]);
	}
	close(fds[1]);
	while (!eof && answer->len <= TTRPC_MAX) {
		struct pollfd pf = { .fd = fds[0], .events = POLLIN };
		long left = NRI_BACKSTOP_MS - ms_since(t0);
		int ready = left > 0 ? poll(&pf, 1, (int)left) : 0;
		uint8_t buf[16384];
		ssize_t n;

		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0)
			break;
		n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0)
			bbuf_add(answer, buf, (size_t)n);
		eof = n <= 0;
	}
	close(fds[0]);
	if (!eof) {
		kill(pid, SIGKILL);
		reap(p, pid);
		if (answer->len > TTRPC_MAX)
			return oerr_set(err, 0, "container %s: an answer larger than ttrpc carries", what);
		return oerr_set(err, 0, "container %s: not decided within %d ms of the request (the runtime waits 2 s): "
				"stopped, the container refused (the plugin's log says how far it got)", what,
				NRI_BACKSTOP_MS);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != EXIT_OK || answer->len < 1)
		return oerr_set(err, 0, "container %s: its decision ended without an answer (%s %d)", what,
				WIFSIGNALED(st) ? "signal" : "exit status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	nri_said |= answer->p[0];
	bbuf_drop(answer, 1);
	return 0;
}

static void on_create(struct plugin *p, uint32_t stream, const ProtobufCBinaryData *payload)
{
	struct timespec t0;
	Nri__Pkg__Api__V1alpha1__CreateContainerRequest *req;
	struct bbuf answer = { 0 };
	struct oerr err = { 0 };

	clock_gettime(CLOCK_MONOTONIC, &t0);
	req = nri__pkg__api__v1alpha1__create_container_request__unpack(NULL, payload->len, payload->data);
	if (!req || !req->container) {
		respond(p, stream, NULL, RPC_INVALID_ARGUMENT, "ocidec: CreateContainer: not NRI's message");
	} else {
		_cleanup_free_ char *what = container_name(req);

		if (decided(p, req, what, &t0, &answer, &err) == 0) {
			send_bytes(p, MUX_PLUGIN, stream, TTRPC_RESPONSE, answer.p + answer.off, answer.len - answer.off);
		} else {
			_cleanup_free_ char *msg = xasprintf("ocidec: %s", err.msg);

			log_oerr(&err);
			respond(p, stream, NULL, RPC_UNKNOWN, msg);
		}
	}
	bbuf_free(&answer);
	if (req)
		nri__pkg__api__v1alpha1__create_container_request__free_unpacked(req, NULL);
}

/* A request of the runtime's, answered */
static void on_request(struct plugin *p, uint32_t stream, const Ttrpc__Request *rq)
{
	static const char plugin[] = NRI_API ".Plugin";
	const char *m = rq->method;

	if (strcmp(rq->service, plugin) != 0) {
		respond(p, stream, NULL, RPC_UNIMPLEMENTED, "ocidec: no such service");
	} else if (strcmp(m, "Configure") == 0) {
		Nri__Pkg__Api__V1alpha1__ConfigureRequest *c =
			nri__pkg__api__v1alpha1__configure_request__unpack(NULL, rq->payload.len, rq->payload.data);
		Nri__Pkg__Api__V1alpha1__ConfigureResponse r = NRI__PKG__API__V1ALPHA1__CONFIGURE_RESPONSE__INIT;

		r.events = NRI_EVENT_MASK(NRI__PKG__API__V1ALPHA1__EVENT__CREATE_CONTAINER);
		snprintf(p->runtime, sizeof(p->runtime), "%s %s", c ? c->runtime_name : "?", c ? c->runtime_version : "?");
		log_info("registered with %s as %s-%s", p->runtime, p->index, p->name);
		if (nri_takes_cdi(p->runtime) && !p->o->no_cdi)
			log_info("%s takes CDI devices from a plugin: a container's devices go as those of "
				 "ocidec's specs in %s where they are current", p->runtime,
				 p->o->cdi_dir ? p->o->cdi_dir : NRI_CDI_SPECS);
		if (c)
			nri__pkg__api__v1alpha1__configure_request__free_unpacked(c, NULL);
		respond(p, stream, &r.base, 0, NULL);
	} else if (strcmp(m, "CreateContainer") == 0) {
		on_create(p, stream, &rq->payload);
	} else if (strcmp(m, "Synchronize") == 0) {
		Nri__Pkg__Api__V1alpha1__SynchronizeResponse r = NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_RESPONSE__INIT;
		respond(p, stream, &r.base, 0, NULL);
	} else if (strcmp(m, "UpdateContainer") == 0) {
		Nri__Pkg__Api__V1alpha1__UpdateContainerResponse r = NRI__PKG__API__V1ALPHA1__UPDATE_CONTAINER_RESPONSE__INIT;
		respond(p, stream, &r.base, 0, NULL);
	} else if (strcmp(m, "StopContainer") == 0) {
		Nri__Pkg__Api__V1alpha1__StopContainerResponse r = NRI__PKG__API__V1ALPHA1__STOP_CONTAINER_RESPONSE__INIT;
		respond(p, stream, &r.base, 0, NULL);
	} else if (strcmp(m, "Shutdown") == 0 || strcmp(m, "StateChange") == 0) {
		Nri__Pkg__Api__V1alpha1__Empty r = NRI__PKG__API__V1ALPHA1__EMPTY__INIT;
		if (m[1] == 'h')
			log_info("the runtime shuts the plugin down");
		respond(p, stream, &r.base, 0, NULL);
	} else {
		respond(p, stream, NULL, RPC_UNIMPLEMENTED, "ocidec: no such method");
	}
}

/* Each ttrpc message in: the runtime's requests answered, the answer to
 * RegisterPlugin read. -1: the connection is to be closed. */
static int on_message(uint32_t conn, const struct ttrpc_msg *m, void *arg)
{
	struct plugin *p = arg;

	if (p->broken)
		return -1;
	if (conn == MUX_PLUGIN && m->type == TTRPC_REQUEST) {
		Ttrpc__Request *rq = ttrpc__request__unpack(NULL, m->len, m->data);

		if (!rq) {
			log_warn("%s: a request that is not ttrpc's: the connection closed", p->socket);
			return -1;
		}
		on_request(p, m->stream, rq);
		ttrpc__request__free_unpacked(rq, NULL);
	} else if (conn == MUX_RUNTIME && m->type == TTRPC_RESPONSE) {
		Ttrpc__Response *r = ttrpc__response__unpack(NULL, m->len, m->data);
		int code = !r ? -1 : r->status ? r->status->code : 0;

		static bool said;   /* once, until it registers */

		if (code && !said)
			log_warn("%s: the runtime refused the plugin: %s (trying again every second)", p->socket,
				 r && r->status && *r->status->message ? r->status->message : "(no reason given)");
		said = code != 0;
		p->registered = code == 0;
		if (r)
			ttrpc__response__free_unpacked(r, NULL);
		return code ? -1 : 0;
	}
	return 0;
}

static int plugin_connect(struct plugin *p, struct oerr *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	Nri__Pkg__Api__V1alpha1__RegisterPluginRequest reg = NRI__PKG__API__V1ALPHA1__REGISTER_PLUGIN_REQUEST__INIT;
	Ttrpc__Request rq = TTRPC__REQUEST__INIT;
	_cleanup_free_ uint8_t *payload = NULL;

	if (strlen(p->socket) >= sizeof(sa.sun_path))
		return oerr_usage(err, "--socket %s: too long for a unix socket", p->socket);
	memcpy(sa.sun_path, p->socket, strlen(p->socket));
	p->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0 || connect(p->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		oerr_set(err, errno, "%s", p->socket);
		if (p->fd >= 0)
			close(p->fd);
		return p->fd = -1;
	}
	reg.plugin_name = (char *)p->name;
	reg.plugin_idx = (char *)p->index;
	rq.service = (char *)NRI_API ".Runtime";
	rq.method = (char *)"RegisterPlugin";
	rq.payload.len = protobuf_c_message_get_packed_size(&reg.base);
	rq.payload.data = payload = xmalloc(rq.payload.len + 1);
	protobuf_c_message_pack(&reg.base, payload);
	rq.timeout_nano = 5000000000LL;
	send_packed(p, MUX_RUNTIME, 1, TTRPC_REQUEST, &rq.base);
	log_info("%s: connected; the cache hook is %s, the configs %s", p->socket, p->hook, p->dir);
	return 0;
}

static void plugin_disconnect(struct plugin *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	mux_in_free(&p->in);
	bbuf_free(&p->out);
	p->registered = false;
	p->broken = false;
	p->runtime[0] = '\0';
}

/* The queued bytes to the runtime; -1 (said, P broken: the caller
 * disconnects, never while the input is being read) when it is gone */
static int flush(struct plugin *p)
{
	if (p->fd < 0 || p->broken || p->out.len == p->out.off)
		return p->broken ? -1 : 0;
	if (write_all(p->fd, p->out.p + p->out.off, p->out.len - p->out.off) < 0) {
		log_warn("%s: %s", p->socket, strerror(errno));
		p->broken = true;
		return -1;
	}
	bbuf_drop(&p->out, p->out.len - p->out.off);
	bbuf_shrink(&p->out);
	return 0;
}

/* A newer plugin's, or a probe's, question on the control socket: 1 when
 * the connection went to a newer plugin (this one serves no more) */
static int control(struct plugin *p)
{
	_cleanup_close_ int c = nrictl_accept(p->ctl);
	struct nri_ident mine, theirs;
	char what = 0, line[300];

	if (c < 0 || read(c, &what, 1) != 1)
		return 0;
	if (what == NRICTL_STATUS) {
		if (p->registered && p->runtime[0])
			snprintf(line, sizeof(line), "registered with %s as %s-%s\n", p->runtime, p->index, p->name);
		else
			snprintf(line, sizeof(line), "not registered: connecting to %s\n", p->socket);
		(void)!write(c, line, strlen(line));
		return 0;
	}
	if (what != NRICTL_HANDOFF || nrictl_read_ident(c, &theirs) < 0)
		return 0;
	/* only to the same plugin, newer: another one's configs or socket (a
	 * host's service beside a DaemonSet's pod) would change what every
	 * container gets, unseen */
	nrictl_ident(&mine, p->socket, p->dir, p->hook);
	if (strcmp(mine.socket, theirs.socket) != 0 || strcmp(mine.dir, theirs.dir) != 0 ||
	    strcmp(mine.hook, theirs.hook) != 0) {
		snprintf(line, sizeof(line), "it serves %s with the configs %s and the hook %s", p->socket, p->dir, p->hook);
		static char last[sizeof(theirs.dir)];

		nrictl_refuse(c, line);
		if (strcmp(last, theirs.dir) != 0)   /* (it asks again every few seconds) */
			log_warn("a plugin named %s for %s with %s asked for the connection: refused (one plugin of "
				 "a name per runtime)", p->name, theirs.socket, theirs.dir);
		memcpy(last, theirs.dir, sizeof(last));
		return 0;
	}
	/* between two requests: everything answered is sent, the rest goes
	 * (the path stays: the newer plugin binds it anew) */
	if (flush(p) == 0 && p->fd >= 0 && p->registered) {
		if (nrictl_give(c, p->fd, &p->in, p->runtime) < 0) {
			log_warn("%s: the handoff to a newer plugin failed: this one serves on", p->socket);
			return 0;
		}
		log_info("%s: the connection handed over to a newer plugin", p->socket);
	} else {
		nrictl_unlink(p->name);
		log_info("%s: a newer plugin connects itself", p->socket);
	}
	plugin_disconnect(p);
	return 1;
}

/* The connection an older plugin of the same name hands over: 1 (taken),
 * 0 (none runs), -1 (one runs with other configs: refused, said once), -2
 * (one runs and did not answer in time: busy, ask again) */
static int take_over(struct plugin *p, bool *said)
{
	struct nri_ident id;
	_cleanup_close_ int c = -1;
	struct nri_handoff h;
	int r;

	nrictl_ident(&id, p->socket, p->dir, p->hook);
	c = nrictl_ask(p->name, NRICTL_HANDOFF, &id, NULL);
	if (c < 0)
		return errno == ENOENT || errno == ECONNREFUSED ? 0 : -2;
	r = nrictl_take(c, &h);
	if (r == -2) {
		if (!*said)
			log_warn("another ocidec nri plugin named %s runs here, and %s: this one waits until it is "
				 "gone (one of them is enough: stop the other, or name this one apart with --name)",
				 p->name, h.runtime);
		*said = true;
		return -1;
	}
	if (r < 0)
		return -2;
	p->fd = h.fd;
	p->in = h.in;
	p->registered = true;
	memcpy(p->runtime, h.runtime, sizeof(p->runtime));
	log_info("%s: took the connection to %s over from the plugin before", p->socket, p->runtime);
	return 1;
}

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	stop = sig;
}

/* The CDI refresh, in a child of its own (the plugin goes on answering):
 * started when none runs and NRI_CDI_TICK s passed since the last */
static void refresh_tick(const struct nri_opts *o, const struct plugin *p, pid_t *child, long long *last)
{
	if (*child > 0 && waitpid(*child, NULL, WNOHANG) == *child)
		*child = 0;
	if (!o->cdi_dir || *child > 0 || wall_clock() - *last < NRI_CDI_TICK)
		return;
	*last = wall_clock();
	fflush(stdout);
	fflush(stderr);
	*child = fork();
	if (*child == 0) {
		sigset_t all;

		sigfillset(&all);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		sigprocmask(SIG_UNBLOCK, &all, NULL);
		if (p->fd >= 0)
			close(p->fd);
		if (p->ctl >= 0)
			close(p->ctl);
		_exit(cdi_refresh(o->dir, o->cdi_dir, o->hook));
	}
}

int nri_plugin(const struct nri_opts *o, struct oerr *err)
{
	struct plugin p = { .o = o, .dir = o->dir, .socket = o->socket, .hook = o->hook, .name = o->name,
			    .index = o->index, .fd = -1, .ctl = -1 };
	struct sigaction sa = { .sa_handler = on_stop };
	sigset_t sigs, none;
	bool said = false, other = false, waiting = true;
	long long refreshed = 0, retry = 0;
	pid_t refresher = 0;
	int r = 0;

	log_threshold = log_threshold < LOG_INFO ? LOG_INFO : log_threshold;  /* a daemon says what it does */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);   /* a runtime gone mid-answer is a write error */
	/* TERM and INT blocked but in ppoll: one arriving between the check
	 * of STOP and the wait is not lost */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sigemptyset(&none);
	while (!stop && r == 0) {
		struct pollfd fds[2];
		struct timespec tick = { .tv_sec = 1 };
		static uint8_t buf[65536];

		if (waiting && wall_clock() >= retry) {  /* not serving yet: an older plugin's, or our own */
			int t = take_over(&p, &other);

			retry = wall_clock() + (t == -1 ? NRI_CDI_TICK : 1);
			if (t >= 0) {
				retry = 0;
				waiting = false;
				if (other)
					log_info("the other plugin named %s is gone: this one serves", p.name);
				p.ctl = nrictl_listen(p.name);
			}
		}
		if (!waiting && p.fd < 0 && wall_clock() >= retry) {
			retry = wall_clock() + 1;
			if (plugin_connect(&p, err) < 0 && err->code == EXIT_USAGE)
				return -1;
			if (p.fd < 0 && !said)
				log_warn("%s; waiting for the runtime", err->msg);
			said = p.fd < 0;
		}
		if (!waiting)
			refresh_tick(o, &p, &refresher, &refreshed);
		reap(&p, 0);
		fds[0] = (struct pollfd){ .fd = p.fd, .events = POLLIN };
		fds[1] = (struct pollfd){ .fd = p.ctl, .events = POLLIN };
		if (flush(&p) < 0) {
			plugin_disconnect(&p);
			retry = wall_clock() + 1;
			continue;
		}
		if (ppoll(fds, 2, &tick, &none) <= 0)
			continue;
		if (fds[1].revents & POLLIN)
			r = control(&p);
		if (r == 0 && p.fd >= 0 && fds[0].revents) {
			ssize_t n = read(p.fd, buf, sizeof(buf));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0 || mux_in_feed(&p.in, buf, (size_t)n, on_message, &p) < 0 || p.broken) {
				log_info("%s: the runtime closed the connection", p.socket);
				plugin_disconnect(&p);
				retry = wall_clock() + 1;
			} else {
				bbuf_shrink(&p.in.trunk);
				bbuf_shrink(&p.in.conn[0]);
				bbuf_shrink(&p.in.conn[1]);
			}
		}
	}
	flush(&p);
	if (r == 0 && p.ctl >= 0)
		nrictl_unlink(p.name);
	if (p.ctl >= 0)
		close(p.ctl);
	plugin_disconnect(&p);
	if (refresher > 0)
		waitpid(refresher, NULL, 0);
	free(p.stray);
	if (stop)
		log_info("signal %d: the plugin stops", (int)stop);
	return r;
}
