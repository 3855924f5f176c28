// Playback through GStreamer's playbin. Filled in by issue 4.
import CGStreamer
import MediaRemote
