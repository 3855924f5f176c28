// Loads GStreamer's libraries on first use and resolves the functions the trampolines of
// Trampolines.S jump to. Linking them instead made every start of the daemon map and relocate
// about twenty libraries (GStreamer, plugins-base, GObject and their dependencies) that a
// daemon which never plays does not need: about 2 ms of each start (Benchmarks/README.md,
// "Start-up: exec → bus name").

#include <LazyLoading.h>
#include <pthread.h>

enum { CGST_GOBJECT, CGST_GSTREAMER, CGST_GSTBASE, CGST_PBUTILS, CGST_LIBRARY_COUNT };

/// The libraries, by the sonames the headers the binding is compiled against belong to.
static const char *const libraryNames[CGST_LIBRARY_COUNT] = {
    "libgobject-2.0.so.0", "libgstreamer-1.0.so.0", "libgstbase-1.0.so.0", "libgstpbutils-1.0.so.0",
};

static const char *const functionNames[] = {
#define CGST_FUNCTION(library, name) #name,
#include "functions.h"
#undef CGST_FUNCTION
};

static const int functionLibraries[] = {
#define CGST_FUNCTION(library, name) library,
#include "functions.h"
#undef CGST_FUNCTION
};

enum { CGST_FUNCTION_COUNT = sizeof functionNames / sizeof functionNames[0] };

/// Where each trampoline jumps, in functions.h's order; NULL until loaded (the trampoline then
/// calls cgst_resolve).
__attribute__((visibility("hidden"))) void *cgst_functions[CGST_FUNCTION_COUNT];

static LazyLibrarySet gstreamer = {
    .libraries = libraryNames, .libraryCount = CGST_LIBRARY_COUNT,
    .symbols = functionNames, .symbolLibraries = functionLibraries,
    .symbolCount = CGST_FUNCTION_COUNT, .functionCount = CGST_FUNCTION_COUNT,
    .addresses = cgst_functions,
};
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) { lazy_load(&gstreamer); }

int cgst_load(char *message, size_t size) {
    pthread_once(&once, load);
    return lazy_load_outcome(&gstreamer, message, size);
}

/// Called by a trampoline whose function is not resolved yet: loads, then returns the
/// function of `index` (or ends the process: see lazy_resolved; GStreamerLibrary.initialize
/// reports a missing library as an error before any such call).
__attribute__((visibility("hidden"))) void *cgst_resolve(unsigned long index) {
    pthread_once(&once, load);
    return lazy_resolved(&gstreamer, index, "GStreamer");
}
