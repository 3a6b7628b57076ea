// The two trap fixes (Docs/Platform.md §7.1 and §7.2).
//
// §7.1: for `HTTP/1.1 200 OK\r\n` and then FIN, libcurl ends the transfer "OK" although the header
// block never finished; FoundationNetworking builds its response only at the blank line that ends
// the head, so `_NativeProtocol.transferCompleted(withError:)` finds no response and traps. The
// kit watches the header lines FoundationNetworking is given (the same lines, in the same order)
// and, when a transfer that began a head ends "OK" before that head's blank line, reports it from
// curl_multi_info_read as CURLE_GOT_NOTHING with a message of its own. FoundationNetworking then
// takes its error path, which comes before the trap.
//
// §7.2: FoundationNetworking reads the announced length as a Double
// (CURLINFO_CONTENT_LENGTH_DOWNLOAD) and converts it with Int64(_:), which traps from 2^63 - 512
// up. The kit reports any value that conversion cannot take as unknown (-1); Courier parses
// `Content-Length` itself and refuses such a length.

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "EasyRecord.h"

typedef courier_easy_record easy_record;

courier_handle_table courier_easies = COURIER_HANDLE_TABLE_INITIALIZER;

static const char headCutShortMessage[] =
    "the connection closed before the end of the response head (caught by Courier's platform fixes)";

static size_t header_line(easy_record *record, char *buffer, size_t size, size_t count) {
    size_t length = size * count;
    if (length >= 5 && memcmp(buffer, "HTTP/", 5) == 0) {
        record->headOpen = 1;
        if (record->diet.enabled) courier_diet_head_began(&record->diet, buffer, length);
    } else if ((length == 2 && buffer[0] == '\r' && buffer[1] == '\n') || (length == 1 && buffer[0] == '\n')) {
        record->headOpen = 0;
        size_t carriedLength = 0;
        const char *carried = courier_diet_head_ended(&record->diet, &carriedLength);
        // The whole head in one line, just before the blank line that makes FoundationNetworking
        // build its response (HeadDiet.c).
        if (carried != NULL && record->callback((char *)carried, 1, carriedLength, record->userdata) != carriedLength) {
            return 0;
        }
    } else if (record->headOpen && record->diet.mode == 1) {
        int withheld = courier_diet_header_line(&record->diet, buffer, length);
        if (withheld < 0) return 0;  // out of memory: the transfer fails (CURLE_WRITE_ERROR)
        if (withheld) {
            __atomic_fetch_add(&courier_counters.headerLinesWithheld, 1, __ATOMIC_RELAXED);
            return length;
        }
    }
    return record->callback(buffer, size, count, record->userdata);
}

static size_t header_trampoline(char *buffer, size_t size, size_t count, void *userdata) {
    easy_record *record = userdata;
    size_t result = header_line(record, buffer, size, count);
    // The diet's buffer is freed at curl_easy_cleanup, which FoundationNetworking may run on
    // another thread once the last reference to its handle goes (through Swift's reference
    // counts, which ThreadSanitizer does not see): this store, read with acquire at the cleanup,
    // hands over what the callback wrote.
    __atomic_store_n(&record->diet.handedOver, 1, __ATOMIC_RELEASE);
    return result;
}

/// Gives libcurl the trampoline and the record when there is a callback to stand in front of, and
/// the caller's own values when there is not (libcurl then writes headers with the write callback
/// and HEADERDATA, which must stay the caller's).
static CURLcode apply_header_options(CURL *easy, easy_record *record) {
    if (record->callback != NULL) {
        // A proxy's answer to CONNECT ("HTTP/1.1 200 Connection established" and its blank line)
        // would reach FoundationNetworking as a head of its own, which it hands on as the response
        // (Platform.md §6.19). Without it the first head it sees is the server's. libcurl before
        // 7.54.0 refuses the option: the transfer goes on as before.
        courier_real.easy_setopt(easy, COURIER_CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
        CURLcode result = courier_real.easy_setopt(easy, COURIER_CURLOPT_HEADERDATA, (void *)record);
        return result != COURIER_CURLE_OK
            ? result : courier_real.easy_setopt(easy, COURIER_CURLOPT_HEADERFUNCTION, (void *)header_trampoline);
    }
    CURLcode result = courier_real.easy_setopt(easy, COURIER_CURLOPT_HEADERFUNCTION, (void *)NULL);
    return result != COURIER_CURLE_OK
        ? result : courier_real.easy_setopt(easy, COURIER_CURLOPT_HEADERDATA, record->userdata);
}

CURLcode courier_wrap_easy_setopt(CURL *easy, int option, ...) {
    va_list arguments;
    va_start(arguments, option);
    courier_option_value given = COURIER_READ_OPTION(arguments, option);
    va_end(arguments);
    if (option == COURIER_CURLOPT_HTTPHEADER || option == COURIER_CURLOPT_CAINFO || option == COURIER_CURLOPT_CAPATH) {
        return courier_tls_setopt(easy, option, given.pointer);
    }
    if (option != COURIER_CURLOPT_HEADERFUNCTION && option != COURIER_CURLOPT_HEADERDATA
        && option != COURIER_CURLOPT_ERRORBUFFER) {
        return courier_forward_option((courier_setopt_fn)courier_real.easy_setopt, easy, option, given);
    }
    void *value = given.pointer;
    easy_record *record = courier_table_find(&courier_easies, easy, sizeof(easy_record));
    if (record == NULL) return courier_real.easy_setopt(easy, option, value);
    switch (option) {
    case COURIER_CURLOPT_ERRORBUFFER:
        record->errorBuffer = value;
        return courier_real.easy_setopt(easy, option, value);
    case COURIER_CURLOPT_HEADERDATA:
        record->userdata = value;
        return apply_header_options(easy, record);
    default:
        record->callback = (courier_header_callback)value;
        return apply_header_options(easy, record);
    }
}

CURLMcode courier_wrap_multi_add_handle(CURLM *multi, CURL *easy) {
    // Easy handles are set up again and re-added for redirects and retries: a new transfer
    // starts with no head open, whatever the last one left.
    easy_record *record = courier_table_find(&courier_easies, easy, 0);
    if (record != NULL) {
        record->headOpen = 0;
        record->diet.mode = 0;
        courier_tls_before_add(easy, record, courier_multi_bound_token(multi));
    }
    return courier_real.multi_add_handle(multi, easy);
}

courier_curl_msg *courier_wrap_multi_info_read(CURLM *multi, int *left) {
    courier_curl_msg *message = courier_real.multi_info_read(multi, left);
    if (message == NULL || message->msg != COURIER_CURLMSG_DONE || message->data.result != COURIER_CURLE_OK) {
        return message;
    }
    easy_record *record = courier_table_find(&courier_easies, message->easy_handle, 0);
    if (record == NULL || !record->headOpen) return message;
    record->headOpen = 0;
    record->message = *message;
    record->message.data.result = COURIER_CURLE_GOT_NOTHING;
    if (record->errorBuffer != NULL) {
        snprintf(record->errorBuffer, COURIER_CURL_ERROR_SIZE, "%s", headCutShortMessage);
    }
    __atomic_fetch_add(&courier_counters.headsCutShort, 1, __ATOMIC_RELAXED);
    return &record->message;
}

CURLcode courier_wrap_easy_getinfo(CURL *easy, int info, ...) {
    va_list arguments;
    va_start(arguments, info);
    void *value = va_arg(arguments, void *);
    va_end(arguments);
    CURLcode result = courier_real.easy_getinfo(easy, info, value);
    if (result == COURIER_CURLE_OK && info == COURIER_CURLINFO_CONTENT_LENGTH_DOWNLOAD && value != NULL) {
        double *length = value;
        // Exactly the values Int64(_:) traps on: NaN, and anything outside [-2^63, 2^63).
        if (!(*length < 0x1p63 && *length >= -0x1p63)) {
            *length = -1;
            __atomic_fetch_add(&courier_counters.lengthsHidden, 1, __ATOMIC_RELAXED);
        }
    }
    return result;
}

void courier_wrap_easy_cleanup(CURL *easy) {
    // Out of the table before libcurl frees the handle (its address can be reused at once).
    easy_record *record = courier_table_remove(&courier_easies, easy);
    courier_real.easy_cleanup(easy);
    if (record != NULL) {
        courier_tls_release(record);
        (void)__atomic_load_n(&record->diet.handedOver, __ATOMIC_ACQUIRE);
        courier_diet_release(&record->diet);
    }
    free(record);
}
