import AsyncSupport
import Synchronization

/// Where the app's sound goes and how loud each item plays: the outputs a listener can choose
/// among (Apple's audio route picker) and ReplayGain, published for remotes, with the app's
/// handlers acting on a remote's choice.
///
/// The app keeps ``outputRoutes`` and ``currentOutputRoute`` true (a device plugged in, a
/// switch made) and sets a handler for each choice it supports; a remote asks through
/// ``selectOutputRoute(_:)`` and ``setReplayGain(_:)``, which check the request, call the
/// handler and record what it made current.
///
/// Thread safety: every member may be used from any thread or task. Observers are called
/// synchronously, without the lock held, on the thread that made the change; they must be
/// quick.
public final class AudioSession: Sendable {
    /// An audio output a listener can pick: a sound card, headphones, a Bluetooth speaker, a
    /// network sink.
    public struct OutputRoute: Sendable, Equatable, Hashable {
        /// Names the output for as long as it exists (the sound server's sink name, say).
        public var identifier: String
        /// The name a person recognises ("Built-in Audio Analog Stereo", "Headphones").
        public var name: String

        public init(identifier: String, name: String) {
            self.identifier = identifier
            self.name = name
        }
    }

    /// ReplayGain: whether and how the loudness tags of each item (written by a ReplayGain
    /// scanner) even out its level.
    public enum ReplayGainMode: String, Sendable, Equatable, CaseIterable {
        /// Items play at the level they were mastered at.
        case off
        /// Each track is brought to the reference level on its own.
        case track
        /// Each album is, keeping the differences between its tracks (a track with no album
        /// gain uses its track gain).
        case album
    }

    /// Why a remote's request was refused; nothing changed.
    public enum RequestError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The app does not offer this choice (no handler set).
        case notSupported(String)
        /// The request names no output the session lists, or is malformed.
        case invalidArgument(String)
        /// The handler failed to carry it out; its reason.
        case failed(String)

        public var description: String {
            switch self {
            case .notSupported(let reason), .invalidArgument(let reason), .failed(let reason): reason
            }
        }
    }

    /// Carries out a remote's choice of output (nil: the system's default output). Throws to
    /// refuse or report a failure; its error's description is the reason remotes are told.
    public typealias OutputRouteHandler = @Sendable (_ route: OutputRoute?) async throws -> Void
    /// Carries out a remote's choice of ReplayGain mode.
    public typealias ReplayGainHandler = @Sendable (_ mode: ReplayGainMode) async throws -> Void

    private struct State {
        var routes: [OutputRoute] = []
        var current: String?
        var replayGain: ReplayGainMode = .off
        var routeHandler: OutputRouteHandler?
        var replayGainHandler: ReplayGainHandler?
    }

    private let state = Mutex(State())
    private let observers = Observers<Void>()

    /// Creates a session with no output listed, the default output current, ReplayGain off and
    /// no handler: remotes may look but not choose.
    public init() {}

    /// The outputs a listener can choose among, in the order to show them. Setting a
    /// different list tells the observers; a ``currentOutputRoute`` no longer listed stays
    /// current (the app says when its output changed).
    public var outputRoutes: [OutputRoute] {
        get { state.withLock { $0.routes } }
        set { change { state in
            guard state.routes != newValue else { return false }
            state.routes = newValue
            return true
        } }
    }

    /// The identifier of the output in use, or nil for the system's default output (which
    /// follows the system's own choice).
    public var currentOutputRoute: String? {
        get { state.withLock { $0.current } }
        set { change { state in
            guard state.current != newValue else { return false }
            state.current = newValue
            return true
        } }
    }

    /// The ReplayGain mode in use.
    public var replayGain: ReplayGainMode {
        get { state.withLock { $0.replayGain } }
        set { change { state in
            guard state.replayGain != newValue else { return false }
            state.replayGain = newValue
            return true
        } }
    }

    /// Whether remotes may choose the output: a handler is set.
    public var canSelectOutputRoute: Bool { state.withLock { $0.routeHandler != nil } }
    /// Whether remotes may choose the ReplayGain mode: a handler is set.
    public var canSetReplayGain: Bool { state.withLock { $0.replayGainHandler != nil } }

    /// Sets (or with nil removes) what carries out a remote's choice of output.
    public func setOutputRouteHandler(_ handler: OutputRouteHandler?) {
        change { state in
            state.routeHandler = handler
            return true
        }
    }

    /// Sets (or with nil removes) what carries out a remote's choice of ReplayGain mode.
    public func setReplayGainHandler(_ handler: ReplayGainHandler?) {
        change { state in
            state.replayGainHandler = handler
            return true
        }
    }

    /// A remote's choice of output, by identifier (nil or empty: the system's default). Calls
    /// the handler, then makes the route current.
    ///
    /// - Throws: ``RequestError/notSupported(_:)`` without a handler,
    ///   ``RequestError/invalidArgument(_:)`` for an identifier not in ``outputRoutes``,
    ///   ``RequestError/failed(_:)`` when the handler throws. Nothing changes then.
    public func selectOutputRoute(_ identifier: String?) async throws(RequestError) {
        let identifier = identifier?.isEmpty == true ? nil : identifier
        let (handler, route) = state.withLock { state in
            (state.routeHandler, identifier.flatMap { id in state.routes.first { $0.identifier == id } })
        }
        guard let handler else { throw .notSupported("The player cannot choose its audio output") }
        if let identifier, route == nil {
            throw .invalidArgument("No audio output \"\(identifier.prefix(200))\"")
        }
        do {
            try await handler(route)
        } catch {
            throw .failed("Cannot switch the audio output: \(error)")
        }
        currentOutputRoute = identifier
    }

    /// A remote's choice of ReplayGain mode. Calls the handler, then makes the mode current.
    ///
    /// - Throws: ``RequestError/notSupported(_:)`` without a handler, ``RequestError/failed(_:)``
    ///   when the handler throws. Nothing changes then.
    public func setReplayGain(_ mode: ReplayGainMode) async throws(RequestError) {
        guard let handler = state.withLock({ $0.replayGainHandler }) else {
            throw .notSupported("The player has no ReplayGain")
        }
        do {
            try await handler(mode)
        } catch {
            throw .failed("Cannot change ReplayGain: \(error)")
        }
        replayGain = mode
    }

    /// Calls `observer` after each change of the routes, the current route, the ReplayGain
    /// mode or a handler, for as long as the returned observation is kept.
    public func observe(_ observer: @escaping @Sendable () -> Void) -> Observation {
        observers.add { observer() }
    }

    /// Applies `body`; if it changed something, tells the observers.
    private func change(_ body: (inout State) -> Bool) {
        if state.withLock({ body(&$0) }) { observers.notify() }
    }
}
