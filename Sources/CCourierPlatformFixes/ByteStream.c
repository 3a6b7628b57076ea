// A connection libcurl makes and then hands over as a two-way byte stream (CURLOPT_CONNECT_ONLY):
// what Courier's wss:// runs over (Docs/WebSocket.md, "wss:// on the system libcurl"). libcurl
// does the TCP connect, the proxy tunnel and the TLS handshake with the TLS policy a request would
// get (TLSPolicy.c); curl_easy_recv and curl_easy_send then move bytes, without blocking.
//
// These are calls of Courier's own on a handle of its own: they go to libcurl directly (found
// with dlsym), never through the kit's wrappers, and FoundationNetworking never sees the handle.

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "CAStore.h"
#include "EasyRecord.h"
#include "StreamCAStore.h"

/// One TLS record's plaintext at most per send (RFC 8446 §5.1): a send the socket blocks holds
/// at most this much in OpenSSL's pending record.
#define STAGING_SIZE 16384

struct courier_stream {
    CURL *easy;
    /// Set by courier_stream_cancel; read by the progress callback during the connect.
    int cancelled;
    char error[COURIER_CURL_ERROR_SIZE];
    /// The bytes of a send the socket blocked: OpenSSL must be called again with this address
    /// and at least this many bytes.
    unsigned char staging[STAGING_SIZE];
    size_t staged;
    /// The parsed CA store OpenSSL gets in place of libcurl loading the CA file (StreamCAStore.c),
    /// or NULL; one reference, given back when the stream is freed.
    void *caStore;
    /// Stored with release when the connect returns, loaded with acquire before the stream is
    /// freed: the connecting thread hands the stream back through a Swift continuation, which
    /// ThreadSanitizer does not see.
    int connectEnded;
};

typedef struct {
    courier_easy_init_fn init;
    courier_easy_setopt_fn setopt;
    courier_easy_getinfo_fn getinfo;
    courier_easy_perform_fn perform;
    courier_easy_recv_fn recv;
    courier_easy_send_fn send;
    courier_easy_cleanup_fn cleanup;
} stream_functions;

static pthread_once_t lookupOnce = PTHREAD_ONCE_INIT;
static stream_functions curl;
static unsigned found;

static void look_up(void) {
    struct { const char *name; void **slot; unsigned bit; } wanted[] = {
        { "curl_easy_init", (void **)&curl.init, COURIER_STREAM_EASY_INIT },
        { "curl_easy_setopt", (void **)&curl.setopt, COURIER_STREAM_EASY_SETOPT },
        { "curl_easy_getinfo", (void **)&curl.getinfo, COURIER_STREAM_EASY_GETINFO },
        { "curl_easy_perform", (void **)&curl.perform, COURIER_STREAM_EASY_PERFORM },
        { "curl_easy_recv", (void **)&curl.recv, COURIER_STREAM_EASY_RECV },
        { "curl_easy_send", (void **)&curl.send, COURIER_STREAM_EASY_SEND },
        { "curl_easy_cleanup", (void **)&curl.cleanup, COURIER_STREAM_EASY_CLEANUP },
    };
    for (size_t index = 0; index < sizeof(wanted) / sizeof(wanted[0]); index++) {
        *wanted[index].slot = courier_libcurl_symbol(wanted[index].name);
        if (*wanted[index].slot != NULL) found |= wanted[index].bit;
    }
}

unsigned courier_stream_functions(void) {
    pthread_once(&lookupOnce, look_up);
    return found;
}

courier_stream *courier_stream_new(void) {
    if (courier_stream_functions() != COURIER_STREAM_ALL) return NULL;
    courier_stream *stream = calloc(1, sizeof(courier_stream));
    if (stream == NULL) return NULL;
    stream->easy = curl.init();
    if (stream->easy == NULL) {
        free(stream);
        return NULL;
    }
    return stream;
}

/// CURLOPT_SSL_CTX_FUNCTION, before the handshake: the shared store when there is one (libcurl
/// fills the context's store only afterwards, from the CA file, which it was told to leave out).
/// (OpenSSL's read-ahead was tried here too: one recv per record instead of two, but no faster
/// echo was measured, Docs/Performance.md.)
static CURLcode configure_tls(CURL *easy, void *context, void *userp) {
    (void)easy;
    const courier_stream *stream = userp;
    if (stream->caStore != NULL) courier_stream_ca_store_install(context, stream->caStore);
    return COURIER_CURLE_OK;
}

/// Whether the environment names an https:// proxy for this connection: libcurl would make a TLS
/// connection to the proxy too, and CURLOPT_SSL_CTX_FUNCTION cannot tell that one from the
/// server's (the proxy has CAs of its own, PROXY_CAINFO).
static int tls_proxy_possible(void) {
    const char *names[] = { "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY" };
    for (size_t index = 0; index < sizeof(names) / sizeof(names[0]); index++) {
        const char *value = getenv(names[index]);
        if (value != NULL && strncasecmp(value, "https://", 8) == 0) return 1;
    }
    return 0;
}

/// Uses a parsed store for the CA file the connection would load alone (`file`: the policy's, or
/// NULL to take libcurl's defaults as the kit would leave them), so that libcurl parses nothing.
/// Any step that does not hold leaves the handle as it was: libcurl then parses the file itself.
static void share_ca_store(courier_stream *stream, int hasToken, const char *file) {
    if (!hasToken) {
        // libcurl's defaults: the built-in file alone when the kit found that the built-in
        // directory adds nothing to it (CAStore.c).
        const courier_ca_defaults *defaults = courier_ca_defaults_get();
        if (defaults->cache != COURIER_CA_CACHE_DIRECTORY_LEFT_OUT && defaults->cache != COURIER_CA_CACHE_NO_DIRECTORY) return;
        file = defaults->file;
    }
    if (file == NULL || tls_proxy_possible()) return;
    void *store = courier_stream_ca_store(file);
    if (store == NULL) return;
    CURL *easy = stream->easy;
    if (curl.setopt(easy, COURIER_CURLOPT_CAPATH, NULL) != COURIER_CURLE_OK
        || curl.setopt(easy, COURIER_CURLOPT_CAINFO, NULL) != COURIER_CURLE_OK) {
        // Back to libcurl's own loading of the same file (a failed setopt changed nothing).
        curl.setopt(easy, COURIER_CURLOPT_CAINFO, file);
        courier_stream_ca_store_release(store);
        return;
    }
    stream->caStore = store;
}

/// The TLS set-up of configure_tls, where libcurl's TLS library is the OpenSSL in the process:
/// without the callback, nothing of it happens and libcurl parses the CA file itself.
static void configure_openssl(courier_stream *stream, int hasToken, const char *caFileAlone) {
    if (!courier_stream_openssl_available()) return;
    CURL *easy = stream->easy;
    if (curl.setopt(easy, COURIER_CURLOPT_SSL_CTX_FUNCTION, configure_tls) != COURIER_CURLE_OK
        || curl.setopt(easy, COURIER_CURLOPT_SSL_CTX_DATA, (void *)stream) != COURIER_CURLE_OK) {
        curl.setopt(easy, COURIER_CURLOPT_SSL_CTX_FUNCTION, NULL);
        return;
    }
    share_ca_store(stream, hasToken, caFileAlone);
}

/// libcurl calls it while it connects, too: a nonzero answer ends the connect.
static int progress(void *userp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    const courier_stream *stream = userp;
    return __atomic_load_n(&stream->cancelled, __ATOMIC_ACQUIRE);
}

static int connect_stream(courier_stream *stream, const courier_stream_options *options);

int courier_stream_connect(courier_stream *stream, const courier_stream_options *options) {
    int result = connect_stream(stream, options);
    __atomic_store_n(&stream->connectEnded, 1, __ATOMIC_RELEASE);
    return result;
}

static int connect_stream(courier_stream *stream, const courier_stream_options *options) {
    CURL *easy = stream->easy;
    int failed = 0;
    failed |= curl.setopt(easy, COURIER_CURLOPT_ERRORBUFFER, stream->error) != COURIER_CURLE_OK;
    failed |= curl.setopt(easy, COURIER_CURLOPT_URL, options->url) != COURIER_CURLE_OK;
    // Connect (and handshake), then stop: the caller speaks the protocol itself.
    failed |= curl.setopt(easy, COURIER_CURLOPT_CONNECT_ONLY, 1L) != COURIER_CURLE_OK;
    // libcurl's default offers "h2" in ALPN, and an h2 server then speaks HTTP/2, which has no
    // Upgrade: the WebSocket handshake would fail (issue 34, measured).
    failed |= curl.setopt(easy, COURIER_CURLOPT_HTTP_VERSION, COURIER_CURL_HTTP_VERSION_1_1) != COURIER_CURLE_OK;
    // No SIGALRM for DNS timeouts: the connect runs on a thread of its own in a threaded process.
    failed |= curl.setopt(easy, COURIER_CURLOPT_NOSIGNAL, 1L) != COURIER_CURLE_OK;
    // Through an HTTP proxy, tunnel (CONNECT) for http:// too: the bytes that follow are not a
    // request the proxy could forward.
    failed |= curl.setopt(easy, COURIER_CURLOPT_HTTPPROXYTUNNEL, 1L) != COURIER_CURLE_OK;
    if (options->connectTimeoutMilliseconds > 0) {
        failed |= curl.setopt(easy, COURIER_CURLOPT_CONNECTTIMEOUT_MS, options->connectTimeoutMilliseconds) != COURIER_CURLE_OK;
    }
    failed |= curl.setopt(easy, COURIER_CURLOPT_XFERINFOFUNCTION, (courier_xferinfo_callback)progress) != COURIER_CURLE_OK;
    failed |= curl.setopt(easy, COURIER_CURLOPT_XFERINFODATA, (void *)stream) != COURIER_CURLE_OK;
    failed |= curl.setopt(easy, COURIER_CURLOPT_NOPROGRESS, 0L) != COURIER_CURLE_OK;
    if (failed) {
        strncpy(stream->error, "libcurl refused an option a byte stream needs", sizeof(stream->error) - 1);
        return COURIER_CURLE_FAILED_INIT;
    }
    const char *caFileAlone = NULL;
    if (options->tlsToken != NULL && courier_tls_apply_token(easy, options->tlsToken, &caFileAlone) != 0) {
        // Swift checks that the kit can enforce a policy before it gets here; never connect with
        // weaker checks than asked for.
        strncpy(stream->error, "the TLS policy could not be applied (Courier's platform kit is not active)", sizeof(stream->error) - 1);
        return COURIER_CURLE_FAILED_INIT;
    }
    if (strncmp(options->url, "https:", 6) == 0) configure_openssl(stream, options->tlsToken != NULL, caFileAlone);
    if (__atomic_load_n(&stream->cancelled, __ATOMIC_ACQUIRE)) return COURIER_CURLE_ABORTED_BY_CALLBACK;
    return curl.perform(easy);
}

void courier_stream_cancel(courier_stream *stream) {
    __atomic_store_n(&stream->cancelled, 1, __ATOMIC_RELEASE);
}

const char *courier_stream_error(const courier_stream *stream) {
    return stream->error;
}

int courier_stream_socket(courier_stream *stream) {
    curl_socket_t socket = -1;
    if (curl.getinfo(stream->easy, COURIER_CURLINFO_ACTIVESOCKET, &socket) != COURIER_CURLE_OK) return -1;
    return socket;
}

int courier_stream_recv(courier_stream *stream, void *buffer, size_t length, size_t *received) {
    *received = 0;
    stream->error[0] = 0;
    return curl.recv(stream->easy, buffer, length, received);
}

/// SSL_has_pending (OpenSSL 1.1.0 and later), only where libcurl's TLS library is the OpenSSL the
/// process resolves (StreamCAStore.c): a function of another OpenSSL must not touch its SSL.
static pthread_once_t pendingOnce = PTHREAD_ONCE_INIT;
static int (*sslHasPending)(const void *ssl);

static void look_up_pending(void) {
    if (!courier_stream_openssl_available()) return;
    sslHasPending = (int (*)(const void *))dlsym(RTLD_DEFAULT, "SSL_has_pending");
}

/// curl_tlssessioninfo.
typedef struct {
    int backend;
    void *internals;
} tls_session_info;

int courier_stream_tls_drained(courier_stream *stream) {
    pthread_once(&pendingOnce, look_up_pending);
    if (sslHasPending == NULL) return 0;
    tls_session_info *info = NULL;
    if (curl.getinfo(stream->easy, COURIER_CURLINFO_TLS_SSL_PTR, &info) != COURIER_CURLE_OK || info == NULL) return 0;
    if (info->backend != COURIER_CURLSSLBACKEND_OPENSSL || info->internals == NULL) return 0;
    return sslHasPending(info->internals) == 0;
}

int courier_stream_send(courier_stream *stream, const void *bytes, size_t length, size_t *taken) {
    *taken = 0;
    stream->error[0] = 0;
    size_t count = stream->staged;
    if (count == 0) {
        if (length == 0) return COURIER_CURLE_OK;
        count = length < STAGING_SIZE ? length : STAGING_SIZE;
        memcpy(stream->staging, bytes, count);
    } else if (length < count) {
        // The caller gave up on bytes OpenSSL may already have put in a record.
        return -1;
    }
    size_t sent = 0;
    CURLcode result = curl.send(stream->easy, stream->staging, count, &sent);
    if (result == COURIER_CURLE_AGAIN) {
        stream->staged = count;
        return result;
    }
    stream->staged = 0;
    *taken = sent;
    return result;
}

void courier_stream_free(courier_stream *stream) {
    if (stream == NULL) return;
    (void)__atomic_load_n(&stream->connectEnded, __ATOMIC_ACQUIRE);
    curl.cleanup(stream->easy);
    courier_stream_ca_store_release(stream->caStore);
    free(stream);
}
