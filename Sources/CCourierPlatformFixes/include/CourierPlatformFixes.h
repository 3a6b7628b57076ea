// Courier's platform kit: fixes for FoundationNetworking defects, applied from inside the process
// by pointing FoundationNetworking's own imports of a few libcurl functions at wrappers
// (Docs/PlatformFixes.md). Nothing here is public API of Courier; `PlatformFixes` in Swift is.

#ifndef COURIER_PLATFORM_FIXES_H
#define COURIER_PLATFORM_FIXES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What `courier_platform_fixes_install` found. Every value but `ACTIVE` leaves the process as it was.
typedef enum {
    COURIER_FIXES_NOT_INSTALLED = 0,
    COURIER_FIXES_ACTIVE = 1,
    /// No loaded object contains the anchor address (FoundationNetworking was not found).
    COURIER_FIXES_NO_FOUNDATION_NETWORKING = 2,
    /// FoundationNetworking's object imports none of the libcurl functions the fixes wrap.
    COURIER_FIXES_NO_IMPORTS = 3,
    /// libcurl's own entry points could not be found in the process.
    COURIER_FIXES_NO_LIBCURL = 4,
    /// The import table could not be written (mprotect refused).
    COURIER_FIXES_NOT_WRITABLE = 5,
    /// This architecture's relocations are not known to the kit.
    COURIER_FIXES_UNSUPPORTED_ARCHITECTURE = 6,
} courier_fixes_status;

/// The libcurl functions the kit can take over, as bits.
enum {
    COURIER_WRAP_MULTI_SETOPT = 1 << 0,
    COURIER_WRAP_MULTI_CLEANUP = 1 << 1,
    COURIER_WRAP_MULTI_ADD_HANDLE = 1 << 2,
    COURIER_WRAP_MULTI_INFO_READ = 1 << 3,
    COURIER_WRAP_EASY_SETOPT = 1 << 4,
    COURIER_WRAP_EASY_GETINFO = 1 << 5,
    COURIER_WRAP_EASY_CLEANUP = 1 << 6,
    COURIER_WRAP_URL = 1 << 7,
    COURIER_WRAP_FREE = 1 << 8,
};

/// What the kit has done in this process, counted since it was installed.
typedef struct {
    /// Sockets whose interest libcurl narrowed while FoundationNetworking held a source it no
    /// longer wanted: the sources were torn down and only the needed ones made again (§6.16).
    uint64_t staleSourcesRemoved;
    /// Transfers libcurl ended "OK" although the response head never finished, reported as an
    /// error instead (§7.1).
    uint64_t headsCutShort;
    /// `Content-Length` values FoundationNetworking would have converted into a trap, reported as
    /// unknown instead (§7.2).
    uint64_t lengthsHidden;
    /// URL handles FoundationNetworking released with curl_free, released with
    /// curl_url_cleanup instead so that their parts are freed too (§6.17).
    uint64_t urlHandlesReleased;
    /// Transfers a TLS policy was put on before they started (Docs/TLS.md).
    uint64_t tlsPoliciesApplied;
    /// Transfers started without libcurl's built-in CA directory because every certificate in
    /// it is in the CA file they load, so that libcurl's CA-store cache works (Docs/TLS.md).
    uint64_t caDirectoriesLeftOut;
    /// Policies whose CA certificates went into a sealed in-memory file instead of a blob.
    uint64_t tlsCAFilesInMemory;
    /// Multi handles (one per URLSession) bound to a policy when they were made: their transfers
    /// get it without the request header (courier_tls_bind_begin).
    uint64_t tlsSessionsBound;
    /// Header lines of 2xx heads FoundationNetworking was not given because the request asked for
    /// the diet (COURIER_HEAD_DIET_REQUEST_FIELD; Docs/Platform.md §6.18). One line carrying the whole head
    /// (COURIER_HEAD_DIET_FIELD) stands in for them.
    uint64_t headerLinesWithheld;
} courier_fixes_counters;

/// Whether new connections can reuse libcurl's parsed CA store (Docs/TLS.md, "What a connection
/// costs").
typedef enum {
    /// libcurl has no CA-store cache (before 7.87.0), or the kit is not active.
    COURIER_CA_CACHE_UNSUPPORTED = 0,
    /// libcurl has no built-in CA directory: its cache works without the kit.
    COURIER_CA_CACHE_NO_DIRECTORY = 1,
    /// The built-in CA directory holds only certificates of the built-in CA file: the kit leaves
    /// it out, and the cache works.
    COURIER_CA_CACHE_DIRECTORY_LEFT_OUT = 2,
    /// The built-in CA directory has certificates (or CRLs) the file lacks, or could not be read
    /// whole: it stays, and every new connection parses the CA file again.
    COURIER_CA_CACHE_DIRECTORY_ADDS = 3,
} courier_ca_cache_state;

/// The state for this process (found once, on first use).
courier_ca_cache_state courier_tls_ca_cache_state(void);

/// libcurl's built-in CA file and directory (NULL when none, or the kit is not active).
const char *courier_tls_default_ca_file(void);
const char *courier_tls_default_ca_directory(void);

/// 1 when every certificate in the OpenSSL hash directory `directory` (files named like
/// 1a2b3c4d.0) is also in `pem`, and the directory holds nothing else OpenSSL would load (CRLs,
/// TRUSTED CERTIFICATE blocks, unreadable files); else 0.
int courier_tls_pem_covers_directory(const void *pem, size_t length, const char *directory);

/// How a TLS policy sets libcurl's CA file or CA directory.
typedef enum {
    /// libcurl's default (its built-in path, or what FoundationNetworking set).
    COURIER_TLS_CA_DEFAULT = 0,
    /// None: only the policy's own certificates are trusted.
    COURIER_TLS_CA_NONE = 1,
    /// The path given.
    COURIER_TLS_CA_PATH = 2,
} courier_tls_ca_mode;

/// A TLS policy as libcurl options. The kit copies everything when it is registered and keeps it
/// for the life of the process; a transfer names it by `token` (Docs/TLS.md).
typedef struct {
    const char *token;
    courier_tls_ca_mode caInfoMode;
    const char *caInfo;
    courier_tls_ca_mode caPathMode;
    const char *caPath;
    /// PEM certificates trusted besides (or, with both modes NONE, instead of) the CA file and
    /// directory: CURLOPT_CAINFO_BLOB. NULL for none.
    const void *caBlob;
    size_t caBlobLength;
    /// CURLOPT_PINNEDPUBLICKEY (`sha256//…;sha256//…`), or NULL.
    const char *pinnedPublicKey;
    /// CURLOPT_SSLCERT, CURLOPT_SSLKEY, CURLOPT_KEYPASSWD, or NULL.
    const char *clientCertificate;
    const char *clientKey;
    const char *keyPassword;
    /// 0 only for the loudly named opt-out: CURLOPT_SSL_VERIFYPEER 0 and VERIFYHOST 0.
    int verify;
} courier_tls_policy;

/// The libcurl options a TLS policy may need, as bits of courier_tls_supported().
enum {
    COURIER_TLS_OPTION_CAINFO = 1 << 0,
    COURIER_TLS_OPTION_CAPATH = 1 << 1,
    COURIER_TLS_OPTION_CAINFO_BLOB = 1 << 2,
    COURIER_TLS_OPTION_PINNEDPUBLICKEY = 1 << 3,
    COURIER_TLS_OPTION_SSLCERT = 1 << 4,
    COURIER_TLS_OPTION_SSLKEY = 1 << 5,
    COURIER_TLS_OPTION_KEYPASSWD = 1 << 6,
    COURIER_TLS_OPTION_VERIFY = 1 << 7,
};

/// The name of the request header that carries a policy's token from Courier to the kit. The
/// kit takes it out of the header list libcurl sends.
#define COURIER_TLS_HEADER "X-Courier-TLS"

/// Registers a policy (copied). Returns 0, or -1 when memory ran out or the token is too long.
int courier_tls_register(const courier_tls_policy *policy);

/// Binds every multi handle FoundationNetworking makes on this thread until courier_tls_bind_end
/// to the policy registered as `token`: a transfer on such a handle whose headers name no policy
/// gets that one. URLSession makes its multi handle in its initializer, so a URLSession made
/// between the two calls is bound. NULL or "" binds nothing.
void courier_tls_bind_begin(const char *token);

/// Ends what courier_tls_bind_begin started on this thread; returns how many multi handles were
/// bound (1 confirms a URLSession made in between; anything else: send the header).
int courier_tls_bind_end(void);

/// Which of the options this process's libcurl accepts (probed once on a handle of its own),
/// or 0 when the kit is not active.
unsigned courier_tls_supported(void);

// MARK: - Byte streams over libcurl's connections (ByteStream.c)

/// The libcurl functions a byte stream needs, as bits of courier_stream_functions().
enum {
    COURIER_STREAM_EASY_INIT = 1 << 0,
    COURIER_STREAM_EASY_SETOPT = 1 << 1,
    COURIER_STREAM_EASY_GETINFO = 1 << 2,
    COURIER_STREAM_EASY_PERFORM = 1 << 3,
    COURIER_STREAM_EASY_RECV = 1 << 4,
    COURIER_STREAM_EASY_SEND = 1 << 5,
    COURIER_STREAM_EASY_CLEANUP = 1 << 6,
    COURIER_STREAM_ALL = (1 << 7) - 1,
};

/// Which of those functions this process's libcurl has (looked up once, whether or not the kit
/// is installed). A stream needs all of them.
unsigned courier_stream_functions(void);

/// The CURLcodes a stream's caller tells apart (libcurl's values).
enum {
    COURIER_STREAM_OK = 0,
    COURIER_STREAM_ABORTED_BY_CALLBACK = 42,
    COURIER_STREAM_AGAIN = 81,
};

/// One connection libcurl made and hands over (CURLOPT_CONNECT_ONLY). Opaque.
typedef struct courier_stream courier_stream;

/// How to connect.
typedef struct {
    /// `https://host:port/` or `http://host:port/`: libcurl connects (through a proxy its
    /// environment names, tunnelled with CONNECT) and, for https, makes the TLS connection.
    const char *url;
    /// The connect phase's limit (TCP, proxy, TLS) in milliseconds; 0 for libcurl's default.
    long connectTimeoutMilliseconds;
    /// The TLS policy registered as this token (courier_tls_register), or NULL for libcurl's
    /// defaults (the system's CAs, full verification).
    const char *tlsToken;
} courier_stream_options;

/// A new stream with its own easy handle, not connected; NULL when libcurl lacks a function or
/// memory ran out.
courier_stream *courier_stream_new(void);

/// Connects: blocks until connected, failed, timed out or cancelled. Returns libcurl's CURLcode
/// (0 on success); courier_stream_error() has libcurl's text for a failure. Call once.
int courier_stream_connect(courier_stream *stream, const courier_stream_options *options);

/// Makes a connect under way end soon with CURLE_ABORTED_BY_CALLBACK (42). Any thread, any time
/// before courier_stream_free.
void courier_stream_cancel(courier_stream *stream);

/// libcurl's error text for the last failure ("" when none).
const char *courier_stream_error(const courier_stream *stream);

/// The connected socket (CURLINFO_ACTIVESOCKET), or -1.
int courier_stream_socket(courier_stream *stream);

/// curl_easy_recv: CURLcode; `*received` 0 with CURLE_OK means the peer closed.
int courier_stream_recv(courier_stream *stream, void *buffer, size_t length, size_t *received);

/// 1 when OpenSSL holds no byte of the connection that a recv has not returned (SSL_has_pending
/// is 0): whatever comes next is in the socket, and its readiness shows it. 0 when it holds some,
/// or when that cannot be asked (another TLS library, another OpenSSL than libcurl's).
int courier_stream_tls_drained(courier_stream *stream);

/// Sends at most one TLS record's worth of `bytes` (16 KiB) from a buffer of the stream's own, so
/// that a send the socket blocked can be retried from the same address, as OpenSSL requires
/// (libcurl does not set SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER). Returns a CURLcode; `*taken` is
/// how many of `bytes` were sent (0 with CURLE_AGAIN: call again with the same bytes first).
/// -1 when a retry gives fewer bytes than the blocked send held.
int courier_stream_send(courier_stream *stream, const void *bytes, size_t length, size_t *taken);

/// Closes the connection and frees the stream (curl_easy_cleanup). Once.
void courier_stream_free(courier_stream *stream);

/// How often a stream's TLS connect parsed a CA file, and how often it took a store parsed by an
/// earlier connect instead (StreamCAStore.c), since the process started.
typedef struct {
    uint64_t parsed;
    uint64_t reused;
} courier_stream_ca_counts;

/// The counts so far.
courier_stream_ca_counts courier_stream_ca_store_counts(void);

/// The field the kit adds to a 2xx head it withheld lines from: its value is the process's key
/// (courier_head_diet_key) and then every header line of the head, each after a line feed.
#define COURIER_HEAD_DIET_FIELD "X-Courier-Head"

/// The request field that asks the kit to put a transfer's 2xx head on the diet: FoundationNetworking
/// is given only the lines it acts on, and the whole head in one COURIER_HEAD_DIET_FIELD line
/// (Docs/Platform.md §6.18). Courier sets it with a value of one space, which FoundationNetworking
/// writes as "Name:  " and libcurl never sends.
#define COURIER_HEAD_DIET_REQUEST_FIELD "X-Courier-Diet"

/// Whether the kit can put heads on the diet in this process (it is active and stands in front of
/// curl_easy_setopt, curl_multi_add_handle and curl_easy_cleanup).
int courier_head_diet_supported(void);
/// The 32 hexadecimal digits that begin every COURIER_HEAD_DIET_FIELD value the kit writes in this
/// process (random per process, so a server's own field of that name is never taken for it).
const char *courier_head_diet_key(void);

/// Installs the kit into the loaded object that contains `anchor` (any address inside
/// FoundationNetworking's code or data). Idempotent and thread-safe: later calls return the first
/// result. `wrap` says which functions to take over (the COURIER_WRAP_ bits).
courier_fixes_status courier_platform_fixes_install(const void *anchor, unsigned wrap);

/// The result of the install, or NOT_INSTALLED.
courier_fixes_status courier_platform_fixes_status(void);

/// Which functions are taken over right now: the bits whose import slots hold the kit's
/// wrapper when this is called (read back from the import table, not remembered).
unsigned courier_platform_fixes_wrapped(void);

/// The path of the object the kit was installed into ("" for the main executable, which holds
/// FoundationNetworking in a `--static-swift-stdlib` build), or NULL before a successful install.
const char *courier_platform_fixes_object(void);

/// The counters so far.
courier_fixes_counters courier_platform_fixes_counters(void);

// MARK: - Raw DEFLATE streams from the system's zlib (Deflate.c)

/// 1 when libz.so.1 loaded with every function a stream needs (looked up once), else 0.
int courier_zlib_available(void);

typedef struct courier_zstream courier_zstream;

/// What courier_zstream_step says.
#define COURIER_ZSTREAM_MORE 0
#define COURIER_ZSTREAM_END 1
#define COURIER_ZSTREAM_ERROR (-1)

/// A raw DEFLATE compressor (`inflating` 0) or decompressor (1) with a window of 2^`windowBits`
/// bytes (8–15); NULL without zlib or for other window sizes. Not thread-safe: one user at a time.
courier_zstream *courier_zstream_new(int inflating, int windowBits);

/// Runs the stream over `input` into `output` with a sync flush; says how many bytes it took and
/// gave. COURIER_ZSTREAM_MORE: call again while it fills `output` or input remains;
/// COURIER_ZSTREAM_ERROR: the compressed data is invalid.
int courier_zstream_step(courier_zstream *z, const void *input, size_t inputLength, void *output,
                         size_t outputCapacity, size_t *consumed, size_t *produced);

/// Forgets the history (no context takeover); 0 on success.
int courier_zstream_reset(courier_zstream *z);

/// Frees the stream. NULL is ignored.
void courier_zstream_free(courier_zstream *z);

#ifdef __cplusplus
}
#endif

#endif
