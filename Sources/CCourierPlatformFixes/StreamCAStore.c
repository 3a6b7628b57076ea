// One parsed CA store for every wss:// connection that trusts the same CA file (ByteStream.c;
// Docs/Performance.md, "wss:// connect cost").
//
// libcurl 7.87+ keeps a parsed CA store per multi handle (CAStore.c), but a byte stream connects
// with curl_easy_perform, which makes a multi handle per easy handle: every wss:// connect parsed
// the whole CA file again (~140 certificates, ~20 ms of CPU with OpenSSL 3 for the system's). No
// libcurl option shares that cache between easy handles (a share handle shares TLS sessions, not
// the store). So a stream whose CAs come from one file alone gets a store parsed here once and
// handed to OpenSSL in CURLOPT_SSL_CTX_FUNCTION, and libcurl is told to load no CA file itself:
// the same certificates, the same verification (libcurl still checks the chain, the host name and
// any pin), without the parse. The store is parsed again after COURIER_CA_CACHE_SECONDS, as
// libcurl's own cache is, so a changed system store reaches new connections within that time.
//
// OpenSSL's functions are found in the process (libcurl loaded it) and used only when they are the
// OpenSSL libcurl was built on (its version string names the same release); otherwise, or for any
// TLS library but OpenSSL, nothing changes and libcurl parses the file as before.

#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "CAStore.h"
#include "StreamCAStore.h"

/// OpenSSL's X509_V_FLAG_TRUSTED_FIRST and X509_V_FLAG_PARTIAL_CHAIN: the flags libcurl sets on
/// the store it fills (set here first, so libcurl setting them again changes nothing).
#define COURIER_X509_V_FLAG_TRUSTED_FIRST 0x8000
#define COURIER_X509_V_FLAG_PARTIAL_CHAIN 0x80000
/// Files whose parsed store is kept (the system's, and one per policy with its own CAs).
#define COURIER_STREAM_STORES 8

typedef struct {
    void *(*store_new)(void);
    int (*load_locations)(void *store, const char *file, const char *directory);
    int (*up_ref)(void *store);
    void (*free)(void *store);
    int (*set_flags)(void *store, unsigned long flags);
    void (*set_cert_store)(void *context, void *store);
} openssl_functions;

/// The start of libcurl's `curl_version_info_data` (stable since its first age).
typedef struct {
    int age;
    const char *version;
    unsigned int versionNumber;
    const char *host;
    int features;
    const char *sslVersion;
} courier_curl_version_info;

typedef courier_curl_version_info *(*courier_version_info_fn)(int age);

static pthread_once_t lookupOnce = PTHREAD_ONCE_INIT;
static openssl_functions ssl;
static int available;

/// "OpenSSL/3.0.19" (libcurl) and "OpenSSL 3.0.19 27 Jan 2026" (OpenSSL) name the same release.
static int same_release(const char *curlName, const char *opensslName) {
    static const char prefix[] = "OpenSSL";
    size_t length = sizeof(prefix) - 1;
    if (curlName == NULL || opensslName == NULL) return 0;
    if (strncmp(curlName, prefix, length) != 0 || curlName[length] != '/') return 0;
    if (strncmp(opensslName, prefix, length) != 0 || opensslName[length] != ' ') return 0;
    const char *left = curlName + length + 1, *right = opensslName + length + 1;
    while (*left != 0 && !isspace((unsigned char)*left) && *left == *right) {
        left++;
        right++;
    }
    return (*left == 0 || isspace((unsigned char)*left)) && (*right == 0 || isspace((unsigned char)*right)) && left != curlName + length + 1;
}

static void look_up(void) {
    courier_version_info_fn versionInfo = (courier_version_info_fn)courier_libcurl_symbol("curl_version_info");
    const char *(*opensslVersion)(int) = (const char *(*)(int))dlsym(RTLD_DEFAULT, "OpenSSL_version");
    if (versionInfo == NULL || opensslVersion == NULL) return;
    courier_curl_version_info *info = versionInfo(0);
    if (info == NULL || !same_release(info->sslVersion, opensslVersion(0))) return;
    struct { const char *name; void **slot; } wanted[] = {
        { "X509_STORE_new", (void **)&ssl.store_new },
        { "X509_STORE_load_locations", (void **)&ssl.load_locations },
        { "X509_STORE_up_ref", (void **)&ssl.up_ref },
        { "X509_STORE_free", (void **)&ssl.free },
        { "X509_STORE_set_flags", (void **)&ssl.set_flags },
        { "SSL_CTX_set_cert_store", (void **)&ssl.set_cert_store },
    };
    for (size_t index = 0; index < sizeof(wanted) / sizeof(wanted[0]); index++) {
        *wanted[index].slot = dlsym(RTLD_DEFAULT, wanted[index].name);
        if (*wanted[index].slot == NULL) return;
    }
    available = 1;
}

/// The stores kept, one per CA file, under one lock.
static struct {
    pthread_mutex_t lock;
    struct {
        char *file;
        void *store;
        time_t parsed;
    } entries[COURIER_STREAM_STORES];
    size_t next;
} stores = { .lock = PTHREAD_MUTEX_INITIALIZER };

static courier_stream_ca_counts counts;

static time_t now_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec;
}

/// A new store holding `file`'s certificates, or NULL.
static void *parse(const char *file) {
    void *store = ssl.store_new();
    if (store == NULL) return NULL;
    if (ssl.load_locations(store, file, NULL) != 1) {
        ssl.free(store);
        return NULL;
    }
    ssl.set_flags(store, COURIER_X509_V_FLAG_TRUSTED_FIRST | COURIER_X509_V_FLAG_PARTIAL_CHAIN);
    return store;
}

void *courier_stream_ca_store(const char *file) {
    pthread_once(&lookupOnce, look_up);
    if (!available || file == NULL) return NULL;
    time_t now = now_seconds();
    void *found = NULL;
    pthread_mutex_lock(&stores.lock);
    for (size_t index = 0; index < COURIER_STREAM_STORES; index++) {
        if (stores.entries[index].file != NULL && strcmp(stores.entries[index].file, file) == 0
            && now - stores.entries[index].parsed < COURIER_CA_CACHE_SECONDS && ssl.up_ref(stores.entries[index].store) == 1) {
            found = stores.entries[index].store;
            break;
        }
    }
    pthread_mutex_unlock(&stores.lock);
    if (found != NULL) {
        __atomic_fetch_add(&counts.reused, 1, __ATOMIC_RELAXED);
        return found;
    }
    // Parsed outside the lock (tens of milliseconds): two first connects may both parse; the later
    // store replaces the earlier, which lives on in the connections holding it.
    void *store = parse(file);
    if (store == NULL) return NULL;
    __atomic_fetch_add(&counts.parsed, 1, __ATOMIC_RELAXED);
    char *key = strdup(file);
    if (key == NULL || ssl.up_ref(store) != 1) {
        free(key);
        return store;
    }
    void *replaced = NULL;
    char *replacedKey = NULL;
    pthread_mutex_lock(&stores.lock);
    size_t slot = stores.next;
    for (size_t index = 0; index < COURIER_STREAM_STORES; index++) {
        if (stores.entries[index].file != NULL && strcmp(stores.entries[index].file, file) == 0) {
            slot = index;
            break;
        }
    }
    if (slot == stores.next) stores.next = (stores.next + 1) % COURIER_STREAM_STORES;
    replaced = stores.entries[slot].store;
    replacedKey = stores.entries[slot].file;
    stores.entries[slot].file = key;
    stores.entries[slot].store = store;
    stores.entries[slot].parsed = now;
    pthread_mutex_unlock(&stores.lock);
    if (replaced != NULL) ssl.free(replaced);
    free(replacedKey);
    return store;
}

int courier_stream_openssl_available(void) {
    pthread_once(&lookupOnce, look_up);
    return available;
}

void courier_stream_ca_store_install(void *context, void *store) {
    // SSL_CTX_set_cert_store takes one reference (and frees the context's empty store).
    if (context != NULL && store != NULL && ssl.up_ref(store) == 1) ssl.set_cert_store(context, store);
}

void courier_stream_ca_store_release(void *store) {
    if (store != NULL) ssl.free(store);
}

courier_stream_ca_counts courier_stream_ca_store_counts(void) {
    courier_stream_ca_counts now;
    now.parsed = __atomic_load_n(&counts.parsed, __ATOMIC_RELAXED);
    now.reused = __atomic_load_n(&counts.reused, __ATOMIC_RELAXED);
    return now;
}
