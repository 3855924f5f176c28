// Loads GStreamer's libraries on first use and resolves the functions the trampolines of
// Trampolines.S jump to. Linking them instead made every start of the daemon map and relocate
// about twenty libraries (GStreamer, plugins-base, GObject and their dependencies) that a
// daemon which never plays does not need: about 2 ms of each start (Benchmarks/README.md,
// "Start-up: exec → bus name").

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { CGST_GOBJECT, CGST_GSTREAMER, CGST_GSTBASE, CGST_PBUTILS, CGST_LIBRARY_COUNT };

/// The libraries, by the sonames the headers the binding is compiled against belong to.
static const char *const libraryNames[CGST_LIBRARY_COUNT] = {
    "libgobject-2.0.so.0", "libgstreamer-1.0.so.0", "libgstbase-1.0.so.0", "libgstpbutils-1.0.so.0",
};

static const struct {
    int library;
    const char *name;
} functions[] = {
#define CGST_FUNCTION(library, name) {library, #name},
#include "functions.h"
#undef CGST_FUNCTION
};

enum { CGST_FUNCTION_COUNT = sizeof functions / sizeof functions[0] };

/// Where each trampoline jumps, in functions.h's order; NULL until loaded (the trampoline then
/// calls cgst_resolve). Each is written once, and all of them before any is read as set.
__attribute__((visibility("hidden"))) void *cgst_functions[CGST_FUNCTION_COUNT];

static pthread_once_t once = PTHREAD_ONCE_INIT;
/// Why loading failed; empty once loaded.
static char failure[512];

static void load(void) {
    void *libraries[CGST_LIBRARY_COUNT];
    for (int index = 0; index < CGST_LIBRARY_COUNT; index++) {
        // Local: the trampolines are the binary's only way in, and no symbol of these libraries
        // should be found by a library loaded later in place of its own dependency's.
        libraries[index] = dlopen(libraryNames[index], RTLD_NOW | RTLD_LOCAL);
        if (libraries[index] == NULL) {
            const char *reason = dlerror();
            snprintf(failure, sizeof failure, "%s", reason != NULL ? reason : libraryNames[index]);
            return;
        }
    }
    void *addresses[CGST_FUNCTION_COUNT];
    for (int index = 0; index < CGST_FUNCTION_COUNT; index++) {
        addresses[index] = dlsym(libraries[functions[index].library], functions[index].name);
        if (addresses[index] == NULL) {
            snprintf(failure, sizeof failure, "%s has no function %s", libraryNames[functions[index].library],
                     functions[index].name);
            return;
        }
    }
    // All or none: a trampoline either finds its function or goes through cgst_resolve.
    for (int index = 0; index < CGST_FUNCTION_COUNT; index++) {
        __atomic_store_n(&cgst_functions[index], addresses[index], __ATOMIC_RELEASE);
    }
}

int cgst_load(char *message, size_t size) {
    pthread_once(&once, load);
    if (failure[0] == '\0') return 1;
    if (size > 0) snprintf(message, size, "%s", failure);
    return 0;
}

/// Called by a trampoline whose function is not resolved yet: loads, then returns the
/// function of `index`. A GStreamer function has no way to report that GStreamer is missing,
/// so the process ends with the reason (GStreamerLibrary.initialize reports it as an error
/// before any such call).
__attribute__((visibility("hidden"))) void *cgst_resolve(unsigned long index) {
    pthread_once(&once, load);
    if (failure[0] != '\0') {
        fprintf(stderr, "GStreamer could not be loaded: %s\n", failure);
        _exit(EXIT_FAILURE);
    }
    return cgst_functions[index];
}
