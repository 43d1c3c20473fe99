/* libFuzzer target: what a kubelet (or anything that dials the plugin's
 * sockets) sends, through formats/grpc.c: nghttp2's server session, the
 * streams' bodies, gRPC's prefix, the dispatch and protobuf-c's unpacking
 * of the DRA service's requests. The first byte picks the HTTP/2 client
 * preface put in front (so that most inputs reach the frames) and the
 * chunk size the rest comes in; every answer goes through nghttp2's
 * encoder into a sink that is dropped. */
#include "formats/grpc.h"
#include "formats/ttrpc.h"
#include "base/log.h"

#include "dra.pb-c.h"

#include <nghttp2/nghttp2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest Req;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse Resp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry Entry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse One;

/* every claim answered with its name as the error (the answer's size
 * follows the request's) */
static void prepare(const ProtobufCMessage *m, struct grpc_reply *r, void *arg)
{
	const Req *q = (const void *)m;
	Resp resp = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__INIT;
	Entry *e = calloc(q->n_claims + 1, sizeof(*e));
	Entry **ep = calloc(q->n_claims + 1, sizeof(*ep));
	One *o = calloc(q->n_claims + 1, sizeof(*o));

	(void)arg;
	if (q->n_claims > 3)
		grpc_reply_error(r, GRPC_INVALID_ARGUMENT, "%zu claims: \x01%%\n", q->n_claims);
	for (size_t i = 0; i < q->n_claims; i++) {
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__claims_entry__init(&e[i]);
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resource_response__init(&o[i]);
		e[i].key = q->claims[i]->uid;
		o[i].error = q->claims[i]->name;
		e[i].value = &o[i];
		ep[i] = &e[i];
	}
	resp.n_claims = q->n_claims;
	resp.claims = ep;
	if (q->n_claims <= 3)
		grpc_reply_pack(r, &resp.base);
	free(o);
	free(ep);
	free(e);
}

static const struct grpc_method methods[] = {
	{ "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
	  &k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__descriptor, prepare, NULL },
};
/* small bounds, that the fuzzer reaches them */
static const struct grpc_server srv = { .methods = methods, .n = 1, .max_msg = 4096, .max_conn = 16384,
					.name = "fuzz" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct grpc_conn *c;
	struct bbuf sink = { 0 };
	size_t chunk;

	if (size < 1)
		return 0;
	log_threshold = -1;
	c = grpc_conn_new(&srv, -1);
	grpc_conn_sink(c, (data[0] & 0x80) ? &sink : NULL);
	chunk = (data[0] & 0x3f) ? (size_t)(data[0] & 0x3f) * 7 : size;
	if (!(data[0] & 0x40) && grpc_conn_feed(c, (const uint8_t *)NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN) < 0)
		abort();   /* the preface itself is always taken */
	for (size_t off = 1; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;

		if (grpc_conn_feed(c, data + off, n) < 0)
			break;
	}
	grpc_conn_free(c);
	bbuf_free(&sink);
	return 0;
}
