#ifndef CGSTREAMER_SHIM_H
#define CGSTREAMER_SHIM_H

// GStreamer core and the plugins-base utilities (the discoverer). Swift
// cannot import GLib's variadic functions or GStreamer's function-like
// macros, so the static inline functions below stand in for the few that
// Sources/GStreamerPlayback needs.
//
// The binary does not link GStreamer: every GStreamer and GObject function called here is a
// trampoline of this target (functions.h) that loads the libraries on first use, so a daemon
// that never plays never maps them. Only functions may be used, never exported variables
// (GST_TYPE_STRUCTURE, G_PARAM_SPEC_INT64 and such macros read one): a variable cannot be
// reached through a trampoline, and the link then fails on it.
#include <gst/gst.h>
#include <gst/pbutils/pbutils.h>
#include <gst/base/gsttypefindhelper.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Loads GStreamer's libraries and resolves every function this module calls, unless done
/// already. Returns 1 once loaded; 0 if a library or a function is missing, with the reason
/// (the dynamic linker's) in `message` (at most `size` bytes, NUL included). A GStreamer
/// function called without this loads them all the same, and ends the process with that
/// reason on standard error if it cannot.
int cgst_load(char *message, size_t size);

// Playback
//
// Used by the binding in Sources/GStreamerPlayback/GStreamer/ only.

/// GST_CLOCK_TIME_NONE, which Swift cannot import (it is a cast).
static inline GstClockTime cgst_clock_time_none(void) { return GST_CLOCK_TIME_NONE; }

/// The kernel id of the calling thread (for /proc/self/task/<id>).
static inline pid_t cgst_thread_id(void) { return (pid_t)syscall(SYS_gettid); }

/// Names the calling thread (at most 15 bytes are kept), as shown by top and /proc.
static inline void cgst_name_thread(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

static inline GstMessageType cgst_message_type(GstMessage *message) { return GST_MESSAGE_TYPE(message); }
static inline GstObject *cgst_message_source(GstMessage *message) { return GST_MESSAGE_SRC(message); }

// Typed g_object_set / g_object_get (the originals are variadic).
static inline void cgst_set_string(gpointer object, const gchar *name, const gchar *value) {
    g_object_set(object, name, value, NULL);
}
static inline void cgst_set_double(gpointer object, const gchar *name, gdouble value) {
    g_object_set(object, name, value, NULL);
}
static inline gdouble cgst_get_double(gpointer object, const gchar *name) {
    gdouble value = 0;
    g_object_get(object, name, &value, NULL);
    return value;
}
static inline void cgst_set_boolean(gpointer object, const gchar *name, gboolean value) {
    g_object_set(object, name, value, NULL);
}
static inline gboolean cgst_get_boolean(gpointer object, const gchar *name) {
    gboolean value = FALSE;
    g_object_get(object, name, &value, NULL);
    return value;
}
/// For flags and enums as well as plain unsigned properties.
static inline void cgst_set_uint(gpointer object, const gchar *name, guint value) {
    g_object_set(object, name, value, NULL);
}
static inline guint cgst_get_uint(gpointer object, const gchar *name) {
    guint value = 0;
    g_object_get(object, name, &value, NULL);
    return value;
}
/// Sets the unsigned property `name` if `object` has one; returns whether it did.
static inline gboolean cgst_set_uint_if_present(gpointer object, const gchar *name, guint value) {
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(object), name) == NULL) return FALSE;
    g_object_set(object, name, value, NULL);
    return TRUE;
}
/// Sets an object property; the object takes its own reference (a floating one is sunk).
static inline void cgst_set_object(gpointer object, const gchar *name, gpointer value) {
    g_object_set(object, name, value, NULL);
}

/// Connects playbin's `about-to-finish`; `destroy` runs when the handler is disconnected.
static inline gulong cgst_connect_about_to_finish(
    GstElement *playbin, void (*callback)(GstElement *, gpointer), gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(playbin, "about-to-finish", G_CALLBACK(callback), data, destroy, (GConnectFlags)0);
}

/// Whether a pad probe saw a FLUSH_STOP event (the end of a flushing seek's flush).
static inline gboolean cgst_probe_is_flush_stop(GstPadProbeInfo *info) {
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    return event != NULL && GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP;
}

/// If the event in `info` is a TIME segment whose rate is not `rate`, replaces it with the same
/// segment at `rate` (what a seek at that rate would have produced).
static inline void cgst_probe_set_segment_rate(GstPadProbeInfo *info, gdouble rate) {
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (event == NULL || GST_EVENT_TYPE(event) != GST_EVENT_SEGMENT) return;
    const GstSegment *segment = NULL;
    gst_event_parse_segment(event, &segment);
    if (segment == NULL || segment->format != GST_FORMAT_TIME || segment->rate == rate) return;
    GstSegment changed;
    gst_segment_copy_into(segment, &changed);
    changed.rate = rate;
    GstEvent *replacement = gst_event_new_segment(&changed);
    gst_event_set_seqnum(replacement, gst_event_get_seqnum(event));
    gst_event_unref(event);
    GST_PAD_PROBE_INFO_DATA(info) = replacement;
}

/// g_signal_connect_data without flags (the original's macro wrapper is not importable).
static inline gulong cgst_connect(
    gpointer instance, const gchar *signal, GCallback callback, gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, callback, data, destroy, (GConnectFlags)0);
}

/// A string property of a device object (pulse devices' `internal-name`, the sink's name), or
/// NULL if it has none. Free with g_free.
static inline gchar *cgst_device_string_property(GstDevice *device, const gchar *name) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(device), name);
    if (spec == NULL || spec->value_type != G_TYPE_STRING) return NULL;
    gchar *value = NULL;
    g_object_get(device, name, &value, NULL);
    return value;
}

/// Whether a device's properties mark it as the system's default (`is-default`).
static inline gboolean cgst_device_is_default(GstDevice *device) {
    GstStructure *properties = gst_device_get_properties(device);
    if (properties == NULL) return FALSE;
    gboolean is_default = FALSE;
    gst_structure_get_boolean(properties, "is-default", &is_default);
    gst_structure_free(properties);
    return is_default;
}

/// An object property (a new reference, or NULL).
static inline gpointer cgst_get_object(gpointer object, const gchar *name) {
    gpointer value = NULL;
    g_object_get(object, name, &value, NULL);
    return value;
}

/// Whether `object` is a bin.
static inline gboolean cgst_is_bin(gpointer object) { return object != NULL && GST_IS_BIN(object); }

/// Gives the stream of an audio sink with `stream-properties` (pulsesink, pipewiresink) the
/// role `role` (`media.role`, which the sound server's policy reads: role corking, routing),
/// unless its properties name a role already. Does nothing to other elements.
static inline void cgst_set_stream_role(GstElement *element, const gchar *role) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(element), "stream-properties");
    if (spec == NULL || spec->value_type != gst_structure_get_type()) return;
    GstStructure *properties = NULL;
    g_object_get(element, "stream-properties", &properties, NULL);
    if (properties != NULL && gst_structure_has_field(properties, "media.role")) {
        gst_structure_free(properties);
        return;
    }
    if (properties == NULL) properties = gst_structure_new_empty("props");
    gst_structure_set(properties, "media.role", G_TYPE_STRING, role, NULL);
    g_object_set(element, "stream-properties", properties, NULL);
    gst_structure_free(properties);
}

/// Whether `element` is a sink element itself, not a bin holding one (autoaudiosink is a bin
/// flagged as a sink; the sink it picks is the element that plays).
static inline gboolean cgst_is_sink_element(GstElement *element) {
    return !GST_IS_BIN(element) && GST_OBJECT_FLAG_IS_SET(element, GST_ELEMENT_FLAG_SINK);
}

/// Calls `visit` for every element inside `bin`, at any depth.
static inline void cgst_for_each_element(GstBin *bin, void (*visit)(GstElement *, gpointer), gpointer data) {
    GstIterator *iterator = gst_bin_iterate_recurse(bin);
    GValue item = G_VALUE_INIT;
    while (gst_iterator_next(iterator, &item) == GST_ITERATOR_OK) {
        visit(GST_ELEMENT(g_value_get_object(&item)), data);
        g_value_reset(&item);
    }
    g_value_unset(&item);
    gst_iterator_free(iterator);
}

static inline void cgst_reconfigure_sink(GstElement *element, gpointer device) {
    if (cgst_is_sink_element(element)) gst_device_reconfigure_element(GST_DEVICE(device), element);
}

/// Points every sink element inside `bin` at `device`, if the device's provider can
/// reconfigure it (pulsesink moves a running stream to the device).
static inline void cgst_reconfigure_sinks(GstBin *bin, GstDevice *device) {
    cgst_for_each_element(bin, cgst_reconfigure_sink, device);
}

static inline void cgst_reset_sink_device(GstElement *element, gpointer unused) {
    (void)unused;
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(element), "device");
    if (cgst_is_sink_element(element) && spec != NULL && spec->value_type == G_TYPE_STRING
        && (spec->flags & G_PARAM_WRITABLE)) {
        g_object_set(element, "device", NULL, NULL);
    }
}

/// Clears the `device` of every sink element inside `bin` that has one: its next stream goes to
/// the system's default output.
static inline void cgst_reset_sink_devices(GstBin *bin) { cgst_for_each_element(bin, cgst_reset_sink_device, NULL); }

/// What `cgst_bin_has_factory` looks for, and whether it found it.
typedef struct {
    const gchar *name;
    gboolean found;
} CGstFactorySearch;

static inline void cgst_match_factory(GstElement *element, gpointer data) {
    CGstFactorySearch *search = (CGstFactorySearch *)data;
    GstElementFactory *factory = gst_element_get_factory(element);
    if (factory != NULL && g_strcmp0(gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory)), search->name) == 0) {
        search->found = TRUE;
    }
}

/// Whether `bin` holds (at any depth) an element made by the factory `name`.
static inline gboolean cgst_bin_has_factory(GstBin *bin, const gchar *name) {
    CGstFactorySearch search = {name, FALSE};
    cgst_for_each_element(bin, cgst_match_factory, &search);
    return search.found;
}

/// The name of the factory that made `element` ("uridecodebin"), or NULL.
static inline const gchar *cgst_factory_name(GstElement *element) {
    GstElementFactory *factory = gst_element_get_factory(element);
    return factory != NULL ? gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory)) : NULL;
}

/// The `location` of the first `filesink` inside `bin` (at any depth), or NULL; the caller frees it.
static inline void cgst_find_filesink_location(GstElement *element, gpointer data) {
    gchar **location = (gchar **)data;
    const gchar *factory = cgst_factory_name(element);
    if (*location == NULL && g_strcmp0(factory, "filesink") == 0) g_object_get(element, "location", location, NULL);
}

static inline gchar *cgst_filesink_location(GstBin *bin) {
    gchar *location = NULL;
    cgst_for_each_element(bin, cgst_find_filesink_location, &location);
    return location;
}

/// The application message the engine posts on its own bus to mark a point in the message order.
#define CGST_MARKER_NAME "mpris-bridge-marker"

static inline gboolean cgst_post_marker(GstBus *bus, gint64 value) {
    GstStructure *structure = gst_structure_new(CGST_MARKER_NAME, "value", G_TYPE_INT64, value, NULL);
    return gst_bus_post(bus, gst_message_new_application(NULL, structure));
}

/// The value of a marker posted by cgst_post_marker; FALSE for any other message.
static inline gboolean cgst_marker_value(GstMessage *message, gint64 *value) {
    const GstStructure *structure = gst_message_get_structure(message);
    if (structure == NULL || !gst_structure_has_name(structure, CGST_MARKER_NAME)) return FALSE;
    return gst_structure_get_int64(structure, "value", value);
}

/// Whether `object` is a sink element (an audio output, not a decoder or a source).
static inline gboolean cgst_is_sink(GstObject *object) {
    return object != NULL && GST_IS_ELEMENT(object) && GST_OBJECT_FLAG_IS_SET(object, GST_ELEMENT_FLAG_SINK);
}

/// Whether `object` is a source element (a file or HTTP reader), which reads and decodes nothing.
static inline gboolean cgst_is_source(GstObject *object) {
    return object != NULL && GST_IS_ELEMENT(object) && GST_OBJECT_FLAG_IS_SET(object, GST_ELEMENT_FLAG_SOURCE);
}

/// The URI that `object` (an element that posted an error) was working on: the nearest source
/// element's or uridecodebin's, walking up the parents up to but not including `top` (playbin,
/// whose `uri` property is already the next item's after a gapless hand-over). NULL if none.
static inline gchar *cgst_uri_of(GstObject *object, GstObject *top) {
    GstObject *current = object != NULL ? gst_object_ref(object) : NULL;
    while (current != NULL && current != top) {
        gchar *uri = NULL;
        if (GST_IS_URI_HANDLER(current) && gst_uri_handler_get_uri_type(GST_URI_HANDLER(current)) == GST_URI_SRC) {
            uri = gst_uri_handler_get_uri(GST_URI_HANDLER(current));
        } else if (g_object_class_find_property(G_OBJECT_GET_CLASS(current), "uri") != NULL) {
            GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(current), "uri");
            if (spec->value_type == G_TYPE_STRING) g_object_get(current, "uri", &uri, NULL);
        }
        if (uri != NULL) {
            gst_object_unref(current);
            return uri;
        }
        GstObject *parent = gst_object_get_parent(current);
        gst_object_unref(current);
        current = parent;
    }
    if (current != NULL) gst_object_unref(current);
    return NULL;
}

/// Sets the 64-bit integer property `name` of `object` to `value` when it has one that still
/// holds its default: what a description set explicitly is kept. Returns whether it set it.
static inline gboolean cgst_set_int64_if_default(gpointer object, const gchar *name, gint64 value) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(object), name);
    if (spec == NULL || spec->value_type != G_TYPE_INT64 || !(spec->flags & G_PARAM_WRITABLE)) return FALSE;
    gint64 current = 0;
    g_object_get(object, name, &current, NULL);
    // The spec of a G_TYPE_INT64 property is a GParamSpecInt64 (G_PARAM_SPEC_INT64 would read a variable).
    if (current != ((GParamSpecInt64 *)spec)->default_value) return FALSE;
    g_object_set(object, name, value, NULL);
    return TRUE;
}

/// Whether `element` is an audio decoder (its factory's class names both), as GstAudioDecoder's
/// subclasses are: vorbisdec, flacdec, mpg123audiodec, opusdec, avdec_*.
static inline gboolean cgst_is_audio_decoder(GstElement *element) {
    GstElementFactory *factory = gst_element_get_factory(element);
    if (factory == NULL) return FALSE;
    const gchar *klass = gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS);
    return klass != NULL && g_strstr_len(klass, -1, "Decoder") != NULL && g_strstr_len(klass, -1, "Audio") != NULL;
}

/// An unsigned property of 32 or 64 bits (a queue's `current-level-time`, a multiqueue pad's
/// `current-level-buffers`), 0 if `object` has none.
static inline guint64 cgst_get_unsigned(gpointer object, const gchar *name) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(object), name);
    if (spec == NULL) return 0;
    if (spec->value_type == G_TYPE_UINT64) {
        guint64 value = 0;
        g_object_get(object, name, &value, NULL);
        return value;
    }
    if (spec->value_type == G_TYPE_UINT) {
        guint value = 0;
        g_object_get(object, name, &value, NULL);
        return value;
    }
    return 0;
}

/// How many source pads `element` has now.
static inline guint16 cgst_src_pad_count(GstElement *element) {
    GST_OBJECT_LOCK(element);
    guint16 count = element->numsrcpads;
    GST_OBJECT_UNLOCK(element);
    return count;
}

/// Whether the caps a pad carries now are audio (`audio/…`, compressed or raw).
static inline gboolean cgst_pad_carries_audio(GstPad *pad) {
    GstCaps *caps = gst_pad_get_current_caps(pad);
    if (caps == NULL) return FALSE;
    gboolean audio = gst_caps_get_size(caps) > 0 && g_str_has_prefix(gst_structure_get_name(gst_caps_get_structure(caps, 0)), "audio/");
    gst_caps_unref(caps);
    return audio;
}

/// The probe types a queue gate uses: the data it counts, and the same blocking.
static inline GstPadProbeType cgst_probe_data(void) {
    return (GstPadProbeType)(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST);
}
static inline GstPadProbeType cgst_probe_block_data(void) {
    return (GstPadProbeType)(GST_PAD_PROBE_TYPE_BLOCK | GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST);
}

#endif
