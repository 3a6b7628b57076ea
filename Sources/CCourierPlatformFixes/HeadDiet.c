// The header diet (Docs/Platform.md §6.18): for a transfer whose request carries Courier's mark
// (COURIER_HEAD_DIET_REQUEST_FIELD), FoundationNetworking is given only the header lines of a 2xx
// head it acts on, and the whole head in one line of its own; Courier builds the response users
// see from that line. A task made on the same URLSession without the mark gets every line.
//
// Why: FoundationNetworking pays per header line (a DispatchSource timer made and cancelled in
// `_EasyHandle.resetTimer`, a `Data` and a `String`, a cookie parse, the dictionary): ~90 µs a
// request for nginx's ~8 lines on one core (Docs/Performance.md). One line carrying them all costs
// it one line's work.
//
// What it must still see (read in FoundationNetworking 6.3.1, listed in Platform.md §6.18): the
// status line and the blank line (its head framing), `Set-Cookie` (its cookie store, fed line by
// line), `Location` and `WWW-Authenticate` / `Proxy-Authenticate` (redirects, authentication).
// `Content-Length`, `Content-Type`, `Content-Encoding` and `Content-Disposition` only shape the
// response object it builds (its length, MIME type, file name, and the task's expected byte count,
// which Courier never reads): for a marked request Courier replaces that response with the one
// built from the whole head before anything sees it, so those lines are withheld too. Heads other
// than 2xx — 1xx, redirects, 401, 304 — are passed whole: FoundationNetworking acts on them in ways
// a list would have to follow. A line FoundationNetworking would refuse (no colon, `Name:value`
// without a space, a line not ending in CRLF) is passed too, so it refuses the head as it always did.

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "EasyRecord.h"

/// The names FoundationNetworking acts on in a 2xx head beyond building its response (Platform.md §6.18).
static const char *const actedOn[] = {
    "Set-Cookie", "Location", "WWW-Authenticate", "Proxy-Authenticate",
};

static char key[33];
static pthread_once_t keyOnce = PTHREAD_ONCE_INIT;

static void make_key(void) {
    unsigned char bytes[16];
    if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes)) {
        // No entropy source: still unlikely for a server to guess, and never a crash.
        unsigned long long seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32)
            ^ (unsigned long long)(uintptr_t)&bytes;
        for (size_t index = 0; index < sizeof(bytes); index++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            bytes[index] = (unsigned char)(seed >> 56);
        }
    }
    for (size_t index = 0; index < sizeof(bytes); index++) snprintf(key + index * 2, 3, "%02x", bytes[index]);
}

const char *courier_head_diet_key(void) {
    pthread_once(&keyOnce, make_key);
    return key;
}

// MARK: - Which transfers

int courier_head_diet_supported(void) {
    // The header callback is stood in front of through curl_easy_setopt; a transfer's head must
    // start closed (curl_multi_add_handle) and its buffer be freed (curl_easy_cleanup).
    unsigned needed = COURIER_WRAP_EASY_SETOPT | COURIER_WRAP_MULTI_ADD_HANDLE | COURIER_WRAP_EASY_CLEANUP;
    return courier_platform_fixes_status() == COURIER_FIXES_ACTIVE && (courier_platform_fixes_wrapped() & needed) == needed;
}

int courier_diet_requested(const courier_curl_slist *list) {
    size_t length = sizeof(COURIER_HEAD_DIET_REQUEST_FIELD) - 1;
    for (const courier_curl_slist *node = list; node != NULL; node = node->next) {
        const char *line = node->data;
        if (line == NULL || strncasecmp(line, COURIER_HEAD_DIET_REQUEST_FIELD, length) != 0 || line[length] != ':') continue;
        // Only "Name:" and blanks: the form libcurl never sends (it reads it as "remove the
        // header"), so asking for the diet puts nothing on the wire. Any other value was not
        // Courier's mark.
        const char *rest = line + length + 1;
        while (*rest == ' ' || *rest == '\t') rest++;
        return *rest == 0;
    }
    return 0;
}

// MARK: - One head

static int is_separator(unsigned char byte) {
    return strchr("()<>@,;:\\\"/[]?={} \t", byte) != NULL && byte != 0;
}

static int is_token(unsigned char byte) {
    return byte >= 32 && byte <= 126 && !is_separator(byte);
}

static int is_blank(unsigned char byte) {
    return byte == ' ' || byte == '\t';
}

static int append(courier_head_diet *diet, const char *bytes, size_t length) {
    if (diet->length + length + 3 > diet->capacity) {
        size_t capacity = diet->capacity ? diet->capacity : 512;
        while (diet->length + length + 3 > capacity) capacity *= 2;
        char *carried = realloc(diet->carried, capacity);
        if (carried == NULL) return 0;
        diet->carried = carried;
        diet->capacity = capacity;
    }
    memcpy(diet->carried + diet->length, bytes, length);
    diet->length += length;
    return 1;
}

void courier_diet_head_began(courier_head_diet *diet, const char *buffer, size_t length) {
    diet->mode = 2;
    diet->lastWithheld = 0;
    diet->length = 0;
    // "HTTP/<version> <3 digits>": only a 2xx head goes on the diet.
    const char *space = memchr(buffer, ' ', length);
    if (space == NULL || (size_t)(space - buffer) + 4 > length) return;
    if (space[1] != '2' || space[2] < '0' || space[2] > '9' || space[3] < '0' || space[3] > '9') return;
    const char *name = COURIER_HEAD_DIET_FIELD ": ";
    if (!append(diet, name, strlen(name)) || !append(diet, courier_head_diet_key(), 32)) return;
    diet->mode = 1;
}

/// Whether FoundationNetworking 6.3.1 parses `line` (CRLF removed) as a header field or a folded
/// continuation (`_HTTPMessage._Header.createOne`, `trimSPHTPrefix`). Its bytes need no check
/// here: the carried line holds them all, and FoundationNetworking refuses it as it would have
/// refused them (not UTF-8).
static int is_plain(const unsigned char *line, size_t length, size_t *nameLength) {
    *nameLength = 0;
    if (length == 0) return 0;
    if (is_blank(line[0])) {
        // A continuation: refused when it is blanks only.
        for (size_t index = 0; index < length; index++) {
            if (!is_blank(line[index])) return 1;
        }
        return 0;
    }
    size_t name = 0;
    while (name < length && is_token(line[name])) name++;
    if (name == 0 || name == length || line[name] != ':') return 0;
    *nameLength = name;
    const unsigned char *rest = line + name + 1;
    size_t restLength = length - name - 1;
    if (restLength == 0) return 1;
    if (!is_blank(rest[0])) return 0;  // `Name:value` is refused
    if (restLength == 1) return 1;
    for (size_t index = 1; index < restLength; index++) {
        if (!is_blank(rest[index])) return 1;
    }
    return 0;  // two or more blanks and nothing else is refused
}

int courier_diet_header_line(courier_head_diet *diet, const char *buffer, size_t length) {
    if (diet->mode != 1) return 0;
    // Every line goes into the carried head, withheld or not: the response is built from it alone.
    size_t content = length;
    if (content > 0 && buffer[content - 1] == '\n') content--;
    if (content > 0 && buffer[content - 1] == '\r') content--;
    if (!append(diet, "\n", 1) || !append(diet, buffer, content)) return -1;
    size_t nameLength = 0;
    int crlf = length >= 2 && buffer[length - 2] == '\r' && buffer[length - 1] == '\n';
    if (!crlf || memchr(buffer, '\n', length - 1) != NULL
        || !is_plain((const unsigned char *)buffer, length - 2, &nameLength)) {
        diet->lastWithheld = 0;
        return 0;
    }
    if (nameLength == 0) return diet->lastWithheld;  // a continuation goes where its field went
    int withheld = 1;
    for (size_t index = 0; index < sizeof(actedOn) / sizeof(actedOn[0]); index++) {
        if (strlen(actedOn[index]) == nameLength && strncasecmp(buffer, actedOn[index], nameLength) == 0) withheld = 0;
    }
    diet->lastWithheld = withheld;
    return withheld;
}

const char *courier_diet_head_ended(courier_head_diet *diet, size_t *length) {
    int mode = diet->mode;
    diet->mode = 0;
    diet->lastWithheld = 0;
    if (mode != 1 || diet->carried == NULL) return NULL;
    diet->carried[diet->length] = '\r';
    diet->carried[diet->length + 1] = '\n';
    *length = diet->length + 2;
    return diet->carried;
}

void courier_diet_release(courier_head_diet *diet) {
    free(diet->carried);
    diet->carried = NULL;
    diet->length = 0;
    diet->capacity = 0;
}
