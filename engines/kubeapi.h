/* kubeapi.h: a client of the Kubernetes API server, as a DRA driver needs
 * one (ocidec dra, ocidec-dra(1)): requests over HTTP/2 (nghttp2's client
 * session) on TLS (mbed TLS, the server verified against the CA file with
 * its name checked, ALPN h2 required), the pod's service account token as
 * the bearer, read again whenever its file changes (projected tokens
 * rotate). Each answer at most KUBE_MAX_BODY bytes (more: refused, the
 * connection dropped); each request has a deadline. One connection, opened
 * on the first request and again after one fails.
 *
 * Errors: EXIT_USAGE for what the server or the configuration got wrong
 * (a certificate that does not verify, no h2, an answer too large or no
 * JSON, a refusal: the status and the server's message); EXIT_FAIL for
 * what may pass (the server not reached, a deadline passed). */
#ifndef OCIDEC_KUBEAPI_H
#define OCIDEC_KUBEAPI_H

#include <stddef.h>
#include <stdint.h>

#include "cJSON.h"
#include "base/util.h"

/* The service account's files, as a pod has them */
#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/* The largest answer taken (a ResourceSlice list of a big node is well
 * under it) */
#define KUBE_MAX_BODY (4u << 20)

struct kube_opts {
	const char *server;     /* "https://HOST:PORT" (HOST an IPv4 or [IPv6] address,
				 * or a name /etc/hosts gives: no DNS); NULL:
				 * in-cluster, KUBERNETES_SERVICE_HOST and
				 * KUBERNETES_SERVICE_PORT */
	const char *token_file; /* NULL: KUBE_SA_DIR/token */
	const char *ca_file;    /* NULL: KUBE_SA_DIR/ca.crt */
	unsigned timeout_ms;    /* each request's deadline, connecting included (0: 15 s) */
};

struct kube;

/* A client for O's server into *OUT (nothing connected yet): the CA file
 * read, the server's address checked (a name looked up in /etc/hosts).
 * -1 (ERR, EXIT_USAGE): no server given and none in the environment, a
 * malformed --server, a name /etc/hosts does not give, a CA file that
 * holds no certificate. */
int kube_open(const struct kube_opts *o, struct kube **out, struct oerr *err);
void kube_close(struct kube *k);
#define _cleanup_kube_ __attribute__((cleanup(kube_closep)))
void kube_closep(struct kube **k);

/* METHOD PATH (with its query, escaped by the caller) with BODY (NULL:
 * none; JSON), the token read: *STATUS the HTTP status, *RESP the answer's
 * body (malloc'd, NUL-terminated, *LEN bytes). 0, or -1 (ERR) when no
 * answer came whole (see the top for the codes). */
int kube_request(struct kube *k, const char *method, const char *path, const char *body, int *status, char **resp,
		 size_t *len, struct oerr *err);
/* The same with JSON both ways: BODY (NULL: none) sent, the answer parsed
 * into *OUT (NULL: not wanted). 0 for a 2xx answer; -1 (ERR, EXIT_USAGE)
 * for another ("METHOD PATH: STATUS REASON: the server's message", *CODE
 * the status where CODE is given: 404 and 409 are the caller's to take),
 * or an answer that is no JSON object. */
int kube_json(struct kube *k, const char *method, const char *path, const cJSON *body, cJSON **out, int *code,
	      struct oerr *err);

/* What the server said in a refusal (a Status object's reason and message,
 * TEXT LEN bytes) after "STATUS": "404 NotFound: nodes \"x\" not found";
 * malloc'd, printable ASCII only, at most 200 characters of the message. */
char *kube_status_text(int status, const char *text, size_t len);

/* NAME's addresses in TEXT (an /etc/hosts: an address, then its names, a
 * line each, '#' a comment), its case aside, in the file's order: at most
 * MAX into ADDRS (4 or 16 bytes each, as LENS say); how many */
#define KUBE_HOSTS_MAX 4
size_t kube_hosts_lookup(const char *text, const char *name, unsigned char addrs[][16], size_t lens[], size_t max);

/* For the fuzzer: DATA (LEN bytes) as a server's bytes to a client session
 * that sent one request (GET /), after the TLS layer: what the answer
 * path takes from them. 0: an answer came whole, -1 (ERR) otherwise. */
int kube_fuzz_answer(const uint8_t *data, size_t len, struct oerr *err);

#endif
