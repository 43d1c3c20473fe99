/* sdbus.c: see sdbus.h. The D-Bus wire format: a 16-byte fixed header
 * (endianness, type, flags, version, body length, serial), an array of
 * (code, variant) header fields, padding to 8, the body; every value
 * aligned to its size from the start of the message. Written little-endian;
 * read in either byte order. */
#include "pipeline/sdbus.h"

#include "base/log.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define MSG_MAX (1u << 20)   /* the most a reply of systemd's may take */
#define SYSTEMD "org.freedesktop.systemd1"

char *sdbus_unit(const char *cgroups_path)
{
	const char *c1 = cgroups_path ? strchr(cgroups_path, ':') : NULL;
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	const char *name = c2 ? c2 + 1 : NULL;
	size_t n;

	/* a path (cgroupfs) starts with '/' or has no colon; the three
	 * fields hold no '/' */
	if (!name || !*name || strchr(name, ':') || strchr(cgroups_path, '/'))
		return NULL;
	n = strlen(name);
	if (n >= 6 && strcmp(name + n - 6, ".slice") == 0)
		return NULL;
	if (c2 == c1 + 1)
		return xconcat(name, ".scope");
	return xasprintf("%.*s-%s.scope", (int)(c2 - c1 - 1), c1 + 1, name);
}

char *sdbus_unit_path(const char *unit)
{
	static const char prefix[] = "/org/freedesktop/systemd1/unit/";
	char *p = xmalloc(sizeof(prefix) + 3 * strlen(unit) + 1), *q = p + sizeof(prefix) - 1;

	memcpy(p, prefix, sizeof(prefix));
	if (!*unit)
		*q++ = '_';
	for (const unsigned char *u = (const unsigned char *)unit; *u; u++) {
		if ((*u >= 'a' && *u <= 'z') || (*u >= 'A' && *u <= 'Z') || (*u >= '0' && *u <= '9'))
			*q++ = (char)*u;
		else
			q += sprintf(q, "_%02x", *u);
	}
	*q = '\0';
	return p;
}

/* Writing a message */

struct wbuf {
	uint8_t *b;
	size_t cap, len;
	bool full;
};

static void put(struct wbuf *w, const void *p, size_t n)
{
	if (w->full || n > w->cap - w->len) {
		w->full = true;
		return;
	}
	memcpy(w->b + w->len, p, n);
	w->len += n;
}

static void pad(struct wbuf *w, size_t align)
{
	static const uint8_t zero;

	while (!w->full && w->len % align)
		put(w, &zero, 1);
}

static void put_u8(struct wbuf *w, uint8_t v)
{
	put(w, &v, 1);
}

static void set_u32(struct wbuf *w, size_t at, uint32_t v)
{
	if (w->full || at + 4 > w->len)
		return;
	for (int i = 0; i < 4; i++)
		w->b[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

/* A uint32 (aligned); its offset, for lengths written afterwards. */
static size_t put_u32(struct wbuf *w, uint32_t v)
{
	size_t at;

	pad(w, 4);
	at = w->len;
	put(w, "\0\0\0\0", 4);
	set_u32(w, at, v);
	return at;
}

static void put_str(struct wbuf *w, const char *s)
{
	size_t n = strlen(s);

	put_u32(w, (uint32_t)n);
	put(w, s, n + 1);
}

static void put_sig(struct wbuf *w, const char *s)
{
	size_t n = strlen(s);

	put_u8(w, (uint8_t)n);
	put(w, s, n + 1);
}

static void put_field(struct wbuf *w, uint8_t code, char type, const char *value)
{
	char t[2] = { type, '\0' };

	pad(w, 8);
	put_u8(w, code);
	put_sig(w, t);
	if (type == 'g')
		put_sig(w, value);
	else
		put_str(w, value);
}

/* The header of a method call to systemd; returns the body length's
 * offset, which end_call fills in. */
static size_t begin_call(struct wbuf *w, uint32_t serial, const char *path, const char *iface, const char *member,
			 const char *signature)
{
	size_t fields;

	put(w, "l\1\0\1", 4);
	put_u32(w, 0);            /* the body's length, by end_call */
	put_u32(w, serial);
	fields = put_u32(w, 0);   /* the fields' length */
	put_field(w, 1, 'o', path);
	put_field(w, 2, 's', iface);
	put_field(w, 3, 's', member);
	put_field(w, 6, 's', SYSTEMD);
	put_field(w, 8, 'g', signature);
	set_u32(w, fields, (uint32_t)(w->len - fields - 4));
	pad(w, 8);
	return w->len;
}

static size_t end_call(struct wbuf *w, size_t body)
{
	set_u32(w, 4, (uint32_t)(w->len - body));
	return w->full ? 0 : w->len;
}

size_t sdbus_get_property(uint8_t *buf, size_t cap, uint32_t serial, const char *unit_path, const char *iface,
			  const char *property)
{
	struct wbuf w = { buf, cap, 0, false };
	size_t body = begin_call(&w, serial, unit_path, "org.freedesktop.DBus.Properties", "Get", "ss");

	put_str(&w, iface);
	put_str(&w, property);
	return end_call(&w, body);
}

size_t sdbus_set_device_allow(uint8_t *buf, size_t cap, uint32_t serial, const char *unit,
			      const struct devcg_rule *rules, size_t n)
{
	struct wbuf w = { buf, cap, 0, false };
	size_t body = begin_call(&w, serial, "/org/freedesktop/systemd1", SYSTEMD ".Manager", "SetUnitProperties",
				 "sba(sv)");
	size_t props, start, list, lstart;

	put_str(&w, unit);
	put_u32(&w, 1);                    /* runtime: gone with the unit */
	props = put_u32(&w, 0);            /* a(sv) */
	pad(&w, 8);
	start = w.len;
	pad(&w, 8);
	put_str(&w, "DeviceAllow");
	put_sig(&w, "a(ss)");
	list = put_u32(&w, 0);
	pad(&w, 8);
	lstart = w.len;
	for (size_t i = 0; i < n; i++) {
		char path[48];

		snprintf(path, sizeof(path), "/dev/%s/%u:%u", rules[i].type == 'b' ? "block" : "char",
			 rules[i].major, rules[i].minor);
		pad(&w, 8);
		put_str(&w, path);
		put_str(&w, "rwm");
	}
	set_u32(&w, list, (uint32_t)(w.len - lstart));
	set_u32(&w, props, (uint32_t)(w.len - start));
	return end_call(&w, body);
}

/* Reading one */

static uint32_t get_u32(const uint8_t *p, bool big)
{
	return big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		   : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static size_t align(size_t pos, size_t a)
{
	return (pos + a - 1) / a * a;
}

/* A string at *POS (aligned first) ending before END: its start and
 * length, *POS past its NUL; false when it does not fit. */
static bool get_str(const uint8_t *b, size_t end, size_t *pos, bool big, size_t *at, size_t *n)
{
	size_t p = align(*pos, 4);

	if (p > end || end - p < 4)
		return false;
	*n = get_u32(b + p, big);
	p += 4;
	if (*n >= end - p || b[p + *n] != '\0')
		return false;
	*at = p;
	*pos = p + *n + 1;
	return true;
}

/* TEXT gets N bytes at P, printable (a message of systemd's, logged) */
static void add_text(char *text, size_t cap, const uint8_t *p, size_t n)
{
	size_t k = strlen(text);

	for (size_t i = 0; i < n && k + 1 < cap; i++)
		text[k++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	text[k] = '\0';
}

long sdbus_parse(const uint8_t *buf, size_t len, int *type, uint32_t *reply_to, char *text, size_t cap)
{
	size_t fields_end, body, total, pos, at, n, err_at = 0, err_n = 0, sig_at = 0, sig_n = 0;
	bool big, have_err = false, have_sig = false;
	uint32_t flen, blen;

	if (len < 16)
		return 0;
	if ((buf[0] != 'l' && buf[0] != 'B') || buf[3] != 1)
		return -1;
	big = buf[0] == 'B';
	blen = get_u32(buf + 4, big);
	flen = get_u32(buf + 12, big);
	if (flen > MSG_MAX || blen > MSG_MAX)
		return -1;
	fields_end = 16 + (size_t)flen;
	body = align(fields_end, 8);
	total = body + blen;
	if (total > MSG_MAX)
		return -1;
	if (len < total)
		return 0;
	*type = buf[1];
	*reply_to = 0;
	if (cap)
		text[0] = '\0';
	for (pos = 16; (pos = align(pos, 8)) < fields_end;) {
		uint8_t code;
		char t;

		if (fields_end - pos < 4)
			return -1;
		code = buf[pos];
		if (buf[pos + 1] != 1 || buf[pos + 3] != '\0')   /* one basic type */
			return -1;
		t = (char)buf[pos + 2];
		pos += 4;
		switch (t) {
		case 'y':
			if (pos >= fields_end)
				return -1;
			pos++;
			break;
		case 'u':
			pos = align(pos, 4);
			if (pos > fields_end || fields_end - pos < 4)
				return -1;
			if (code == 5)
				*reply_to = get_u32(buf + pos, big);
			pos += 4;
			break;
		case 's':
		case 'o':
			if (!get_str(buf, fields_end, &pos, big, &at, &n))
				return -1;
			if (code == 4) {
				have_err = true;
				err_at = at;
				err_n = n;
			}
			break;
		case 'g':
			if (pos >= fields_end)
				return -1;
			n = buf[pos];
			if (n >= fields_end - pos - 1 || buf[pos + 1 + n] != '\0')
				return -1;
			if (code == 8) {
				have_sig = true;
				sig_at = pos + 1;
				sig_n = n;
			}
			pos += n + 2;
			break;
		default:
			return -1;
		}
		if (pos > fields_end)
			return -1;
	}
	if (!cap)
		return (long)total;
	if (have_err) {
		add_text(text, cap, buf + err_at, err_n);
		add_text(text, cap, (const uint8_t *)": ", 2);
	}
	/* the body's string: "s", or a variant holding one */
	pos = body;
	if (have_sig && sig_n == 1 && buf[sig_at] == 's' && get_str(buf, total, &pos, big, &at, &n)) {
		add_text(text, cap, buf + at, n);
	} else if (have_sig && sig_n == 1 && buf[sig_at] == 'v' && total - body >= 3 && buf[body] == 1 &&
		   buf[body + 1] == 's' && buf[body + 2] == '\0') {
		pos = body + 3;
		if (get_str(buf, total, &pos, big, &at, &n))
			add_text(text, cap, buf + at, n);
	}
	return (long)total;
}

/* Talking to systemd */

struct conn {
	int fd;
	uint8_t *in;
	size_t cap, len;
};

/* The reply to SERIAL (signals and other replies skipped): its type, its
 * text in TEXT. */
static int call(struct conn *c, const uint8_t *msg, size_t n, uint32_t serial, char *text, size_t cap,
		struct oerr *err)
{
	if (write_all(c->fd, msg, n) < 0)
		return oerr_set(err, errno, "sending");
	for (;;) {
		int type;
		uint32_t to;
		long m = sdbus_parse(c->in, c->len, &type, &to, text, cap);
		ssize_t r;

		if (m < 0)
			return oerr_set(err, EPROTO, "a reply that is not D-Bus");
		if (m > 0) {
			memmove(c->in, c->in + m, c->len - (size_t)m);
			c->len -= (size_t)m;
			if (to == serial && (type == 2 || type == 3))
				return type;
			continue;
		}
		if (c->len == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 4096;
			if (c->cap > MSG_MAX)
				return oerr_set(err, EPROTO, "a reply too long");
			c->in = xrealloc(c->in, c->cap);
		}
		r = read(c->fd, c->in + c->len, c->cap - c->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return oerr_set(err, r < 0 ? errno : ECONNRESET, "waiting for systemd's reply");
		c->len += (size_t)r;
	}
}

/* SASL EXTERNAL with our uid, as every D-Bus client starts */
static int authenticate(int fd, struct oerr *err)
{
	char uid[16], line[64], reply[256];
	size_t k = 0, n = 0;
	int len = snprintf(uid, sizeof(uid), "%u", (unsigned)geteuid());

	k = (size_t)snprintf(line, sizeof(line), "%cAUTH EXTERNAL ", '\0');
	for (int i = 0; i < len; i++)
		k += (size_t)snprintf(line + k, sizeof(line) - k, "%02x", (unsigned char)uid[i]);
	/* BEGIN at once, as sd-bus's clients send it, before the OK: the
	 * first message then comes in a read of its own. systemd (257) leaves
	 * one that comes with BEGIN's bytes unanswered when it has certain
	 * lengths (228 bytes: a Get on docker.service) */
	k += (size_t)snprintf(line + k, sizeof(line) - k, "\r\nBEGIN\r\n");
	if (write_all(fd, line, k) < 0)
		return oerr_set(err, errno, "authenticating");
	while (n < 2 || reply[n - 2] != '\r' || reply[n - 1] != '\n') {
		ssize_t r;

		if (n == sizeof(reply) - 1)
			return oerr_set(err, EPROTO, "authenticating: a reply too long");
		r = read(fd, reply + n, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return oerr_set(err, r < 0 ? errno : ECONNRESET, "authenticating");
		n++;
	}
	reply[n - 2] = '\0';
	if (strncmp(reply, "OK ", 3) != 0)
		return oerr_set(err, EACCES, "authenticating: systemd said \"%.64s\"", reply);
	return 0;
}

static int allow(struct conn *c, const char *unit, const struct devcg_rule *rules, size_t n, struct oerr *err)
{
	_cleanup_free_ char *path = sdbus_unit_path(unit);
	size_t cap = 1024 + 3 * strlen(unit) + 64 * n, len;
	_cleanup_free_ uint8_t *msg = xmalloc(cap);
	char text[512];
	int type;

	len = sdbus_get_property(msg, cap, 1, path, SYSTEMD ".Scope", "DevicePolicy");
	type = len ? call(c, msg, len, 1, text, sizeof(text), err) : oerr_set(err, E2BIG, "the request");
	if (type < 0)
		return -1;
	if (type == 3)
		return oerr_set(err, 0, "its DevicePolicy: %s", text);
	if (strcmp(text, "strict") != 0 && strcmp(text, "closed") != 0) {
		log_info("systemd: %s: DevicePolicy=%s restricts no device: left alone", unit, text);
		return 0;
	}
	len = sdbus_set_device_allow(msg, cap, 2, unit, rules, n);
	type = len ? call(c, msg, len, 2, text, sizeof(text), err) : oerr_set(err, E2BIG, "the request");
	if (type < 0)
		return -1;
	if (type == 3)
		return oerr_set(err, 0, "adding to its DeviceAllow=: %s", text);
	log_info("systemd: %s: %zu device(s) added to DeviceAllow=", unit, n);
	return 1;
}

/* C connected to systemd at SOCKET_PATH and authenticated; -1: ERR */
static int connect_systemd(struct conn *c, const char *socket_path, struct oerr *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return oerr_set(err, ENAMETOOLONG, "systemd: %s", socket_path);
	strcpy(sa.sun_path, socket_path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return oerr_set(err, errno, "systemd: a socket");
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return oerr_set(err, errno, "%s", socket_path);
	return 0;
}

/* C's socket given 5 s a send and a reply, authenticated */
static int start_systemd(struct conn *c, struct oerr *err)
{
	struct timeval tv = { .tv_sec = 5 };

	(void)setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return authenticate(c->fd, err);
}

int sdbus_allow_devices(const char *socket_path, const char *unit, const struct devcg_rule *rules, size_t n,
			struct oerr *err)
{
	struct conn c = { -1, NULL, 0, 0 };
	int r = -1;

	if (connect_systemd(&c, socket_path, err) == 0 && start_systemd(&c, err) == 0)
		r = allow(&c, unit, rules, n, err);
	if (r < 0)
		oerr_prefix(err, "systemd: the container's unit %s", unit);
	if (c.fd >= 0)
		close(c.fd);
	free(c.in);
	return r;
}

int sdbus_unit_state(int fd, const char *unit, char *state, size_t cap, struct oerr *err)
{
	_cleanup_free_ char *path = sdbus_unit_path(unit);
	struct conn c = { fd, NULL, 0, 0 };
	uint8_t msg[1024];
	size_t len = sdbus_get_property(msg, sizeof(msg), 1, path, SYSTEMD ".Unit", "ActiveState");
	int type = -1;

	if (!len)
		oerr_set(err, E2BIG, "the request");
	else if (start_systemd(&c, err) == 0)
		type = call(&c, msg, len, 1, state, cap, err);
	free(c.in);
	if (type == 3)
		return oerr_set(err, 0, "systemd: %s's state: %s", unit, state);
	if (type < 0)
		return oerr_prefix(err, "systemd: %s's state", unit);
	return 0;
}
