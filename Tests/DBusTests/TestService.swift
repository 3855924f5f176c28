import DBus
import Synchronization

/// The interface every D-Bus test serves: `org.mprisbridge.Test1`, whose
/// contract is `dbus/test/org.mprisbridge.Test1.xml`. It exercises each
/// feature of the library: typed and variant methods, errors, every property
/// change policy, a snapping setter, a computed property and signals.
final class TestService: Sendable {
    static let name: InterfaceName = "org.mprisbridge.Test1"
    static let path: ObjectPath = "/org/mprisbridge/Test"
    static let busName: BusName = "org.mprisbridge.Test"
    static let supportedRates: [Double] = [0.5, 1.0, 1.5, 2.0]

    let interface = Interface(TestService.name)
    let title: Property<String>
    let rate: Property<Double>
    let flag: Property<Bool>
    let revision: Property<UInt32>
    let identity: Property<String>
    let position: Property<Int64>
    let ticked: SignalEmitter<UInt32>
    let done: SignalEmitter< >
    let record = HandlerRecord()

    /// What the handlers did, shared with their closures.
    final class HandlerRecord: Sendable {
        /// How many handlers have started: proves that a malformed call never reaches a handler.
        let runs = Atomic<Int>(0)
        /// The order in which `Sleep` handlers started, by their argument.
        let sleepOrder = Mutex<[UInt32]>([])
    }

    init() {
        let interface = self.interface
        title = interface.property("Title", "initial")
        rate = interface.property("Rate", 1.0, access: .readWrite) { requested in
            guard requested.isFinite, requested > 0 else {
                throw DBusError("org.freedesktop.DBus.Error.InvalidArgs", "Rate must be a positive finite number, not \(requested)")
            }
            return TestService.supportedRates.min { abs($0 - requested) < abs($1 - requested) }!
        }
        flag = interface.property("Flag", false, access: .readWrite)
        revision = interface.property("Revision", UInt32(1), changes: .invalidates)
        identity = interface.property("Identity", "mpris-bridge tests", changes: .const)
        position = interface.computedProperty("Position", as: Int64.self) { 42_000_000 }
        ticked = interface.signal("Ticked", arguments: ["count"], of: UInt32.self)
        done = interface.signal("Done")

        let record = self.record
        let (title, rate, flag, revision, ticked, done) = (title, rate, flag, revision, ticked, done)
        @Sendable func ran() {
            record.runs.add(1, ordering: .relaxed)
        }

        interface.method("Echo", arguments: ["value"], results: ["value"]) { (value: Variant) -> Variant in
            ran()
            return value
        }
        interface.method(
            "EchoBasics",
            arguments: ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g"],
            results: ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g"]
        ) {
            (y: UInt8, b: Bool, n: Int16, q: UInt16, i: Int32, u: UInt32, x: Int64, t: UInt64, d: Double, s: String,
             o: ObjectPath, g: Signature) -> (UInt8, Bool, Int16, UInt16, Int32, UInt32, Int64, UInt64, Double, String, ObjectPath, Signature) in
            ran()
            return (y, b, n, q, i, u, x, t, d, s, o, g)
        }
        interface.method(
            "EchoContainers", arguments: ["strings", "metadata", "record", "blobs", "nested"],
            results: ["strings", "metadata", "record", "blobs", "nested"]
        ) {
            (strings: [String], metadata: [String: Variant], record: Record, blobs: [[UInt8]],
             nested: [ObjectPath: [String: Variant]]) -> ([String], [String: Variant], Record, [[UInt8]], [ObjectPath: [String: Variant]]) in
            ran()
            return (strings, metadata, record, blobs, nested)
        }
        interface.method("Add", arguments: ["a", "b"], results: ["sum"]) { (a: Int64, b: Int64) -> Int64 in
            ran()
            return a &+ b
        }
        interface.method("Fail", arguments: ["name", "message"]) { (name: String, message: String) in
            ran()
            throw DBusError(try ErrorName(validating: name), message)
        }
        interface.method("FailPlain") { () in
            ran()
            throw PlainError()
        }
        interface.method("Sleep", arguments: ["milliseconds"], results: ["milliseconds"]) { (milliseconds: UInt32) -> UInt32 in
            ran()
            record.sleepOrder.withLock { $0.append(milliseconds) }
            try await Task.sleep(for: .milliseconds(Int(milliseconds)))
            return milliseconds
        }
        interface.method("SetValues", arguments: ["title", "rate", "flag"]) { (newTitle: String, newRate: Double, newFlag: Bool) in
            ran()
            interface.batch {
                title.value = newTitle
                rate.value = newRate
                flag.value = newFlag
            }
        }
        interface.method("BumpRevision") { () in
            ran()
            revision.update { $0 += 1 }
        }
        interface.method("Tick", arguments: ["count"]) { (count: UInt32) in
            ran()
            for index in 1...max(count, 1) { ticked.emit(index) }
            done.emit()
        }
    }

    struct PlainError: Error, CustomStringConvertible {
        var description: String { "a plain Swift error" }
    }
}

/// A struct argument, `(isd)`.
struct Record: DBusRepresentable, Equatable {
    var number: Int32
    var text: String
    var ratio: Double

    static var dbusType: DBusType { .structure([.int32, .string, .double]) }
    var dbusValue: DBusValue { .structure([number.dbusValue, text.dbusValue, ratio.dbusValue]) }
    init(number: Int32, text: String, ratio: Double) {
        (self.number, self.text, self.ratio) = (number, text, ratio)
    }
    init(dbusValue: DBusValue) throws {
        let fields = try dbusValue.structureFields(count: 3)
        number = try Int32(dbusValue: fields[0])
        text = try String(dbusValue: fields[1])
        ratio = try Double(dbusValue: fields[2])
    }
}
