/// A handle on a property declared with ``Interface/property(_:_:access:changes:annotations:set:)``
/// or ``Interface/computedProperty(_:as:access:changes:annotations:get:set:)``.
public struct Property<Value: DBusRepresentable>: Sendable {
    let interface: Interface
    /// The property's name.
    public let name: MemberName

    /// The current value. Setting it stores the value and, if it changed,
    /// announces it (or batches the announcement inside ``Interface/batch(_:)``).
    public var value: Value {
        get { try! Value(dbusValue: interface.currentValue(name)!) }  // declared with type Value
        nonmutating set { interface.store(name, newValue.dbusValue) }
    }

    /// Changes the value in place, atomically with respect to other writers.
    ///
    /// `body` runs while the interface's lock is held: it must be quick and
    /// must not touch this interface (read or set its properties, emit its signals).
    public func update(_ body: (inout Value) throws -> Void) rethrows {
        try interface.update(name, as: Value.self, body)
    }

    /// Announces the property as changed: for a computed property, the getter is
    /// read and its value sent (or the name invalidated, per the change policy).
    public func changed() { interface.noteChanged(name) }
}

/// A handle on a signal declared with ``Interface/signal(_:arguments:of:annotations:)``.
public struct SignalEmitter<each A: DBusRepresentable>: Sendable {
    let interface: Interface
    /// The signal's name.
    public let name: MemberName

    /// Emits the signal from every path the interface is exported at.
    public func emit(_ arguments: repeat each A) {
        interface.emit(name, dbusValues(repeat each arguments))
    }
}

/// Who may read and write a property.
public enum PropertyAccess: String, Sendable {
    case read
    case write
    case readWrite = "readwrite"
}

/// How a property's changes are announced: the `org.freedesktop.DBus.Property.EmitsChangedSignal` annotation.
public enum PropertyChangePolicy: String, Sendable {
    /// `PropertiesChanged` carries the new value (`true`, the default).
    case emitsValue = "true"
    /// `PropertiesChanged` names the property without its value; clients read it again.
    case invalidates
    /// The value never changes while the object exists.
    case const
    /// Changes are not announced (for example a position that moves continuously).
    case none = "false"
}

/// A name/value annotation in introspection data, such as `org.freedesktop.DBus.Deprecated` = `true`.
public struct Annotation: Sendable, Hashable {
    public let name: String
    public let value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A method or signal argument: an optional name and a type.
public struct Argument: Sendable, Hashable {
    public let name: String?
    public let type: DBusType
    public init(_ name: String?, _ type: DBusType) {
        self.name = name
        self.type = type
    }
}

struct MethodDeclaration: Sendable {
    let name: MemberName
    let inputs: [Argument]
    let outputs: [Argument]
    let annotations: [Annotation]
    let invoke: @Sendable ([DBusValue]) async throws -> [DBusValue]
    /// For a method that may answer with results already in wire format: called instead of
    /// `invoke` when a call is handled.
    let invokeResults: (@Sendable ([DBusValue]) async throws -> MethodResults)?
    /// For a method that can answer some calls at once: tried first, on the connection's
    /// thread, for an object whose calls run concurrently; nil from it runs the handler as usual.
    let answerAtOnce: (@Sendable ([DBusValue]) throws -> MethodResults?)?
    let inputTypes: [DBusType]

    init(
        name: MemberName, inputs: [Argument], outputs: [Argument], annotations: [Annotation],
        invoke: @escaping @Sendable ([DBusValue]) async throws -> [DBusValue],
        invokeResults: (@Sendable ([DBusValue]) async throws -> MethodResults)? = nil,
        answerAtOnce: (@Sendable ([DBusValue]) throws -> MethodResults?)? = nil
    ) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.annotations = annotations
        self.invoke = invoke
        self.invokeResults = invokeResults
        self.answerAtOnce = answerAtOnce
        inputTypes = inputs.map(\.type)
    }

    var inputSignature: Signature { Signature(unchecked: inputTypes) }
}

struct PropertyDeclaration: Sendable {
    let name: MemberName
    let type: DBusType
    let access: PropertyAccess
    let changes: PropertyChangePolicy
    let annotations: [Annotation]
    let get: (@Sendable () -> DBusValue)?
    /// Returns the value to store, or nil for computed properties.
    let set: (@Sendable (DBusValue) async throws -> DBusValue?)?
}

struct SignalDeclaration: Sendable {
    let name: MemberName
    let arguments: [Argument]
    let annotations: [Annotation]
}

struct InterfaceDeclaration: Sendable {
    let name: InterfaceName
    let methods: [MethodDeclaration]
    let properties: [PropertyDeclaration]
    let signals: [SignalDeclaration]
    let annotations: [Annotation]
}
