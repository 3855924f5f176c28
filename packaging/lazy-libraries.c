// What the binary loads on first use rather than links (GStreamer, GObject and TagLib: see
// Sources/CGStreamer/Loader.c and Sources/CTagLib/Loader.cpp), as a stub library that does link
// them and names every function and type the binary resolves in them. Scripts/package gives it
// to dpkg-shlibdeps beside the binary, so that Depends names those libraries, with the versions
// their functions need, as it did when the binary linked them. Never installed.

#define CGST_FUNCTION(library, name) extern void name(void);
#include "../Sources/CGStreamer/functions.h"
#undef CGST_FUNCTION

#define CTAGLIB_FUNCTION(symbol) extern void symbol(void);
#define CTAGLIB_TYPE(name, symbol) extern char symbol[];
#include "../Sources/CTagLib/functions.h"
#undef CTAGLIB_FUNCTION
#undef CTAGLIB_TYPE

const void *const lazy_library_symbols[] = {
#define CGST_FUNCTION(library, name) (const void *)name,
#include "../Sources/CGStreamer/functions.h"
#undef CGST_FUNCTION
#define CTAGLIB_FUNCTION(symbol) (const void *)symbol,
#define CTAGLIB_TYPE(name, symbol) (const void *)symbol,
#include "../Sources/CTagLib/functions.h"
#undef CTAGLIB_FUNCTION
#undef CTAGLIB_TYPE
};
