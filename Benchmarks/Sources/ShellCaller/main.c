// A desktop shell's media widget clicked: PlayPause sent through GDBus (asynchronously, from
// a main loop, as GNOME Shell's widget sends it), and the new PlaybackStatus taken from the
// player's PropertiesChanged when the main loop hands it over. GDBus reads on a worker thread
// and passes each message to the main loop's thread, so a signal that reaches a caller asleep
// wakes two threads; one that comes after the reply finds them awake. That is what the
// benchmark's own caller (Swift, its connection's thread then a task) shows too, here with
// the client library most of a desktop uses.
//
// Usage: ShellCaller BUS_NAME TOGGLES GAP_MS (the bus from DBUS_SESSION_BUS_ADDRESS). Sends
// TOGGLES PlayPause, each GAP_MS after the previous one had both its reply and its signal,
// then prints a line per toggle, `SIGNAL REPLY`: nanoseconds from the call sent to the signal
// and to the reply handed to the main loop. Exits 1 when a call fails; SIGALRM ends it once
// the toggles have had half a second each beyond their gaps, and 30 s more.
#include <gio/gio.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { MOST_TOGGLES = 10000 };

static GDBusConnection *bus;
static GMainLoop *loop;
static char name[256];
static int toggles, gap, done, failed;
static gint64 sent;
static gint64 signalled[MOST_TOGGLES], replied[MOST_TOGGLES];
static gboolean hasSignal, hasReply, ended;

static gint64 now(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (gint64)time.tv_sec * 1000000000 + time.tv_nsec;
}

static void send_toggle(void);

static gboolean send_later(gpointer unused) {
    (void)unused;
    send_toggle();
    return G_SOURCE_REMOVE;
}

// Once a toggle has both its reply and its signal: the next one after the gap, or the end.
// Once only: a player may announce the status again before the next toggle.
static void toggle_ended_if_complete(void) {
    if (!hasSignal || !hasReply || ended) return;
    ended = TRUE;
    done += 1;
    if (done == toggles || failed) {
        g_main_loop_quit(loop);
        return;
    }
    g_timeout_add(gap, send_later, NULL);
}

static void on_reply(GObject *source, GAsyncResult *result, gpointer unused) {
    (void)source, (void)unused;
    GError *error = NULL;
    GVariant *value = g_dbus_connection_call_finish(bus, result, &error);
    replied[done] = now() - sent;
    hasReply = TRUE;
    if (value) g_variant_unref(value);
    if (error) {
        fprintf(stderr, "ShellCaller: PlayPause failed: %s\n", error->message);
        g_error_free(error);
        failed = 1;
        hasSignal = TRUE;
    }
    toggle_ended_if_complete();
}

static void on_properties_changed(
    GDBusConnection *connection, const gchar *sender, const gchar *path, const gchar *interface,
    const gchar *signal, GVariant *parameters, gpointer unused) {
    (void)connection, (void)sender, (void)path, (void)interface, (void)signal, (void)unused;
    gint64 at = now();
    if (!g_variant_is_of_type(parameters, G_VARIANT_TYPE("(sa{sv}as)"))) return;
    GVariant *changed = g_variant_get_child_value(parameters, 1);
    GVariant *status = g_variant_lookup_value(changed, "PlaybackStatus", G_VARIANT_TYPE_STRING);
    if (status && sent && !hasSignal) {
        signalled[done] = at - sent;
        hasSignal = TRUE;
    }
    if (status) g_variant_unref(status);
    g_variant_unref(changed);
    toggle_ended_if_complete();
}

static void send_toggle(void) {
    hasSignal = hasReply = ended = FALSE;
    sent = now();
    g_dbus_connection_call(
        bus, name, "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player", "PlayPause", NULL, NULL,
        G_DBUS_CALL_FLAGS_NONE, 5000, NULL, on_reply, NULL);
}

int main(int argc, char **argv) {
    if (argc != 4 || (toggles = atoi(argv[2])) < 1 || toggles > MOST_TOGGLES || (gap = atoi(argv[3])) < 0) {
        fprintf(stderr, "usage: ShellCaller BUS_NAME TOGGLES GAP_MS\n");
        return 2;
    }
    alarm((unsigned)(30 + (long long)toggles * (gap + 500) / 1000));
    snprintf(name, sizeof name, "%s", argv[1]);
    GError *error = NULL;
    bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &error);
    if (!bus) {
        fprintf(stderr, "ShellCaller: no session bus: %s\n", error->message);
        return 1;
    }
    // Signals come from the player's unique name: GDBus matches the sender it is given.
    GVariant *owner = g_dbus_connection_call_sync(
        bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
        g_variant_new("(s)", name), G_VARIANT_TYPE("(s)"), G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);
    if (!owner) {
        fprintf(stderr, "ShellCaller: %s has no owner: %s\n", name, error->message);
        return 1;
    }
    const gchar *unique = NULL;
    g_variant_get(owner, "(&s)", &unique);
    g_dbus_connection_signal_subscribe(
        bus, unique, "org.freedesktop.DBus.Properties", "PropertiesChanged", "/org/mpris/MediaPlayer2",
        "org.mpris.MediaPlayer2.Player", G_DBUS_SIGNAL_FLAGS_NONE, on_properties_changed, NULL, NULL);
    loop = g_main_loop_new(NULL, FALSE);
    // The match rule is in place before the first toggle: a round trip to the bus.
    GVariant *id = g_dbus_connection_call_sync(
        bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId", NULL, NULL,
        G_DBUS_CALL_FLAGS_NONE, 5000, NULL, NULL);
    if (id) g_variant_unref(id);
    g_timeout_add(gap, send_later, NULL);
    g_main_loop_run(loop);
    if (failed) return 1;
    for (int toggle = 0; toggle < toggles; toggle++) {
        printf("%lld %lld\n", (long long)signalled[toggle], (long long)replied[toggle]);
    }
    g_variant_unref(owner);
    return 0;
}
