"""A python3-dbus service, `org.mprisbridge.PyEcho` at /py: the foreign peer
the Swift client round-trips values against. `Describe(v)` answers the
signature python received inside the variant and the value itself."""
import dbus
import dbus.service
import dbus.mainloop.glib
from gi.repository import GLib
from dbus_types import signature

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
loop = GLib.MainLoop()


class Echo(dbus.service.Object):
    @dbus.service.method("org.mprisbridge.PyEcho1", in_signature="v", out_signature="sv")
    def Describe(self, value):
        # The argument's own variant is counted in variant_level: strip it.
        return signature(value)[1:], value

    @dbus.service.method("org.mprisbridge.PyEcho1", in_signature="", out_signature="")
    def Quit(self):
        GLib.idle_add(loop.quit)


bus = dbus.SessionBus()
name = dbus.service.BusName("org.mprisbridge.PyEcho", bus)
Echo(bus, "/py")
print("READY", flush=True)
loop.run()
