/* grpc.h: a unary gRPC server on one connection: HTTP/2 with prior
 * knowledge (h2c, as the kubelet dials a plugin's unix socket) from
 * nghttp2, the messages from protobuf-c; ours only gRPC's 5-byte message
 * prefix and the dispatch by :path to a table of methods.
 *
 * A call: HEADERS (:method POST, :path /PACKAGE.SERVICE/METHOD,
 * content-type application/grpc...), DATA carrying one message
 * [compressed: u8, 0][length: u32 BE][protobuf], END_STREAM. The answer:
 * HEADERS (:status 200, content-type application/grpc), DATA (one message
 * the same way), trailers (grpc-status 0); or, refused, one HEADERS with
 * grpc-status and grpc-message (gRPC's "trailers-only").
 *
 * Bounded: a message of max_msg bytes at most (more: RESOURCE_EXHAUSTED,
 * at once), GRPC_STREAMS streams at a time (the SETTINGS the connection
 * starts with; nghttp2 refuses more), max_conn bytes buffered in all of a
 * connection's streams together, header lists of GRPC_HEADERS_MAX bytes.
 * A peer that does not speak HTTP/2 (its first bytes not the client
 * preface) or breaks it: the connection ends (a line, log.h); the server
 * goes on with the others. */
#ifndef OCIDEC_GRPC_H
#define OCIDEC_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ProtobufCMessage;
struct ProtobufCMessageDescriptor;

/* gRPC's status codes (those used here) */
enum {
	GRPC_OK = 0,
	GRPC_UNKNOWN = 2,
	GRPC_INVALID_ARGUMENT = 3,
	GRPC_RESOURCE_EXHAUSTED = 8,
	GRPC_UNIMPLEMENTED = 12,
	GRPC_INTERNAL = 13,
};

#define GRPC_PREFIX 5
#define GRPC_MSG_MAX (1u << 20)       /* the default max_msg: 1 MiB */
#define GRPC_CONN_MAX (4u << 20)      /* the default max_conn */
#define GRPC_STREAMS 16               /* concurrent streams a connection may open */
#define GRPC_HEADERS_MAX 16384        /* a header list's bytes */
#define GRPC_PATH_MAX 128

/* A handler's answer: BODY (LEN bytes, malloc'd, the packed response) with
 * status GRPC_OK, or another STATUS and its MESSAGE. */
struct grpc_reply {
	int status;
	char message[256];
	uint8_t *body;
	size_t len;
};
/* MSG packed into R's body (status GRPC_OK) */
void grpc_reply_pack(struct grpc_reply *r, const struct ProtobufCMessage *msg);
/* R refused: STATUS and its message; returns 0 (a handler's return) */
int grpc_reply_error(struct grpc_reply *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

struct grpc_method {
	const char *path;   /* "/PACKAGE.SERVICE/METHOD" */
	const struct ProtobufCMessageDescriptor *in;
	/* REQ (unpacked, freed after) answered into R; ARG the method's own */
	void (*fn)(const struct ProtobufCMessage *req, struct grpc_reply *r, void *arg);
	void *arg;
};

struct grpc_server {
	const struct grpc_method *methods;
	size_t n;
	size_t max_msg, max_conn;   /* 0: GRPC_MSG_MAX, GRPC_CONN_MAX */
	const char *name;           /* for the log: "the registration socket" */
};

/* ---- pure parts (unit tests, fuzz) ---- */

/* The one message of a unary call's body (N bytes at P): GRPC_OK with
 * *MSG, *LEN; else the status to answer and *WHY (a static phrase): a
 * compressed message (UNIMPLEMENTED), a length over MAX
 * (RESOURCE_EXHAUSTED), a body cut short, none, or more than one
 * (INVALID_ARGUMENT). */
int grpc_unary_parse(const uint8_t *p, size_t n, size_t max, const uint8_t **msg, size_t *len, const char **why);
/* The prefix of a LEN-byte message into OUT */
void grpc_prefix_put(uint8_t out[GRPC_PREFIX], size_t len);
/* S percent-encoded as grpc-message wants it (every byte outside
 * 0x20..0x7e, and '%', as %XX) into OUT (N bytes, NUL-terminated, cut at
 * a whole escape); returns the length written */
size_t grpc_percent_encode(const char *s, char *out, size_t n);

/* ---- a connection ---- */
struct grpc_conn;
/* A connection on FD (nonblocking; owned, closed by grpc_conn_free), or
 * FD -1: bytes in through grpc_conn_feed, the answers appended to SINK
 * when not NULL (the fuzz target, the tests). The server's SETTINGS are
 * queued. */
struct grpc_conn *grpc_conn_new(const struct grpc_server *srv, int fd);
/* The poll events the connection waits for (POLLIN, POLLOUT), 0 when it
 * is done (the peer left, or it broke the protocol): free it then. */
short grpc_conn_events(struct grpc_conn *c);
/* REVENTS from poll handled: reads, runs the calls that completed, writes
 * what it can. -1: the connection is done. */
int grpc_conn_io(struct grpc_conn *c, short revents);
/* N bytes from the peer taken in (FD -1): -1 when the connection is done */
int grpc_conn_feed(struct grpc_conn *c, const uint8_t *p, size_t n);
/* What the server wrote, for FD -1 (NULL to discard): appended to *SINK */
struct bbuf;
void grpc_conn_sink(struct grpc_conn *c, struct bbuf *sink);
void grpc_conn_free(struct grpc_conn *c);

#endif
