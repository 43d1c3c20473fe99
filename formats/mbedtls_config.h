/* mbedtls_config.h: mbed TLS configured for ocidec (the Makefile passes
 * -DMBEDTLS_CONFIG_FILE naming this file; it replaces mbed TLS's own
 * include/mbedtls/mbedtls_config.h, which enables everything).
 *
 * `ocidec dra` talks to one peer over TLS: the Kubernetes API server, whose
 * certificate chains to the cluster's CA (the pod's ca.crt, PEM; RSA or
 * ECDSA). So: a TLS client only (no server side, no session cache or
 * tickets, no PSK), TLS 1.2 and 1.3, ECDHE on secp256r1, secp384r1 and
 * x25519, AES-GCM, SHA-256 and SHA-384, X.509 parsing and chain
 * verification, ALPN ("h2") and SNI. Randomness from the kernel: PSA's
 * external RNG, which engines/kubeapi.c gives from getrandom(2), is all of
 * it (no entropy pool, no CTR_DRBG of mbed TLS's). No file helpers (the
 * caller reads ca.crt and hands the bytes to mbedtls_x509_crt_parse), no
 * threading, no debug, no error
 * strings (the caller prints the code), no assembly beyond the portable
 * bignum multiply (MBEDTLS_HAVE_ASM: amd64 and arm64 both).
 *
 * Not a wing's header: only mbed TLS includes it (through build_info.h).
 */
#ifndef OCIDEC_MBEDTLS_CONFIG_H
#define OCIDEC_MBEDTLS_CONFIG_H

/* The platform: Linux, a C library with time and gmtime_r (certificate
 * validity) */
#define MBEDTLS_HAVE_ASM
#define MBEDTLS_HAVE_TIME
#define MBEDTLS_HAVE_TIME_DATE

/* Curves: the ones Go's crypto/tls (the API server) offers first */
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_DP_SECP384R1_ENABLED
#define MBEDTLS_ECP_DP_CURVE25519_ENABLED

/* Signatures in certificates and handshakes: RSA PKCS#1 v1.5 (certificates,
 * TLS 1.2), RSA-PSS (TLS 1.3's CertificateVerify with an RSA key), ECDSA */
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_PKCS1_V21
/* (without it mbed TLS offers TLS 1.3 no rsa_pss_rsae_* scheme, and a
 * server with an RSA certificate ends the handshake) */
#define MBEDTLS_X509_RSASSA_PSS_SUPPORT

/* TLS: a client, 1.2 (ECDHE with RSA or ECDSA certificates) and 1.3
 * (ephemeral key exchange only) */
#define MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED
#define MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_SSL_PROTO_TLS1_3
#define MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_EPHEMERAL_ENABLED
#define MBEDTLS_SSL_KEEP_PEER_CERTIFICATE
#define MBEDTLS_SSL_EXTENDED_MASTER_SECRET
#define MBEDTLS_SSL_SERVER_NAME_INDICATION
#define MBEDTLS_SSL_ALPN
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_TLS_C

/* The crypto those need. (Sizes: what each option saves in the static
 * binary, bench/size.sh.) AES-GCM encrypts with AES both ways: no AES
 * decryption (2 KB); SHA-256 and SHA-512 by their loops, not unrolled
 * (3 KB) */
#define MBEDTLS_AES_C
#define MBEDTLS_AES_FEWER_TABLES
#define MBEDTLS_BLOCK_CIPHER_NO_DECRYPT
#define MBEDTLS_GCM_C
#define MBEDTLS_CIPHER_C
#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA256_SMALLER
#define MBEDTLS_SHA512_SMALLER
#define MBEDTLS_SHA384_C
#define MBEDTLS_SHA512_C
#define MBEDTLS_HKDF_C
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_RSA_C
/* (RSA's private operation, without the CRT's speed-up: the client holds
 * no RSA key, and the code, which pk's tables keep linked, is smaller:
 * 2 KB) */
#define MBEDTLS_RSA_NO_CRT
/* TLS 1.3 in mbed TLS 3.6 goes through the PSA API (psa_crypto_init):
 * with only the algorithms it calls there (formats/mbedtls_psa_config.h) */
#define MBEDTLS_PSA_CRYPTO_C
/* (the kernel's randomness, mbedtls_psa_external_get_random in
 * engines/kubeapi.c: 3 KB less than the entropy pool and CTR_DRBG) */
#define MBEDTLS_PSA_CRYPTO_EXTERNAL_RNG
#define MBEDTLS_PSA_CRYPTO_CONFIG
#define MBEDTLS_PSA_CRYPTO_CONFIG_FILE "formats/mbedtls_psa_config.h"

/* Certificates: X.509 from PEM */
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_OID_C
#define MBEDTLS_BASE64_C
#define MBEDTLS_PEM_PARSE_C
#define MBEDTLS_PK_C
#define MBEDTLS_PK_PARSE_C
#define MBEDTLS_X509_USE_C
#define MBEDTLS_X509_CRT_PARSE_C
/* no text descriptions of certificates or of why one failed verification
 * (mbedtls_x509_crt_info, _verify_info, the OIDs' names): 6 KB; the
 * caller names the MBEDTLS_X509_BADCERT_* flags it meets itself */
#define MBEDTLS_X509_REMOVE_INFO

/* No precomputed multiples of the curves' generators (tables in the
 * binary: 8 KB); an ECDHE key costs a few milliseconds more, once a
 * connection */
#define MBEDTLS_ECP_FIXED_POINT_OPTIM 0

#endif
