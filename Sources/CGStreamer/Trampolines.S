// One trampoline per function of functions.h, with the function's own name, so that the Swift
// binding and the inline functions of shim.h call GStreamer as if it were linked. A trampoline
// jumps to the function Loader.c resolved; until then it calls cgst_resolve (which loads the
// libraries) with its index, every argument register kept, and jumps to what it returns.

#include <LazyTrampolines.h>

    lazy_resolve_and_jump cgst_resolve_and_jump, cgst_resolve

#define CGST_FUNCTION(library, name) lazy_trampoline name, __COUNTER__, cgst_functions, cgst_resolve_and_jump
#include "functions.h"
#undef CGST_FUNCTION

// No executable stack.
    .section .note.GNU-stack, "", %progbits
