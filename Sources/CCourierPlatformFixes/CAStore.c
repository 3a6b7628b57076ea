// What a new TLS connection costs in CA certificates (Docs/TLS.md, "What a connection costs").
//
// libcurl (7.87.0 and later, OpenSSL) keeps the parsed CA store per multi handle and reuses it for
// every new connection, but only when the store comes from a CA *file* alone: no CA directory,
// no CURLOPT_CAINFO_BLOB. Debian's libcurl has a built-in CA directory (/etc/ssl/certs), so every
// connection parsed the whole system file again (~140 certificates, ~21 ms of CPU with OpenSSL
// 3), and a policy's extra CAs went in as a blob, which libcurl parses per connection as well and
// copies and compares (~220 KB) on every request to find a connection to reuse.
//
// Two changes, each keeping the set of trusted certificates exactly as it was:
// - A policy's PEM goes into a sealed in-memory file (memfd), named to libcurl as
//   /proc/self/fd/N: nothing on disk, nothing left after the process, and no one can change it.
// - The built-in CA directory is left out when every certificate in it is also in the CA file
//   libcurl loads (checked once per process, certificate by certificate): then it adds nothing,
//   and without it libcurl's cache works. With CURLOPT_CA_CACHE_TIMEOUT the kit bounds how long
//   a changed system store can go unnoticed.

#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "CAStore.h"

/// A hash-directory or CA file bigger than this is not looked at (the system file is ~220 KB).
#define COURIER_CA_FILE_LIMIT (16 * 1024 * 1024)

/// The whole file at `path` (NUL-terminated), or NULL.
static char *read_file(const char *path, size_t *length) {
    int descriptor = open(path, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return NULL;
    struct stat info;
    if (fstat(descriptor, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size > COURIER_CA_FILE_LIMIT) {
        close(descriptor);
        return NULL;
    }
    char *data = malloc((size_t)info.st_size + 1);
    size_t total = 0;
    while (data != NULL) {
        ssize_t count = read(descriptor, data + total, (size_t)info.st_size - total);
        if (count < 0) {
            free(data);
            data = NULL;
        } else if (count == 0 || total + (size_t)count == (size_t)info.st_size) {
            total += (size_t)count;
            break;
        } else {
            total += (size_t)count;
        }
    }
    close(descriptor);
    if (data == NULL) return NULL;
    data[total] = 0;
    *length = total;
    return data;
}

static const char beginCertificate[] = "-----BEGIN CERTIFICATE-----";
static const char endCertificate[] = "-----END CERTIFICATE-----";

/// A certificate's base64 body without whitespace: two files hold the same certificate exactly
/// when these are equal.
typedef struct {
    char *text;
    size_t length;
} body;

static int compare_bodies(const void *left, const void *right) {
    const body *a = left, *b = right;
    if (a->length != b->length) return a->length < b->length ? -1 : 1;
    return memcmp(a->text, b->text, a->length);
}

/// The certificate bodies in `pem`, in `*bodies` (`*count` of them). Returns 0, or -1 when the
/// PEM holds something else than plain certificates (a TRUSTED CERTIFICATE carries trust
/// settings, a CRL changes checks), a block without its end, or memory ran out.
static int read_bodies(const char *pem, size_t length, body **bodies, size_t *count) {
    *bodies = NULL;
    *count = 0;
    size_t capacity = 0;
    const char *cursor = pem, *end = pem + length;
    while (cursor < end) {
        const char *begin = memmem(cursor, (size_t)(end - cursor), "-----BEGIN ", 11);
        if (begin == NULL) break;
        if ((size_t)(end - begin) < sizeof(beginCertificate) - 1
            || memcmp(begin, beginCertificate, sizeof(beginCertificate) - 1) != 0) {
            return -1;
        }
        const char *start = begin + sizeof(beginCertificate) - 1;
        const char *stop = memmem(start, (size_t)(end - start), endCertificate, sizeof(endCertificate) - 1);
        if (stop == NULL) return -1;
        char *text = malloc((size_t)(stop - start) + 1);
        if (text == NULL) return -1;
        size_t used = 0;
        for (const char *character = start; character < stop; character++) {
            if (*character != ' ' && *character != '\t' && *character != '\r' && *character != '\n') text[used++] = *character;
        }
        if (*count == capacity) {
            capacity = capacity == 0 ? 64 : capacity * 2;
            body *grown = realloc(*bodies, capacity * sizeof(body));
            if (grown == NULL) {
                free(text);
                return -1;
            }
            *bodies = grown;
        }
        (*bodies)[(*count)++] = (body){ text, used };
        cursor = stop + sizeof(endCertificate) - 1;
    }
    return 0;
}

static void free_bodies(body *bodies, size_t count) {
    for (size_t index = 0; index < count; index++) free(bodies[index].text);
    free(bodies);
}

/// OpenSSL's hash-directory names: 8 hexadecimal digits, a dot, then a number (a certificate)
/// or "r" and a number (a CRL). 1 for a certificate, 2 for a CRL, 0 for anything else.
static int hash_name_kind(const char *name) {
    for (int index = 0; index < 8; index++) {
        char character = name[index];
        if (!((character >= '0' && character <= '9') || (character >= 'a' && character <= 'f'))) return 0;
    }
    if (name[8] != '.') return 0;
    const char *suffix = name + 9;
    int kind = 1;
    if (*suffix == 'r') {
        kind = 2;
        suffix++;
    }
    if (*suffix == 0) return 0;
    for (; *suffix != 0; suffix++) {
        if (*suffix < '0' || *suffix > '9') return 0;
    }
    return kind;
}

int courier_tls_pem_covers_directory(const void *pem, size_t length, const char *directory) {
    if (pem == NULL || directory == NULL) return 0;
    body *known = NULL;
    size_t knownCount = 0;
    if (read_bodies(pem, length, &known, &knownCount) != 0) {
        // Only which certificates the file has matters here; other blocks in it are loaded
        // either way. But a file the kit cannot read whole is not vouched for.
        free_bodies(known, knownCount);
        return 0;
    }
    qsort(known, knownCount, sizeof(body), compare_bodies);
    DIR *listing = opendir(directory);
    int covered = listing != NULL;
    struct dirent *entry;
    while (covered && (entry = readdir(listing)) != NULL) {
        int kind = hash_name_kind(entry->d_name);
        if (kind == 0) continue;  // OpenSSL never opens it
        if (kind == 2) {
            covered = 0;  // a CRL the directory would add
            break;
        }
        char path[4096];
        if (snprintf(path, sizeof(path), "%s/%s", directory, entry->d_name) >= (int)sizeof(path)) {
            covered = 0;
            break;
        }
        size_t fileLength = 0;
        char *contents = read_file(path, &fileLength);
        body *found = NULL;
        size_t foundCount = 0;
        // Unreadable, no certificate, or anything but plain certificates: not provably covered.
        if (contents == NULL || read_bodies(contents, fileLength, &found, &foundCount) != 0 || foundCount == 0) covered = 0;
        for (size_t index = 0; covered && index < foundCount; index++) {
            covered = bsearch(&found[index], known, knownCount, sizeof(body), compare_bodies) != NULL;
        }
        free_bodies(found, foundCount);
        free(contents);
    }
    if (listing != NULL) closedir(listing);
    free_bodies(known, knownCount);
    return covered;
}

// MARK: - libcurl's built-in CA file and directory

static pthread_once_t defaultsOnce = PTHREAD_ONCE_INIT;
static courier_ca_defaults defaults;

static void find_defaults(void) {
    defaults.cache = COURIER_CA_CACHE_UNSUPPORTED;
    if (courier_real.easy_init == NULL || courier_real.easy_getinfo == NULL) return;
    CURL *easy = courier_real.easy_init();
    if (easy == NULL) return;
    // The option exists from 7.87.0, with the cache it sets.
    int hasCache = courier_real.easy_setopt(easy, COURIER_CURLOPT_CA_CACHE_TIMEOUT, (long)COURIER_CA_CACHE_SECONDS) == COURIER_CURLE_OK;
    char *file = NULL, *directory = NULL;
    if (courier_real.easy_getinfo(easy, COURIER_CURLINFO_CAINFO, &file) != COURIER_CURLE_OK) file = NULL;
    if (courier_real.easy_getinfo(easy, COURIER_CURLINFO_CAPATH, &directory) != COURIER_CURLE_OK) directory = NULL;
    defaults.file = file != NULL ? strdup(file) : NULL;
    defaults.directory = directory != NULL ? strdup(directory) : NULL;
    courier_real.easy_cleanup(easy);
    if (!hasCache) return;
    if (defaults.directory == NULL) {
        defaults.cache = COURIER_CA_CACHE_NO_DIRECTORY;
        return;
    }
    size_t length = 0;
    char *contents = defaults.file != NULL ? read_file(defaults.file, &length) : NULL;
    defaults.cache = contents != NULL && courier_tls_pem_covers_directory(contents, length, defaults.directory)
        ? COURIER_CA_CACHE_DIRECTORY_LEFT_OUT : COURIER_CA_CACHE_DIRECTORY_ADDS;
    free(contents);
}

const courier_ca_defaults *courier_ca_defaults_get(void) {
    // Only once libcurl's entry points are known: an answer found before would stick.
    static const courier_ca_defaults notYet = { NULL, NULL, COURIER_CA_CACHE_UNSUPPORTED };
    if (courier_platform_fixes_status() != COURIER_FIXES_ACTIVE) return &notYet;
    pthread_once(&defaultsOnce, find_defaults);
    return &defaults;
}

courier_ca_cache_state courier_tls_ca_cache_state(void) {
    return courier_ca_defaults_get()->cache;
}

int courier_ca_pem_contains_default_file(const void *pem, size_t length) {
    const courier_ca_defaults *found = courier_ca_defaults_get();
    if (found->cache != COURIER_CA_CACHE_DIRECTORY_LEFT_OUT || pem == NULL) return 0;
    size_t fileLength = 0;
    char *contents = read_file(found->file, &fileLength);
    int contains = contents != NULL && fileLength > 0 && memmem(pem, length, contents, fileLength) != NULL;
    free(contents);
    return contains;
}

// MARK: - A policy's PEM as a file

char *courier_ca_memory_file(const void *pem, size_t length) {
    int descriptor = memfd_create("courier-tls-ca", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (descriptor < 0) return NULL;
    size_t written = 0;
    while (written < length) {
        ssize_t count = write(descriptor, (const char *)pem + written, length - written);
        if (count <= 0) break;
        written += (size_t)count;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", descriptor);
    // Sealed: not even this process can change what a connection trusts from now on.
    int ok = written == length
        && fcntl(descriptor, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0;
    if (ok) {
        // OpenSSL opens it by name: that must give these bytes (no /proc, or another view of it,
        // and the blob stays).
        size_t readLength = 0;
        char *back = read_file(path, &readLength);
        ok = back != NULL && readLength == length && memcmp(back, pem, length) == 0;
        free(back);
    }
    if (!ok) {
        close(descriptor);
        return NULL;
    }
    char *copy = strdup(path);
    if (copy == NULL) close(descriptor);
    // The descriptor stays open for the life of the process, as the policy does.
    return copy;
}

const char *courier_tls_default_ca_file(void) {
    return courier_ca_defaults_get()->file;
}

const char *courier_tls_default_ca_directory(void) {
    return courier_ca_defaults_get()->directory;
}
