// A head unit's walk of the media tree with as little client work as libdbus allows, so the
// time is the service's and the bus's: ListChildren(offset, 100, ["*"]) on every container,
// page after page, reading only each row's Type and Path. With IN_FLIGHT > 1 it keeps that
// many calls outstanding (the next pages and containers asked before the last answer), as a
// client prefetching what it will show does.
//
// Usage: WalkClient BUS_NAME ROOT_PATH IN_FLIGHT [--tolerate-missing]
// (the bus from DBUS_SESSION_BUS_ADDRESS). Prints one line: `walk SECONDS CALLS CONTAINERS ITEMS
// IN_FLIGHT CPU_SECONDS` (its own CPU time). Any error ends the walk, except with
// --tolerate-missing, for a tree that changes while it is walked: a container gone meanwhile
// (UnknownObject, NoSuchContent) is counted and passed over, and the line ends with that count.
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum { PAGE = 100, MOST_IN_FLIGHT = 64 };

typedef struct {
    char *path;
    unsigned offset;
} Page;

static Page *pending;
static size_t pendingCount, pendingCapacity;

static void push(const char *path, unsigned offset) {
    if (pendingCount == pendingCapacity) {
        pendingCapacity = pendingCapacity ? 2 * pendingCapacity : 1024;
        pending = realloc(pending, pendingCapacity * sizeof *pending);
        if (!pending) { fputs("out of memory\n", stderr); exit(2); }
    }
    pending[pendingCount].path = strdup(path);
    pending[pendingCount].offset = offset;
    pendingCount++;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static DBusPendingCall *ask(DBusConnection *connection, const char *name, Page page) {
    DBusMessage *call = dbus_message_new_method_call(name, page.path, "org.gnome.UPnP.MediaContainer2", "ListChildren");
    dbus_uint32_t offset = page.offset, maximum = PAGE;
    const char *all = "*";
    const char **filter = &all;
    dbus_message_append_args(call, DBUS_TYPE_UINT32, &offset, DBUS_TYPE_UINT32, &maximum, DBUS_TYPE_ARRAY,
                             DBUS_TYPE_STRING, &filter, 1, DBUS_TYPE_INVALID);
    DBusPendingCall *reply = NULL;
    if (!dbus_connection_send_with_reply(connection, call, &reply, 60000) || !reply) {
        fputs("cannot send ListChildren\n", stderr);
        exit(1);
    }
    dbus_message_unref(call);
    return reply;
}

int main(int argc, char **argv) {
    int tolerant = argc == 5 && strcmp(argv[4], "--tolerate-missing") == 0;
    if (argc != 4 && !tolerant) {
        fputs("usage: WalkClient BUS_NAME ROOT_PATH IN_FLIGHT [--tolerate-missing]\n", stderr);
        return 2;
    }
    const char *name = argv[1];
    int inFlight = atoi(argv[3]);
    if (inFlight < 1 || inFlight > MOST_IN_FLIGHT) { fputs("IN_FLIGHT is 1 to 64\n", stderr); return 2; }
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error);
    if (!connection) { fprintf(stderr, "cannot connect: %s\n", error.message); return 1; }

    DBusPendingCall *replies[MOST_IN_FLIGHT];
    Page asked[MOST_IN_FLIGHT];
    int outstanding = 0;
    long calls = 0, containers = 0, items = 0, missing = 0;
    push(argv[2], 0);
    double start = now();
    while (pendingCount > 0 || outstanding > 0) {
        while (pendingCount > 0 && outstanding < inFlight) {
            Page page = pending[--pendingCount];
            replies[outstanding] = ask(connection, name, page);
            asked[outstanding++] = page;
        }
        dbus_connection_flush(connection);
        // The oldest call first: its answer names the next pages to ask.
        dbus_pending_call_block(replies[0]);
        DBusMessage *reply = dbus_pending_call_steal_reply(replies[0]);
        dbus_pending_call_unref(replies[0]);
        Page page = asked[0];
        memmove(replies, replies + 1, (size_t)(outstanding - 1) * sizeof replies[0]);
        memmove(asked, asked + 1, (size_t)(outstanding - 1) * sizeof asked[0]);
        outstanding--;
        calls++;
        if (dbus_message_get_type(reply) == DBUS_MESSAGE_TYPE_ERROR) {
            const char *error = dbus_message_get_error_name(reply);
            if (tolerant && (strcmp(error, "org.freedesktop.DBus.Error.UnknownObject") == 0
                             || strcmp(error, "org.mprisbridge.Error.NoSuchContent") == 0)) {
                missing++;
                dbus_message_unref(reply);
                free(page.path);
                continue;
            }
            fprintf(stderr, "ListChildren on %s failed: %s\n", page.path, error);
            return 1;
        }
        DBusMessageIter body, rows;
        dbus_message_iter_init(reply, &body);
        dbus_message_iter_recurse(&body, &rows);
        int count = 0;
        while (dbus_message_iter_get_arg_type(&rows) == DBUS_TYPE_ARRAY) {
            DBusMessageIter row;
            dbus_message_iter_recurse(&rows, &row);
            int isContainer = 0;
            const char *path = NULL;
            while (dbus_message_iter_get_arg_type(&row) == DBUS_TYPE_DICT_ENTRY) {
                DBusMessageIter entry, value;
                const char *key;
                dbus_message_iter_recurse(&row, &entry);
                dbus_message_iter_get_basic(&entry, &key);
                dbus_message_iter_next(&entry);
                dbus_message_iter_recurse(&entry, &value);
                if (strcmp(key, "Type") == 0) {
                    const char *type;
                    dbus_message_iter_get_basic(&value, &type);
                    isContainer = strcmp(type, "container") == 0;
                } else if (strcmp(key, "Path") == 0) {
                    dbus_message_iter_get_basic(&value, &path);
                }
                dbus_message_iter_next(&row);
            }
            if (isContainer && path) {
                push(path, 0);
                containers++;
            } else {
                items++;
            }
            count++;
            dbus_message_iter_next(&rows);
        }
        dbus_message_unref(reply);
        if (count == PAGE) push(page.path, page.offset + PAGE);
        free(page.path);
    }
    double seconds = now() - start;
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    double cpu = (double)usage.ru_utime.tv_sec + (double)usage.ru_stime.tv_sec
        + (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    if (tolerant) {
        printf("walk %.3f %ld %ld %ld %d %.3f %ld\n", seconds, calls, containers, items, inFlight, cpu, missing);
    } else {
        printf("walk %.3f %ld %ld %ld %d %.3f\n", seconds, calls, containers, items, inFlight, cpu);
    }
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    return 0;
}
