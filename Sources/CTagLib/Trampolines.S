// One trampoline per function of functions.h, with the function's own (mangled) name, so that
// shim.cpp calls TagLib as if it were linked. A trampoline jumps to the function Loader.cpp
// resolved; until then it calls ctaglib_resolve (which loads TagLib) with its index, every
// argument register kept, and jumps to what it returns.

#include <LazyTrampolines.h>

    lazy_resolve_and_jump ctaglib_resolve_and_jump, ctaglib_resolve

#define CTAGLIB_FUNCTION(symbol) lazy_trampoline symbol, __COUNTER__, ctaglib_functions, ctaglib_resolve_and_jump
#define CTAGLIB_TYPE(name, symbol)
#include "functions.h"
#undef CTAGLIB_FUNCTION
#undef CTAGLIB_TYPE

// No executable stack.
    .section .note.GNU-stack, "", %progbits
