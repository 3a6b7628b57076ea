// The stale-source fix (Docs/Platform.md §6.16).
//
// libcurl's socket callback states a socket's whole current interest (IN, OUT, INOUT, REMOVE).
// FoundationNetworking's handler (URLSession._MultiHandle.register(socket:for:what:socketSourcePtr:))
// only ever adds DispatchSources. When libcurl narrows a socket from OUT (a connect, a request
// body) to IN, the write source stays, a connected socket is always writable, and the source
// fires without pause for as long as the transfer waits.
//
// The kit stands between libcurl and that handler. When the new interest drops something
// FoundationNetworking holds a source for, it first delivers REMOVE (FoundationNetworking tears
// every source of the socket down and releases its record), clears libcurl's socket pointer,
// and then delivers the new interest, so only the sources needed are made. Anything else is
// passed through unchanged.

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "EasyRecord.h"

/// One per multi handle whose socket callback the kit stands in front of.
typedef struct {
    courier_table_entry entry;
    courier_socket_callback callback;
    void *userp;
    /// The interest FoundationNetworking holds sources for, per socket: the union of what it was
    /// given since its record for the socket was made. libcurl never runs two calls on one multi
    /// handle at once, so only that handle's thread of the moment touches this.
    unsigned char *held;
    size_t capacity;
    /// The TLS policy the multi handle was bound to when it was made (TLSPolicy.c), or "".
    /// Written once, on the thread making the handle, before any transfer is added to it.
    char tlsToken[COURIER_TLS_TOKEN_SIZE];
} multi_record;

static courier_handle_table multis = COURIER_HANDLE_TABLE_INITIALIZER;

static unsigned held_interest(multi_record *record, curl_socket_t socket) {
    return (size_t)socket < record->capacity ? record->held[socket] : 0;
}

/// Returns 0 when memory ran out (then the socket is passed through unfixed).
static int set_held_interest(multi_record *record, curl_socket_t socket, unsigned interest) {
    if ((size_t)socket >= record->capacity) {
        if (interest == 0) return 1;
        size_t capacity = record->capacity ? record->capacity : 64;
        while (capacity <= (size_t)socket) capacity *= 2;
        unsigned char *held = realloc(record->held, capacity);
        if (held == NULL) return 0;
        for (size_t index = record->capacity; index < capacity; index++) held[index] = 0;
        record->held = held;
        record->capacity = capacity;
    }
    record->held[socket] = (unsigned char)interest;
    return 1;
}

static int socket_trampoline(CURL *easy, curl_socket_t socket, int what, void *userp, void *socketp) {
    multi_record *record = userp;
    courier_socket_callback callback = record->callback;
    void *data = record->userp;
    if (socket < 0 || what < COURIER_CURL_POLL_NONE || what > COURIER_CURL_POLL_REMOVE) {
        return callback(easy, socket, what, data, socketp);
    }
    if (what == COURIER_CURL_POLL_REMOVE) {
        set_held_interest(record, socket, 0);
        return callback(easy, socket, what, data, socketp);
    }
    // With no socket pointer FoundationNetworking holds no sources for the socket.
    unsigned held = socketp != NULL ? held_interest(record, socket) : 0;
    if ((held & ~(unsigned)what) != 0) {
        callback(easy, socket, COURIER_CURL_POLL_REMOVE, data, socketp);
        // FoundationNetworking released the record the pointer names but leaves it with libcurl.
        courier_real.multi_assign((CURLM *)record->entry.handle, socket, NULL);
        socketp = NULL;
        held = 0;
        __atomic_fetch_add(&courier_counters.staleSourcesRemoved, 1, __ATOMIC_RELAXED);
    }
    if (!set_held_interest(record, socket, held | (unsigned)what)) set_held_interest(record, socket, 0);
    return callback(easy, socket, what, data, socketp);
}

CURLMcode courier_wrap_multi_setopt(CURLM *multi, int option, ...) {
    va_list arguments;
    va_start(arguments, option);
    courier_option_value given = COURIER_READ_OPTION(arguments, option);
    va_end(arguments);
    if (option != COURIER_CURLMOPT_SOCKETFUNCTION && option != COURIER_CURLMOPT_SOCKETDATA) {
        return courier_forward_option((courier_setopt_fn)courier_real.multi_setopt, multi, option, given);
    }
    void *value = given.pointer;
    multi_record *record = courier_table_find(&multis, multi, sizeof(multi_record));
    if (record == NULL) return courier_real.multi_setopt(multi, option, value);
    // URLSession sets its socket callback while it makes its multi handle: the moment to bind it.
    if (record->tlsToken[0] == 0) {
        const char *token = courier_tls_binding(1);
        if (token != NULL) strcpy(record->tlsToken, token);
    }
    if (option == COURIER_CURLMOPT_SOCKETDATA) {
        record->userp = value;
        // Before a callback is known, libcurl keeps the caller's own pointer.
        return courier_real.multi_setopt(multi, option, record->callback != NULL ? (void *)record : value);
    }
    record->callback = (courier_socket_callback)value;
    if (value == NULL) {
        CURLMcode result = courier_real.multi_setopt(multi, COURIER_CURLMOPT_SOCKETDATA, record->userp);
        return result != 0 ? result : courier_real.multi_setopt(multi, option, NULL);
    }
    CURLMcode result = courier_real.multi_setopt(multi, COURIER_CURLMOPT_SOCKETDATA, (void *)record);
    return result != 0 ? result : courier_real.multi_setopt(multi, option, (void *)socket_trampoline);
}

const char *courier_multi_bound_token(CURLM *multi) {
    multi_record *record = courier_table_find(&multis, multi, 0);
    return record != NULL && record->tlsToken[0] != 0 ? record->tlsToken : NULL;
}

CURLMcode courier_wrap_multi_cleanup(CURLM *multi) {
    // Out of the table first (a handle made on another thread may get this address as soon as
    // the cleanup returns), freed last (libcurl still delivers REMOVEs from inside the cleanup,
    // and the trampoline reaches the record through its user pointer, not the table).
    multi_record *record = courier_table_remove(&multis, multi);
    CURLMcode result = courier_real.multi_cleanup(multi);
    if (record != NULL) {
        free(record->held);
        free(record);
    }
    return result;
}
