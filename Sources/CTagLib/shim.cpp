// The one file that calls TagLib. Every C++ exception stops here: TagLib reports failure by
// return values, but an allocation failure must not cross into Swift.
#include "ctaglib.h"

#include <cstring>
#include <cxxabi.h>
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

// The binary does not link TagLib: its functions are trampolines (Trampolines.S) that load it on
// first use, and the type information the casts below need is found in it then (Loader.cpp).

extern "C" const void *ctaglib_type_info(int index);

namespace {

#define CTAGLIB_FUNCTION(symbol)
#define CTAGLIB_TYPE(name, symbol) name,
enum Type {
#include "functions.h"
};
#undef CTAGLIB_FUNCTION
#undef CTAGLIB_TYPE

/// `object`, whose static type is `source`, as a `Target` (type `target`) if it is one: what
/// `dynamic_cast<Target *>(object)` does, which would link TagLib's type information.
template <typename Target, typename Source> Target *as(Source *object, Type source, Type target) {
    if (!object) return nullptr;
    return static_cast<Target *>(abi::__dynamic_cast(
        object, static_cast<const abi::__class_type_info *>(ctaglib_type_info(source)),
        static_cast<const abi::__class_type_info *>(ctaglib_type_info(target)), -1));
}

const char *mimeType(TagLib::File *file) {
    if (as<TagLib::MPEG::File>(file, TypeFile, TypeMPEGFile)) return "audio/mpeg";
    if (as<TagLib::Ogg::Vorbis::File>(file, TypeFile, TypeVorbisFile) || as<TagLib::Ogg::Opus::File>(file, TypeFile, TypeOggOpusFile) ||
        as<TagLib::Ogg::FLAC::File>(file, TypeFile, TypeOggFLACFile) || as<TagLib::Ogg::Speex::File>(file, TypeFile, TypeOggSpeexFile))
        return "audio/ogg";
    if (as<TagLib::FLAC::File>(file, TypeFile, TypeFLACFile)) return "audio/x-flac";
    if (as<TagLib::RIFF::WAV::File>(file, TypeFile, TypeRIFFWAVFile)) return "audio/x-wav";
    if (as<TagLib::RIFF::AIFF::File>(file, TypeFile, TypeRIFFAIFFFile)) return "audio/x-aiff";
    if (as<TagLib::MP4::File>(file, TypeFile, TypeMP4File)) return "audio/mp4";
    return "";
}

void id3v2Pictures(TagLib::ID3v2::Tag *tag, ctaglib_picture_fn onPicture, void *context) {
    if (!tag) return;
    for (auto *frame : tag->frameList("APIC")) {
        auto *picture = as<TagLib::ID3v2::AttachedPictureFrame>(frame, TypeID3v2Frame, TypeID3v2AttachedPictureFrame);
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
    if (auto *mpeg = as<TagLib::MPEG::File>(file, TypeFile, TypeMPEGFile)) {
        id3v2Pictures(mpeg->ID3v2Tag(false), onPicture, context);
    } else if (auto *flac = as<TagLib::FLAC::File>(file, TypeFile, TypeFLACFile)) {
        flacPictures(flac->pictureList(), onPicture, context);
    } else if (auto *wav = as<TagLib::RIFF::WAV::File>(file, TypeFile, TypeRIFFWAVFile)) {
        if (wav->hasID3v2Tag()) id3v2Pictures(wav->ID3v2Tag(), onPicture, context);
    } else if (auto *aiff = as<TagLib::RIFF::AIFF::File>(file, TypeFile, TypeRIFFAIFFFile)) {
        if (aiff->hasID3v2Tag()) id3v2Pictures(aiff->tag(), onPicture, context);
    } else if (auto *mp4 = as<TagLib::MP4::File>(file, TypeFile, TypeMP4File)) {
        auto *tag = mp4->tag();
        if (!tag || !tag->contains("covr")) return;
        for (const auto &art : tag->item("covr").toCoverArtList()) {
            const char *mime = art.format() == TagLib::MP4::CoverArt::PNG ? "image/png"
                               : art.format() == TagLib::MP4::CoverArt::JPEG ? "image/jpeg" : "";
            const TagLib::ByteVector &data = art.data();
            onPicture(context, mime, data.data(), data.size(), 3);
        }
    } else if (auto *xiph = as<TagLib::Ogg::XiphComment>(file->tag(), TypeTag, TypeOggXiphComment)) {
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
