// The URL-handle leak (Docs/Platform.md §6.17).
//
// Every transfer FoundationNetworking sets up checks its URL's host with libcurl's URL API
// (CFURLSessionCurlHostIsEqual in _CFURLSessionInterface, called from _EasyHandle.set(url:)):
// it makes a handle with curl_url(), parses the URL into it, and then releases the handle with
// curl_free() instead of curl_url_cleanup(). curl_free releases only the handle's own block; the
// parsed parts it holds (scheme, host, path, query, …) are lost, about 50–60 bytes a request.
//
// The kit remembers the handles FoundationNetworking makes with curl_url and, when it passes one
// of them to curl_free, releases it with curl_url_cleanup instead. Every other curl_free is passed
// on unchanged.

#include <stdlib.h>
#include "HandleTable.h"

static courier_handle_table urls = COURIER_HANDLE_TABLE_INITIALIZER;

void *courier_wrap_url(void) {
    void *handle = courier_real.url();
    // If the record cannot be made the handle is simply not tracked: it leaks as it did.
    if (handle != NULL) courier_table_find(&urls, handle, sizeof(courier_table_entry));
    return handle;
}

void courier_wrap_free(void *pointer) {
    courier_table_entry *entry = pointer != NULL ? courier_table_remove(&urls, pointer) : NULL;
    if (entry == NULL) {
        courier_real.free(pointer);
        return;
    }
    free(entry);
    courier_real.url_cleanup(pointer);
    __atomic_fetch_add(&courier_counters.urlHandlesReleased, 1, __ATOMIC_RELAXED);
}
