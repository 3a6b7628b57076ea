#include <stdlib.h>
#include <stdint.h>
#include "HandleTable.h"

static size_t bucket_of(const void *handle) {
    uintptr_t value = (uintptr_t)handle;
    // malloc'd handles are 16-byte aligned: the low bits say nothing.
    value ^= value >> 17;
    return (size_t)((value >> 4) % COURIER_HANDLE_TABLE_BUCKETS);
}

void *courier_table_find(courier_handle_table *table, const void *handle, size_t size) {
    size_t bucket = bucket_of(handle);
    pthread_mutex_lock(&table->lock);
    courier_table_entry *entry = table->buckets[bucket];
    while (entry != NULL && entry->handle != handle) entry = entry->next;
    if (entry == NULL && size != 0) {
        entry = calloc(1, size);
        if (entry != NULL) {
            entry->handle = handle;
            entry->next = table->buckets[bucket];
            table->buckets[bucket] = entry;
        }
    }
    pthread_mutex_unlock(&table->lock);
    return entry;
}

void *courier_table_remove(courier_handle_table *table, const void *handle) {
    size_t bucket = bucket_of(handle);
    pthread_mutex_lock(&table->lock);
    courier_table_entry **link = &table->buckets[bucket];
    while (*link != NULL && (*link)->handle != handle) link = &(*link)->next;
    courier_table_entry *entry = *link;
    if (entry != NULL) *link = entry->next;
    pthread_mutex_unlock(&table->lock);
    return entry;
}
