// What the wrappers (Wrappers.c) and the installer (Install.c) share.

#ifndef COURIER_KIT_H
#define COURIER_KIT_H

#include "LibcurlABI.h"
#include "include/CourierPlatformFixes.h"

#define COURIER_HIDDEN __attribute__((visibility("hidden")))

/// libcurl's own entry points, found with dlsym before any import slot is changed (the slot may
/// still hold the lazy-binding stub, and calling that would write the real address back over the
/// wrapper).
typedef struct {
    courier_multi_setopt_fn multi_setopt;
    courier_multi_cleanup_fn multi_cleanup;
    courier_multi_add_handle_fn multi_add_handle;
    courier_multi_assign_fn multi_assign;
    courier_multi_info_read_fn multi_info_read;
    courier_easy_setopt_fn easy_setopt;
    courier_easy_getinfo_fn easy_getinfo;
    courier_easy_cleanup_fn easy_cleanup;
    courier_url_fn url;
    courier_url_cleanup_fn url_cleanup;
    courier_free_fn free;
    /// Not wrapped: the TLS policy probes libcurl's options on a handle of its own.
    courier_easy_init_fn easy_init;
} courier_libcurl;

COURIER_HIDDEN extern courier_libcurl courier_real;

/// libcurl's own definition of `name`: the copy FoundationNetworking was linked against
/// (libcurl.so.4) when it is loaded, else whatever the process's global scope has; NULL if none.
COURIER_HIDDEN void *courier_libcurl_symbol(const char *name);

/// An option's value as libcurl's setopt functions take it: which C type is decided by the
/// option's number range (curl.h's CURLOPTTYPE_ bases), the same for easy and multi options.
typedef struct {
    enum { courier_option_long, courier_option_off_t, courier_option_pointer } type;
    union {
        long number;
        curl_off_t offset;
        void *pointer;
    };
} courier_option_value;

/// Reads the one variadic argument of a setopt call for `option`.
#define COURIER_READ_OPTION(arguments, option)                                                             \
    ((option) < COURIER_CURLOPTTYPE_OBJECTPOINT                                                          \
         ? (courier_option_value){ .type = courier_option_long, .number = va_arg(arguments, long) }     \
     : ((option) >= COURIER_CURLOPTTYPE_OFF_T && (option) < COURIER_CURLOPTTYPE_BLOB)                   \
         ? (courier_option_value){ .type = courier_option_off_t, .offset = va_arg(arguments, curl_off_t) } \
         : (courier_option_value){ .type = courier_option_pointer, .pointer = va_arg(arguments, void *) })

/// curl_easy_setopt and curl_multi_setopt have the same C shape.
typedef int (*courier_setopt_fn)(void *handle, int option, ...);

/// Passes `value` on to `setopt` as the C type it came as.
static inline int courier_forward_option(courier_setopt_fn setopt, void *handle, int option, courier_option_value value) {
    switch (value.type) {
    case courier_option_long: return setopt(handle, option, value.number);
    case courier_option_off_t: return setopt(handle, option, value.offset);
    default: return setopt(handle, option, value.pointer);
    }
}
COURIER_HIDDEN extern courier_fixes_counters courier_counters;

COURIER_HIDDEN CURLMcode courier_wrap_multi_setopt(CURLM *multi, int option, ...);
COURIER_HIDDEN CURLMcode courier_wrap_multi_cleanup(CURLM *multi);
COURIER_HIDDEN CURLMcode courier_wrap_multi_add_handle(CURLM *multi, CURL *easy);
COURIER_HIDDEN courier_curl_msg *courier_wrap_multi_info_read(CURLM *multi, int *left);
COURIER_HIDDEN CURLcode courier_wrap_easy_setopt(CURL *easy, int option, ...);
COURIER_HIDDEN CURLcode courier_wrap_easy_getinfo(CURL *easy, int info, ...);
COURIER_HIDDEN void courier_wrap_easy_cleanup(CURL *easy);
COURIER_HIDDEN void *courier_wrap_url(void);
COURIER_HIDDEN void courier_wrap_free(void *pointer);

#endif
