/* ttrpc.h: the bytes between an NRI plugin and its runtime (containerd,
 * CRI-O), without the messages (those are protobuf-c's: api.proto,
 * ttrpc.proto).
 *
 * One unix socket (the trunk) carries NRI's multiplexer: frames of
 * [conn id: u32 BE][length: u32 BE][payload], id 1 the plugin's service
 * (the runtime calls the plugin), id 2 the runtime's (the plugin calls the
 * runtime); each id is a byte stream of its own. Each stream carries ttrpc
 * messages: [length: u32 BE][stream id: u32 BE][type: u8][flags: u8][payload],
 * a request (1) answered by a response (2) with the same stream id.
 *
 * Everything here is pure: bytes in, frames out, for the plugin's loop
 * (engines/nriplugin.c) and the fuzz targets alike. */
#ifndef OCIDEC_TTRPC_H
#define OCIDEC_TTRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MUX_HDR 8
#define TTRPC_HDR 10
#define TTRPC_MAX (4u << 20)   /* ttrpc's largest message */
/* The largest frame taken: a whole ttrpc message (NRI's Go side writes no
 * larger; its own reader allows 16 MiB, which nothing needs) */
#define MUX_MAX (TTRPC_HDR + TTRPC_MAX)
/* The most we put in one frame: NRI's Go reader hands a frame whole to
 * ttrpc's 4096-byte bufio.Reader, and a larger one fails there (ENOMEM) */
#define MUX_CHUNK 4096u
#define MUX_PLUGIN 1u          /* the plugin's service: the runtime calls us */
#define MUX_RUNTIME 2u         /* the runtime's service: we call it */

enum { TTRPC_REQUEST = 1, TTRPC_RESPONSE = 2, TTRPC_DATA = 3 };

/* A byte buffer: LEN bytes at P, OFF of them consumed. */
struct bbuf {
	uint8_t *p;
	size_t off, len, cap;
};
void bbuf_add(struct bbuf *b, const void *data, size_t n);
/* N bytes of B's head consumed (the rest moved down once half is spent) */
void bbuf_drop(struct bbuf *b, size_t n);
void bbuf_free(struct bbuf *b);
/* B's memory given back when B is empty and holds more than 1 MiB (after
 * a large message) */
void bbuf_shrink(struct bbuf *b);

struct mux_frame {
	uint32_t id;
	const uint8_t *data;
	size_t len;
};
/* The whole frame at IN's head: 1 (F; consume MUX_HDR + F->len), 0 (more
 * bytes needed), -1 (a length over MUX_MAX: the trunk is broken). */
int mux_next(const struct bbuf *in, struct mux_frame *f);
/* DATA (N bytes) for connection ID, as frames of MUX_CHUNK at most, to OUT */
void mux_put(struct bbuf *out, uint32_t id, const void *data, size_t n);

struct ttrpc_msg {
	uint32_t stream;
	uint8_t type, flags;
	const uint8_t *data;
	size_t len;
};
/* The whole message at IN's head: 1 (M; consume TTRPC_HDR + M->len), 0, -1
 * (over TTRPC_MAX). */
int ttrpc_next(const struct bbuf *in, struct ttrpc_msg *m);
/* A message's header and DATA to OUT */
void ttrpc_put(struct bbuf *out, uint32_t stream, uint8_t type, const void *data, size_t n);

/* A trunk's inbound side: bytes as they come -> NRI's two connections ->
 * ttrpc messages, each handed to FN (CONN: MUX_PLUGIN or MUX_RUNTIME; a
 * frame for another id is dropped, as NRI's own mux drops it). */
struct mux_in {
	struct bbuf trunk;
	struct bbuf conn[2];  /* MUX_PLUGIN, MUX_RUNTIME */
};
/* DATA (N bytes) taken in: 0, or -1 when the trunk or a connection is
 * broken (an oversized frame or message; FN's -1). FN's messages point
 * into the buffers: valid until the next call. */
int mux_in_feed(struct mux_in *in, const void *data, size_t n,
		int (*fn)(uint32_t conn, const struct ttrpc_msg *m, void *arg), void *arg);
void mux_in_free(struct mux_in *in);

#endif
