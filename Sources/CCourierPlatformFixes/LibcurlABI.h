// The slice of libcurl's ABI the kit needs, declared here so that building Courier needs no
// libcurl development files. The values are libcurl's stable public ones (curl.h, multi.h);
// they have not changed since the options were introduced.

#ifndef COURIER_LIBCURL_ABI_H
#define COURIER_LIBCURL_ABI_H

#include <stdint.h>
#include <stddef.h>

typedef void CURL;
typedef void CURLM;
typedef int curl_socket_t;
typedef int CURLcode;
typedef int CURLMcode;
typedef int64_t curl_off_t;

// Option numbers are a type base plus an index; the base says how the vararg is passed.
#define COURIER_CURLOPTTYPE_LONG 0
#define COURIER_CURLOPTTYPE_OBJECTPOINT 10000
#define COURIER_CURLOPTTYPE_FUNCTIONPOINT 20000
#define COURIER_CURLOPTTYPE_OFF_T 30000
#define COURIER_CURLOPTTYPE_BLOB 40000

#define COURIER_CURLOPT_ERRORBUFFER (COURIER_CURLOPTTYPE_OBJECTPOINT + 10)
#define COURIER_CURLOPT_HEADERDATA (COURIER_CURLOPTTYPE_OBJECTPOINT + 29)
#define COURIER_CURLOPT_HEADERFUNCTION (COURIER_CURLOPTTYPE_FUNCTIONPOINT + 79)

// The TLS policy's options (curl.h of 7.88.1; strings and lists are OBJECTPOINT options).
#define COURIER_CURLOPT_HTTPHEADER (COURIER_CURLOPTTYPE_OBJECTPOINT + 23)
#define COURIER_CURLOPT_SSLCERT (COURIER_CURLOPTTYPE_OBJECTPOINT + 25)
#define COURIER_CURLOPT_KEYPASSWD (COURIER_CURLOPTTYPE_OBJECTPOINT + 26)
#define COURIER_CURLOPT_SSL_VERIFYPEER (COURIER_CURLOPTTYPE_LONG + 64)
#define COURIER_CURLOPT_CAINFO (COURIER_CURLOPTTYPE_OBJECTPOINT + 65)
#define COURIER_CURLOPT_SSL_VERIFYHOST (COURIER_CURLOPTTYPE_LONG + 81)
#define COURIER_CURLOPT_SSLKEY (COURIER_CURLOPTTYPE_OBJECTPOINT + 87)
#define COURIER_CURLOPT_CAPATH (COURIER_CURLOPTTYPE_OBJECTPOINT + 97)
#define COURIER_CURLOPT_PINNEDPUBLICKEY (COURIER_CURLOPTTYPE_OBJECTPOINT + 230)
#define COURIER_CURLOPT_CAINFO_BLOB (COURIER_CURLOPTTYPE_BLOB + 309)
/// 7.54.0 and later: a proxy's answer to CONNECT is not handed to the header callback (Platform.md §6.19).
#define COURIER_CURLOPT_SUPPRESS_CONNECT_HEADERS (COURIER_CURLOPTTYPE_LONG + 265)
/// 7.87.0 and later: how long a multi handle keeps its parsed CA store.
#define COURIER_CURLOPT_CA_CACHE_TIMEOUT (COURIER_CURLOPTTYPE_LONG + 321)

// A connection handed over as a byte stream (ByteStream.c; curl.h of 7.88.1).
#define COURIER_CURLOPT_URL (COURIER_CURLOPTTYPE_OBJECTPOINT + 2)
#define COURIER_CURLOPT_NOPROGRESS (COURIER_CURLOPTTYPE_LONG + 43)
#define COURIER_CURLOPT_XFERINFODATA (COURIER_CURLOPTTYPE_OBJECTPOINT + 57)
#define COURIER_CURLOPT_HTTPPROXYTUNNEL (COURIER_CURLOPTTYPE_LONG + 61)
#define COURIER_CURLOPT_HTTP_VERSION (COURIER_CURLOPTTYPE_LONG + 84)
#define COURIER_CURLOPT_NOSIGNAL (COURIER_CURLOPTTYPE_LONG + 99)
#define COURIER_CURLOPT_CONNECT_ONLY (COURIER_CURLOPTTYPE_LONG + 141)
#define COURIER_CURLOPT_CONNECTTIMEOUT_MS (COURIER_CURLOPTTYPE_LONG + 156)
#define COURIER_CURLOPT_XFERINFOFUNCTION (COURIER_CURLOPTTYPE_FUNCTIONPOINT + 219)
/// OpenSSL (and wolfSSL, mbedTLS) builds: called with the SSL_CTX before each TLS handshake.
#define COURIER_CURLOPT_SSL_CTX_FUNCTION (COURIER_CURLOPTTYPE_FUNCTIONPOINT + 108)
#define COURIER_CURLOPT_SSL_CTX_DATA (COURIER_CURLOPTTYPE_OBJECTPOINT + 109)
/// CURL_HTTP_VERSION_1_1: with it libcurl offers only "http/1.1" in ALPN.
#define COURIER_CURL_HTTP_VERSION_1_1 2L

#define COURIER_CURLMOPT_SOCKETFUNCTION (COURIER_CURLOPTTYPE_FUNCTIONPOINT + 1)
#define COURIER_CURLMOPT_SOCKETDATA (COURIER_CURLOPTTYPE_OBJECTPOINT + 2)

#define COURIER_CURLINFO_DOUBLE 0x300000
#define COURIER_CURLINFO_CONTENT_LENGTH_DOWNLOAD (COURIER_CURLINFO_DOUBLE + 15)
#define COURIER_CURLINFO_STRING 0x100000
/// The built-in default CA file and directory (7.84.0 and later).
#define COURIER_CURLINFO_CAINFO (COURIER_CURLINFO_STRING + 61)
#define COURIER_CURLINFO_CAPATH (COURIER_CURLINFO_STRING + 62)

#define COURIER_CURLINFO_PTR 0x400000
/// The connection's TLS session: a curl_tlssessioninfo (7.48.0 and later).
#define COURIER_CURLINFO_TLS_SSL_PTR (COURIER_CURLINFO_PTR + 45)
/// curl_sslbackend's OpenSSL: curl_tlssessioninfo's `internals` is then an SSL *.
#define COURIER_CURLSSLBACKEND_OPENSSL 1

#define COURIER_CURLINFO_SOCKET 0x500000
/// The connection's socket (7.45.0 and later).
#define COURIER_CURLINFO_ACTIVESOCKET (COURIER_CURLINFO_SOCKET + 44)

#define COURIER_CURL_POLL_NONE 0
#define COURIER_CURL_POLL_IN 1
#define COURIER_CURL_POLL_OUT 2
#define COURIER_CURL_POLL_INOUT 3
#define COURIER_CURL_POLL_REMOVE 4

#define COURIER_CURLE_OK 0
#define COURIER_CURLE_FAILED_INIT 2
#define COURIER_CURLE_GOT_NOTHING 52
#define COURIER_CURLE_ABORTED_BY_CALLBACK 42
/// curl_easy_recv/curl_easy_send: the socket would block.
#define COURIER_CURLE_AGAIN 81

#define COURIER_CURL_ERROR_SIZE 256

/// `struct curl_blob`'s flag: libcurl keeps the pointer and copies nothing (the kit's policies
/// live as long as the process).
#define COURIER_CURL_BLOB_NOCOPY 0

#define COURIER_CURLMSG_DONE 1

/// libcurl's `struct CURLMsg`.
typedef struct {
    int msg;
    CURL *easy_handle;
    union {
        void *whatever;
        CURLcode result;
    } data;
} courier_curl_msg;

/// libcurl's `struct curl_slist` (a header list).
typedef struct courier_curl_slist {
    char *data;
    struct courier_curl_slist *next;
} courier_curl_slist;

/// libcurl's `struct curl_blob` (7.71.0 and later).
typedef struct {
    void *data;
    size_t len;
    unsigned int flags;
} courier_curl_blob;

typedef int (*courier_socket_callback)(CURL *easy, curl_socket_t socket, int what, void *userp, void *socketp);
typedef size_t (*courier_header_callback)(char *buffer, size_t size, size_t nitems, void *userdata);

typedef CURLMcode (*courier_multi_setopt_fn)(CURLM *multi, int option, ...);
typedef CURLMcode (*courier_multi_cleanup_fn)(CURLM *multi);
typedef CURLMcode (*courier_multi_add_handle_fn)(CURLM *multi, CURL *easy);
typedef CURLMcode (*courier_multi_assign_fn)(CURLM *multi, curl_socket_t socket, void *socketp);
typedef courier_curl_msg *(*courier_multi_info_read_fn)(CURLM *multi, int *left);
typedef CURLcode (*courier_easy_setopt_fn)(CURL *easy, int option, ...);
typedef CURLcode (*courier_easy_getinfo_fn)(CURL *easy, int info, ...);
typedef void (*courier_easy_cleanup_fn)(CURL *easy);
typedef void *(*courier_url_fn)(void);
typedef void (*courier_url_cleanup_fn)(void *url);
typedef void (*courier_free_fn)(void *pointer);
typedef CURL *(*courier_easy_init_fn)(void);
typedef CURLcode (*courier_easy_perform_fn)(CURL *easy);
typedef CURLcode (*courier_easy_recv_fn)(CURL *easy, void *buffer, size_t length, size_t *received);
typedef CURLcode (*courier_easy_send_fn)(CURL *easy, const void *buffer, size_t length, size_t *sent);
typedef int (*courier_xferinfo_callback)(void *userp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

#endif
