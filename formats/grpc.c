/* grpc.c: see grpc.h. HTTP/2 is nghttp2's: here its callbacks collect each
 * stream's path and body, and a complete call is unpacked (protobuf-c),
 * handed to its method and answered. */
#include "formats/grpc.h"

#include "formats/ttrpc.h"
#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <protobuf-c/protobuf-c.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- pure parts ---- */

int grpc_unary_parse(const uint8_t *p, size_t n, size_t max, const uint8_t **msg, size_t *len, const char **why)
{
	uint32_t l;

	if (n < GRPC_PREFIX) {
		*why = n ? "a message prefix cut short" : "no message";
		return GRPC_INVALID_ARGUMENT;
	}
	if (p[0] > 1) {
		*why = "a message prefix whose flag is neither 0 nor 1";
		return GRPC_INVALID_ARGUMENT;
	}
	if (p[0] == 1) {
		*why = "a compressed message (none is taken)";
		return GRPC_UNIMPLEMENTED;
	}
	l = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
	if (l > max) {
		*why = "a message over the size taken";
		return GRPC_RESOURCE_EXHAUSTED;
	}
	if (n - GRPC_PREFIX < l) {
		*why = "a message cut short";
		return GRPC_INVALID_ARGUMENT;
	}
	if (n - GRPC_PREFIX > l) {
		*why = "more than one message in a unary call";
		return GRPC_INVALID_ARGUMENT;
	}
	*msg = p + GRPC_PREFIX;
	*len = l;
	return GRPC_OK;
}

void grpc_prefix_put(uint8_t out[GRPC_PREFIX], size_t len)
{
	out[0] = 0;
	out[1] = (uint8_t)(len >> 24);
	out[2] = (uint8_t)(len >> 16);
	out[3] = (uint8_t)(len >> 8);
	out[4] = (uint8_t)len;
}

size_t grpc_percent_encode(const char *s, char *out, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	if (!n)
		return 0;
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		bool plain = ch >= 0x20 && ch <= 0x7e && ch != '%';

		if (o + (plain ? 1 : 3) >= n)
			break;
		if (plain) {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = '\0';
	return o;
}

void grpc_reply_pack(struct grpc_reply *r, const ProtobufCMessage *msg)
{
	size_t n = protobuf_c_message_get_packed_size(msg);

	free(r->body);
	r->body = xmalloc(n ? n : 1);
	r->len = protobuf_c_message_pack(msg, r->body);
	r->status = GRPC_OK;
}

int grpc_reply_error(struct grpc_reply *r, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->message, sizeof(r->message), fmt, ap);
	va_end(ap);
	r->status = status;
	free(r->body);
	r->body = NULL;
	r->len = 0;
	return 0;
}

/* ---- a connection ---- */

struct gstream {
	struct gstream *next;
	int32_t id;
	char path[GRPC_PATH_MAX];
	bool path_long, grpc_type, post;
	bool answered;     /* a response submitted (what comes after is dropped) */
	size_t hdr_bytes;
	struct bbuf in;    /* the body */
	uint8_t *out;      /* the answer's DATA: prefix and message */
	size_t out_len, out_off;
	int status;        /* the trailers' */
};

struct grpc_conn {
	const struct grpc_server *srv;
	int fd;
	nghttp2_session *s;
	struct gstream *streams;
	size_t held;       /* bytes in all streams' bodies and answers */
	bool blocked;      /* the socket took no more: wait for POLLOUT */
	bool dead;
	struct bbuf *sink;
};

static size_t max_msg(const struct grpc_conn *c)
{
	return c->srv->max_msg ? c->srv->max_msg : GRPC_MSG_MAX;
}

static size_t max_conn(const struct grpc_conn *c)
{
	return c->srv->max_conn ? c->srv->max_conn : GRPC_CONN_MAX;
}

static struct gstream *stream_of(struct grpc_conn *c, int32_t id)
{
	return nghttp2_session_get_stream_user_data(c->s, id);
}

static void stream_drop_body(struct grpc_conn *c, struct gstream *st)
{
	c->held -= st->in.len;
	bbuf_free(&st->in);
}

#define NV(n, v) { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE }

/* A trailers-only answer: STATUS and MESSAGE, our side of the stream
 * ended; what the peer still sends on it is dropped as it comes (no
 * RST_STREAM: a gRPC client that gets one before it read the trailers
 * takes the call for failed, INTERNAL, not for the status sent) */
static void answer_error(struct grpc_conn *c, struct gstream *st, int status, const char *message)
{
	char code[12], enc[768];

	if (st->answered)
		return;
	st->answered = true;
	snprintf(code, sizeof(code), "%d", status);
	grpc_percent_encode(message, enc, sizeof(enc));
	{
		nghttp2_nv nv[] = { NV(":status", "200"), NV("content-type", "application/grpc"),
				    NV("grpc-status", code), NV("grpc-message", enc) };
		nghttp2_submit_response(c->s, st->id, nv, ARRAY_SIZE(nv), NULL);
	}
	stream_drop_body(c, st);
	log_warn("%s: call %s refused: %s", c->srv->name, *st->path ? st->path : "(no path)", message);
}

/* An HTTP answer that is not gRPC's (the request was not a gRPC call) */
static void answer_http(struct grpc_conn *c, struct gstream *st, const char *code)
{
	nghttp2_nv nv[] = { NV(":status", code) };

	st->answered = true;
	nghttp2_submit_response(c->s, st->id, nv, ARRAY_SIZE(nv), NULL);
	stream_drop_body(c, st);
	log_warn("%s: a request that is not a gRPC call (HTTP %s)", c->srv->name, code);
}

static ssize_t read_out(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
			nghttp2_data_source *src, void *user)
{
	struct grpc_conn *c = user;
	struct gstream *st = src->ptr;
	size_t n = st->out_len - st->out_off;

	if (n > length)
		n = length;
	memcpy(buf, st->out + st->out_off, n);
	st->out_off += n;
	if (st->out_off == st->out_len) {
		nghttp2_nv nv[] = { NV("grpc-status", "0") };

		*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		if (nghttp2_submit_trailer(s, id, nv, ARRAY_SIZE(nv)) != 0)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		c->held -= st->out_len;
		free(st->out);
		st->out = NULL;
		st->out_len = st->out_off = 0;
	}
	return (ssize_t)n;
}

static const struct grpc_method *method_of(const struct grpc_server *srv, const char *path)
{
	for (size_t i = 0; i < srv->n; i++)
		if (strcmp(srv->methods[i].path, path) == 0)
			return &srv->methods[i];
	return NULL;
}

/* The call on ST is whole: run it and answer */
static void call(struct grpc_conn *c, struct gstream *st)
{
	const struct grpc_method *m;
	struct grpc_reply r = { 0 };
	ProtobufCMessage *req;
	const uint8_t *msg;
	const char *why;
	size_t len;
	int status;

	if (st->answered)
		return;
	if (!st->post)
		return answer_http(c, st, "405");
	if (!st->grpc_type)
		return answer_http(c, st, "415");
	m = st->path_long ? NULL : method_of(c->srv, st->path);
	if (!m) {
		char line[GRPC_PATH_MAX + 40];

		snprintf(line, sizeof(line), "unknown method %s", st->path_long ? "(a path too long)" : st->path);
		return answer_error(c, st, GRPC_UNIMPLEMENTED, line);
	}
	status = grpc_unary_parse(st->in.p, st->in.len, max_msg(c), &msg, &len, &why);
	if (status != GRPC_OK)
		return answer_error(c, st, status, why);
	req = protobuf_c_message_unpack(m->in, NULL, len, msg);
	if (!req) {
		char line[200];

		snprintf(line, sizeof(line), "a malformed %s message", m->in->short_name ? m->in->short_name : "request");
		return answer_error(c, st, GRPC_INVALID_ARGUMENT, line);
	}
	m->fn(req, &r, m->arg);
	protobuf_c_message_free_unpacked(req, NULL);
	if (r.status != GRPC_OK) {
		answer_error(c, st, r.status, r.message);
		free(r.body);
		return;
	}
	stream_drop_body(c, st);
	st->answered = true;
	st->out = xmalloc(GRPC_PREFIX + r.len);
	grpc_prefix_put(st->out, r.len);
	if (r.len)
		memcpy(st->out + GRPC_PREFIX, r.body, r.len);
	free(r.body);
	st->out_len = GRPC_PREFIX + r.len;
	c->held += st->out_len;
	{
		nghttp2_nv nv[] = { NV(":status", "200"), NV("content-type", "application/grpc") };
		nghttp2_data_provider prd = { .source.ptr = st, .read_callback = read_out };

		nghttp2_submit_response(c->s, st->id, nv, ARRAY_SIZE(nv), &prd);
	}
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct grpc_conn *c = user;
	struct gstream *st;

	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	st = xcalloc(1, sizeof(*st));
	st->id = f->hd.stream_id;
	st->next = c->streams;
	c->streams = st;
	nghttp2_session_set_stream_user_data(s, st->id, st);
	return 0;
}

static bool starts(const uint8_t *v, size_t n, const char *prefix)
{
	size_t l = strlen(prefix);

	return n >= l && memcmp(v, prefix, l) == 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		     const uint8_t *value, size_t vlen, uint8_t flags, void *user)
{
	struct gstream *st = stream_of(user, f->hd.stream_id);

	(void)s;
	(void)flags;
	if (!st || f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;   /* (trailers: nothing in them is read) */
	st->hdr_bytes += nlen + vlen + 32;   /* (HTTP/2's measure of a header list) */
	if (st->hdr_bytes > GRPC_HEADERS_MAX)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;   /* the stream reset */
	if (nlen == 5 && memcmp(name, ":path", 5) == 0) {
		st->path_long = vlen >= sizeof(st->path);
		if (!st->path_long) {
			memcpy(st->path, value, vlen);
			st->path[vlen] = '\0';
			/* (said in the log: no bytes that would not print) */
			for (size_t i = 0; i < vlen; i++)
				if (st->path[i] < 0x20 || st->path[i] > 0x7e)
					st->path[i] = '?';
		}
	} else if (nlen == 7 && memcmp(name, ":method", 7) == 0) {
		st->post = vlen == 4 && memcmp(value, "POST", 4) == 0;
	} else if (nlen == 12 && memcmp(name, "content-type", 12) == 0) {
		/* application/grpc, or application/grpc+proto and the like */
		st->grpc_type = starts(value, vlen, "application/grpc") &&
				(vlen == 16 || value[16] == '+' || value[16] == ';');
	}
	return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *user)
{
	struct grpc_conn *c = user;
	struct gstream *st = stream_of(c, id);

	(void)s;
	(void)flags;
	if (!st || st->answered)
		return 0;
	if (st->in.len + len > GRPC_PREFIX + max_msg(c)) {
		char line[80];

		snprintf(line, sizeof(line), "a message over %zu bytes", max_msg(c));
		answer_error(c, st, GRPC_RESOURCE_EXHAUSTED, line);
		return 0;
	}
	if (c->held + len > max_conn(c)) {
		answer_error(c, st, GRPC_RESOURCE_EXHAUSTED, "the connection's calls hold too many bytes");
		return 0;
	}
	/* a prefix whose length is over the bound: refused before its bytes come */
	if (st->in.len < GRPC_PREFIX && st->in.len + len >= GRPC_PREFIX) {
		uint8_t pre[GRPC_PREFIX];

		if (st->in.len)
			memcpy(pre, st->in.p, st->in.len);
		memcpy(pre + st->in.len, data, GRPC_PREFIX - st->in.len);
		if (((uint32_t)pre[1] << 24 | (uint32_t)pre[2] << 16 | (uint32_t)pre[3] << 8 | pre[4]) > max_msg(c)) {
			char line[80];

			snprintf(line, sizeof(line), "a message over %zu bytes", max_msg(c));
			answer_error(c, st, GRPC_RESOURCE_EXHAUSTED, line);
			return 0;
		}
	}
	bbuf_add(&st->in, data, len);
	c->held += len;
	return 0;
}

static int on_frame(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct grpc_conn *c = user;
	struct gstream *st;

	(void)s;
	if ((f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS) || !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	st = stream_of(c, f->hd.stream_id);
	if (st)
		call(c, st);
	return 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t code, void *user)
{
	struct grpc_conn *c = user;
	struct gstream *st = stream_of(c, id);

	(void)code;
	if (!st)
		return 0;
	nghttp2_session_set_stream_user_data(s, id, NULL);
	for (struct gstream **p = &c->streams; *p; p = &(*p)->next) {
		if (*p == st) {
			*p = st->next;
			break;
		}
	}
	c->held -= st->in.len + st->out_len;
	bbuf_free(&st->in);
	free(st->out);
	free(st);
	return 0;
}

static ssize_t on_send(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *user)
{
	struct grpc_conn *c = user;
	ssize_t n;

	(void)s;
	(void)flags;
	if (c->fd < 0) {
		if (c->sink)
			bbuf_add(c->sink, data, len);
		return (ssize_t)len;
	}
	n = send(c->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		c->blocked = true;
		return NGHTTP2_ERR_WOULDBLOCK;
	}
	if (n < 0 && errno == EINTR)
		return NGHTTP2_ERR_WOULDBLOCK;
	return n < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : n;
}

struct grpc_conn *grpc_conn_new(const struct grpc_server *srv, int fd)
{
	struct grpc_conn *c = xcalloc(1, sizeof(*c));
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;
	nghttp2_settings_entry set[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, GRPC_STREAMS },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, GRPC_HEADERS_MAX },
		{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
	};

	c->srv = srv;
	c->fd = fd;
	if (nghttp2_session_callbacks_new(&cb) != 0 || nghttp2_option_new(&opt) != 0)
		oom();
	nghttp2_session_callbacks_set_send_callback(cb, on_send);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	/* streams refused as they open once GRPC_STREAMS are, before our
	 * SETTINGS are acknowledged too */
	nghttp2_option_set_max_settings(opt, 32);
	if (nghttp2_session_server_new2(&c->s, cb, c, opt) != 0)
		oom();
	nghttp2_session_callbacks_del(cb);
	nghttp2_option_del(opt);
	nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, set, ARRAY_SIZE(set));
	return c;
}

void grpc_conn_sink(struct grpc_conn *c, struct bbuf *sink)
{
	c->sink = sink;
}

static int flush(struct grpc_conn *c)
{
	int rv;

	if (c->dead)
		return -1;
	c->blocked = false;
	rv = nghttp2_session_send(c->s);
	if (rv != 0) {
		log_debug("%s: a connection ends: %s", c->srv->name, nghttp2_strerror(rv));
		c->dead = true;
		return -1;
	}
	return 0;
}

int grpc_conn_feed(struct grpc_conn *c, const uint8_t *p, size_t n)
{
	ssize_t rv;

	if (c->dead)
		return -1;
	rv = nghttp2_session_mem_recv(c->s, p, n);
	if (rv < 0) {
		log_warn("%s: a connection closed: %s", c->srv->name,
			 rv == NGHTTP2_ERR_BAD_CLIENT_MAGIC ? "its peer does not speak HTTP/2 (no client preface)"
							    : nghttp2_strerror((int)rv));
		c->dead = true;
		return -1;
	}
	return flush(c);
}

short grpc_conn_events(struct grpc_conn *c)
{
	bool rd, wr;

	if (c->dead)
		return 0;
	rd = nghttp2_session_want_read(c->s);
	wr = nghttp2_session_want_write(c->s);
	if (!rd && !wr)
		return 0;
	/* nothing read while the peer does not read what we wrote: what it
	 * makes us write stays bounded */
	if (wr && c->blocked)
		return POLLOUT;
	return (short)((rd ? POLLIN : 0) | (wr ? POLLOUT : 0));
}

int grpc_conn_io(struct grpc_conn *c, short revents)
{
	uint8_t buf[16384];

	if (revents & POLLOUT && flush(c) < 0)
		return -1;
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			log_debug("%s: the peer left", c->srv->name);
			c->dead = true;
			return -1;
		}
		if (n > 0 && grpc_conn_feed(c, buf, (size_t)n) < 0)
			return -1;
	}
	return grpc_conn_events(c) ? 0 : -1;
}

void grpc_conn_free(struct grpc_conn *c)
{
	if (!c)
		return;
	nghttp2_session_del(c->s);   /* (calls no stream close callback) */
	while (c->streams) {
		struct gstream *st = c->streams;

		c->streams = st->next;
		bbuf_free(&st->in);
		free(st->out);
		free(st);
	}
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}
