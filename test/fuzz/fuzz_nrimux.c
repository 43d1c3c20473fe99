/* libFuzzer target: the NRI plugin's inbound side (formats/ttrpc.c's
 * mux_in_feed, then what engines/nriplugin.c does with a message short of the
 * decision: ttrpc's Request, NRI's CreateContainerRequest, the container as
 * config.json's view, nri_edited). The first byte picks the chunk size the
 * trunk's bytes come in; the same bytes fed whole must give the same
 * messages (count, connections, streams, lengths, bytes) and the same
 * verdict. */
#include "engines/nri.h"
#include "formats/ttrpc.h"
#include "ttrpc.pb-c.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	size_t n;
	uint64_t sum;
};

static void look(const struct ttrpc_msg *m)
{
	Ttrpc__Request *rq = ttrpc__request__unpack(NULL, m->len, m->data);
	Nri__Pkg__Api__V1alpha1__CreateContainerRequest *cc;
	struct oci_config oc;

	if (!rq)
		return;
	if (strcmp(rq->method, "CreateContainer") == 0 &&
	    (cc = nri__pkg__api__v1alpha1__create_container_request__unpack(NULL, rq->payload.len, rq->payload.data))) {
		if (cc->container) {
			nri_container_config(cc->container, &oc);
			if (oc.ann.n % 2 || oc.env.n != cc->container->n_env)
				abort();
			(void)nri_edited(cc->container);
			oci_config_free(&oc);
		}
		nri__pkg__api__v1alpha1__create_container_request__free_unpacked(cc, NULL);
	}
	ttrpc__request__free_unpacked(rq, NULL);
}

static int got(uint32_t conn, const struct ttrpc_msg *m, void *arg)
{
	struct seen *s = arg;

	if (conn != MUX_PLUGIN && conn != MUX_RUNTIME)
		abort();
	s->n++;
	s->sum = s->sum * 31 + conn * 7 + m->stream * 3 + m->type + m->len;
	for (size_t i = 0; i < m->len; i++)
		s->sum = s->sum * 131 + m->data[i];
	if (m->type == TTRPC_REQUEST)
		look(m);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mux_in a = { 0 }, b = { 0 };
	struct seen sa = { 0 }, sb = { 0 };
	size_t chunk, off = 0;
	int ra = 0, rb;

	if (size < 1)
		return 0;
	chunk = (size_t)data[0] + 1;
	data++, size--;
	while (off < size && ra == 0) {
		size_t k = size - off < chunk ? size - off : chunk;
		ra = mux_in_feed(&a, data + off, k, got, &sa);
		off += k;
	}
	rb = mux_in_feed(&b, data, size, got, &sb);
	if (ra != rb || sa.n != sb.n || sa.sum != sb.sum)
		abort();
	mux_in_free(&a);
	mux_in_free(&b);
	return 0;
}
