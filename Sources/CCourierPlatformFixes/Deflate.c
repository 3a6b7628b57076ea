// Raw DEFLATE streams (RFC 1951) for WebSocket's permessage-deflate (RFC 7692), from the system's
// zlib, bound at run time: the platform has libz.so.1 (FoundationNetworking's libcurl links it)
// but not necessarily its headers, so nothing here includes zlib.h. The stream structure below
// is zlib's documented, stable z_stream layout (unchanged since zlib 1.0); zlib checks it against
// the size passed to its *Init2_ functions, so a mismatch fails at init, never later.

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "include/CourierPlatformFixes.h"

typedef struct {
    const unsigned char *next_in;
    unsigned avail_in;
    unsigned long total_in;
    unsigned char *next_out;
    unsigned avail_out;
    unsigned long total_out;
    const char *msg;
    void *state;
    void *zalloc;
    void *zfree;
    void *opaque;
    int data_type;
    unsigned long adler;
    unsigned long reserved;
} z_stream_abi;

// zlib's constants (zlib.h documents them as part of its interface).
enum { Z_OK = 0, Z_STREAM_END = 1, Z_BUF_ERROR = -5, Z_SYNC_FLUSH = 2, Z_DEFLATED = 8, Z_DEFAULT_STRATEGY = 0 };

typedef const char *(*version_fn)(void);
typedef int (*deflate_init_fn)(z_stream_abi *, int, int, int, int, int, const char *, int);
typedef int (*inflate_init_fn)(z_stream_abi *, int, const char *, int);
typedef int (*step_fn)(z_stream_abi *, int);
typedef int (*end_fn)(z_stream_abi *);

static struct {
    version_fn version;
    deflate_init_fn deflateInit;
    step_fn deflate;
    end_fn deflateReset;
    end_fn deflateEnd;
    inflate_init_fn inflateInit;
    step_fn inflate;
    end_fn inflateReset;
    end_fn inflateEnd;
} zlib;
static pthread_once_t zlibOnce = PTHREAD_ONCE_INIT;
static int zlibFound;

static void look_up_zlib(void) {
    void *library = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
    struct { const char *name; void **slot; } wanted[] = {
        { "zlibVersion", (void **)&zlib.version }, { "deflateInit2_", (void **)&zlib.deflateInit },
        { "deflate", (void **)&zlib.deflate }, { "deflateReset", (void **)&zlib.deflateReset },
        { "deflateEnd", (void **)&zlib.deflateEnd }, { "inflateInit2_", (void **)&zlib.inflateInit },
        { "inflate", (void **)&zlib.inflate }, { "inflateReset", (void **)&zlib.inflateReset },
        { "inflateEnd", (void **)&zlib.inflateEnd },
    };
    for (size_t index = 0; index < sizeof(wanted) / sizeof(wanted[0]); index++) {
        *wanted[index].slot = dlsym(library, wanted[index].name);
        if (*wanted[index].slot == NULL) return;  // the library stays loaded: harmless
    }
    zlibFound = 1;
}

int courier_zlib_available(void) {
    pthread_once(&zlibOnce, look_up_zlib);
    return zlibFound;
}

struct courier_zstream {
    z_stream_abi stream;
    int inflating;
};

courier_zstream *courier_zstream_new(int inflating, int windowBits) {
    if (!courier_zlib_available() || windowBits < 8 || windowBits > 15) return NULL;
    courier_zstream *z = calloc(1, sizeof(courier_zstream));
    if (z == NULL) return NULL;
    z->inflating = inflating;
    const char *version = zlib.version();
    // Negative window bits: raw DEFLATE, no zlib header or trailer (RFC 7692 §7.2.1). zlib's
    // deflate takes 9 for 8 (its documented limit); a 9-bit window still fits what the peer allowed
    // only when the peer allowed 9, so the caller asks for 9 or more when it compresses.
    int status = inflating ? zlib.inflateInit(&z->stream, -windowBits, version, (int)sizeof(z_stream_abi))
                           : zlib.deflateInit(&z->stream, 6, Z_DEFLATED, -windowBits, 8, Z_DEFAULT_STRATEGY, version,
                                 (int)sizeof(z_stream_abi));
    if (status != Z_OK) {
        free(z);
        return NULL;
    }
    return z;
}

int courier_zstream_step(courier_zstream *z, const void *input, size_t inputLength, void *output, size_t outputCapacity,
                         size_t *consumed, size_t *produced) {
    unsigned inLength = inputLength > 0x40000000u ? 0x40000000u : (unsigned)inputLength;
    unsigned outLength = outputCapacity > 0x40000000u ? 0x40000000u : (unsigned)outputCapacity;
    z->stream.next_in = input;
    z->stream.avail_in = inLength;
    z->stream.next_out = output;
    z->stream.avail_out = outLength;
    int status = z->inflating ? zlib.inflate(&z->stream, Z_SYNC_FLUSH) : zlib.deflate(&z->stream, Z_SYNC_FLUSH);
    *consumed = inLength - z->stream.avail_in;
    *produced = outLength - z->stream.avail_out;
    z->stream.next_in = NULL;
    z->stream.next_out = NULL;
    if (status == Z_OK || status == Z_BUF_ERROR) return COURIER_ZSTREAM_MORE;
    if (status == Z_STREAM_END) return COURIER_ZSTREAM_END;
    return COURIER_ZSTREAM_ERROR;
}

int courier_zstream_reset(courier_zstream *z) {
    return (z->inflating ? zlib.inflateReset(&z->stream) : zlib.deflateReset(&z->stream)) == Z_OK ? 0 : -1;
}

void courier_zstream_free(courier_zstream *z) {
    if (z == NULL) return;
    if (z->inflating) zlib.inflateEnd(&z->stream); else zlib.deflateEnd(&z->stream);
    free(z);
}
