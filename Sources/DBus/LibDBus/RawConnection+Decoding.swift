// Unmarshalling: a libdbus message read into a `Message`, within a budget for what anyone may send.

import CDBus
import Glibc

extension RawConnection {
    // MARK: Reading messages

    static func decode(_ raw: OpaquePointer) -> Message {
        let kind: Message.Kind
        switch dbus_message_get_type(raw) {
        case DBUS_MESSAGE_TYPE_METHOD_CALL: kind = .methodCall
        case DBUS_MESSAGE_TYPE_METHOD_RETURN: kind = .methodReturn
        case DBUS_MESSAGE_TYPE_ERROR: kind = .error
        default: kind = .signal
        }
        let replySerial = dbus_message_get_reply_serial(raw)
        var message = Message(
            kind: kind,
            serial: dbus_message_get_serial(raw),
            replySerial: replySerial == 0 ? nil : replySerial,
            path: dbus_message_get_path(raw).map { ObjectPath(trusted: String(cString: $0)) },
            interface: dbus_message_get_interface(raw).map { InterfaceName(trusted: String(cString: $0)) },
            member: dbus_message_get_member(raw).map { MemberName(trusted: String(cString: $0)) },
            errorName: dbus_message_get_error_name(raw).map { ErrorName(trusted: String(cString: $0)) },
            sender: dbus_message_get_sender(raw).map { String(cString: $0) },
            destination: dbus_message_get_destination(raw).map { String(cString: $0) },
            expectsReply: kind == .methodCall && dbus_message_get_no_reply(raw) == 0,
            body: [])
        // A reply answers a call this process made, so only calls and signals, which anyone
        // may send, are held to the budget.
        let untrusted = kind == .methodCall || kind == .signal
        let start = untrusted ? ReadBudget.forUntrustedMessage : .unlimited
        var budget = start
        do {
            let signature = try Signature(validating: String(cString: dbus_message_get_signature(raw)))
            try signature.checkNotFD()
            var iterator = DBusMessageIter()
            if dbus_message_iter_init(raw, &iterator) != 0 {
                var body: [DBusValue] = []
                body.reserveCapacity(signature.types.count)
                for type in signature.types {
                    body.append(try read(type, &iterator, budget: &budget))
                    _ = dbus_message_iter_next(&iterator)
                }
                message.body = body
            }
        } catch {
            message.bodyError = DBusError.from(error)
        }
        // Also for a body refused halfway: what was read before the refusal is freed by now.
        if untrusted && budget.spent(since: start) { message.heapReturn = HeapReturn() }
        return message
    }

    /// Reads the value at `iterator`, whose type libdbus has already validated as `type`.
    ///
    /// `budget` is what the rest of the message may hold: each value read takes one value, and
    /// an array or dictionary takes all its elements before any is read, so an oversized body
    /// is refused before memory is spent on it (a `DBusValue` costs several times its wire size).
    /// Strings take their bytes as they are read.
    private static func read(_ type: DBusType, _ iterator: inout DBusMessageIter, budget: inout ReadBudget) throws -> DBusValue {
        try budget.take(values: 1)
        switch type {
        case .byte: return .byte(readBasic(&iterator, UInt8(0)))
        case .boolean: return .boolean(readBasic(&iterator, dbus_bool_t(0)) != 0)
        case .int16: return .int16(readBasic(&iterator, Int16(0)))
        case .uint16: return .uint16(readBasic(&iterator, UInt16(0)))
        case .int32: return .int32(readBasic(&iterator, Int32(0)))
        case .uint32: return .uint32(readBasic(&iterator, UInt32(0)))
        case .int64: return .int64(readBasic(&iterator, Int64(0)))
        case .uint64: return .uint64(readBasic(&iterator, UInt64(0)))
        case .double: return .double(readBasic(&iterator, Double(0)))
        case .string: return .string(try readString(&iterator, budget: &budget))
        case .objectPath: return .objectPath(ObjectPath(trusted: try readString(&iterator, budget: &budget)))
        case .signature: return .signature(Signature(unchecked: (try? Signature(validating: readString(&iterator)))?.types ?? []))
        case .unixFD: return .uint32(0)  // unreachable: messages with 'h' are refused before reading
        case .array(let element):
            let count = try reserve(elementsOf: &iterator, budget: &budget)
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            if element == .byte {
                var base: UnsafeRawPointer?
                var count: Int32 = 0
                withUnsafeMutablePointer(to: &base) { dbus_message_iter_get_fixed_array(&inner, $0, &count) }
                let bytes = UnsafeBufferPointer(start: base?.assumingMemoryBound(to: UInt8.self), count: Int(count))
                return .array(.byte, bytes.map(DBusValue.byte))
            }
            var items: [DBusValue] = []
            items.reserveCapacity(count)
            while dbus_message_iter_get_arg_type(&inner) != 0 {
                // The element itself was paid for by `reserve`; its own contents are not.
                budget.values += 1
                items.append(try read(element, &inner, budget: &budget))
                _ = dbus_message_iter_next(&inner)
            }
            return .array(element, items)
        case .dictionary(let keyType, let valueType):
            let count = try reserve(elementsOf: &iterator, budget: &budget)
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            var entries: [DBusValue.DictionaryEntry] = []
            entries.reserveCapacity(count)
            while dbus_message_iter_get_arg_type(&inner) != 0 {
                var pair = DBusMessageIter()
                dbus_message_iter_recurse(&inner, &pair)
                budget.values += 1
                let key = try read(keyType, &pair, budget: &budget)
                _ = dbus_message_iter_next(&pair)
                entries.append(.init(key, try read(valueType, &pair, budget: &budget)))
                _ = dbus_message_iter_next(&inner)
            }
            return .dictionary(key: keyType, value: valueType, entries)
        case .structure(let fields):
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            var values: [DBusValue] = []
            values.reserveCapacity(fields.count)
            for field in fields {
                values.append(try read(field, &inner, budget: &budget))
                _ = dbus_message_iter_next(&inner)
            }
            return .structure(values)
        case .variant:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            if let basic = basicType(dbus_message_iter_get_arg_type(&inner)) {
                return .variant(Variant(try read(basic, &inner, budget: &budget)))
            }
            return .variant(Variant(try read(containerType(in: &inner), &inner, budget: &budget)))
        }
    }

    /// Takes the element count of the array at `iterator` from `budget`, and returns it: the
    /// capacity to reserve. Under an unlimited budget, a guess that fits most replies' arrays.
    private static func reserve(elementsOf iterator: inout DBusMessageIter, budget: inout ReadBudget) throws -> Int {
        guard budget.countsArrays else { return 16 }
        // O(1) for fixed-size elements; for others libdbus walks the array without copying it.
        let count = Int(dbus_message_iter_get_element_count(&iterator))
        try budget.take(values: count)
        return count
    }

    /// The type of the container a variant holds (`inner` is inside the variant). The common
    /// ones (an array of a basic type, `a{sv}`) are answered without asking libdbus for the
    /// signature's text and parsing it; their values are shared, so none is allocated.
    private static func containerType(in inner: inout DBusMessageIter) -> DBusType {
        if dbus_message_iter_get_arg_type(&inner) == Int32(UInt8(ascii: "a")),
            let element = basicType(dbus_message_iter_get_element_type(&inner))
        {
            switch element {
            case .string: return arrayOfStrings
            case .objectPath: return arrayOfObjectPaths
            default: return .array(element)
            }
        }
        let text = dbus_message_iter_get_signature(&inner)
        defer { dbus_free(text) }
        guard let text else { return .byte }
        if strcmp(text, "a{sv}") == 0 { return propertiesType }
        return (try? Signature(validating: String(cString: text)))?.types.first ?? .byte
    }

    // The types variants hold most often (metadata's `a{sv}`, artists' `as`, track lists'
    // `ao`), made once.
    private static let propertiesType = DBusType.dictionary(key: .string, value: .variant)
    private static let arrayOfStrings = DBusType.array(.string)
    private static let arrayOfObjectPaths = DBusType.array(.objectPath)

    /// The basic type of a type code, or nil for containers.
    private static func basicType(_ code: Int32) -> DBusType? {
        switch UInt8(truncatingIfNeeded: code) {
        case UInt8(ascii: "y"): .byte
        case UInt8(ascii: "b"): .boolean
        case UInt8(ascii: "n"): .int16
        case UInt8(ascii: "q"): .uint16
        case UInt8(ascii: "i"): .int32
        case UInt8(ascii: "u"): .uint32
        case UInt8(ascii: "x"): .int64
        case UInt8(ascii: "t"): .uint64
        case UInt8(ascii: "d"): .double
        case UInt8(ascii: "s"): .string
        case UInt8(ascii: "o"): .objectPath
        case UInt8(ascii: "g"): .signature
        case UInt8(ascii: "v"): .variant
        default: nil
        }
    }

    private static func readBasic<T>(_ iterator: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iterator, $0) }
        return value
    }

    private static func readString(_ iterator: inout DBusMessageIter, budget: inout ReadBudget) throws -> String {
        var text: UnsafePointer<CChar>?
        withUnsafeMutablePointer(to: &text) { dbus_message_iter_get_basic(&iterator, $0) }
        guard let text else { return "" }
        try budget.take(stringBytes: strlen(text))
        return String(cString: text)
    }

    private static func readString(_ iterator: inout DBusMessageIter) -> String {
        var unlimited = ReadBudget.unlimited
        return (try? readString(&iterator, budget: &unlimited)) ?? ""
    }
}
