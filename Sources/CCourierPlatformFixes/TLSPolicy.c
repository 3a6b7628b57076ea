// Courier's TLS policy (Docs/TLS.md): trust, public-key pins and a client identity put on each
// easy handle FoundationNetworking adds, which FoundationNetworking itself has no API for.
//
// Courier resolves the policy for a request in Swift and names it with a private request header
// (COURIER_TLS_HEADER: <token>), or, for a manager whose every request gets one policy, binds its
// URLSession's multi handle to that policy when the session is made (courier_tls_bind_begin):
// a transfer on a bound handle whose headers name no policy gets the bound one, with no header
// for FoundationNetworking to copy and validate on every request. FoundationNetworking hands every request's headers to libcurl
// as one list (CURLOPT_HTTPHEADER) each time it sets a handle up — for the first transfer and
// again for every redirect it follows. The kit's curl_easy_setopt wrapper takes Courier's header
// out (libcurl is given a copy of the list without it, so it never goes on the wire) and notes
// the token. Just before the handle is added to its multi handle, the token's options are set:
// CAINFO/CAPATH (or CAINFO_BLOB), PINNEDPUBLICKEY, SSLCERT/SSLKEY/KEYPASSWD, SSL_VERIFYPEER/VERIFYHOST.
// A handle whose next transfer names no policy gets libcurl's defaults back, so nothing one
// transfer asked for sticks to the next. A token nobody registered refuses the connection: a
// pin no key matches and no trusted CA, never weaker checks.
//
// A policy's CA certificates reach libcurl as a sealed in-memory file (CAStore.c) rather than a
// blob, and libcurl's built-in CA directory is left out where it adds nothing: both let libcurl
// reuse the parsed CA store for new connections, and a kept-alive connection is then matched by a
// path instead of a 220 KB comparison (Docs/TLS.md, "What a connection costs").

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include "EasyRecord.h"
#include "CAStore.h"

/// A registered policy: copies of everything it was given.
typedef struct stored_policy {
    struct stored_policy *next;
    char token[COURIER_TLS_TOKEN_SIZE];
    courier_tls_ca_mode caInfoMode;
    char *caInfo;
    courier_tls_ca_mode caPathMode;
    char *caPath;
    void *caBlob;
    size_t caBlobLength;
    /// The PEM as a file ("/proc/self/fd/N"), or NULL when the blob is used.
    char *caFile;
    /// `caFile` holds libcurl's built-in CA file whole, so the built-in directory can be left out.
    int caFileCoversDirectory;
    char *pinnedPublicKey;
    char *clientCertificate;
    char *clientKey;
    char *keyPassword;
    int verify;
} stored_policy;

static pthread_mutex_t registryLock = PTHREAD_MUTEX_INITIALIZER;
static stored_policy *registry;

/// What a handle gets when its header names a token nobody registered: no trusted CA and a pin
/// no key has (an all-zero SHA-256). Either alone refuses the server.
static stored_policy refuseAll = {
    .caInfoMode = COURIER_TLS_CA_NONE,
    .caPathMode = COURIER_TLS_CA_NONE,
    .pinnedPublicKey = "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    .verify = 1,
};

static char *copy_string(const char *text, int *failed) {
    if (text == NULL) return NULL;
    char *copy = strdup(text);
    if (copy == NULL) *failed = 1;
    return copy;
}

static void free_policy(stored_policy *policy) {
    free(policy->caInfo);
    free(policy->caPath);
    free(policy->caBlob);
    free(policy->caFile);
    free(policy->pinnedPublicKey);
    free(policy->clientCertificate);
    free(policy->clientKey);
    if (policy->keyPassword != NULL) {
        // A password does not outlive its use in freed memory.
        memset(policy->keyPassword, 0, strlen(policy->keyPassword));
        free(policy->keyPassword);
    }
    free(policy);
}

int courier_tls_register(const courier_tls_policy *policy) {
    if (policy == NULL || policy->token == NULL || strlen(policy->token) == 0
        || strlen(policy->token) >= COURIER_TLS_TOKEN_SIZE) {
        return -1;
    }
    stored_policy *stored = calloc(1, sizeof(stored_policy));
    if (stored == NULL) return -1;
    int failed = 0;
    strcpy(stored->token, policy->token);
    stored->caInfoMode = policy->caInfoMode;
    stored->caInfo = copy_string(policy->caInfo, &failed);
    stored->caPathMode = policy->caPathMode;
    stored->caPath = copy_string(policy->caPath, &failed);
    if (policy->caBlob != NULL && policy->caBlobLength > 0) {
        stored->caBlob = malloc(policy->caBlobLength);
        if (stored->caBlob == NULL) {
            failed = 1;
        } else {
            memcpy(stored->caBlob, policy->caBlob, policy->caBlobLength);
            stored->caBlobLength = policy->caBlobLength;
        }
    }
    stored->pinnedPublicKey = copy_string(policy->pinnedPublicKey, &failed);
    stored->clientCertificate = copy_string(policy->clientCertificate, &failed);
    stored->clientKey = copy_string(policy->clientKey, &failed);
    stored->keyPassword = copy_string(policy->keyPassword, &failed);
    stored->verify = policy->verify;
    if (failed) {
        free_policy(stored);
        return -1;
    }
    if (stored->caBlob != NULL) {
        // As a file the parsed store can be cached (a blob never is); if there is no way to make
        // one here, the blob stays: slower, with the same certificates.
        stored->caFile = courier_ca_memory_file(stored->caBlob, stored->caBlobLength);
        if (stored->caFile != NULL) {
            stored->caFileCoversDirectory = stored->caPathMode == COURIER_TLS_CA_DEFAULT
                && courier_ca_pem_contains_default_file(stored->caBlob, stored->caBlobLength);
            free(stored->caBlob);
            stored->caBlob = NULL;
            stored->caBlobLength = 0;
            __atomic_fetch_add(&courier_counters.tlsCAFilesInMemory, 1, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_lock(&registryLock);
    stored->next = registry;
    registry = stored;
    pthread_mutex_unlock(&registryLock);
    return 0;
}

/// The policy registered as `token`, or NULL. Policies are never freed, so the pointer stays good.
static const stored_policy *find_policy(const char *token) {
    pthread_mutex_lock(&registryLock);
    const stored_policy *policy = registry;
    while (policy != NULL && strcmp(policy->token, token) != 0) policy = policy->next;
    pthread_mutex_unlock(&registryLock);
    return policy;
}

// MARK: - Multi handles bound to a policy

/// The token multi handles made on this thread are bound to, and how many were.
static __thread char bindingToken[COURIER_TLS_TOKEN_SIZE];
static __thread int boundCount;

void courier_tls_bind_begin(const char *token) {
    boundCount = 0;
    bindingToken[0] = 0;
    if (token == NULL || strlen(token) >= COURIER_TLS_TOKEN_SIZE) return;
    strcpy(bindingToken, token);
}

int courier_tls_bind_end(void) {
    bindingToken[0] = 0;
    int count = boundCount;
    boundCount = 0;
    return count;
}

const char *courier_tls_binding(int claim) {
    if (bindingToken[0] == 0) return NULL;
    if (claim) {
        boundCount++;
        __atomic_fetch_add(&courier_counters.tlsSessionsBound, 1, __ATOMIC_RELAXED);
    }
    return bindingToken;
}

// MARK: - What libcurl supports

static pthread_once_t probeOnce = PTHREAD_ONCE_INIT;
static unsigned supportedOptions;

static void probe(void) {
    if (courier_real.easy_init == NULL || courier_real.easy_setopt == NULL || courier_real.easy_cleanup == NULL) return;
    CURL *easy = courier_real.easy_init();
    if (easy == NULL) return;
    // Each option set once with a harmless value: libcurl answers CURLE_UNKNOWN_OPTION or
    // CURLE_NOT_BUILT_IN for what it (or its TLS library) cannot do.
    char blobByte = '\n';
    courier_curl_blob blob = { &blobByte, 1, COURIER_CURL_BLOB_NOCOPY };
    unsigned supported = 0;
    if (courier_real.easy_setopt(easy, COURIER_CURLOPT_CAINFO, "/") == COURIER_CURLE_OK) supported |= COURIER_TLS_OPTION_CAINFO;
    if (courier_real.easy_setopt(easy, COURIER_CURLOPT_CAPATH, "/") == COURIER_CURLE_OK) supported |= COURIER_TLS_OPTION_CAPATH;
    if (courier_real.easy_setopt(easy, COURIER_CURLOPT_CAINFO_BLOB, (void *)&blob) == COURIER_CURLE_OK) {
        supported |= COURIER_TLS_OPTION_CAINFO_BLOB;
    }
    if (courier_real.easy_setopt(easy, COURIER_CURLOPT_PINNEDPUBLICKEY, refuseAll.pinnedPublicKey) == COURIER_CURLE_OK) {
        supported |= COURIER_TLS_OPTION_PINNEDPUBLICKEY;
    }
    if (courier_real.easy_setopt(easy, COURIER_CURLOPT_SSLCERT, "/") == COURIER_CURLE_OK) supported |= COURIER_TLS_OPTION_SSLCERT;
    if (courier_real.easy_setopt(easy, COURIER_CURLOPT_SSLKEY, "/") == COURIER_CURLE_OK) supported |= COURIER_TLS_OPTION_SSLKEY;
    if (courier_real.easy_setopt(easy, COURIER_CURLOPT_KEYPASSWD, "") == COURIER_CURLE_OK) supported |= COURIER_TLS_OPTION_KEYPASSWD;
    if (courier_real.easy_setopt(easy, COURIER_CURLOPT_SSL_VERIFYPEER, 1L) == COURIER_CURLE_OK
        && courier_real.easy_setopt(easy, COURIER_CURLOPT_SSL_VERIFYHOST, 2L) == COURIER_CURLE_OK) {
        supported |= COURIER_TLS_OPTION_VERIFY;
    }
    courier_real.easy_cleanup(easy);
    supportedOptions = supported;
}

unsigned courier_tls_supported(void) {
    // The policy needs the header list (setopt), the moment before a transfer (add) and the
    // handle's end (cleanup) to go through the kit.
    unsigned needed = COURIER_WRAP_EASY_SETOPT | COURIER_WRAP_MULTI_ADD_HANDLE | COURIER_WRAP_EASY_CLEANUP;
    if (courier_platform_fixes_status() != COURIER_FIXES_ACTIVE || (courier_platform_fixes_wrapped() & needed) != needed) {
        return 0;
    }
    pthread_once(&probeOnce, probe);
    return supportedOptions;
}

// MARK: - Header lists

static int is_policy_header(const char *line) {
    size_t length = sizeof(COURIER_TLS_HEADER) - 1;
    // FoundationNetworking writes "Name: value", or "Name;" for an empty value.
    return line != NULL && strncasecmp(line, COURIER_TLS_HEADER, length) == 0 && (line[length] == ':' || line[length] == ';');
}

static void free_list(courier_curl_slist *list) {
    while (list != NULL) {
        courier_curl_slist *next = list->next;
        free(list->data);
        free(list);
        list = next;
    }
}

/// The token in "Name: token", into `token`; an empty or overlong value becomes "!", which no
/// policy is registered as (the handle then refuses its server).
static void read_token(const char *line, char token[COURIER_TLS_TOKEN_SIZE]) {
    const char *value = line + sizeof(COURIER_TLS_HEADER) - 1;
    if (*value == ':') value++;
    else value = "";
    while (*value == ' ' || *value == '\t') value++;
    size_t length = strlen(value);
    while (length > 0 && (value[length - 1] == ' ' || value[length - 1] == '\t')) length--;
    if (length == 0 || length >= COURIER_TLS_TOKEN_SIZE) {
        strcpy(token, "!");
        return;
    }
    memcpy(token, value, length);
    token[length] = 0;
}

/// Gives libcurl `list` without Courier's header. 0, or -1 when memory ran out.
static int set_headers(CURL *easy, courier_tls_state *tls, courier_curl_slist *list, CURLcode *result) {
    int found = 0;
    char token[COURIER_TLS_TOKEN_SIZE] = "";
    for (courier_curl_slist *node = list; node != NULL; node = node->next) {
        if (!is_policy_header(node->data)) continue;
        char this[COURIER_TLS_TOKEN_SIZE];
        read_token(node->data, this);
        // Two different tokens in one list: refuse rather than pick one.
        if (found && strcmp(this, token) != 0) strcpy(this, "!");
        strcpy(token, this);
        found = 1;
    }
    courier_curl_slist *old = tls->headers;
    if (!found) {
        *result = courier_real.easy_setopt(easy, COURIER_CURLOPT_HTTPHEADER, (void *)list);
        tls->headers = NULL;
        tls->wanted[0] = 0;
        free_list(old);
        return 0;
    }
    courier_curl_slist *copy = NULL;
    courier_curl_slist **tail = &copy;
    for (courier_curl_slist *node = list; node != NULL; node = node->next) {
        if (is_policy_header(node->data)) continue;
        courier_curl_slist *added = calloc(1, sizeof(courier_curl_slist));
        char *data = added != NULL ? strdup(node->data) : NULL;
        if (data == NULL) {
            free(added);
            free_list(copy);
            return -1;
        }
        added->data = data;
        *tail = added;
        tail = &added->next;
    }
    *result = courier_real.easy_setopt(easy, COURIER_CURLOPT_HTTPHEADER, (void *)copy);
    tls->headers = copy;
    strcpy(tls->wanted, token);
    free_list(old);
    return 0;
}

static int caller_uses_default_file(const courier_tls_state *tls);

/// libcurl's answer for a failure the kit cannot recover from (CURLE_OUT_OF_MEMORY).
#define COURIER_CURLE_OUT_OF_MEMORY 27

CURLcode courier_tls_setopt(CURL *easy, int option, void *value) {
    courier_easy_record *record = courier_table_find(&courier_easies, easy, sizeof(courier_easy_record));
    if (record == NULL) {
        // No memory for the record. A header list that names a policy must not go out as it is
        // (the policy would not be applied): FoundationNetworking treats the error as fatal,
        // which is still better than a connection with weaker checks than asked for.
        if (option == COURIER_CURLOPT_HTTPHEADER) {
            for (courier_curl_slist *node = value; node != NULL; node = node->next) {
                if (is_policy_header(node->data)) return COURIER_CURLE_OUT_OF_MEMORY;
            }
        }
        return courier_real.easy_setopt(easy, option, value);
    }
    courier_tls_state *tls = &record->tls;
    switch (option) {
    case COURIER_CURLOPT_CAINFO:
        free(tls->callerCAInfo);
        tls->callerCAInfo = value != NULL ? strdup(value) : NULL;
        tls->callerSetCAInfo = 1;
        tls->caDefaultsSet = 0;
        if (tls->caPathLeftOut && !caller_uses_default_file(tls)) {
            // The directory was left out for the built-in file only: another file gets it back.
            courier_real.easy_setopt(easy, COURIER_CURLOPT_CAPATH, courier_ca_defaults_get()->directory);
            tls->caPathLeftOut = 0;
        }
        return courier_real.easy_setopt(easy, option, value);
    case COURIER_CURLOPT_CAPATH:
        free(tls->callerCAPath);
        tls->callerCAPath = value != NULL ? strdup(value) : NULL;
        tls->callerSetCAPath = 1;
        tls->caDefaultsSet = 0;
        tls->caPathLeftOut = 0;
        return courier_real.easy_setopt(easy, option, value);
    default: {
        // The same list says whether the transfer's head goes on the diet (HeadDiet.c).
        record->diet.enabled = courier_diet_requested(value);
        CURLcode result = COURIER_CURLE_OK;
        if (set_headers(easy, tls, value, &result) != 0) return COURIER_CURLE_OUT_OF_MEMORY;
        return result;
    }
    }
}

// MARK: - Before each transfer

/// libcurl's built-in default for CAINFO or CAPATH (NULL when it has none, or before 7.84.0).
static const char *builtin_default(CURL *easy, int info) {
    char *value = NULL;
    if (courier_real.easy_getinfo(easy, info, &value) != COURIER_CURLE_OK) return NULL;
    return value;
}

static const char *ca_value(CURL *easy, courier_tls_ca_mode mode, const char *path, int callerSet, const char *callerValue, int info) {
    switch (mode) {
    case COURIER_TLS_CA_PATH: return path;
    case COURIER_TLS_CA_NONE: return NULL;
    default: return callerSet ? callerValue : builtin_default(easy, info);
    }
}

/// FoundationNetworking set no CA file, or set libcurl's built-in one (it names the file it chose).
static int caller_uses_default_file(const courier_tls_state *tls) {
    if (!tls->callerSetCAInfo) return 1;
    const char *file = courier_ca_defaults_get()->file;
    return tls->callerCAInfo != NULL && file != NULL && strcmp(tls->callerCAInfo, file) == 0;
}

/// Sets `policy`'s options on the handle, or libcurl's defaults when `policy` is NULL. Returns 0
/// when every option a policy asks for was taken. `caFileAlone`, when given, gets the CA file when
/// the handle's CAs come from that file alone (verification on, no directory, no blob), else NULL.
static int apply(CURL *easy, courier_tls_state *tls, const stored_policy *policy, const char **caFileAlone) {
    static const stored_policy defaults = { .verify = 1 };
    const stored_policy *wanted = policy != NULL ? policy : &defaults;
    int failed = 0;
    const char *caInfo = wanted->caFile != NULL
        ? wanted->caFile
        : ca_value(easy, wanted->caInfoMode, wanted->caInfo, tls->callerSetCAInfo, tls->callerCAInfo, COURIER_CURLINFO_CAINFO);
    const char *caPath = ca_value(easy, wanted->caPathMode, wanted->caPath, tls->callerSetCAPath, tls->callerCAPath, COURIER_CURLINFO_CAPATH);
    // The built-in directory goes only where the file libcurl loads has every certificate in it:
    // the built-in file itself, or a policy's file that holds it whole.
    int leaveOut = wanted->caPathMode == COURIER_TLS_CA_DEFAULT && !tls->callerSetCAPath
        && courier_ca_defaults_get()->cache == COURIER_CA_CACHE_DIRECTORY_LEFT_OUT
        && (wanted->caFile != NULL
                ? wanted->caFileCoversDirectory
                : wanted->caBlob == NULL && wanted->caInfoMode == COURIER_TLS_CA_DEFAULT && caller_uses_default_file(tls));
    if (leaveOut) caPath = NULL;
    failed |= courier_real.easy_setopt(easy, COURIER_CURLOPT_CAINFO, caInfo) != COURIER_CURLE_OK;
    CURLcode pathResult = courier_real.easy_setopt(easy, COURIER_CURLOPT_CAPATH, caPath);
    failed |= pathResult != COURIER_CURLE_OK && caPath != NULL;
    tls->caPathLeftOut = leaveOut && pathResult == COURIER_CURLE_OK;
    if (tls->caPathLeftOut) courier_real.easy_setopt(easy, COURIER_CURLOPT_CA_CACHE_TIMEOUT, COURIER_CA_CACHE_SECONDS);
    courier_curl_blob blob = { wanted->caBlob, wanted->caBlobLength, COURIER_CURL_BLOB_NOCOPY };
    CURLcode blobResult = courier_real.easy_setopt(easy, COURIER_CURLOPT_CAINFO_BLOB, wanted->caBlob != NULL ? (void *)&blob : NULL);
    // Unsetting an option libcurl does not have is not a failure; setting one is.
    failed |= blobResult != COURIER_CURLE_OK && wanted->caBlob != NULL;
    struct { int option; const char *value; } strings[] = {
        { COURIER_CURLOPT_PINNEDPUBLICKEY, wanted->pinnedPublicKey },
        { COURIER_CURLOPT_SSLCERT, wanted->clientCertificate },
        { COURIER_CURLOPT_SSLKEY, wanted->clientKey },
        { COURIER_CURLOPT_KEYPASSWD, wanted->keyPassword },
    };
    for (size_t index = 0; index < sizeof(strings) / sizeof(strings[0]); index++) {
        CURLcode result = courier_real.easy_setopt(easy, strings[index].option, strings[index].value);
        failed |= result != COURIER_CURLE_OK && strings[index].value != NULL;
    }
    failed |= courier_real.easy_setopt(easy, COURIER_CURLOPT_SSL_VERIFYPEER, wanted->verify ? 1L : 0L) != COURIER_CURLE_OK;
    failed |= courier_real.easy_setopt(easy, COURIER_CURLOPT_SSL_VERIFYHOST, wanted->verify ? 2L : 0L) != COURIER_CURLE_OK;
    if (caFileAlone != NULL) {
        *caFileAlone = !failed && wanted->verify && caInfo != NULL && caPath == NULL && wanted->caBlob == NULL ? caInfo : NULL;
    }
    return failed && policy != NULL ? -1 : 0;
}

/// A handle's first transfer without a policy: only the built-in CA directory may change (left
/// out where the built-in file covers it); every other option stays as FoundationNetworking set it.
static void use_default_ca(CURL *easy, courier_tls_state *tls) {
    tls->caDefaultsSet = 1;
    if (!caller_uses_default_file(tls) || tls->callerSetCAPath || courier_ca_defaults_get()->cache != COURIER_CA_CACHE_DIRECTORY_LEFT_OUT) {
        return;
    }
    if (courier_real.easy_setopt(easy, COURIER_CURLOPT_CAPATH, NULL) != COURIER_CURLE_OK) return;
    tls->caPathLeftOut = 1;
    courier_real.easy_setopt(easy, COURIER_CURLOPT_CA_CACHE_TIMEOUT, COURIER_CA_CACHE_SECONDS);
}

static void count_left_out(const courier_tls_state *tls) {
    if (tls->caPathLeftOut) __atomic_fetch_add(&courier_counters.caDirectoriesLeftOut, 1, __ATOMIC_RELAXED);
}

void courier_tls_before_add(CURL *easy, courier_easy_record *record, const char *bound) {
    courier_tls_state *tls = &record->tls;
    // The transfer's own header wins; a bound multi handle's policy covers a transfer without one.
    const char *wanted = tls->wanted[0] != 0 ? tls->wanted : bound;
    if (wanted == NULL || wanted[0] == 0) {
        // No policy for this transfer: undo the last one's, if any (a redirect to a host without one).
        if (tls->applied) {
            apply(easy, tls, NULL, NULL);
            tls->caDefaultsSet = 1;
        } else if (!tls->caDefaultsSet) {
            use_default_ca(easy, tls);
        }
        tls->applied = 0;
        count_left_out(tls);
        return;
    }
    const stored_policy *policy = find_policy(wanted);
    if (policy == NULL || apply(easy, tls, policy, NULL) != 0) {
        // Unknown token, or an option libcurl refused: the connection must fail, not go out with
        // weaker checks than asked for.
        apply(easy, tls, &refuseAll, NULL);
    }
    tls->applied = 1;
    count_left_out(tls);
    __atomic_fetch_add(&courier_counters.tlsPoliciesApplied, 1, __ATOMIC_RELAXED);
}

int courier_tls_apply_token(CURL *easy, const char *token, const char **caFileAlone) {
    if (courier_real.easy_setopt == NULL || courier_real.easy_getinfo == NULL || token == NULL) return -1;
    // A fresh handle: nothing set by FoundationNetworking to restore, libcurl's built-in CAs as the default.
    courier_tls_state tls;
    memset(&tls, 0, sizeof(tls));
    const stored_policy *policy = find_policy(token);
    if (policy == NULL || apply(easy, &tls, policy, caFileAlone) != 0) apply(easy, &tls, &refuseAll, caFileAlone);
    __atomic_fetch_add(&courier_counters.tlsPoliciesApplied, 1, __ATOMIC_RELAXED);
    return 0;
}

void courier_tls_release(courier_easy_record *record) {
    free_list(record->tls.headers);
    free(record->tls.callerCAInfo);
    free(record->tls.callerCAPath);
    record->tls.headers = NULL;
    record->tls.callerCAInfo = NULL;
    record->tls.callerCAPath = NULL;
}
