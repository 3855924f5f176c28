// Loading a C library on first use (include/LazyLoading.h); the trampolines that jump to what is
// loaded are include/LazyTrampolines.h's assembler macros.

#include "LazyLoading.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { LAZY_MAXIMUM_LIBRARIES = 8 };

void lazy_load(LazyLibrarySet *set) {
    void *libraries[LAZY_MAXIMUM_LIBRARIES];
    if (set->libraryCount > LAZY_MAXIMUM_LIBRARIES) {
        snprintf(set->failure, sizeof set->failure, "more than %d libraries in one set", LAZY_MAXIMUM_LIBRARIES);
        return;
    }
    for (int index = 0; index < set->libraryCount; index++) {
        libraries[index] = dlopen(set->libraries[index], RTLD_NOW | RTLD_LOCAL);
        if (libraries[index] == NULL) {
            const char *reason = dlerror();
            snprintf(set->failure, sizeof set->failure, "%s", reason != NULL ? reason : set->libraries[index]);
            return;
        }
    }
    void *addresses[set->symbolCount];
    for (int index = 0; index < set->symbolCount; index++) {
        int library = set->symbolLibraries != NULL ? set->symbolLibraries[index] : 0;
        addresses[index] = dlsym(libraries[library], set->symbols[index]);
        if (addresses[index] == NULL) {
            snprintf(set->failure, sizeof set->failure, "%s has no %s %s", set->libraries[library],
                     index < set->functionCount ? "function" : "type information", set->symbols[index]);
            return;
        }
    }
    for (int index = 0; index < set->symbolCount; index++) {
        __atomic_store_n(&set->addresses[index], addresses[index], __ATOMIC_RELEASE);
    }
}

int lazy_load_outcome(const LazyLibrarySet *set, char *message, size_t size) {
    if (set->failure[0] == '\0') return 1;
    if (size > 0) snprintf(message, size, "%s", set->failure);
    return 0;
}

void *lazy_resolved(const LazyLibrarySet *set, unsigned long index, const char *libraryKind) {
    if (set->failure[0] != '\0') {
        fprintf(stderr, "%s could not be loaded: %s\n", libraryKind, set->failure);
        _exit(EXIT_FAILURE);
    }
    return set->addresses[index];
}
