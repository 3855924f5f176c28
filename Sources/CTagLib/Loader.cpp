// Loads TagLib on first use and resolves the functions the trampolines of Trampolines.S jump to
// and the type information shim.cpp's casts compare. Linking it instead made every start of the
// daemon map and relocate it, though only a scan reads tags: about 0.8 ms of each start
// (Benchmarks/README.md, "Start-up: exec → bus name").

#include "ctaglib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <taglib/taglib.h>

#define CTAGLIB_STRING(value) #value
#define CTAGLIB_SONAME(major) "libtag.so." CTAGLIB_STRING(major)

namespace {

/// The library the headers shim.cpp is compiled against belong to.
const char *const libraryName = CTAGLIB_SONAME(TAGLIB_MAJOR_VERSION);

const char *const functionNames[] = {
#define CTAGLIB_FUNCTION(symbol) #symbol,
#define CTAGLIB_TYPE(name, symbol)
#include "functions.h"
#undef CTAGLIB_FUNCTION
#undef CTAGLIB_TYPE
};

const char *const typeNames[] = {
#define CTAGLIB_FUNCTION(symbol)
#define CTAGLIB_TYPE(name, symbol) #symbol,
#include "functions.h"
#undef CTAGLIB_FUNCTION
#undef CTAGLIB_TYPE
};

constexpr int functionCount = sizeof functionNames / sizeof functionNames[0];
constexpr int typeCount = sizeof typeNames / sizeof typeNames[0];

const void *types[typeCount];
pthread_once_t once = PTHREAD_ONCE_INIT;
/// Why loading failed; empty once loaded.
char failure[512];

}  // namespace

/// Where each trampoline jumps, in functions.h's order; NULL until loaded (the trampoline then
/// calls ctaglib_resolve). Each is written once, and all of them before any is read as set.
extern "C" __attribute__((visibility("hidden"))) void *ctaglib_functions[functionCount];
void *ctaglib_functions[functionCount];

static void load() {
    // Local: the trampolines are the binary's only way in.
    void *library = dlopen(libraryName, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "%s", reason != nullptr ? reason : libraryName);
        return;
    }
    void *addresses[functionCount];
    for (int index = 0; index < functionCount; index++) {
        addresses[index] = dlsym(library, functionNames[index]);
        if (addresses[index] == nullptr) {
            snprintf(failure, sizeof failure, "%s has no function %s", libraryName, functionNames[index]);
            return;
        }
    }
    for (int index = 0; index < typeCount; index++) {
        types[index] = dlsym(library, typeNames[index]);
        if (types[index] == nullptr) {
            snprintf(failure, sizeof failure, "%s has no type information %s", libraryName, typeNames[index]);
            return;
        }
    }
    // All or none: a trampoline either finds its function or goes through ctaglib_resolve.
    for (int index = 0; index < functionCount; index++) {
        __atomic_store_n(&ctaglib_functions[index], addresses[index], __ATOMIC_RELEASE);
    }
}

extern "C" int ctaglib_load(char *message, size_t messageSize) {
    pthread_once(&once, load);
    if (failure[0] == '\0') return 1;
    if (messageSize > 0) snprintf(message, messageSize, "%s", failure);
    return 0;
}

/// Called by a trampoline whose function is not resolved yet: loads, then returns the
/// function of `index`. A TagLib function has no way to report that TagLib is missing, so the
/// process ends with the reason (AudioTags reports it as an error before any such call).
extern "C" __attribute__((visibility("hidden"))) void *ctaglib_resolve(unsigned long index) {
    pthread_once(&once, load);
    if (failure[0] != '\0') {
        fprintf(stderr, "TagLib could not be loaded: %s\n", failure);
        _exit(EXIT_FAILURE);
    }
    return ctaglib_functions[index];
}

/// The type information of shim.cpp's type `index` (functions.h's CTAGLIB_TYPE order); loads
/// TagLib first if needed. Only called once a TagLib function was.
extern "C" const void *ctaglib_type_info(int index) {
    pthread_once(&once, load);
    return types[index];
}
