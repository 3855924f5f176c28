#ifndef CTAGLIB_H
#define CTAGLIB_H

// A C face for the few TagLib calls the library makes, so that Swift needs no C++ interop.
// TagLib itself is C++; its own C API (tag_c) reads no album artist, disc or picture.

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What a file's audio stream says of itself; 0 where unknown.
typedef struct ctaglib_audio {
    long long length_ms;
    int bitrate_kbps;
    int sample_rate;
    int channels;
} ctaglib_audio;

/// Called once per value of each tag, with TagLib's unified keys (TITLE, ARTIST, ALBUMARTIST,
/// TRACKNUMBER, DISCNUMBER, DATE, GENRE, COMPOSER, ...) and UTF-8 text.
typedef void (*ctaglib_property_fn)(void *context, const char *key, const char *value);
/// Called once per embedded picture: its MIME type (may be empty), bytes and ID3v2 picture
/// type (3 is the front cover).
typedef void (*ctaglib_picture_fn)(void *context, const char *mime, const void *data, size_t size, int type);

typedef enum ctaglib_result {
    CTAGLIB_OK = 0,
    /// TagLib knows no format for the file, or the file is not one of it.
    CTAGLIB_NOT_READABLE = 1,
    /// The file opened but has no audio stream TagLib can describe.
    CTAGLIB_NO_AUDIO = 2,
    /// The file could not be written.
    CTAGLIB_NOT_SAVED = 3,
} ctaglib_result;

/// Loads TagLib, unless done already: the binary does not link it, so that a start that reads no
/// tags does not map it. Returns 1 once loaded; 0 if the library or a function is missing, with
/// the dynamic linker's reason in `message` (at most `message_size` bytes, NUL included). The
/// functions below load it all the same, and end the process with that reason on standard
/// error if they cannot.
int ctaglib_load(char *message, size_t message_size);

/// Reads the open file `descriptor`, which it closes: its format from its content (never its
/// name), its audio properties into `audio`, its container's media type (at most `mime_size`
/// bytes, NUL included) into `mime`, each tag value through `on_property` and, when
/// `on_picture` is not NULL, each picture. Never throws.
ctaglib_result ctaglib_read(int descriptor, ctaglib_audio *audio, char *mime, size_t mime_size,
                            ctaglib_property_fn on_property, ctaglib_picture_fn on_picture, void *context);

/// Replaces the tags of the file at `path` with `count` key/value pairs (a key given several
/// times gets several values) and saves it.
ctaglib_result ctaglib_write(const char *path, const char *const *keys, const char *const *values, size_t count);

#ifdef __cplusplus
}
#endif

#endif
