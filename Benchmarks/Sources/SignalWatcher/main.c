// A desktop shell's view of a player: a process of its own, on a connection of its own, that
// watches the player's PropertiesChanged and notes when each PlaybackStatus change arrives, as
// a shell showing the state learns it. It sends no call, so no reply wakes it first: what it
// measures is the player's and the bus's time, not how soon the caller's own threads run.
//
// Usage: SignalWatcher BUS_NAME (the bus from DBUS_SESSION_BUS_ADDRESS). Prints `ready` once
// its match rule is in place; at end of stdin, one line per change it saw, `NANOSECONDS STATUS`
// (CLOCK_MONOTONIC when libdbus handed the signal over), kept in memory until then so that no
// write of its own wakes the process that runs the benchmark meanwhile.
#include <dbus/dbus.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MOST_CHANGES = 100000 };

static unsigned long long arrivals[MOST_CHANGES];
static char statuses[MOST_CHANGES][16];
static size_t changes;

static unsigned long long now(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (unsigned long long)time.tv_sec * 1000000000ULL + (unsigned long long)time.tv_nsec;
}

// The PlaybackStatus in a PropertiesChanged(s interface, a{sv} changed, as invalidated), or NULL.
static const char *playbackStatus(DBusMessage *message) {
    DBusMessageIter arguments, changed, entry, variant;
    if (!dbus_message_iter_init(message, &arguments) || dbus_message_iter_get_arg_type(&arguments) != DBUS_TYPE_STRING)
        return NULL;
    const char *interface;
    dbus_message_iter_get_basic(&arguments, &interface);
    if (strcmp(interface, "org.mpris.MediaPlayer2.Player") != 0 || !dbus_message_iter_next(&arguments)
        || dbus_message_iter_get_arg_type(&arguments) != DBUS_TYPE_ARRAY)
        return NULL;
    for (dbus_message_iter_recurse(&arguments, &changed); dbus_message_iter_get_arg_type(&changed) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&changed)) {
        const char *key;
        dbus_message_iter_recurse(&changed, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        if (strcmp(key, "PlaybackStatus") != 0 || !dbus_message_iter_next(&entry)) continue;
        dbus_message_iter_recurse(&entry, &variant);
        if (dbus_message_iter_get_arg_type(&variant) != DBUS_TYPE_STRING) return NULL;
        const char *status;
        dbus_message_iter_get_basic(&variant, &status);
        return status;
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fputs("usage: SignalWatcher BUS_NAME\n", stderr);
        return 2;
    }
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error);
    if (!connection) {
        fprintf(stderr, "cannot connect: %s\n", error.message);
        return 1;
    }
    char rule[1024];
    snprintf(rule, sizeof rule,
             "type='signal',sender='%s',path='/org/mpris/MediaPlayer2',interface='org.freedesktop.DBus.Properties',"
             "member='PropertiesChanged',arg0='org.mpris.MediaPlayer2.Player'",
             argv[1]);
    dbus_bus_add_match(connection, rule, &error); // blocks until the bus has the rule
    if (dbus_error_is_set(&error)) {
        fprintf(stderr, "cannot watch: %s\n", error.message);
        return 1;
    }
    int socket;
    if (!dbus_connection_get_unix_fd(connection, &socket)) {
        fputs("no socket\n", stderr);
        return 1;
    }
    puts("ready");
    fflush(stdout);

    for (;;) {
        // Messages libdbus has already read first: poll would not wake for them.
        DBusMessage *message;
        while ((message = dbus_connection_pop_message(connection))) {
            unsigned long long arrived = now();
            const char *status = dbus_message_is_signal(message, "org.freedesktop.DBus.Properties", "PropertiesChanged")
                                     ? playbackStatus(message)
                                     : NULL;
            if (status && changes < MOST_CHANGES) {
                arrivals[changes] = arrived;
                snprintf(statuses[changes], sizeof statuses[changes], "%s", status);
                changes++;
            }
            dbus_message_unref(message);
        }
        struct pollfd descriptors[2] = {{.fd = socket, .events = POLLIN}, {.fd = STDIN_FILENO, .events = POLLIN}};
        if (poll(descriptors, 2, -1) < 0) continue;
        if (descriptors[1].revents) {
            char buffer[256];
            if (read(STDIN_FILENO, buffer, sizeof buffer) <= 0) break;
        }
        if (descriptors[0].revents && !dbus_connection_read_write(connection, 0)) break;
    }
    for (size_t index = 0; index < changes; index++) printf("%llu %s\n", arrivals[index], statuses[index]);
    return 0;
}
