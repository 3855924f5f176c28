import DBus
import Dispatch
import Foundation
import MPRIS
import MediaRemote
import Synchronization

/// The app's ``MPPlayableContentDataSource`` as MediaRemote's manager reads it: each call made
/// on the main queue, items converted as they are read, completion handlers turned into
/// awaited answers.
///
/// The app's object is held weakly, as Apple's manager holds it: once it is gone, the tree
/// has no children.
final class DataSourceAdapter: PlayableContentDataSource, @unchecked Sendable {  // `app` is set once, in init (a weak load is atomic), and its object is used on the main queue only
    private(set) weak var app: (any MPPlayableContentDataSource)?

    init(_ app: any MPPlayableContentDataSource) { self.app = app }

    func numberOfChildItems(at indexPath: IndexPath) -> Int {
        MainQueue.sync { max(0, app?.numberOfChildItems(at: indexPath) ?? 0) }
    }

    func contentItem(at indexPath: IndexPath) -> ContentItem? {
        MainQueue.sync {
            // What the app changes on an item while returning it is part of the answer.
            ContentItemChanges.readsOnMainQueue.add(1, ordering: .relaxed)
            defer { ContentItemChanges.readsOnMainQueue.subtract(1, ordering: .relaxed) }
            return app?.contentItem(at: indexPath)?.shownContentItem
        }
    }

    /// The containers of the items the app changed after returning them, during the batch
    /// that sends those changes; nil (everything read) for any other batch.
    func changedContainerIdentifiers() -> Set<String>? { ContentItemChanges.namedContainers }

    func childItemsDisplayPlaybackProgress(at indexPath: IndexPath) -> Bool {
        MainQueue.sync { app?.childItemsDisplayPlaybackProgress(at: indexPath) ?? false }
    }

    func beginLoadingChildItems(at indexPath: IndexPath) async throws {
        try await CompletionAnswer<Void>.asking { [self] answer in
            guard let app else { return answer(.success(())) }
            app.beginLoadingChildItems(at: indexPath) { error in answer(error.map { .failure($0) } ?? .success(())) }
        }
    }

    /// The app's answer, converted; nil when the app does not look identifiers up (so the
    /// manager finds the item among those it has read, as iOS does).
    ///
    /// - Throws: ``ContentError/noSuchContent(_:)`` when the app answers that there is no such
    ///   item (the manager then does not look further), or the app's error.
    func contentItem(forIdentifier identifier: String) async throws -> ContentItem? {
        do {
            return try await CompletionAnswer<ContentItem?>.asking { [self] answer in
                guard let app else { return answer(.success(nil)) }
                app.contentItem(forIdentifier: identifier) { item, error in
                    if let error { return answer(.failure(error)) }
                    guard let item else {
                        return answer(.failure(ContentError.noSuchContent("no item has the identifier '\(DBusError.excerpt(identifier))'")))
                    }
                    answer(.success(item.contentItem))
                }
            }
        } catch is OptionalMethodNotImplemented {
            return nil
        }
    }
}

/// The app's ``MPPlayableContentDelegate`` as MediaRemote's manager calls it: on the main
/// queue, with Apple's types, its completion handlers awaited.
final class DelegateAdapter: PlayableContentDelegate, @unchecked Sendable {  // `app` is set once, in init (a weak load is atomic), and its object is used on the main queue only
    private(set) weak var app: (any MPPlayableContentDelegate)?
    /// The manager the app's methods are told about.
    private let manager: MPPlayableContentManager

    init(_ app: any MPPlayableContentDelegate, manager: MPPlayableContentManager) {
        self.app = app
        self.manager = manager
    }

    func playableContentManager(_ content: PlayableContentManager, initiatePlaybackOfContentItemAt indexPath: IndexPath)
        async throws
    {
        do {
            try await CompletionAnswer<Void>.asking { [self] answer in
                guard let app else { return answer(.failure(ContentError.noDelegate)) }
                app.playableContentManager(manager, initiatePlaybackOfContentItemAt: indexPath) { error in
                    answer(error.map { .failure($0) } ?? .success(()))
                }
            }
        } catch is OptionalMethodNotImplemented {
            throw DBusError(.notSupported, "The app's content delegate does not start playback")
        } catch {
            throw Self.remoteError(error)
        }
    }

    func playableContentManager(_ content: PlayableContentManager, initializePlaybackQueueWithContentItems items: [ContentItem]?)
        async throws
    {
        do {
            try await CompletionAnswer<Void>.asking { [self] answer in
                guard app != nil else { return answer(.failure(ContentError.noDelegate)) }
                (self as any QueuePreparing).prepareQueue(items) { error in answer(error.map { .failure($0) } ?? .success(())) }
            }
        } catch is OptionalMethodNotImplemented {
            // Neither of Apple's two methods is implemented: nothing to prepare, as iOS does.
        } catch {
            throw Self.remoteError(error)
        }
    }

    func playableContentManager(_ content: PlayableContentManager, didUpdate context: PlayableContentManagerContext) {
        let snapshot = MPPlayableContentManagerContext(context)
        // In the order the changes were made, after the change (the caller holds no lock).
        DispatchQueue.main.async { [self] in
            app?.playableContentManager(manager, didUpdate: snapshot)
        }
    }

    /// What a remote is told of an error the app passed to a completion handler: named errors
    /// (``MPError`` among them) as they are, an `NSError` of ``MPErrorDomain`` as its
    /// ``MPError``, another `NSError` by its localized description, any other as it describes itself.
    static func remoteError(_ error: any Error) -> any Error {
        if error is DBusError || error is any DBusErrorConvertible || error is CancellationError { return error }
        if type(of: error) is NSError.Type {
            let error = error as NSError
            return MPError(error) ?? AppError(description: error.localizedDescription)
        }
        return error
    }

    /// An app's `NSError`, described by its localized description.
    struct AppError: Error, CustomStringConvertible {
        let description: String
    }
}

/// Apple's two ways of preparing a queue, called through this requirement so that the
/// deprecated methods are named in one place.
private protocol QueuePreparing {
    @MainActor func prepareQueue(_ items: [ContentItem]?, completionHandler: @escaping @Sendable ((any Error)?) -> Void)
}

extension DelegateAdapter: QueuePreparing {
    @available(*, deprecated, message: "calls Apple's deprecated queue methods")
    @MainActor func prepareQueue(_ items: [ContentItem]?, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        guard let app else { return completionHandler(nil) }
        // The rows as Apple's delegate receives them: content items.
        let contentItems: [Any]? = items?.map { MPContentItem($0) }
        app.playableContentManager(manager, initializePlaybackQueueWithContentItems: contentItems, completionHandler: completionHandler)
    }
}

/// The first answer an app gives to a completion handler of its own, awaited for at most
/// ``limit``: a handler called late, from any thread or twice counts once; one never called is
/// given up.
final class CompletionAnswer<Value: Sendable>: Sendable {
    /// The longest an app's completion handler is waited for.
    static var limit: Duration { CompletionLimit.value.withLock { $0 } }

    private let state = Mutex<(answer: Result<Value, any Error>?, waiting: CheckedContinuation<Value, any Error>?)>((nil, nil))

    /// Calls `ask` on the main queue with a handler for the app's answer, and returns that
    /// answer (or throws it), once given.
    ///
    /// - Throws: the app's error; `org.mprisbridge.Error.CommandFailed` when no answer came
    ///   within ``limit``;
    ///   `CancellationError` when the caller is cancelled first.
    static func asking(_ ask: @escaping @MainActor @Sendable (_ answer: @escaping @Sendable (Result<Value, any Error>) -> Void) -> Void)
        async throws -> Value
    {
        let wait = CompletionAnswer()
        await MainQueue.run { ask { wait.give($0) } }
        let limit = self.limit
        let timer = Task {
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            wait.give(.failure(DBusError(CommandError.commandFailed, "The app did not answer within \(limit)")))
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let given = wait.state.withLock { state -> Result<Value, any Error>? in
                    if state.answer == nil { state.waiting = continuation }
                    return state.answer
                }
                if let given { continuation.resume(with: given) }
            }
        } onCancel: {
            wait.give(.failure(CancellationError()))
        }
    }

    /// The answer: the first one counts, later ones are ignored.
    private func give(_ answer: Result<Value, any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard state.answer == nil else { return nil }
            state.answer = answer
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(with: answer)
    }
}

/// The bound on waiting for an app's completion handler (tests shorten it).
enum CompletionLimit {
    static let value = Mutex<Duration>(.seconds(30))
}
