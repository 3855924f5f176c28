// CLazyLoading holds only its header, include/LazyTrampolines.h: the assembler macros that the
// targets of libraries loaded on first use (CGStreamer, CTagLib) build their trampolines with.
// A C target needs a source file; this one is it.
