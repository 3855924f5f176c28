/// Writes introspection XML from interface declarations, in the format of the
/// D-Bus specification (the same DTD every D-Bus tool reads).
enum IntrospectionXML {
    static let header = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    /// The standard interfaces every object has, implemented by the library.
    static let standardInterfaces = """
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId">
              <arg name="machine_uuid" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml_data" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="properties" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg name="interface_name" type="s"/>
              <arg name="changed_properties" type="a{sv}"/>
              <arg name="invalidated_properties" type="as"/>
            </signal>
          </interface>

        """

    static func document(interfaces: [InterfaceDeclaration], children: [String]) -> String {
        var xml = header + "<node>\n"
        if !interfaces.isEmpty {
            xml += standardInterfaces
            for interface in interfaces { append(interface, to: &xml) }
        }
        for child in children { xml += "  <node name=\"\(escape(child))\"/>\n" }
        xml += "</node>\n"
        return xml
    }

    static func append(_ interface: InterfaceDeclaration, to xml: inout String) {
        xml += "  <interface name=\"\(interface.name)\">\n"
        for method in interface.methods {
            let arguments = method.inputs.map { ($0, "in") } + method.outputs.map { ($0, "out") }
            if arguments.isEmpty && method.annotations.isEmpty {
                xml += "    <method name=\"\(method.name)\"/>\n"
                continue
            }
            xml += "    <method name=\"\(method.name)\">\n"
            for (argument, direction) in arguments {
                xml += "      <arg\(nameAttribute(argument.name)) type=\"\(argument.type)\" direction=\"\(direction)\"/>\n"
            }
            append(method.annotations, indent: "      ", to: &xml)
            xml += "    </method>\n"
        }
        for signal in interface.signals {
            if signal.arguments.isEmpty && signal.annotations.isEmpty {
                xml += "    <signal name=\"\(signal.name)\"/>\n"
                continue
            }
            xml += "    <signal name=\"\(signal.name)\">\n"
            for argument in signal.arguments {
                xml += "      <arg\(nameAttribute(argument.name)) type=\"\(argument.type)\"/>\n"
            }
            append(signal.annotations, indent: "      ", to: &xml)
            xml += "    </signal>\n"
        }
        for property in interface.properties {
            var annotations = property.annotations
            if property.changes != .emitsValue {
                annotations.insert(
                    Annotation("org.freedesktop.DBus.Property.EmitsChangedSignal", property.changes.rawValue), at: 0)
            }
            let opening = "    <property name=\"\(property.name)\" type=\"\(property.type)\" access=\"\(property.access.rawValue)\""
            if annotations.isEmpty {
                xml += opening + "/>\n"
            } else {
                xml += opening + ">\n"
                append(annotations, indent: "      ", to: &xml)
                xml += "    </property>\n"
            }
        }
        append(interface.annotations, indent: "    ", to: &xml)
        xml += "  </interface>\n"
    }

    private static func nameAttribute(_ name: String?) -> String {
        name.map { " name=\"\(escape($0))\"" } ?? ""
    }

    private static func append(_ annotations: [Annotation], indent: String, to xml: inout String) {
        for annotation in annotations {
            xml += "\(indent)<annotation name=\"\(escape(annotation.name))\" value=\"\(escape(annotation.value))\"/>\n"
        }
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}
