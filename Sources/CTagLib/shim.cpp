// The one file that calls TagLib. Every C++ exception stops here: TagLib reports failure by
// return values, but an allocation failure must not cross into Swift.
#include "ctaglib.h"

#include <cstring>
#include <exception>
#include <unistd.h>

#include <taglib/attachedpictureframe.h>
#include <taglib/fileref.h>
#include <taglib/tfilestream.h>
#include <taglib/flacfile.h>
#include <taglib/id3v2tag.h>
#include <taglib/mp4file.h>
#include <taglib/mpegfile.h>
#include <taglib/oggflacfile.h>
#include <taglib/opusfile.h>
#include <taglib/speexfile.h>
#include <taglib/tpropertymap.h>
#include <taglib/vorbisfile.h>
#include <taglib/wavfile.h>
#include <taglib/aifffile.h>
#include <taglib/xiphcomment.h>

namespace {

const char *mimeType(TagLib::File *file) {
    if (dynamic_cast<TagLib::MPEG::File *>(file)) return "audio/mpeg";
    if (dynamic_cast<TagLib::Ogg::Vorbis::File *>(file) || dynamic_cast<TagLib::Ogg::Opus::File *>(file) ||
        dynamic_cast<TagLib::Ogg::FLAC::File *>(file) || dynamic_cast<TagLib::Ogg::Speex::File *>(file))
        return "audio/ogg";
    if (dynamic_cast<TagLib::FLAC::File *>(file)) return "audio/x-flac";
    if (dynamic_cast<TagLib::RIFF::WAV::File *>(file)) return "audio/x-wav";
    if (dynamic_cast<TagLib::RIFF::AIFF::File *>(file)) return "audio/x-aiff";
    if (dynamic_cast<TagLib::MP4::File *>(file)) return "audio/mp4";
    return "";
}

void id3v2Pictures(TagLib::ID3v2::Tag *tag, ctaglib_picture_fn onPicture, void *context) {
    if (!tag) return;
    for (auto *frame : tag->frameList("APIC")) {
        auto *picture = dynamic_cast<TagLib::ID3v2::AttachedPictureFrame *>(frame);
        if (!picture) continue;
        const TagLib::ByteVector &data = picture->picture();
        onPicture(context, picture->mimeType().toCString(true), data.data(), data.size(), picture->type());
    }
}

void flacPictures(const TagLib::List<TagLib::FLAC::Picture *> &pictures, ctaglib_picture_fn onPicture, void *context) {
    for (auto *picture : pictures) {
        const TagLib::ByteVector &data = picture->data();
        onPicture(context, picture->mimeType().toCString(true), data.data(), data.size(), picture->type());
    }
}

void pictures(TagLib::File *file, ctaglib_picture_fn onPicture, void *context) {
    if (auto *mpeg = dynamic_cast<TagLib::MPEG::File *>(file)) {
        id3v2Pictures(mpeg->ID3v2Tag(false), onPicture, context);
    } else if (auto *flac = dynamic_cast<TagLib::FLAC::File *>(file)) {
        flacPictures(flac->pictureList(), onPicture, context);
    } else if (auto *wav = dynamic_cast<TagLib::RIFF::WAV::File *>(file)) {
        if (wav->hasID3v2Tag()) id3v2Pictures(wav->ID3v2Tag(), onPicture, context);
    } else if (auto *aiff = dynamic_cast<TagLib::RIFF::AIFF::File *>(file)) {
        if (aiff->hasID3v2Tag()) id3v2Pictures(aiff->tag(), onPicture, context);
    } else if (auto *mp4 = dynamic_cast<TagLib::MP4::File *>(file)) {
        auto *tag = mp4->tag();
        if (!tag || !tag->contains("covr")) return;
        for (const auto &art : tag->item("covr").toCoverArtList()) {
            const char *mime = art.format() == TagLib::MP4::CoverArt::PNG ? "image/png"
                               : art.format() == TagLib::MP4::CoverArt::JPEG ? "image/jpeg" : "";
            const TagLib::ByteVector &data = art.data();
            onPicture(context, mime, data.data(), data.size(), 3);
        }
    } else if (auto *xiph = dynamic_cast<TagLib::Ogg::XiphComment *>(file->tag())) {
        flacPictures(xiph->pictureList(), onPicture, context);
    }
}

}  // namespace

extern "C" ctaglib_result ctaglib_read(int descriptor, ctaglib_audio *audio, char *mime, size_t mimeSize,
                                       ctaglib_property_fn onProperty, ctaglib_picture_fn onPicture, void *context) {
    try {
        // The stream owns the descriptor from here on, and has no name: the format is told by
        // content, so a text file named .mp3 is not taken for one.
        TagLib::FileStream stream(descriptor, true);
        if (!stream.isOpen()) {
            close(descriptor);
            return CTAGLIB_NOT_READABLE;
        }
        TagLib::FileRef ref(&stream, true, TagLib::AudioProperties::Average);
        if (ref.isNull() || !ref.file()->isValid()) return CTAGLIB_NOT_READABLE;
        TagLib::AudioProperties *properties = ref.audioProperties();
        if (!properties) return CTAGLIB_NO_AUDIO;
        audio->length_ms = properties->lengthInMilliseconds();
        audio->bitrate_kbps = properties->bitrate();
        audio->sample_rate = properties->sampleRate();
        audio->channels = properties->channels();
        if (mimeSize > 0) {
            std::strncpy(mime, mimeType(ref.file()), mimeSize - 1);
            mime[mimeSize - 1] = '\0';
        }
        const TagLib::PropertyMap map = ref.file()->properties();
        for (const auto &entry : map) {
            const std::string key = entry.first.to8Bit(true);
            for (const auto &value : entry.second) onProperty(context, key.c_str(), value.toCString(true));
        }
        if (onPicture) pictures(ref.file(), onPicture, context);
        return CTAGLIB_OK;
    } catch (const std::exception &) {
        return CTAGLIB_NOT_READABLE;
    }
}

extern "C" ctaglib_result ctaglib_write(const char *path, const char *const *keys, const char *const *values,
                                        size_t count) {
    try {
        TagLib::FileRef ref(path, false);
        if (ref.isNull() || !ref.file()->isValid()) return CTAGLIB_NOT_READABLE;
        TagLib::PropertyMap map;
        for (size_t index = 0; index < count; index++) {
            map[TagLib::String(keys[index], TagLib::String::UTF8)].append(TagLib::String(values[index], TagLib::String::UTF8));
        }
        ref.file()->setProperties(map);
        return ref.file()->save() ? CTAGLIB_OK : CTAGLIB_NOT_SAVED;
    } catch (const std::exception &) {
        return CTAGLIB_NOT_SAVED;
    }
}
