// The kit's record for one easy handle, shared by the trap fixes (ResponseHead.c) and the TLS
// policy (TLSPolicy.c): one table, one record per handle, freed at curl_easy_cleanup.

#ifndef COURIER_EASY_RECORD_H
#define COURIER_EASY_RECORD_H

#include "HandleTable.h"

/// The longest policy token plus its NUL (Courier's tokens are 32 hexadecimal digits).
#define COURIER_TLS_TOKEN_SIZE 48

/// What the TLS policy keeps per easy handle. Only the thread that drives the handle's multi
/// handle (FoundationNetworking's work queue) touches it: setopt, add and cleanup all run there.
typedef struct {
    /// The token named by the handle's current header list ("" when it names none).
    char wanted[COURIER_TLS_TOKEN_SIZE];
    /// A policy's options are on the handle and must be undone if the next transfer has none.
    int applied;
    /// The copy of FoundationNetworking's header list libcurl was given (without Courier's
    /// header), freed when it is replaced and at cleanup. FoundationNetworking's own nodes are
    /// never freed here.
    courier_curl_slist *headers;
    /// CAINFO and CAPATH as FoundationNetworking last set them (copies), restored when a policy
    /// goes; `set` says whether it set them at all (else libcurl's built-in defaults apply).
    char *callerCAInfo;
    char *callerCAPath;
    int callerSetCAInfo;
    int callerSetCAPath;
    /// The kit set CAPATH to none because the CA file in use covers libcurl's built-in directory
    /// (CAStore.c): undone if FoundationNetworking sets CAINFO itself.
    int caPathLeftOut;
    /// The handle's CA options were looked at for a transfer without a policy.
    int caDefaultsSet;
} courier_tls_state;

/// The header diet's state for one easy handle (HeadDiet.c). Only the thread running the handle's
/// multi handle touches it, as with `headOpen`.
typedef struct {
    /// The handle's current request carries Courier's mark (set with its header list).
    int enabled;
    /// The head being read: 0 none, 1 a 2xx head lines are withheld from, 2 a head passed whole.
    int mode;
    /// The last header line was withheld, so a folded continuation of it is too.
    int lastWithheld;
    /// Stored with release after every header callback, loaded with acquire before the buffer is
    /// freed at cleanup (ResponseHead.c).
    int handedOver;
    /// "X-Courier-Head: <key>" and then every header line of the head, each after a line feed.
    char *carried;
    size_t length;
    size_t capacity;
} courier_head_diet;

/// One per easy handle the kit stands in front of.
typedef struct {
    courier_table_entry entry;
    courier_header_callback callback;
    void *userdata;
    char *errorBuffer;
    /// A status line came and the blank line that ends its head has not. Only the thread running
    /// the handle's multi handle touches it (header callback, completion, add).
    int headOpen;
    /// The completion message handed to FoundationNetworking instead of libcurl's.
    courier_curl_msg message;
    courier_tls_state tls;
    courier_head_diet diet;
} courier_easy_record;

COURIER_HIDDEN extern courier_handle_table courier_easies;

/// curl_easy_setopt for the options the TLS policy watches (HTTPHEADER, CAINFO, CAPATH).
COURIER_HIDDEN CURLcode courier_tls_setopt(CURL *easy, int option, void *value);
/// Puts the handle's policy (or libcurl's defaults, when a policy goes) on it before a transfer.
/// `bound`: the token the multi handle was bound to (courier_multi_bound_token), used when the
/// transfer's headers name none; NULL when it has none.
COURIER_HIDDEN void courier_tls_before_add(CURL *easy, courier_easy_record *record, const char *bound);
/// The token `multi` was bound to when it was made, or NULL. Good until the multi handle's cleanup.
COURIER_HIDDEN const char *courier_multi_bound_token(CURLM *multi);
/// The token this thread is binding new multi handles to (courier_tls_bind_begin), or NULL;
/// counts one more handle bound when `claim` is set.
COURIER_HIDDEN const char *courier_tls_binding(int claim);
/// Puts the policy registered as `token` on an easy handle of Courier's own (a byte stream's,
/// ByteStream.c), as courier_tls_before_add does for FoundationNetworking's; an unknown token, or
/// an option libcurl refuses, gets the refusing policy. -1 when the kit never resolved libcurl.
/// `*caFileAlone` gets the CA file when the connection's CAs come from that file alone (then a
/// parsed store can stand in for it, StreamCAStore.c), else NULL; it lives as long as the policy.
COURIER_HIDDEN int courier_tls_apply_token(CURL *easy, const char *token, const char **caFileAlone);
/// Whether a request's header list carries Courier's mark asking for the diet
/// (COURIER_HEAD_DIET_REQUEST_FIELD with no value).
COURIER_HIDDEN int courier_diet_requested(const courier_curl_slist *list);
/// A status line `buffer` began a head: decides whether its lines are withheld.
COURIER_HIDDEN void courier_diet_head_began(courier_head_diet *diet, const char *buffer, size_t length);
/// A header line of the open head: 1 when it is withheld (FoundationNetworking is not given it),
/// 0 when it must be passed on, -1 when memory ran out (the transfer is then failed).
COURIER_HIDDEN int courier_diet_header_line(courier_head_diet *diet, const char *buffer, size_t length);
/// The head's blank line came: the line carrying the whole head (NUL-free, CRLF-terminated) when
/// lines were withheld from it, else NULL; `*length` gets its length.
COURIER_HIDDEN const char *courier_diet_head_ended(courier_head_diet *diet, size_t *length);
/// Frees the diet's buffer.
COURIER_HIDDEN void courier_diet_release(courier_head_diet *diet);

/// Frees what the TLS policy kept for a handle libcurl has cleaned up.
COURIER_HIDDEN void courier_tls_release(courier_easy_record *record);

#endif
