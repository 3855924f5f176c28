import AsyncSupport
import Logging
import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The shell's side: inputs fed to the core in order, and its effects performed on the engine,
/// the resolver, the now-playing and command centres, the observers and the resume-point store.
extension QueuePlayer {
    /// Feeds `input` to the core and performs its effects in order; an engine call's outcome is
    /// fed back, until the core asks for nothing more. Returns the status the core replied.
    func run(_ input: PlayerInput) async -> RemoteCommandHandlerStatus {
        await runReporting(input).status
    }

    /// ``run(_:)``, with how a queue edit ended (nil for other inputs).
    func runReporting(_ input: PlayerInput) async -> (
        status: RemoteCommandHandlerStatus, edited: Result<[Int], QueueEditError>?
    ) {
        var status = RemoteCommandHandlerStatus.success
        var edited: Result<[Int], QueueEditError>?
        var next: PlayerInput? = input
        while let input = next {
            next = nil
            for effect in core.handle(input, at: .now) {
                switch effect {
                case .reply(let reply): status = reply
                case .edited(let result): edited = result
                case .start(let request): next = await start(request)
                case .pause: next = await call { try await $0.pause() }
                case .seek(let target): next = await call(readingPosition: false) { try await $0.seek(to: target) }
                case .setRate(let rate): next = await call { try await $0.setRate(rate) }
                case .readPosition: next = .engineReplied(EngineReply(.done, position: engine?.position))
                case .resolve(let url): next = .resolved(await resolved(url))
                case .stopEngine: await engine?.stop()
                default: apply(effect)
                }
            }
        }
        return (status, edited)
    }

    /// Performs effects that need no wait (publishing, saving); the core asks for no engine call
    /// from the inputs handled outside the order (a checkpoint, a resume point saved now).
    func apply(_ effects: [PlayerEffect]) {
        for effect in effects { apply(effect) }
    }

    /// One engine call, its outcome told as the core reads it.
    private func call(
        readingPosition: Bool = true, _ body: (any PlaybackEngine) async throws -> Void
    ) async -> PlayerInput {
        guard let engine else { return .engineReplied(EngineReply(.done)) }
        do {
            try await body(engine)
            return .engineReplied(EngineReply(.done, position: readingPosition ? engine.position : nil))
        } catch where Self.isSuperseded(error) {
            return .engineReplied(EngineReply(.superseded(error), position: readingPosition ? engine.position : nil))
        } catch {
            return .engineReplied(EngineReply(.failed(error)))
        }
    }

    /// A start of playback: the engine made if need be, the item loaded (the hand-over's
    /// successors set first: a short item is about to finish while it prerolls), sought, at
    /// the rate asked for, playing; or how far it went before it failed or gave way.
    private func start(_ request: StartRequest) async -> PlayerInput {
        var report = StartReport(.done, engineExists: engine != nil)
        do {
            try Task.checkCancellation()
            let engine = try await engineInUse()
            report.engineExists = true
            if let successors = request.load {
                report.loadBegan = true
                handover.plan(successors, resetting: true)
                try await engine.load(request.item.url)
                report.loaded = true
                report.duration = engine.duration
            }
            if let seek = request.seek { try await engine.seek(to: seek) }
            if let rate = request.rate {
                try await engine.setRate(rate)
                report.rateApplied = true
            }
            try await engine.play()
            report.position = engine.position
        } catch where Self.isSuperseded(error) {
            report.outcome = .superseded(error)
        } catch {
            report.outcome = .failed(error)
        }
        return .startEnded(report)
    }

    /// The entry for `url`, resolved on a task of its own: a command superseded meanwhile still
    /// adds its entry (only its start of playback gives way).
    private func resolved(_ url: URL) async -> Result<QueueItem, any Error> {
        let resolve = self.resolve
        do {
            return .success(try await Task { try await resolve(url) }.value)
        } catch {
            return .failure(error)
        }
    }

    /// The engine, made on first use.
    private func engineInUse() async throws -> any PlaybackEngine {
        if let engine { return engine }
        // Made on a task of its own: making it loads GStreamer and its plugins (a fifth of a
        // second the first time), which must not hold the executor the player runs on (in the
        // daemon the bus connection's thread, where every other call would wait meanwhile).
        let makeEngine = self.makeEngine
        let engine = try await Task { try makeEngine() }.value
        engine.volume = core.volume
        let handover = self.handover
        engine.setSuccessorProvider { item in handover.handOver(after: item) }
        self.engine = engine
        engineEvents = Task(executorPreference: taskExecutor) { [weak self] in
            for await event in engine.events {
                guard let self else { return }
                // An event may start the next item, which a later command supersedes.
                await self.sequenced(PlayerInput.engineEvent(event).precedence) { await $0.handle(event) }
            }
        }
        return engine
    }

    /// Feeds an engine event to the core, with what the hand-over book and the engine say of it.
    private func handle(_ event: PlaybackEvent) async {
        var context = EngineEventContext()
        switch event {
        case .streamStarted(let url):
            context.handedOver = handover.started(url)
            if context.handedOver != nil { context.duration = engine?.duration }
        case .error(let error):
            context.handedOver = handover.handedOver(error.url)
        default:
            break
        }
        _ = await run(.engineEvent(event, context))
    }
}
