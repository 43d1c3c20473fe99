/* ttrpc.c: see ttrpc.h. */
#include "formats/ttrpc.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

void bbuf_add(struct bbuf *b, const void *data, size_t n)
{
	if (!n)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

void bbuf_drop(struct bbuf *b, size_t n)
{
	b->off += n;
	if (b->off == b->len) {
		b->off = b->len = 0;
	} else if (b->off > b->cap / 2) {
		memmove(b->p, b->p + b->off, b->len - b->off);
		b->len -= b->off;
		b->off = 0;
	}
}

void bbuf_free(struct bbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void bbuf_shrink(struct bbuf *b)
{
	if (b->off == b->len && b->cap > (1u << 20))
		bbuf_free(b);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int mux_next(const struct bbuf *in, struct mux_frame *f)
{
	size_t have = in->len - in->off;
	const uint8_t *p;
	uint32_t len;

	if (have < MUX_HDR)
		return 0;
	p = in->p + in->off;
	len = be32(p + 4);
	if (len > MUX_MAX)
		return -1;
	if (have - MUX_HDR < len)
		return 0;
	*f = (struct mux_frame){ .id = be32(p), .data = p + MUX_HDR, .len = len };
	return 1;
}

void mux_put(struct bbuf *out, uint32_t id, const void *data, size_t n)
{
	const uint8_t *d = data;

	do {
		size_t k = n < MUX_CHUNK ? n : MUX_CHUNK;
		uint8_t hdr[MUX_HDR];

		put_be32(hdr, id);
		put_be32(hdr + 4, (uint32_t)k);
		bbuf_add(out, hdr, sizeof(hdr));
		bbuf_add(out, d, k);
		d += k;
		n -= k;
	} while (n);
}

int ttrpc_next(const struct bbuf *in, struct ttrpc_msg *m)
{
	size_t have = in->len - in->off;
	const uint8_t *p;
	uint32_t len;

	if (have < TTRPC_HDR)
		return 0;
	p = in->p + in->off;
	len = be32(p);
	if (len > TTRPC_MAX)
		return -1;
	if (have - TTRPC_HDR < len)
		return 0;
	*m = (struct ttrpc_msg){ .stream = be32(p + 4), .type = p[8], .flags = p[9], .data = p + TTRPC_HDR, .len = len };
	return 1;
}

void ttrpc_put(struct bbuf *out, uint32_t stream, uint8_t type, const void *data, size_t n)
{
	uint8_t hdr[TTRPC_HDR];

	put_be32(hdr, (uint32_t)n);
	put_be32(hdr + 4, stream);
	hdr[8] = type;
	hdr[9] = 0;
	bbuf_add(out, hdr, sizeof(hdr));
	bbuf_add(out, data, n);
}

int mux_in_feed(struct mux_in *in, const void *data, size_t n,
		int (*fn)(uint32_t conn, const struct ttrpc_msg *m, void *arg), void *arg)
{
	struct mux_frame f;
	int r;

	bbuf_add(&in->trunk, data, n);
	while ((r = mux_next(&in->trunk, &f)) > 0) {
		struct bbuf *c = f.id == MUX_PLUGIN || f.id == MUX_RUNTIME ? &in->conn[f.id - 1] : NULL;
		struct ttrpc_msg m;
		int k;

		if (c)
			bbuf_add(c, f.data, f.len);
		bbuf_drop(&in->trunk, MUX_HDR + f.len);
		if (!c)
			continue;
		while ((k = ttrpc_next(c, &m)) > 0) {
			if (fn(f.id, &m, arg) < 0)
				return -1;
			bbuf_drop(c, TTRPC_HDR + m.len);
		}
		if (k < 0)
			return -1;
	}
	return r;
}

void mux_in_free(struct mux_in *in)
{
	bbuf_free(&in->trunk);
	bbuf_free(&in->conn[0]);
	bbuf_free(&in->conn[1]);
}
