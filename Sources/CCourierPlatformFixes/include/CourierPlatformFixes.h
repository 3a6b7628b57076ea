// Courier's platform kit: fixes for FoundationNetworking defects, applied from inside the process
// by pointing FoundationNetworking's own imports of a few libcurl functions at wrappers
// (Docs/PlatformFixes.md). Nothing here is public API of Courier; `PlatformFixes` in Swift is.

#ifndef COURIER_PLATFORM_FIXES_H
#define COURIER_PLATFORM_FIXES_H

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
} courier_fixes_counters;

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

#ifdef __cplusplus
}
#endif

#endif
