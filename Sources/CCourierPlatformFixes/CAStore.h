// The CA store's cost per connection (CAStore.c): shared by CAStore.c and TLSPolicy.c.

#ifndef COURIER_CA_STORE_H
#define COURIER_CA_STORE_H

#include "Kit.h"

/// How long libcurl may keep a parsed CA store before reading the CA file again, when the kit
/// made the store cacheable: a changed system store reaches new connections within this time.
#define COURIER_CA_CACHE_SECONDS 300L

/// libcurl's built-in CA file and directory, and what the kit does about its cache (found once).
typedef struct {
    char *file;
    char *directory;
    courier_ca_cache_state cache;
} courier_ca_defaults;

COURIER_HIDDEN const courier_ca_defaults *courier_ca_defaults_get(void);

/// Whether `pem` holds the built-in CA file whole (so it covers the built-in directory too,
/// when the directory is left out). 0 when the directory is not left out.
COURIER_HIDDEN int courier_ca_pem_contains_default_file(const void *pem, size_t length);

/// A sealed in-memory file holding `pem`, as a path OpenSSL can open ("/proc/self/fd/N",
/// malloc'd), or NULL when this system cannot give one (then the blob is used).
COURIER_HIDDEN char *courier_ca_memory_file(const void *pem, size_t length);

#endif
