/* nrictl.c: see nrictl.h. */
#include "engines/nrictl.h"

#include "devices/keycache.h"
#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define HANDOFF_MAGIC 0x6f6e7269u  /* "onri" */
#define REFUSED_MAGIC 0x6f6e726eu  /* "onrn": no handoff, the reason in runtime[] */

struct handoff_hdr {
	uint32_t magic;
	uint32_t len[3];  /* the trunk's unused bytes, then each connection's */
	char runtime[128];
};

static int ctl_addr(const char *name, struct sockaddr_un *sa)
{
	*sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
	return snprintf(sa->sun_path, sizeof(sa->sun_path), KEYCACHE_DIR "/nri-%s.sock", name) <
			       (int)sizeof(sa->sun_path)
		       ? 0
		       : -1;
}

int nrictl_listen(const char *name)
{
	struct sockaddr_un sa;
	int dfd = run_dirfd(true), fd;

	if (dfd < 0 || ctl_addr(name, &sa) < 0) {
		log_warn(KEYCACHE_DIR ": not root's alone, or not there: no control socket (no status, no handoff)");
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	close(dfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(sa.sun_path);  /* an older plugin's, gone or handing over */
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sa.sun_path, 0600) < 0 ||
	    listen(fd, 4) < 0) {
		log_warn("%s: %s: no control socket", sa.sun_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

void nrictl_unlink(const char *name)
{
	struct sockaddr_un sa;

	if (ctl_addr(name, &sa) == 0)
		unlink(sa.sun_path);
}

void nrictl_ident(struct nri_ident *id, const char *socket, const char *dir, const char *hook)
{
	memset(id, 0, sizeof(*id));
	snprintf(id->socket, sizeof(id->socket), "%s", socket);
	snprintf(id->dir, sizeof(id->dir), "%s", dir);
	snprintf(id->hook, sizeof(id->hook), "%s", hook);
}

/* FD's peer, when of our own user (its pid as our namespace sees it, 0 for
 * another's, to *PID) */
static bool peer_ours(int fd, int *pid)
{
	struct ucred cr;
	socklen_t n = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) < 0 || cr.uid != geteuid())
		return false;
	if (pid)
		*pid = cr.pid;
	return true;
}

/* Reads and writes on FD give up after NRICTL_WAIT_MS */
static void patient(int fd)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = NRICTL_WAIT_MS * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int nrictl_accept(int lfd)
{
	int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (c >= 0 && !peer_ours(c, NULL)) {
		close(c);
		return -1;
	}
	if (c >= 0)
		patient(c);
	return c;
}

int nrictl_ask(const char *name, char what, const struct nri_ident *id, int *pid)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd;

	if (ctl_addr(name, &sa) < 0 || lstat(sa.sun_path, &st) < 0)
		return -1;   /* (ENOENT: none runs) */
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
		errno = EPERM;
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		patient(fd);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || !peer_ours(fd, pid) ||
	    write_all(fd, &what, 1) < 0 || (id && write_all(fd, id, sizeof(*id)) < 0)) {
		int e = errno;   /* (ECONNREFUSED: none runs; a stale path) */

		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* N bytes from C into BUF, within the socket's timeout: 0, or -1 */
static int read_exact(int c, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(c, (char *)buf + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return 0;
}

int nrictl_read_ident(int c, struct nri_ident *id)
{
	if (read_exact(c, id, sizeof(*id)) < 0)
		return -1;
	id->socket[sizeof(id->socket) - 1] = id->dir[sizeof(id->dir) - 1] = id->hook[sizeof(id->hook) - 1] = '\0';
	return 0;
}

void nrictl_refuse(int c, const char *reason)
{
	struct handoff_hdr h = { .magic = REFUSED_MAGIC };

	snprintf(h.runtime, sizeof(h.runtime), "%s", reason);
	(void)!write(c, &h, sizeof(h));
}

static const struct bbuf *part(const struct mux_in *in, int i)
{
	return i == 0 ? &in->trunk : &in->conn[i - 1];
}

int nrictl_give(int c, int nrifd, const struct mux_in *in, const char *runtime)
{
	struct handoff_hdr h = { .magic = HANDOFF_MAGIC };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	for (int i = 0; i < 3; i++)
		h.len[i] = (uint32_t)(part(in, i)->len - part(in, i)->off);
	snprintf(h.runtime, sizeof(h.runtime), "%s", runtime);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &nrifd, sizeof(int));
	if (sendmsg(c, &m, MSG_NOSIGNAL) != (ssize_t)sizeof(h))
		return -1;
	for (int i = 0; i < 3; i++)
		if (h.len[i] && write_all(c, part(in, i)->p + part(in, i)->off, h.len[i]) < 0)
			return -1;
	return 0;
}

int nrictl_take(int c, struct nri_handoff *h)
{
	struct handoff_hdr hd;
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &hd, .iov_len = sizeof(hd) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n;

	struct timeval tv = { .tv_sec = 5 };   /* the plugin answers between two requests */

	memset(h, 0, sizeof(*h));
	h->fd = -1;
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	do
		n = recvmsg(c, &m, MSG_WAITALL | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(hd) && hd.magic == REFUSED_MAGIC) {
		hd.runtime[sizeof(hd.runtime) - 1] = '\0';
		memcpy(h->runtime, hd.runtime, sizeof(h->runtime));
		return -2;
	}
	cm = n == (ssize_t)sizeof(hd) ? CMSG_FIRSTHDR(&m) : NULL;
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&h->fd, CMSG_DATA(cm), sizeof(int));
	if (hd.magic != HANDOFF_MAGIC || hd.len[0] > MUX_HDR + MUX_MAX || hd.len[1] > TTRPC_HDR + TTRPC_MAX ||
	    hd.len[2] > TTRPC_HDR + TTRPC_MAX)
		goto bad;
	for (int i = 0; i < 3; i++) {
		struct bbuf *b = i == 0 ? &h->in.trunk : &h->in.conn[i - 1];
		uint8_t *tmp = hd.len[i] ? xmalloc(hd.len[i]) : NULL;

		if (hd.len[i] && read_exact(c, tmp, hd.len[i]) < 0) {
			free(tmp);
			goto bad;
		}
		bbuf_add(b, tmp, hd.len[i]);
		free(tmp);
	}
	hd.runtime[sizeof(hd.runtime) - 1] = '\0';
	memcpy(h->runtime, hd.runtime, sizeof(h->runtime));
	return 0;
bad:
	close(h->fd);
	h->fd = -1;
	mux_in_free(&h->in);
	return -1;
}
