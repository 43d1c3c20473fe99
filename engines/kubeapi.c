/* kubeapi.c: the Kubernetes API server's client, HTTP/2 (nghttp2) over TLS
 * (mbed TLS) (kubeapi.h) */
#include "engines/kubeapi.h"
#include "base/cleanup.h"
#include "formats/json.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/psa_util.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <nghttp2/nghttp2.h>
#include <psa/crypto.h>

#define CA_MAX (1u << 20)
#define HOSTS_MAX (1u << 20)
#define TOKEN_MAX (64u << 10)

struct call;

struct kube {
	char host[256];             /* a name or an IP address (no brackets) */
	char authority[272];        /* HOST:PORT as :authority says it */
	char port[8];
	unsigned char ip[16];       /* HOST as an address (IPLEN 4 or 16; 0: a name) */
	size_t iplen;
	unsigned char addrs[KUBE_HOSTS_MAX][16]; /* what the client connects to, in turn: */
	size_t addrlens[KUBE_HOSTS_MAX], naddrs; /* IP, or the name's from /etc/hosts */
	char *token_file, *ca_file, *token;
	int token_dir;              /* the token file's directory (opened at kube_open: a
				     * chroot after, as serve --host-root's, keeps it) */
	const char *token_name;     /* its name there (in TOKEN_FILE) */
	struct stat token_st;       /* the token file when TOKEN was read */
	unsigned timeout_ms;
	long long deadline;         /* the current request's (ms, CLOCK_MONOTONIC) */
	bool timed_out;
	mbedtls_x509_crt ca;
	mbedtls_ssl_config conf;
	/* the connection (FD -1: none) */
	int fd;
	bool ssl_on;
	mbedtls_ssl_context ssl;
	nghttp2_session *h2;
};

/* One request's answer, as nghttp2's callbacks collect it */
struct call {
	struct kube *k;             /* NULL: the fuzzer's (what is sent goes nowhere) */
	int32_t stream;
	int status;
	char *body;
	size_t len, cap;
	bool done, too_big;
	uint32_t reset;             /* the stream's error code, where it ended with one */
	const char *out;            /* the request's body, OUTLEN bytes, OUTOFF sent */
	size_t outlen, outoff;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until FD is ready for EVENTS or K's deadline passes (K->timed_out) */
static bool wait_fd(struct kube *k, int fd, short events)
{
	for (;;) {
		long long left = k->deadline - now_ms();
		struct pollfd p = { .fd = fd, .events = events };
		int r;

		if (left <= 0) {
			k->timed_out = true;
			return false;
		}
		r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
	}
}

/* mbed TLS's I/O: the socket, waited on up to the deadline */
static int bio_send(void *ctx, const unsigned char *buf, size_t len)
{
	struct kube *k = ctx;

	for (;;) {
		ssize_t n = send(k->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n >= 0)
			return (int)n;
		if (errno == EINTR)
			continue;
		if ((errno != EAGAIN && errno != EWOULDBLOCK) || !wait_fd(k, k->fd, POLLOUT))
			return k->timed_out ? MBEDTLS_ERR_SSL_TIMEOUT : MBEDTLS_ERR_SSL_INTERNAL_ERROR;
	}
}

static int bio_recv(void *ctx, unsigned char *buf, size_t len)
{
	struct kube *k = ctx;

	for (;;) {
		ssize_t n = recv(k->fd, buf, len, MSG_DONTWAIT);

		if (n >= 0)
			return (int)n;  /* (0: the peer closed) */
		if (errno == EINTR)
			continue;
		if ((errno != EAGAIN && errno != EWOULDBLOCK) || !wait_fd(k, k->fd, POLLIN))
			return k->timed_out ? MBEDTLS_ERR_SSL_TIMEOUT : MBEDTLS_ERR_SSL_INTERNAL_ERROR;
	}
}

/* mbed TLS's randomness, all of it (MBEDTLS_PSA_CRYPTO_EXTERNAL_RNG,
 * formats/mbedtls_config.h: the key shares, the ClientHello's random, ECDSA
 * and RSA blinding): the kernel's, from getrandom(2) */
psa_status_t mbedtls_psa_external_get_random(mbedtls_psa_external_random_context_t *ctx, uint8_t *out, size_t size,
					     size_t *len)
{
	(void)ctx;
	for (*len = 0; *len < size;) {
		ssize_t n = getrandom(out + *len, size - *len, 0);

		if (n < 0 && errno != EINTR)
			return PSA_ERROR_INSUFFICIENT_ENTROPY;
		if (n > 0)
			*len += (size_t)n;
	}
	return PSA_SUCCESS;
}

/* The server's certificate at depth 0 must name the address the client
 * connected to in an IP subjectAltName: mbed TLS checks IP SANs only for a
 * hostname it would also send as SNI, which may not hold an address (RFC
 * 6066), so the client sets no hostname for an address and checks here */
static int verify_ip(void *ctx, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	struct kube *k = ctx;
	const mbedtls_x509_sequence *san;

	if (depth != 0 || !k->iplen)
		return 0;
	for (san = &crt->subject_alt_names; san && san->buf.p; san = san->next)
		if ((san->buf.tag & MBEDTLS_ASN1_TAG_VALUE_MASK) == MBEDTLS_X509_SAN_IP_ADDRESS &&
		    san->buf.len == k->iplen && memcmp(san->buf.p, k->ip, k->iplen) == 0)
			return 0;
	*flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
	return 0;
}

/* (kubeapi.h) */
size_t kube_hosts_lookup(const char *text, const char *name, unsigned char addrs[][16], size_t lens[], size_t max)
{
	size_t n = 0, len;
	const char *line, *end, *w;
	char word[256];
	unsigned char ip[16];

	for (line = text; *line && n < max; line = *end ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		size_t iplen = 0;
		/* the words before a '#': the address, then its names */
		for (w = line; w < end && *w != '#' && n < max; w += len) {
			w += strspn(w, " \t\r");
			len = strcspn(w, " \t\r\n#");
			if (!len)
				break;
			if (len >= sizeof(word)) {
				if (!iplen)
					break;
				continue;
			}
			memcpy(word, w, len);
			word[len] = '\0';
			if (!iplen) {
				/* (not an address: the line is skipped, as the C library does) */
				iplen = inet_pton(AF_INET, word, ip) == 1 ? 4 : inet_pton(AF_INET6, word, ip) == 1 ? 16 : 0;
				if (!iplen)
					break;
			} else if (strcasecmp(word, name) == 0) {
				memcpy(addrs[n], ip, iplen);
				lens[n++] = iplen;
				break;
			}
		}
	}
	return n;
}

/* HOST ("[v6]" or a name or v4) and PORT from "https://HOST[:PORT]" or
 * the service's environment */
static int parse_server(struct kube *k, const char *server, struct oerr *err)
{
	const char *h, *end, *port;
	size_t n;

	if (!server) {
		const char *host = getenv("KUBERNETES_SERVICE_HOST"), *p = getenv("KUBERNETES_SERVICE_PORT");

		if (!host || !host[0] || !p || !p[0])
			return oerr_usage(err, "no API server: not in a pod (KUBERNETES_SERVICE_HOST and _PORT unset); "
					  "give --server https://HOST:PORT");
		if (strlen(host) >= sizeof(k->host) || strlen(p) >= sizeof(k->port) ||
		    strspn(p, "0123456789") != strlen(p))
			return oerr_usage(err, "KUBERNETES_SERVICE_HOST/_PORT: not an address and a port");
		strcpy(k->host, host);
		strcpy(k->port, p);
	} else {
		if (strncmp(server, "https://", 8) != 0)
			return oerr_usage(err, "--server %.200s: not https://HOST[:PORT]", server);
		h = server + 8;
		if (*h == '[') {
			end = strchr(h, ']');
			if (!end)
				return oerr_usage(err, "--server %.200s: no ']' after the IPv6 address", server);
			h++;
			port = end + 1;
		} else {
			end = h + strcspn(h, ":/");
			port = end;
		}
		n = (size_t)(end - h);
		if (n == 0 || n >= sizeof(k->host))
			return oerr_usage(err, "--server %.200s: no host", server);
		memcpy(k->host, h, n);
		k->host[n] = '\0';
		if (*port == ':') {
			port++;
			n = strspn(port, "0123456789");
			if (n == 0 || n >= sizeof(k->port) || (port[n] && strcmp(port + n, "/") != 0))
				return oerr_usage(err, "--server %.200s: not https://HOST[:PORT]", server);
			memcpy(k->port, port, n);
			k->port[n] = '\0';
		} else if (*port && strcmp(port, "/") != 0) {
			return oerr_usage(err, "--server %.200s: not https://HOST[:PORT]", server);
		} else {
			strcpy(k->port, "443");
		}
	}
	if (atoi(k->port) < 1 || atoi(k->port) > 65535)
		return oerr_usage(err, "API server port %s: not 1 to 65535", k->port);
	for (const char *c = k->host; *c; c++)
		if (*c <= ' ' || *c >= 0x7f || strchr("/?#@[]", *c))
			return oerr_usage(err, "API server host '%.200s': not a name or an address", k->host);
	if (inet_pton(AF_INET, k->host, k->ip) == 1)
		k->iplen = 4;
	else if (inet_pton(AF_INET6, k->host, k->ip) == 1)
		k->iplen = 16;
	snprintf(k->authority, sizeof(k->authority), k->iplen == 16 ? "[%s]:%s" : "%s:%s", k->host, k->port);
	return 0;
}

/* PATH (NAME in the directory DIR where DIR >= 0: PATH says it) */
static int read_file_at(int dir, const char *name, const char *path, size_t max, char **buf, size_t *len,
			struct stat *st, struct oerr *err)
{
	_cleanup_close_ int fd = dir >= 0 ? openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOCTTY)
					  : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return oerr_usage(err, "%s: %s", path, strerror(errno));
	if (st && fstat(fd, st) < 0)
		return oerr_usage(err, "%s: %s", path, strerror(errno));
	if (read_fd_all(fd, max, buf, len, err) < 0)
		return oerr_prefix(err, "%s", path);
	return 0;
}

static int read_file(const char *path, size_t max, char **buf, size_t *len, struct stat *st, struct oerr *err)
{
	return read_file_at(-1, path, path, max, buf, len, st, err);
}

/* What K connects to: its address, or its name's in /etc/hosts (no DNS:
 * in a pod the API server is an address, and a node's operator gives one) */
static int server_addrs(struct kube *k, struct oerr *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;

	if (k->iplen) {
		memcpy(k->addrs[0], k->ip, k->iplen);
		k->addrlens[0] = k->iplen;
		k->naddrs = 1;
		return 0;
	}
	if (read_file("/etc/hosts", HOSTS_MAX, &text, &len, NULL, err) < 0)
		return -1;
	text = xrealloc(text, len + 1);
	text[len] = '\0';
	k->naddrs = kube_hosts_lookup(text, k->host, k->addrs, k->addrlens, KUBE_HOSTS_MAX);
	if (!k->naddrs)
		return oerr_usage(err, "API server %s: no address for %s in /etc/hosts (names are not looked up in DNS): "
				  "give --server https://ADDRESS:PORT", k->authority, k->host);
	return 0;
}

int kube_open(const struct kube_opts *o, struct kube **out, struct oerr *err)
{
	static const char *alpn[] = { "h2", NULL };
	struct kube *k = xcalloc(1, sizeof(*k));
	_cleanup_free_ char *pem = NULL;
	size_t len;
	int r;

	*out = NULL;
	k->fd = -1;
	k->token_dir = -1;
	k->timeout_ms = o->timeout_ms ? o->timeout_ms : 15000;
	k->token_file = xstrdup(o->token_file ? o->token_file : KUBE_SA_DIR "/token");
	k->ca_file = xstrdup(o->ca_file ? o->ca_file : KUBE_SA_DIR "/ca.crt");
	mbedtls_x509_crt_init(&k->ca);
	mbedtls_ssl_config_init(&k->conf);
	if (parse_server(k, o->server, err) < 0 || server_addrs(k, err) < 0 ||
	    read_file(k->ca_file, CA_MAX, &pem, &len, NULL, err) < 0)
		goto fail;
	pem = xrealloc(pem, len + 1);
	pem[len] = '\0';
	/* (PEM wants its terminating NUL counted; a DER file is taken as it is) */
	r = mbedtls_x509_crt_parse(&k->ca, (const unsigned char *)pem, strstr(pem, "-----BEGIN") ? len + 1 : len);
	if (r < 0 || !k->ca.version) {
		oerr_usage(err, "%s: no CA certificate (mbed TLS -0x%04x)", k->ca_file, (unsigned)-r);
		goto fail;
	}
	{
		_cleanup_free_ char *dir = path_dir(k->token_file);
		const char *slash = strrchr(k->token_file, '/');

		k->token_name = slash ? slash + 1 : k->token_file;
		k->token_dir = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (k->token_dir < 0 || !*k->token_name) {
			oerr_usage(err, "%s: %s", k->token_file, k->token_dir < 0 ? strerror(errno) : "no file name");
			goto fail;
		}
	}
	if (psa_crypto_init() != PSA_SUCCESS ||
	    mbedtls_ssl_config_defaults(&k->conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
					MBEDTLS_SSL_PRESET_DEFAULT) ||
	    mbedtls_ssl_conf_alpn_protocols(&k->conf, alpn)) {
		oerr_set(err, 0, "TLS: the random generator or the configuration cannot be set up");
		goto fail;
	}
	mbedtls_ssl_conf_authmode(&k->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
	mbedtls_ssl_conf_ca_chain(&k->conf, &k->ca, NULL);
	mbedtls_ssl_conf_rng(&k->conf, mbedtls_psa_get_random, MBEDTLS_PSA_RANDOM_STATE);
	mbedtls_ssl_conf_verify(&k->conf, verify_ip, k);
	mbedtls_ssl_conf_min_tls_version(&k->conf, MBEDTLS_SSL_VERSION_TLS1_2);
	*out = k;
	return 0;
fail:
	kube_close(k);
	return -1;
}

static void disconnect(struct kube *k)
{
	if (k->h2)
		nghttp2_session_del(k->h2);
	k->h2 = NULL;
	if (k->ssl_on) {
		if (k->fd >= 0 && !k->timed_out)
			mbedtls_ssl_close_notify(&k->ssl);
		mbedtls_ssl_free(&k->ssl);
	}
	k->ssl_on = false;
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

void kube_close(struct kube *k)
{
	if (!k)
		return;
	disconnect(k);
	mbedtls_ssl_config_free(&k->conf);
	mbedtls_x509_crt_free(&k->ca);
	if (k->token_dir >= 0)
		close(k->token_dir);
	free(k->token_file);
	free(k->ca_file);
	free(k->token);
	free(k);
}

void kube_closep(struct kube **k)
{
	kube_close(*k);
}

/* ---- HTTP/2: nghttp2's callbacks ---- */

static ssize_t h2_send(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *user)
{
	struct call *c = user;
	size_t done = 0;

	(void)s, (void)flags;
	while (c->k && done < len) {
		int n = mbedtls_ssl_write(&c->k->ssl, data + done, len - done);

		if (n == MBEDTLS_ERR_SSL_WANT_WRITE || n == MBEDTLS_ERR_SSL_WANT_READ)
			continue;
		if (n <= 0)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		done += (size_t)n;
	}
	return (ssize_t)len;
}

static int h2_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t namelen,
		     const uint8_t *value, size_t valuelen, uint8_t flags, void *user)
{
	struct call *c = user;

	(void)s, (void)flags;
	if (f->hd.type != NGHTTP2_HEADERS || f->hd.stream_id != c->stream)
		return 0;
	if (namelen == 7 && memcmp(name, ":status", 7) == 0 && valuelen == 3 &&
	    strspn((const char *)value, "0123456789") >= 3)
		c->status = (value[0] - '0') * 100 + (value[1] - '0') * 10 + (value[2] - '0');
	return 0;
}

static int h2_data(nghttp2_session *s, uint8_t flags, int32_t stream, const uint8_t *data, size_t len, void *user)
{
	struct call *c = user;

	(void)s, (void)flags;
	if (stream != c->stream)
		return 0;
	if (len > KUBE_MAX_BODY - c->len) {
		c->too_big = true;
		return NGHTTP2_ERR_CALLBACK_FAILURE;  /* the session ends: the connection is dropped */
	}
	if (c->len + len + 1 > c->cap) {
		c->cap = (c->len + len + 1) * 2 > KUBE_MAX_BODY + 1 ? KUBE_MAX_BODY + 1 : (c->len + len + 1) * 2;
		c->body = xrealloc(c->body, c->cap);
	}
	memcpy(c->body + c->len, data, len);
	c->len += len;
	c->body[c->len] = '\0';
	return 0;
}

static int h2_close(nghttp2_session *s, int32_t stream, uint32_t code, void *user)
{
	struct call *c = user;

	(void)s;
	if (stream == c->stream) {
		c->done = true;
		c->reset = code;
	}
	return 0;
}

static ssize_t h2_body(nghttp2_session *s, int32_t stream, uint8_t *buf, size_t len, uint32_t *flags,
		       nghttp2_data_source *src, void *user)
{
	struct call *c = user;
	size_t n = c->outlen - c->outoff < len ? c->outlen - c->outoff : len;

	(void)s, (void)stream, (void)src;
	memcpy(buf, c->out + c->outoff, n);
	c->outoff += n;
	if (c->outoff == c->outlen)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

/* A client session whose callbacks fill the call given as user data */
static nghttp2_session *h2_session(void)
{
	nghttp2_session_callbacks *cb;
	nghttp2_session *s = NULL;
	nghttp2_settings_entry settings[] = {
		{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20 },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, 64 << 10 },
	};

	if (nghttp2_session_callbacks_new(&cb))
		oom();
	nghttp2_session_callbacks_set_send_callback(cb, h2_send);
	nghttp2_session_callbacks_set_on_header_callback(cb, h2_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, h2_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, h2_close);
	if (nghttp2_session_client_new(&s, cb, NULL))
		oom();
	nghttp2_session_callbacks_del(cb);
	nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, settings, ARRAY_SIZE(settings));
	return s;
}

static void nv_add(nghttp2_nv *nv, size_t *n, const char *name, const char *value, uint8_t flags)
{
	nv[(*n)++] = (nghttp2_nv){ (uint8_t *)name, (uint8_t *)value, strlen(name), strlen(value), flags };
}

/* METHOD PATH with C's body (if any) on S, TOKEN (NULL: none) the bearer:
 * the stream, or -1 */
static int32_t h2_submit(nghttp2_session *s, struct call *c, const char *authority, const char *method,
			 const char *path, const char *token)
{
	_cleanup_free_ char *bearer = token ? xconcat("Bearer ", token) : NULL;
	char clen[24];
	nghttp2_data_provider body = { .read_callback = h2_body };
	nghttp2_nv nv[9];
	size_t n = 0;

	nv_add(nv, &n, ":method", method, NGHTTP2_NV_FLAG_NONE);
	nv_add(nv, &n, ":scheme", "https", NGHTTP2_NV_FLAG_NONE);
	nv_add(nv, &n, ":authority", authority, NGHTTP2_NV_FLAG_NONE);
	nv_add(nv, &n, ":path", path, NGHTTP2_NV_FLAG_NONE);
	nv_add(nv, &n, "accept", "application/json", NGHTTP2_NV_FLAG_NONE);
	nv_add(nv, &n, "user-agent", "ocidec/" OCIDEC_VERSION, NGHTTP2_NV_FLAG_NONE);
	if (c->out) {
		snprintf(clen, sizeof(clen), "%zu", c->outlen);
		nv_add(nv, &n, "content-type", "application/json", NGHTTP2_NV_FLAG_NONE);
		nv_add(nv, &n, "content-length", clen, NGHTTP2_NV_FLAG_NONE);
	}
	if (bearer)  /* (never in HPACK's tables) */
		nv_add(nv, &n, "authorization", bearer, NGHTTP2_NV_FLAG_NO_INDEX);
	nghttp2_session_set_user_data(s, c);
	c->stream = nghttp2_submit_request(s, NULL, nv, n, c->out ? &body : NULL, NULL);
	return c->stream;
}

int kube_fuzz_answer(const uint8_t *data, size_t len, struct oerr *err)
{
	nghttp2_session *s = h2_session();
	struct call c = { 0 };
	ssize_t r = 0;

	if (h2_submit(s, &c, "kube:443", "GET", "/", "t") < 0 || nghttp2_session_send(s))
		r = -1;
	/* in pieces, as TLS records would give them */
	for (size_t off = 0; r >= 0 && off < len && !c.done; off += 4096) {
		r = nghttp2_session_mem_recv(s, data + off, len - off < 4096 ? len - off : 4096);
		if (r >= 0)
			nghttp2_session_send(s);
	}
	nghttp2_session_del(s);
	free(c.body);
	if (r < 0 || !c.done || c.reset || !c.status)
		return oerr_usage(err, "no whole answer%s", c.too_big ? ": too large" : "");
	return 0;
}

/* ---- the connection ---- */

static int tcp_connect(struct kube *k, struct oerr *err)
{
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} a;
	socklen_t alen, sl = sizeof(int);
	int r = 0, soerr = 0;

	for (size_t i = 0; i < k->naddrs; i++) {
		memset(&a, 0, sizeof(a));
		if (k->addrlens[i] == 4) {
			a.in.sin_family = AF_INET;
			a.in.sin_port = htons((uint16_t)atoi(k->port));
			memcpy(&a.in.sin_addr, k->addrs[i], 4);
			alen = sizeof(a.in);
		} else {
			a.in6.sin6_family = AF_INET6;
			a.in6.sin6_port = htons((uint16_t)atoi(k->port));
			memcpy(&a.in6.sin6_addr, k->addrs[i], 16);
			alen = sizeof(a.in6);
		}
		k->fd = socket(a.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (k->fd < 0) {
			r = errno;
			continue;
		}
		/* (a request's HEADERS and DATA, each its own record, sent as
		 * written: no wait for the first's acknowledgement) */
		setsockopt(k->fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
		if ((connect(k->fd, &a.sa, alen) == 0 ||
		     (errno == EINPROGRESS && wait_fd(k, k->fd, POLLOUT) &&
		      getsockopt(k->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0)))
			break;
		r = soerr ? soerr : errno;
		close(k->fd);
		k->fd = -1;
		if (k->timed_out)
			break;
	}
	if (k->fd < 0)
		return oerr_set(err, 0, "API server %s: %s", k->authority,
				k->timed_out ? "no connection in time" : strerror(r ? r : ECONNREFUSED));
	return 0;
}

/* Why the handshake failed (R), in words */
static int tls_failed(struct kube *k, int r, struct oerr *err)
{
	uint32_t flags = mbedtls_ssl_get_verify_result(&k->ssl);

	if (k->timed_out)
		return oerr_set(err, 0, "API server %s: no TLS handshake in time", k->authority);
	if (r == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED || (flags && flags != (uint32_t)-1))
		return oerr_usage(err, "API server %s: its certificate %s", k->authority,
				  flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED ? "is not signed by the CA of the CA file" :
				  flags & MBEDTLS_X509_BADCERT_CN_MISMATCH ? "does not name the server (its address or name)" :
				  flags & MBEDTLS_X509_BADCERT_EXPIRED ? "has expired" :
				  flags & MBEDTLS_X509_BADCERT_FUTURE ? "is not valid yet" : "does not verify");
	return oerr_usage(err, "API server %s: TLS handshake failed (mbed TLS -0x%04x)", k->authority, (unsigned)-r);
}

static int connect_server(struct kube *k, struct oerr *err)
{
	const char *proto;
	int r;

	if (tcp_connect(k, err) < 0)
		return -1;
	mbedtls_ssl_init(&k->ssl);
	k->ssl_on = true;
	if (mbedtls_ssl_setup(&k->ssl, &k->conf) ||
	    /* an address: no SNI, the IP SAN checked by verify_ip */
	    mbedtls_ssl_set_hostname(&k->ssl, k->iplen ? NULL : k->host))
		return oerr_set(err, 0, "TLS: cannot set up the connection");
	mbedtls_ssl_set_bio(&k->ssl, k, bio_send, bio_recv, NULL);
	while ((r = mbedtls_ssl_handshake(&k->ssl)) != 0)
		if (r != MBEDTLS_ERR_SSL_WANT_READ && r != MBEDTLS_ERR_SSL_WANT_WRITE)
			return tls_failed(k, r, err);
	proto = mbedtls_ssl_get_alpn_protocol(&k->ssl);
	if (!proto || strcmp(proto, "h2") != 0)
		return oerr_usage(err, "API server %s does not speak HTTP/2 (no ALPN h2 in its TLS handshake)",
				  k->authority);
	k->h2 = h2_session();
	return 0;
}

/* K's token: read again when its file changed (a projected token rotates) */
static int token(struct kube *k, struct oerr *err)
{
	struct stat st;
	_cleanup_free_ char *buf = NULL;
	size_t len;

	if (k->token && fstatat(k->token_dir, k->token_name, &st, 0) == 0 && st.st_ino == k->token_st.st_ino &&
	    st.st_dev == k->token_st.st_dev && st.st_size == k->token_st.st_size &&
	    st.st_mtim.tv_sec == k->token_st.st_mtim.tv_sec && st.st_mtim.tv_nsec == k->token_st.st_mtim.tv_nsec)
		return 0;
	if (read_file_at(k->token_dir, k->token_name, k->token_file, TOKEN_MAX, &buf, &len, &k->token_st, err) < 0)
		return -1;
	while (len && strchr(" \t\r\n", buf[len - 1]))
		len--;
	for (size_t i = 0; i < len; i++)
		if (buf[i] <= ' ' || buf[i] >= 0x7f)
			return oerr_usage(err, "%s: a token of printable characters, one line", k->token_file);
	if (!len)
		return oerr_usage(err, "%s: empty", k->token_file);
	free(k->token);
	k->token = xstrndup(buf, len);
	return 0;
}

/* One request on the connection (made first where there is none) */
static int request_once(struct kube *k, struct call *c, const char *method, const char *path, struct oerr *err)
{
	unsigned char buf[16384];

	if (!k->h2 && connect_server(k, err) < 0)
		return -1;
	if (h2_submit(k->h2, c, k->authority, method, path, k->token) < 0)
		return oerr_set(err, 0, "HTTP/2: the request cannot be made");
	while (!c->done) {
		int n;

		if (nghttp2_session_send(k->h2))
			return oerr_set(err, 0, "API server %s: %s", k->authority,
					k->timed_out ? "no answer in time" : "the connection failed");
		if (!nghttp2_session_want_read(k->h2))
			return oerr_usage(err, "API server %s ended the HTTP/2 session", k->authority);
		n = mbedtls_ssl_read(&k->ssl, buf, sizeof(buf));
		if (n == MBEDTLS_ERR_SSL_WANT_READ || n == MBEDTLS_ERR_SSL_WANT_WRITE)
			continue;
		if (n <= 0)
			return k->timed_out ? oerr_set(err, 0, "API server %s: no answer in %u s", k->authority,
						       k->timeout_ms / 1000)
					    : oerr_set(err, 0, "API server %s closed the connection", k->authority);
		if (nghttp2_session_mem_recv(k->h2, buf, (size_t)n) < 0) {
			if (c->too_big)
				return oerr_usage(err, "API server %s: an answer larger than %u MiB: refused", k->authority,
						  KUBE_MAX_BODY >> 20);
			return oerr_usage(err, "API server %s: not HTTP/2 as nghttp2 reads it", k->authority);
		}
	}
	if (c->reset || !c->status)
		return oerr_usage(err, "API server %s ended the answer to %s %s without it whole (HTTP/2 error %u)",
				  k->authority, method, path, c->reset);
	return 0;
}

int kube_request(struct kube *k, const char *method, const char *path, const char *body, int *status, char **resp,
		 size_t *len, struct oerr *err)
{
	*status = 0;
	*resp = NULL;
	*len = 0;
	if (token(k, err) < 0)
		return -1;
	k->deadline = now_ms() + k->timeout_ms;
	k->timed_out = false;
	for (int attempt = 0;; attempt++) {
		bool reused = k->h2 != NULL;
		struct call c = { .k = k, .out = body, .outlen = body ? strlen(body) : 0 };

		if (request_once(k, &c, method, path, err) == 0) {
			nghttp2_session_set_user_data(k->h2, NULL);
			*status = c.status;
			*resp = c.body ? c.body : xstrdup("");
			*len = c.len;
			return 0;
		}
		free(c.body);
		disconnect(k);
		/* a connection the server closed while idle: once more on a new one */
		if (!reused || attempt || k->timed_out || c.status || c.too_big)
			return -1;
	}
}

char *kube_status_text(int status, const char *text, size_t len)
{
	_cleanup_json_ cJSON *s = json_parse_exact(text, len, NULL);
	const cJSON *reason = cJSON_GetObjectItemCaseSensitive(s, "reason");
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(s, "message");
	char r[64], m[256];

	if (!cJSON_IsString(msg))
		return xasprintf("%d (no Status)", status);
	escape_bytes(cJSON_IsString(reason) ? reason->valuestring : "", r, sizeof(r));
	escape_bytes(msg->valuestring, m, 201);
	return xasprintf("%d %s: %s", status, r, m);
}

int kube_json(struct kube *k, const char *method, const char *path, const cJSON *body, cJSON **out, int *code,
	      struct oerr *err)
{
	_cleanup_free_ char *text = body ? cJSON_PrintUnformatted(body) : NULL, *resp = NULL;
	size_t len;
	int status;

	if (out)
		*out = NULL;
	if (code)
		*code = 0;
	if (body && !text)
		oom();
	if (kube_request(k, method, path, text, &status, &resp, &len, err) < 0)
		return -1;
	if (code)
		*code = status;
	if (status < 200 || status > 299) {
		_cleanup_free_ char *why = kube_status_text(status, resp, len);

		return oerr_usage(err, "%s %s: the API server answers %s", method, path, why);
	}
	if (out) {
		*out = json_parse_exact(resp, len, NULL);
		if (!cJSON_IsObject(*out)) {
			cJSON_Delete(*out);
			*out = NULL;
			return oerr_usage(err, "%s %s: the API server's answer is no JSON object", method, path);
		}
	}
	return 0;
}
