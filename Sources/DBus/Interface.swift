import AsyncSupport
import Synchronization

/// One D-Bus interface an application serves: its methods, properties and
/// signals, declared once with Swift types.
///
/// ```swift
/// let counter = Interface("org.example.Counter1")
/// let count = counter.property("Count", Int64(0))
/// counter.method("Add", arguments: ["amount"], results: ["total"]) { (amount: Int64) in
///     count.update { $0 += amount }
///     return count.value
/// }
/// try connection.export(counter, at: "/org/example/Counter")
/// ```
///
/// The library implements `org.freedesktop.DBus.Properties` for it (`Get`,
/// `GetAll`, `Set`, and `PropertiesChanged` emitted by itself according to each
/// property's ``PropertyChangePolicy``), `Introspectable` (generated from these
/// declarations) and `Peer`. A call with an unknown member, the wrong
/// signature, or a write to a read-only property is answered with the standard
/// error before any handler runs.
///
/// Declare members before exporting. An interface may be exported at several
/// paths and on several connections; changes and signals go out on all of them.
public final class Interface: Sendable {
    /// The interface's name.
    public let name: InterfaceName
    private let state: Mutex<State>

    struct State {
        var methods: [String: MethodDeclaration] = [:]
        var methodOrder: [String] = []
        var properties: [String: PropertyDeclaration] = [:]
        var propertyOrder: [String] = []
        var signals: [SignalDeclaration] = []
        var annotations: [Annotation]
        /// Values of stored properties.
        var values: [String: DBusValue] = [:]
        /// Open while `batch(_:)` runs: changes then go out as one signal when it ends (the
        /// changed names are kept in `changed` and `invalidated`, not in the batch).
        var batch = ChangeBatch<Never>()
        var changed: [String] = []
        var invalidated: [String] = []
        var attachments: [Attachment] = []
        /// For an interface shared by many objects: each object's property values.
        var objectValues: (@Sendable (ObjectPath) -> [String: DBusValue]?)?
        /// `GetAll`'s entries on the wire, kept from one call to the next until a value or a
        /// declaration changes (`generation` counts those changes).
        var encodedEntries = EncodedEntries.stale
        var generation = 0
    }

    /// `GetAll`'s reply body as wire bytes: the stored properties' entries written once, the
    /// computed ones read at each call.
    enum EncodedEntries: Sendable {
        case stale
        /// A value libdbus's iterators must write (and refuse, if it cannot go on the wire).
        case unencodable
        case pieces([EncodedPiece])
    }

    enum EncodedPiece: Sendable {
        /// Consecutive stored properties' `{sv}` entries, starting at an 8-aligned place.
        case entries([UInt8])
        /// A computed property, read at each call.
        case computed(name: String, get: @Sendable () -> DBusValue)
    }

    struct Attachment: Sendable {
        weak var core: ConnectionCore?
        let path: ObjectPath
    }

    /// Creates an empty interface. `annotations` are interface-level introspection annotations.
    public init(_ name: InterfaceName, annotations: [Annotation] = []) {
        self.name = name
        state = Mutex(State(annotations: annotations))
    }

    // MARK: Declaring members

    /// Declares a method with typed arguments and results.
    ///
    /// The handler's parameter types give the input signature and its return
    /// type the output signature: one value, a tuple, or `Void`. It runs
    /// after the call's signature has been checked. What it throws goes back
    /// to the caller as a D-Bus error (see ``DBusError`` and ``DBusErrorConvertible``).
    /// ``MethodCallContext/current`` tells it who is calling.
    ///
    /// - Parameters:
    ///   - name: the method's name.
    ///   - arguments: names of the arguments for introspection; empty, or one per argument.
    ///   - results: names of the results for introspection; empty, or one per result.
    ///   - annotations: the method's annotations in introspection data.
    ///   - handler: carries out a call, from its typed arguments to its typed results.
    public func method<each A: DBusRepresentable, each R: DBusRepresentable>(
        _ name: MemberName, arguments: [String] = [], results: [String] = [], annotations: [Annotation] = [],
        _ handler: @escaping @Sendable (repeat each A) async throws -> (repeat each R)
    ) {
        let inputs = dbusTypes(repeat (each A).self)
        let outputs = dbusTypes(repeat (each R).self)
        precondition(arguments.isEmpty || arguments.count == inputs.count, "\(name): one name per argument")
        precondition(results.isEmpty || results.count == outputs.count, "\(name): one name per result")
        let invoke: @Sendable ([DBusValue]) async throws -> [DBusValue] = { body in
            let reader = ArgumentReader(body)
            let result = try await handler(repeat try reader.next((each A).self))
            var values: [DBusValue] = []
            for value in repeat each result { values.append(value.dbusValue) }
            return values
        }
        addMethod(
            MethodDeclaration(
                name: name, inputs: Self.arguments(inputs, arguments), outputs: Self.arguments(outputs, results),
                annotations: annotations, invoke: invoke))
    }

    /// Declares a method whose signatures are known only at run time. The body
    /// reaching `handler` has been checked against `inputs`; what it returns must match `outputs`.
    public func method(
        _ name: MemberName, inputs: [Argument], outputs: [Argument], annotations: [Annotation] = [],
        _ handler: @escaping @Sendable ([DBusValue]) async throws -> [DBusValue]
    ) {
        let expected = Signature(unchecked: outputs.map(\.type))
        let invoke: @Sendable ([DBusValue]) async throws -> [DBusValue] = { body in
            let result = try await handler(body)
            try Self.check(Signature(unchecked: result.map(\.type)), of: name, is: expected)
            return result
        }
        addMethod(
            MethodDeclaration(name: name, inputs: inputs, outputs: outputs, annotations: annotations, invoke: invoke))
    }

    /// Declares a method whose signatures are known only at run time and whose handler may
    /// answer with results already in wire format (``MethodResults/encoded(_:)``): a large reply
    /// made straight from the handler's data. Values it returns must match `outputs`, as for
    /// ``method(_:inputs:outputs:annotations:_:)``; encoded results must have `outputs`' signature.
    ///
    /// `atOnce`, when given, is tried first for a call to an object whose calls run concurrently
    /// (``CallOrdering/concurrent``), on the connection's thread as the call arrives, before the
    /// object's earlier calls have finished: it answers what it can from memory, quickly and
    /// without waiting on anything (no disk, no network, no lock held long, no other thread), and
    /// returns nil to leave the call to `handler`, which then runs as usual. An answer it gives
    /// spares the call two thread switches; an error it throws is the call's error. Such answers
    /// take at most half of the connection's thread (10 ms in every 20): past that, calls go to
    /// `handler` until the next 20 ms, so a flood of them never keeps the thread from the calls
    /// behind them.
    /// ``MethodCallContext/current`` is set while it runs.
    public func method(
        _ name: MemberName, inputs: [Argument], outputs: [Argument], annotations: [Annotation] = [],
        atOnce: (@Sendable ([DBusValue]) throws -> MethodResults?)? = nil,
        results handler: @escaping @Sendable ([DBusValue]) async throws -> MethodResults
    ) {
        let expected = Signature(unchecked: outputs.map(\.type))
        let checked: @Sendable ([DBusValue]) throws -> [DBusValue] = { result in
            try Self.check(Signature(unchecked: result.map(\.type)), of: name, is: expected)
            return result
        }
        let checkedResults: @Sendable (MethodResults) throws -> MethodResults = { results in
            switch results {
            case .values(let values): return .values(try checked(values))
            case .encoded(let encoded):
                try Self.check(encoded.signature, of: name, is: expected)
                return .encoded(
                    EncodedResults(bytes: encoded.bytes, signature: encoded.signature, isWellFormed: encoded.isWellFormed) {
                        try checked(encoded.fallback())
                    })
            }
        }
        let invokeResults: @Sendable ([DBusValue]) async throws -> MethodResults = { body in
            try checkedResults(try await handler(body))
        }
        var answerAtOnce: (@Sendable ([DBusValue]) throws -> MethodResults?)?
        if let atOnce {
            answerAtOnce = { body in try atOnce(body).map { try checkedResults($0) } }
        }
        addMethod(
            MethodDeclaration(
                name: name, inputs: inputs, outputs: outputs, annotations: annotations,
                invoke: { body in try await invokeResults(body).values() }, invokeResults: invokeResults,
                answerAtOnce: answerAtOnce))
    }

    /// Fails the call when a handler's results, of signature `actual`, are not the `expected`
    /// outputs of method `name`: the caller would otherwise get a reply its declaration denies.
    private static func check(_ actual: Signature, of name: MemberName, is expected: Signature) throws {
        guard actual == expected else {
            throw DBusError(.failed, "\(name) produced results of signature '\(actual)', not '\(expected)'")
        }
    }

    /// Declares a property whose value the library stores.
    ///
    /// Reading returns the stored value. Setting ``Property/value`` stores it
    /// and, if it differs from the old value, announces it as `changes` says.
    /// A client's `Set` (when `access` allows writing) calls `set` with the
    /// requested value; what `set` returns is stored (for example a snapped
    /// rate), and what it throws is the client's error. Without `set`, a client's
    /// write is stored as it is.
    public func property<T: DBusRepresentable>(
        _ name: MemberName, _ initial: T, access: PropertyAccess = .read,
        changes: PropertyChangePolicy = .emitsValue, annotations: [Annotation] = [],
        set: (@Sendable (T) async throws -> T)? = nil
    ) -> Property<T> {
        state.withLock {
            $0.values[name.rawValue] = initial.dbusValue
            $0.valuesChanged()
        }
        var setter: (@Sendable (DBusValue) async throws -> DBusValue?)?
        if let set {
            setter = { value in try await set(T(dbusValue: value)).dbusValue }
        }
        addProperty(
            PropertyDeclaration(
                name: name, type: T.dbusType, access: access, changes: changes, annotations: annotations,
                get: nil, set: setter))
        return Property(interface: self, name: name)
    }

    /// Declares a read-only property whose type is known only at run time,
    /// holding `value` (its type is the property's type). For objects built
    /// on demand from data, such as the nodes of a subtree.
    public func constantProperty(
        _ name: MemberName, _ value: DBusValue, changes: PropertyChangePolicy = .const, annotations: [Annotation] = []
    ) {
        state.withLock {
            $0.values[name.rawValue] = value
            $0.valuesChanged()
        }
        addProperty(
            PropertyDeclaration(
                name: name, type: value.type, access: .read, changes: changes, annotations: annotations, get: nil,
                set: nil))
    }

    /// Declares a property computed on every read, such as a playback position.
    ///
    /// `get` runs on the connection's queue for every `Get` and `GetAll`: it
    /// must be quick and must not block. Because the library cannot see such a
    /// value change, it is announced only when ``Property/changed()`` is called.
    /// `set` receives a client's write; the next read calls `get` again.
    public func computedProperty<T: DBusRepresentable>(
        _ name: MemberName, as type: T.Type = T.self, access: PropertyAccess = .read,
        changes: PropertyChangePolicy = .none, annotations: [Annotation] = [],
        get: @escaping @Sendable () -> T, set: (@Sendable (T) async throws -> Void)? = nil
    ) -> Property<T> {
        var setter: (@Sendable (DBusValue) async throws -> DBusValue?)?
        if let set {
            setter = { value in
                try await set(T(dbusValue: value))
                return nil
            }
        }
        let getter: @Sendable () -> DBusValue = { get().dbusValue }
        addProperty(
            PropertyDeclaration(
                name: name, type: T.dbusType, access: access, changes: changes, annotations: annotations,
                get: getter, set: setter))
        return Property(interface: self, name: name)
    }

    /// Declares read-only properties of an interface served by many objects, such as every
    /// node of a subtree: declared once, their values read for the object asked about.
    ///
    /// `values` returns an object's values by property name, on the connection's queue for
    /// each `Get` and `GetAll`; a property it leaves out is absent from that object (an optional
    /// property it does not have). It returns nil for an object that went away after the call
    /// found it (a subtree whose objects come and go): the call then answers `UnknownObject`,
    /// as if it had not been found. Export such an interface in a subtree
    /// (``Connection/exportSubtree(at:ordering:children:object:)``), returning the same instance
    /// for every object; its methods learn the object from ``MethodCallContext/current``, and
    /// ``Connection/emitPropertiesChanged(at:interface:changed:)`` announces one object's
    /// changes as each property's policy says.
    public func objectProperties(
        _ properties: [(name: MemberName, type: DBusType, changes: PropertyChangePolicy)],
        values: @escaping @Sendable (ObjectPath) -> [String: DBusValue]?
    ) {
        for property in properties {
            addProperty(
                PropertyDeclaration(
                    name: property.name, type: property.type, access: .read, changes: property.changes, annotations: [],
                    get: nil, set: nil))
        }
        state.withLock {
            $0.objectValues = values
            $0.valuesChanged()
        }
    }

    /// Declares a signal with typed arguments.
    public func signal<each A: DBusRepresentable>(
        _ name: MemberName, arguments: [String] = [], of types: repeat (each A).Type,
        annotations: [Annotation] = []
    ) -> SignalEmitter<repeat each A> {
        let argumentTypes = dbusTypes(repeat each types)
        precondition(arguments.isEmpty || arguments.count == argumentTypes.count, "\(name): one name per argument")
        state.withLock {
            $0.signals.append(
                SignalDeclaration(
                    name: name, arguments: Self.arguments(argumentTypes, arguments), annotations: annotations))
        }
        return SignalEmitter(interface: self, name: name)
    }

    private static func arguments(_ types: [DBusType], _ names: [String]) -> [Argument] {
        types.enumerated().map { index, type in Argument(names.isEmpty ? nil : names[index], type) }
    }

    private func addMethod(_ method: MethodDeclaration) {
        state.withLock {
            if $0.methods.updateValue(method, forKey: method.name.rawValue) == nil {
                $0.methodOrder.append(method.name.rawValue)
            }
        }
    }

    private func addProperty(_ property: PropertyDeclaration) {
        state.withLock {
            $0.valuesChanged()
            if $0.properties.updateValue(property, forKey: property.name.rawValue) == nil {
                $0.propertyOrder.append(property.name.rawValue)
            }
        }
    }

    // MARK: Changing properties

    /// Makes every property change inside `body` go out as one `PropertiesChanged`
    /// signal carrying only what changed. Batches nest; the signal goes out when
    /// the outermost one ends.
    public func batch<T>(_ body: () throws -> T) rethrows -> T {
        state.withLock { $0.batch.begin() }
        defer {
            if state.withLock({ $0.batch.end() }) { flushChanges() }
        }
        return try body()
    }

    func store(_ name: MemberName, _ value: DBusValue) {
        let flushNow = state.withLock { state -> Bool in
            guard state.values[name.rawValue] != value, let declaration = state.properties[name.rawValue] else {
                return false
            }
            state.values[name.rawValue] = value
            state.valuesChanged()
            state.noteChange(of: declaration)
            return !state.batch.isOpen
        }
        if flushNow { flushChanges() }
    }

    func update<T: DBusRepresentable>(_ name: MemberName, as type: T.Type, _ body: (inout T) throws -> Void) rethrows {
        let flushNow = try state.withLock { state -> Bool in
            guard let old = state.values[name.rawValue], let declaration = state.properties[name.rawValue] else {
                return false
            }
            var value = try! T(dbusValue: old)  // stored values were encoded from T
            try body(&value)
            let new = value.dbusValue
            guard new != old else { return false }
            state.values[name.rawValue] = new
            state.valuesChanged()
            state.noteChange(of: declaration)
            return !state.batch.isOpen
        }
        if flushNow { flushChanges() }
    }

    /// Announces a change of a computed property (or re-announces a stored one).
    func noteChanged(_ name: MemberName) {
        let flushNow = state.withLock { state -> Bool in
            guard let declaration = state.properties[name.rawValue] else { return false }
            state.noteChange(of: declaration)
            return !state.batch.isOpen
        }
        if flushNow { flushChanges() }
    }

    /// Sends the pending `PropertiesChanged`, if any, on every connection the interface is exported on.
    private func flushChanges() {
        let (changed, invalidated, attachments) = state.withLock { state in
            let changed = state.changed
            let invalidated = state.invalidated
            state.changed = []
            state.invalidated = []
            return (changed, invalidated, state.attachments)
        }
        guard !changed.isEmpty || !invalidated.isEmpty, !attachments.isEmpty else { return }
        let values = changed.compactMap { name -> (name: String, value: DBusValue)? in
            currentValue(MemberName(trusted: name)).map { (name, $0) }
        }
        for attachment in attachments {
            // The body holds values of declared types; a NUL in a string is the only way it can fail.
            try? attachment.core?.send(
                .propertiesChanged(path: attachment.path, interface: name, changed: values, invalidated: invalidated))
        }
    }

    func emit(_ signal: MemberName, _ body: [DBusValue]) {
        // Property changes made before the signal go out before it, even inside a batch.
        flushChanges()
        for attachment in state.withLock({ $0.attachments }) {
            try? attachment.core?.send(.signal(path: attachment.path, interface: name, member: signal, body: body))
        }
    }

    // MARK: Serving

    /// The value of a property: the stored value, or the getter's.
    func currentValue(_ name: MemberName) -> DBusValue? {
        let (stored, getter) = state.withLock { ($0.values[name.rawValue], $0.properties[name.rawValue]?.get) }
        return getter?() ?? stored
    }

    /// The value of a property for the object at `path`: the object's, for properties declared
    /// with ``objectProperties(_:values:)``; otherwise as ``currentValue(_:)``. Throws
    /// `UnknownObject` when the object went away.
    func currentValue(_ name: MemberName, at path: ObjectPath) throws(DBusError) -> DBusValue? {
        guard let values = state.withLock({ $0.objectValues }) else { return currentValue(name) }
        guard let object = values(path) else { throw Self.gone(path) }
        return object[name.rawValue]
    }

    /// Every readable property of the object at `path` with its value, in declaration order.
    /// Throws `UnknownObject` when the object went away.
    func readableValues(at path: ObjectPath) throws(DBusError) -> [DBusValue.DictionaryEntry] {
        guard let values = state.withLock({ $0.objectValues }) else { return readableValues() }
        guard let object = values(path) else { throw Self.gone(path) }
        return state.withLock { $0.propertyOrder }.compactMap { name in
            object[name].map { .init(.string(name), .variant(Variant($0))) }
        }
    }

    private static func gone(_ path: ObjectPath) -> DBusError {
        DBusError(.unknownObject, "No object at path '\(DBusError.excerpt(path.rawValue))'")
    }

    /// The `PropertiesChanged` of the object at `path` for `names`, as each one's change policy
    /// says: values for those that emit them, names for those that invalidate; nil when none.
    func propertiesChanged(at path: ObjectPath, names: [MemberName]) -> Message? {
        let (properties, values) = state.withLock { ($0.properties, $0.objectValues) }
        let object = values?(path) ?? nil
        var changed: [(name: String, value: DBusValue)] = []
        var invalidated: [String] = []
        for name in names {
            guard let property = properties[name.rawValue] else { continue }
            switch property.changes {
            case .emitsValue:
                if let value = object?[name.rawValue] ?? currentValue(name) { changed.append((name.rawValue, value)) }
            case .invalidates: invalidated.append(name.rawValue)
            case .const, .none: break
            }
        }
        guard !changed.isEmpty || !invalidated.isEmpty else { return nil }
        return .propertiesChanged(path: path, interface: self.name, changed: changed, invalidated: invalidated)
    }

    var declaration: InterfaceDeclaration {
        state.withLock { state in
            InterfaceDeclaration(
                name: name,
                methods: state.methodOrder.compactMap { state.methods[$0] },
                properties: state.propertyOrder.compactMap { state.properties[$0] },
                signals: state.signals,
                annotations: state.annotations)
        }
    }

    func method(named name: String) -> MethodDeclaration? { state.withLock { $0.methods[name] } }
    func property(named name: String) -> PropertyDeclaration? { state.withLock { $0.properties[name] } }

    /// Every readable property with its current value, in declaration order.
    func readableValues() -> [DBusValue.DictionaryEntry] {
        let (order, properties, values) = state.withLock { ($0.propertyOrder, $0.properties, $0.values) }
        return order.compactMap { name in
            guard let property = properties[name], property.access != .write,
                let value = property.get?() ?? values[name]
            else { return nil }
            return .init(.string(name), .variant(Variant(value)))
        }
    }

    /// `GetAll`'s reply body (`a{sv}`) on the wire, as ``readableValues()`` would be written;
    /// nil for an interface whose values are per object, or one with a value libdbus's
    /// iterators must write (and refuse, if they cannot). The stored values' bytes are kept
    /// until one changes, so a call writes only the computed ones.
    func encodedReadableValues() -> [UInt8]? {
        let (kept, generation) = state.withLock { state in
            (state.objectValues == nil ? state.encodedEntries : .unencodable, state.generation)
        }
        let pieces: [EncodedPiece]
        switch kept {
        case .unencodable: return nil
        case .pieces(let known): pieces = known
        case .stale:
            let (order, properties, values) = state.withLock { ($0.propertyOrder, $0.properties, $0.values) }
            let made = Self.encodePieces(order: order, properties: properties, values: values)
            state.withLock { state in
                // Kept only if nothing changed while it was written.
                if state.generation == generation { state.encodedEntries = made.map(EncodedEntries.pieces) ?? .unencodable }
            }
            guard let made else { return nil }
            pieces = made
        }
        var body = WireBody(capacity: pieces.reduce(64) { size, piece in
            if case .entries(let bytes) = piece { size + bytes.count + 8 } else { size + 64 }
        })
        let written = body.appendArray(elementAlignment: 8) { body in
            for piece in pieces {
                switch piece {
                case .entries(let bytes): body.appendAligned(bytes)
                case .computed(let name, let get):
                    body.pad(to: 8)
                    guard body.append(.string(name)), body.append(.variant(Variant(get()))) else { return false }
                }
            }
            return true
        }
        return written ? body.takeBytes() : nil
    }

    /// The pieces of `GetAll`'s body, in declaration order; nil if a stored value cannot be written.
    private static func encodePieces(
        order: [String], properties: [String: PropertyDeclaration], values: [String: DBusValue]
    ) -> [EncodedPiece]? {
        var pieces: [EncodedPiece] = []
        var run = WireBody()
        for name in order {
            guard let property = properties[name], property.access != .write else { continue }
            if let get = property.get {
                if run.count > 0 { pieces.append(.entries(run.takeBytes())) }
                run = WireBody()
                pieces.append(.computed(name: name, get: get))
            } else if let value = values[name] {
                run.pad(to: 8)
                guard run.append(.string(name)), run.append(.variant(Variant(value))) else { return nil }
            }
        }
        if run.count > 0 { pieces.append(.entries(run.takeBytes())) }
        return pieces
    }

    func attach(to core: ConnectionCore, at path: ObjectPath) {
        state.withLock { $0.attachments.append(Attachment(core: core, path: path)) }
    }

    func detach(from core: ConnectionCore, at path: ObjectPath) {
        state.withLock { $0.attachments.removeAll { $0.core === core && $0.path == path || $0.core == nil } }
    }
}

extension Interface.State {
    /// Forgets `GetAll`'s kept bytes.
    mutating func valuesChanged() {
        generation &+= 1
        encodedEntries = .stale
    }

    mutating func noteChange(of property: PropertyDeclaration) {
        let name = property.name.rawValue
        switch property.changes {
        case .emitsValue: if !changed.contains(name) { changed.append(name) }
        case .invalidates: if !invalidated.contains(name) { invalidated.append(name) }
        case .const, .none: break
        }
    }
}
