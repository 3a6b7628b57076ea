// Puts the wrappers in front of libcurl for one loaded object: FoundationNetworking's.
//
// FoundationNetworking calls libcurl through its own import table (the GOT slots of its
// JUMP_SLOT and GLOB_DAT relocations). The installer finds the object that holds a given
// FoundationNetworking address with dl_iterate_phdr, walks its dynamic relocations for the
// libcurl functions the fixes need, and writes the wrappers' addresses into those slots. Only
// that object's calls change: libcurl, other libraries and the program keep their own bindings.
// It works the same when FoundationNetworking is linked into the executable
// (`--static-swift-stdlib`), and it needs no exported symbol, no LD_PRELOAD and no linker flag.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "Kit.h"

courier_libcurl courier_real;
courier_fixes_counters courier_counters;

#if defined(__x86_64__)
#define COURIER_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define COURIER_R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define COURIER_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define COURIER_R_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

typedef struct {
    const char *name;
    unsigned bit;
    void *wrapper;
    void **real;
} wrapped_function;

static wrapped_function functions[] = {
    { "curl_multi_setopt", COURIER_WRAP_MULTI_SETOPT, (void *)courier_wrap_multi_setopt, (void **)&courier_real.multi_setopt },
    { "curl_multi_cleanup", COURIER_WRAP_MULTI_CLEANUP, (void *)courier_wrap_multi_cleanup, (void **)&courier_real.multi_cleanup },
    { "curl_multi_add_handle", COURIER_WRAP_MULTI_ADD_HANDLE, (void *)courier_wrap_multi_add_handle, (void **)&courier_real.multi_add_handle },
    { "curl_multi_info_read", COURIER_WRAP_MULTI_INFO_READ, (void *)courier_wrap_multi_info_read, (void **)&courier_real.multi_info_read },
    { "curl_easy_setopt", COURIER_WRAP_EASY_SETOPT, (void *)courier_wrap_easy_setopt, (void **)&courier_real.easy_setopt },
    { "curl_easy_getinfo", COURIER_WRAP_EASY_GETINFO, (void *)courier_wrap_easy_getinfo, (void **)&courier_real.easy_getinfo },
    { "curl_easy_cleanup", COURIER_WRAP_EASY_CLEANUP, (void *)courier_wrap_easy_cleanup, (void **)&courier_real.easy_cleanup },
    { "curl_url", COURIER_WRAP_URL, (void *)courier_wrap_url, (void **)&courier_real.url },
    { "curl_free", COURIER_WRAP_FREE, (void *)courier_wrap_free, (void **)&courier_real.free },
};
#define FUNCTION_COUNT (sizeof(functions) / sizeof(functions[0]))

/// At most this many slots per function (FoundationNetworking has one each).
#define MAX_SLOTS 32

typedef struct {
    void **address;
    void *original;
    unsigned bit;
    void *wrapper;
} import_slot;

static pthread_mutex_t installLock = PTHREAD_MUTEX_INITIALIZER;
static courier_fixes_status installed = COURIER_FIXES_NOT_INSTALLED;
static import_slot slots[MAX_SLOTS];
static size_t slotCount;
static char objectPath[4096];

/// What dl_iterate_phdr found for the object holding the anchor.
typedef struct {
    const void *anchor;
    int found;
    ElfW(Addr) base;
    const ElfW(Phdr) *headers;
    ElfW(Half) headerCount;
    const char *name;
} object_search;

static int find_object(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    object_search *search = context;
    uintptr_t anchor = (uintptr_t)search->anchor;
    for (ElfW(Half) index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        if (header->p_type != PT_LOAD) continue;
        uintptr_t start = info->dlpi_addr + header->p_vaddr;
        if (anchor >= start && anchor < start + header->p_memsz) {
            search->found = 1;
            search->base = info->dlpi_addr;
            search->headers = info->dlpi_phdr;
            search->headerCount = info->dlpi_phnum;
            search->name = info->dlpi_name;
            return 1;
        }
    }
    return 0;
}

/// glibc stores most dynamic-section pointers relocated; some loaders leave them as offsets.
static uintptr_t dynamic_pointer(ElfW(Addr) base, ElfW(Addr) value) {
    return value < base ? base + value : value;
}

static int in_relro(const object_search *object, uintptr_t address, uintptr_t *start, uintptr_t *end) {
    for (ElfW(Half) index = 0; index < object->headerCount; index++) {
        const ElfW(Phdr) *header = &object->headers[index];
        if (header->p_type != PT_GNU_RELRO) continue;
        uintptr_t from = object->base + header->p_vaddr;
        if (address >= from && address < from + header->p_memsz) {
            *start = from;
            *end = from + header->p_memsz;
            return 1;
        }
    }
    return 0;
}

/// Collects the import slots of `object` for the functions in `wrap`; returns how many.
static size_t collect_slots(const object_search *object, unsigned wrap) {
#if defined(COURIER_R_JUMP_SLOT)
    const ElfW(Dyn) *dynamic = NULL;
    for (ElfW(Half) index = 0; index < object->headerCount; index++) {
        if (object->headers[index].p_type == PT_DYNAMIC) {
            dynamic = (const ElfW(Dyn) *)(object->base + object->headers[index].p_vaddr);
        }
    }
    if (dynamic == NULL) return 0;
    const ElfW(Sym) *symbols = NULL;
    const char *strings = NULL;
    const ElfW(Rela) *tables[2] = { NULL, NULL };
    size_t sizes[2] = { 0, 0 };
    for (const ElfW(Dyn) *entry = dynamic; entry->d_tag != DT_NULL; entry++) {
        switch (entry->d_tag) {
        case DT_SYMTAB: symbols = (const ElfW(Sym) *)dynamic_pointer(object->base, entry->d_un.d_ptr); break;
        case DT_STRTAB: strings = (const char *)dynamic_pointer(object->base, entry->d_un.d_ptr); break;
        case DT_JMPREL: tables[0] = (const ElfW(Rela) *)dynamic_pointer(object->base, entry->d_un.d_ptr); break;
        case DT_PLTRELSZ: sizes[0] = entry->d_un.d_val; break;
        case DT_RELA: tables[1] = (const ElfW(Rela) *)dynamic_pointer(object->base, entry->d_un.d_ptr); break;
        case DT_RELASZ: sizes[1] = entry->d_un.d_val; break;
        default: break;
        }
    }
    if (symbols == NULL || strings == NULL) return 0;
    size_t count = 0;
    for (int table = 0; table < 2; table++) {
        if (tables[table] == NULL) continue;
        size_t relocations = sizes[table] / sizeof(ElfW(Rela));
        for (size_t index = 0; index < relocations; index++) {
            const ElfW(Rela) *relocation = &tables[table][index];
            unsigned long type = ELF64_R_TYPE(relocation->r_info);
            if (type != COURIER_R_JUMP_SLOT && type != COURIER_R_GLOB_DAT) continue;
            const ElfW(Sym) *symbol = &symbols[ELF64_R_SYM(relocation->r_info)];
            if (symbol->st_shndx != SHN_UNDEF) continue;  // defined here, not an import
            const char *name = strings + symbol->st_name;
            if (strncmp(name, "curl_", 5) != 0) continue;
            for (size_t function = 0; function < FUNCTION_COUNT; function++) {
                if ((functions[function].bit & wrap) == 0 || strcmp(name, functions[function].name) != 0) continue;
                if (count == MAX_SLOTS) return count;
                slots[count].address = (void **)(object->base + relocation->r_offset);
                slots[count].bit = functions[function].bit;
                slots[count].wrapper = functions[function].wrapper;
                count++;
            }
        }
    }
    return count;
#else
    (void)object;
    (void)wrap;
    return 0;
#endif
}

/// Writes `value` into the slot, making a RELRO page writable for the moment. Returns 0 when
/// the page cannot be made writable.
static int write_slot(const object_search *object, void **address, void *value) {
    uintptr_t start, end;
    if (!in_relro(object, (uintptr_t)address, &start, &end)) {
        __atomic_store_n(address, value, __ATOMIC_RELEASE);
        return 1;
    }
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = (uintptr_t)address & ~(page - 1);
    if (mprotect((void *)first, page, PROT_READ | PROT_WRITE) != 0) return 0;
    __atomic_store_n(address, value, __ATOMIC_RELEASE);
    mprotect((void *)first, page, PROT_READ);
    return 1;
}

/// The functions a fix needs together: one without the others would keep records it never
/// frees, or watch heads it never reports.
static unsigned complete_fixes(unsigned found) {
    unsigned socketFix = COURIER_WRAP_MULTI_SETOPT | COURIER_WRAP_MULTI_CLEANUP;
    unsigned headFix = COURIER_WRAP_EASY_SETOPT | COURIER_WRAP_EASY_CLEANUP | COURIER_WRAP_MULTI_ADD_HANDLE
        | COURIER_WRAP_MULTI_INFO_READ;
    unsigned lengthFix = COURIER_WRAP_EASY_GETINFO;
    unsigned urlFix = COURIER_WRAP_URL | COURIER_WRAP_FREE;
    unsigned usable = 0;
    if ((found & urlFix) == urlFix) usable |= urlFix;
    if ((found & socketFix) == socketFix) usable |= socketFix;
    if ((found & headFix) == headFix) usable |= headFix;
    if ((found & lengthFix) == lengthFix) usable |= lengthFix;
    return usable;
}

/// libcurl's own definition: the copy FoundationNetworking was linked against (libcurl.so.4)
/// when it is loaded, else whatever the process's global scope has.
void *courier_libcurl_symbol(const char *name) {
    void *library = dlopen("libcurl.so.4", RTLD_LAZY | RTLD_NOLOAD);
    if (library != NULL) {
        void *symbol = dlsym(library, name);
        dlclose(library);
        if (symbol != NULL) return symbol;
    }
    return dlsym(RTLD_DEFAULT, name);
}

static courier_fixes_status install(const void *anchor, unsigned wrap) {
#if !defined(COURIER_R_JUMP_SLOT)
    (void)anchor;
    (void)wrap;
    return COURIER_FIXES_UNSUPPORTED_ARCHITECTURE;
#else
    object_search object = { .anchor = anchor };
    dl_iterate_phdr(find_object, &object);
    if (!object.found) return COURIER_FIXES_NO_FOUNDATION_NETWORKING;

    // A function libcurl lacks (curl_url before 7.62) leaves out only the fixes that need it.
    courier_real.multi_assign = (courier_multi_assign_fn)courier_libcurl_symbol("curl_multi_assign");
    courier_real.url_cleanup = (courier_url_cleanup_fn)courier_libcurl_symbol("curl_url_cleanup");
    courier_real.easy_init = (courier_easy_init_fn)courier_libcurl_symbol("curl_easy_init");
    unsigned available = 0;
    for (size_t function = 0; function < FUNCTION_COUNT; function++) {
        *functions[function].real = courier_libcurl_symbol(functions[function].name);
        if (*functions[function].real != NULL) available |= functions[function].bit;
    }
    if (courier_real.multi_assign == NULL) available &= ~(unsigned)COURIER_WRAP_MULTI_SETOPT;
    if (courier_real.url_cleanup == NULL) available &= ~(unsigned)COURIER_WRAP_URL;
    if (complete_fixes(available) == 0) return COURIER_FIXES_NO_LIBCURL;
    wrap &= available;

    size_t count = collect_slots(&object, wrap);
    unsigned found = 0;
    for (size_t index = 0; index < count; index++) found |= slots[index].bit;
    unsigned usable = complete_fixes(found);
    if (usable == 0) return COURIER_FIXES_NO_IMPORTS;

    size_t kept = 0;
    for (size_t index = 0; index < count; index++) {
        if ((slots[index].bit & usable) != 0) slots[kept++] = slots[index];
    }
    for (size_t index = 0; index < kept; index++) {
        slots[index].original = __atomic_load_n(slots[index].address, __ATOMIC_ACQUIRE);
        if (!write_slot(&object, slots[index].address, slots[index].wrapper)) {
            while (index-- > 0) write_slot(&object, slots[index].address, slots[index].original);
            return COURIER_FIXES_NOT_WRITABLE;
        }
    }
    slotCount = kept;
    strncpy(objectPath, object.name != NULL ? object.name : "", sizeof(objectPath) - 1);
    return COURIER_FIXES_ACTIVE;
#endif
}

courier_fixes_status courier_platform_fixes_install(const void *anchor, unsigned wrap) {
    pthread_mutex_lock(&installLock);
    if (installed == COURIER_FIXES_NOT_INSTALLED) installed = install(anchor, wrap);
    courier_fixes_status status = installed;
    pthread_mutex_unlock(&installLock);
    return status;
}

courier_fixes_status courier_platform_fixes_status(void) {
    pthread_mutex_lock(&installLock);
    courier_fixes_status status = installed;
    pthread_mutex_unlock(&installLock);
    return status;
}

unsigned courier_platform_fixes_wrapped(void) {
    pthread_mutex_lock(&installLock);
    unsigned wrapped = 0;
    unsigned missing = 0;
    for (size_t index = 0; index < slotCount; index++) {
        if (__atomic_load_n(slots[index].address, __ATOMIC_ACQUIRE) == slots[index].wrapper) {
            wrapped |= slots[index].bit;
        } else {
            missing |= slots[index].bit;  // e.g. a lazy binding that wrote over the wrapper
        }
    }
    pthread_mutex_unlock(&installLock);
    return wrapped & ~missing;
}

const char *courier_platform_fixes_object(void) {
    return courier_platform_fixes_status() == COURIER_FIXES_ACTIVE ? objectPath : NULL;
}

courier_fixes_counters courier_platform_fixes_counters(void) {
    courier_fixes_counters counters;
    counters.staleSourcesRemoved = __atomic_load_n(&courier_counters.staleSourcesRemoved, __ATOMIC_RELAXED);
    counters.headsCutShort = __atomic_load_n(&courier_counters.headsCutShort, __ATOMIC_RELAXED);
    counters.lengthsHidden = __atomic_load_n(&courier_counters.lengthsHidden, __ATOMIC_RELAXED);
    counters.urlHandlesReleased = __atomic_load_n(&courier_counters.urlHandlesReleased, __ATOMIC_RELAXED);
    counters.tlsPoliciesApplied = __atomic_load_n(&courier_counters.tlsPoliciesApplied, __ATOMIC_RELAXED);
    counters.caDirectoriesLeftOut = __atomic_load_n(&courier_counters.caDirectoriesLeftOut, __ATOMIC_RELAXED);
    counters.tlsCAFilesInMemory = __atomic_load_n(&courier_counters.tlsCAFilesInMemory, __ATOMIC_RELAXED);
    counters.tlsSessionsBound = __atomic_load_n(&courier_counters.tlsSessionsBound, __ATOMIC_RELAXED);
    counters.headerLinesWithheld = __atomic_load_n(&courier_counters.headerLinesWithheld, __ATOMIC_RELAXED);
    return counters;
}
