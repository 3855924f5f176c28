// Loads TagLib on first use and resolves the functions the trampolines of Trampolines.S jump to
// and the type information shim.cpp's casts compare. Linking it instead made every start of the
// daemon map and relocate it, though only a scan reads tags: about 0.8 ms of each start
// (Benchmarks/README.md, "Start-up: exec → bus name").

#include "ctaglib.h"

#include <LazyLoading.h>
#include <pthread.h>

#include <taglib/taglib.h>

#define CTAGLIB_STRING(value) #value
#define CTAGLIB_SONAME(major) "libtag.so." CTAGLIB_STRING(major)

namespace {

/// The library the headers shim.cpp is compiled against belong to.
const char *const libraryNames[] = {CTAGLIB_SONAME(TAGLIB_MAJOR_VERSION)};

/// The functions, then the type information, in functions.h's order.
const char *const symbolNames[] = {
#define CTAGLIB_FUNCTION(symbol) #symbol,
#define CTAGLIB_TYPE(name, symbol)
#include "functions.h"
#undef CTAGLIB_FUNCTION
#undef CTAGLIB_TYPE
#define CTAGLIB_FUNCTION(symbol)
#define CTAGLIB_TYPE(name, symbol) #symbol,
#include "functions.h"
#undef CTAGLIB_FUNCTION
#undef CTAGLIB_TYPE
};

constexpr int functionCount = 0
#define CTAGLIB_FUNCTION(symbol) +1
#define CTAGLIB_TYPE(name, symbol)
#include "functions.h"
#undef CTAGLIB_FUNCTION
#undef CTAGLIB_TYPE
    ;
constexpr int symbolCount = sizeof symbolNames / sizeof symbolNames[0];

pthread_once_t once = PTHREAD_ONCE_INIT;

}  // namespace

/// Where each trampoline jumps, in functions.h's order, then the type information; NULL until
/// loaded (the trampoline then calls ctaglib_resolve).
extern "C" __attribute__((visibility("hidden"))) void *ctaglib_functions[symbolCount];
void *ctaglib_functions[symbolCount];

namespace {

LazyLibrarySet taglib = {
    libraryNames, 1, symbolNames, nullptr, symbolCount, functionCount, ctaglib_functions, {},
};

void load() { lazy_load(&taglib); }

}  // namespace

extern "C" int ctaglib_load(char *message, size_t messageSize) {
    pthread_once(&once, load);
    return lazy_load_outcome(&taglib, message, messageSize);
}

/// Called by a trampoline whose function is not resolved yet: loads, then returns the
/// function of `index` (or ends the process: see lazy_resolved; AudioTags reports a missing
/// library as an error before any such call).
extern "C" __attribute__((visibility("hidden"))) void *ctaglib_resolve(unsigned long index) {
    pthread_once(&once, load);
    return lazy_resolved(&taglib, index, "TagLib");
}

/// The type information of shim.cpp's type `index` (functions.h's CTAGLIB_TYPE order); loads
/// TagLib first if needed. Only called once a TagLib function was.
extern "C" const void *ctaglib_type_info(int index) {
    pthread_once(&once, load);
    return __atomic_load_n(&ctaglib_functions[functionCount + index], __ATOMIC_ACQUIRE);
}
