// A small map from a libcurl handle to the kit's record for it, behind one mutex. Records are
// found through it only when libcurl gives no user pointer (completion, cleanup, setup); the
// callbacks on the hot path get their record directly as their user pointer.

#ifndef COURIER_HANDLE_TABLE_H
#define COURIER_HANDLE_TABLE_H

#include <pthread.h>
#include "Kit.h"

#define COURIER_HANDLE_TABLE_BUCKETS 1024

/// The first field of every record kept in a table.
typedef struct courier_table_entry {
    const void *handle;
    struct courier_table_entry *next;
} courier_table_entry;

typedef struct {
    pthread_mutex_t lock;
    courier_table_entry *buckets[COURIER_HANDLE_TABLE_BUCKETS];
} courier_handle_table;

#define COURIER_HANDLE_TABLE_INITIALIZER { PTHREAD_MUTEX_INITIALIZER, { 0 } }

/// The record for `handle`, or, when there is none and `size` is not 0, a new zeroed record of
/// `size` bytes for it (NULL when memory runs out).
COURIER_HIDDEN void *courier_table_find(courier_handle_table *table, const void *handle, size_t size);

/// Takes the record for `handle` out of the table and returns it (the caller frees it), or NULL.
COURIER_HIDDEN void *courier_table_remove(courier_handle_table *table, const void *handle);

#endif
