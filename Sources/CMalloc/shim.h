#ifndef CMALLOC_SHIM_H
#define CMALLOC_SHIM_H

// glibc's malloc extensions (malloc_trim, mallopt), which the Glibc module does not import. The
// daemon limits its malloc arenas at start and returns the heap it freed while building its
// queue to the system once it is ready.
#include <malloc.h>

#endif
