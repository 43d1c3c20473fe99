/* mbedtls_psa_config.h: the PSA Crypto API's part of mbed TLS for ocidec
 * (formats/mbedtls_config.h names it): only what TLS 1.3's key schedule
 * and record protection call through PSA in mbed TLS 3.6 (hashes, HKDF,
 * ECDHE on the three curves, AES-GCM). Without it PSA takes every
 * algorithm the legacy configuration has (RSA signing and encryption,
 * ECDSA signing, CBC...), 26 KB of code the client never runs. */
#ifndef OCIDEC_MBEDTLS_PSA_CONFIG_H
#define OCIDEC_MBEDTLS_PSA_CONFIG_H

#define PSA_WANT_ALG_SHA_256 1
#define PSA_WANT_ALG_SHA_384 1
#define PSA_WANT_ALG_HMAC 1
#define PSA_WANT_ALG_HKDF 1
#define PSA_WANT_ALG_HKDF_EXTRACT 1
#define PSA_WANT_ALG_HKDF_EXPAND 1
#define PSA_WANT_ALG_ECDH 1
#define PSA_WANT_ALG_GCM 1
#define PSA_WANT_ECC_SECP_R1_256 1
#define PSA_WANT_ECC_SECP_R1_384 1
#define PSA_WANT_ECC_MONTGOMERY_255 1
#define PSA_WANT_KEY_TYPE_AES 1
#define PSA_WANT_KEY_TYPE_HMAC 1
#define PSA_WANT_KEY_TYPE_DERIVE 1
#define PSA_WANT_KEY_TYPE_ECC_PUBLIC_KEY 1
#define PSA_WANT_KEY_TYPE_ECC_KEY_PAIR_BASIC 1
#define PSA_WANT_KEY_TYPE_ECC_KEY_PAIR_IMPORT 1
#define PSA_WANT_KEY_TYPE_ECC_KEY_PAIR_EXPORT 1
#define PSA_WANT_KEY_TYPE_ECC_KEY_PAIR_GENERATE 1

#endif
