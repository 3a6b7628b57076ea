// One parsed CA store per CA file for byte streams (StreamCAStore.c): used by ByteStream.c.

#ifndef COURIER_STREAM_CA_STORE_H
#define COURIER_STREAM_CA_STORE_H

#include "Kit.h"

/// The parsed store for `file` (an OpenSSL X509_STORE with one reference for the caller), parsed
/// now or kept from an earlier connect less than COURIER_CA_CACHE_SECONDS ago; NULL when libcurl's
/// TLS library is not the OpenSSL found in the process, or the file does not parse.
COURIER_HIDDEN void *courier_stream_ca_store(const char *file);

/// Whether libcurl's TLS library is the OpenSSL found in the process (then the functions below
/// may be called on its SSL_CTX).
COURIER_HIDDEN int courier_stream_openssl_available(void);

/// Makes `store` the certificate store of `context` (an SSL_CTX), with a reference of its own.
COURIER_HIDDEN void courier_stream_ca_store_install(void *context, void *store);

/// Gives back the caller's reference from courier_stream_ca_store.
COURIER_HIDDEN void courier_stream_ca_store_release(void *store);

#endif
