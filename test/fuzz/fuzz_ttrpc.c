/* libFuzzer target: the plugin's outbound side (formats/ttrpc.c). The input
 * is a message body and a connection and stream; ttrpc_put then mux_put
 * must give frames of MUX_CHUNK bytes at most, which mux_next and
 * ttrpc_next (fed through mux_in_feed) read back to the same message. */
#include "formats/ttrpc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct want {
	uint32_t conn, stream;
	const uint8_t *data;
	size_t len, n;
};

static int got(uint32_t conn, const struct ttrpc_msg *m, void *arg)
{
	struct want *w = arg;

	if (conn != w->conn || m->stream != w->stream || m->type != TTRPC_RESPONSE || m->len != w->len ||
	    (m->len && memcmp(m->data, w->data, m->len) != 0))
		abort();
	w->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bbuf msg = { 0 }, out = { 0 };
	struct mux_in in = { 0 };
	struct mux_frame f;
	struct want w;
	size_t frames = 0;

	if (size < 5)
		return 0;
	w = (struct want){ .conn = (data[0] & 1) + 1, .stream = (uint32_t)data[1] << 24 | (uint32_t)data[2] << 16 |
			   (uint32_t)data[3] << 8 | data[4], .data = data + 5, .len = size - 5 };
	/* bodies larger than one chunk: the input repeated */
	for (int i = 0; i <= data[0] >> 5; i++)
		bbuf_add(&msg, data + 5, size - 5);
	w.data = msg.p;
	w.len = msg.len;
	{
		struct bbuf t = { 0 };
		ttrpc_put(&t, w.stream, TTRPC_RESPONSE, msg.p, msg.len);
		mux_put(&out, w.conn, t.p, t.len);
		bbuf_free(&t);
	}
	{
		struct bbuf walk = out;
		while (mux_next(&walk, &f) > 0) {
			if (f.len > MUX_CHUNK || f.id != w.conn)
				abort();
			walk.off += MUX_HDR + f.len;
			frames++;
		}
		if (walk.off != walk.len || frames != (TTRPC_HDR + msg.len + MUX_CHUNK - 1) / MUX_CHUNK)
			abort();
	}
	w.n = 0;
	if (mux_in_feed(&in, out.p, out.len, got, &w) != 0 || w.n != 1)
		abort();
	mux_in_free(&in);
	bbuf_free(&out);
	bbuf_free(&msg);
	return 0;
}
