// Loading a C library on first use: what the loaders of CGStreamer and CTagLib share. A target
// describes its libraries and the symbols its trampolines (LazyTrampolines.h) jump to, and calls
// lazy_load once (under its own pthread_once), then reads the outcome.
#ifndef LAZY_LOADING_H
#define LAZY_LOADING_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One set of libraries loaded together, and the symbols resolved in them.
typedef struct {
    /// The sonames, opened in this order (a later one may need an earlier one's symbols).
    const char *const *libraries;
    int libraryCount;
    /// The symbols to resolve: the first `functionCount` are functions, the rest data (type
    /// information); `symbolLibraries[i]` is the index in `libraries` of the library exporting
    /// symbol i, or `symbolLibraries` is NULL when all are in the first.
    const char *const *symbols;
    const int *symbolLibraries;
    int symbolCount;
    int functionCount;
    /// `symbolCount` entries: every address, stored (release) only once all resolved, so that a
    /// trampoline either finds its function or goes through its resolver.
    void **addresses;
    /// Why loading failed, as the dynamic linker says it; empty once loaded.
    char failure[512];
} LazyLibrarySet;

/// Opens the set's libraries (RTLD_LOCAL: the trampolines are the binary's only way in) and
/// resolves its symbols, all or none. Call once.
void lazy_load(LazyLibrarySet *set);

/// The outcome of a loaded set: 1 if loaded; 0 if not, with the reason in `message` (at most
/// `size` bytes, NUL included).
int lazy_load_outcome(const LazyLibrarySet *set, char *message, size_t size);

/// The address of symbol `index` of a loaded set, for a trampoline's resolver: a function of the
/// library has no way to report that the library is missing, so the process ends with the reason
/// on standard error (the library's users report it as their error before any such call).
void *lazy_resolved(const LazyLibrarySet *set, unsigned long index, const char *libraryKind);

#ifdef __cplusplus
}
#endif

#endif
