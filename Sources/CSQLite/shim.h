#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H

// SQLite 3, wrapped by Sources/MusicLibrary/SQLite.swift. SQLITE_TRANSIENT is
// a cast of -1 to a function pointer, which Swift cannot import.
#include <sqlite3.h>

static inline sqlite3_destructor_type mb_sqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
