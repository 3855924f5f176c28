import AsyncSupport
import MediaRemote
import Playback
import Synchronization
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A remote that delivers its commands one at a time in the order it sent them, as a serial
/// D-Bus object does: each command holds the remote's turn until the player takes it over.
struct InOrderRemote: Sendable {
    private let turns = TurnQueue(width: 1)

    /// Sends `command` after those sent before; its status arrives in the returned task.
    func send(
        _ command: @escaping @Sendable () async -> RemoteCommandHandlerStatus?
    ) -> Task<RemoteCommandHandlerStatus?, Never> {
        let turn = turns.reserve()
        return Task {
            await turn.wait()
            defer { turn.pass() }
            return await Turn.$held.withValue(turn) { await command() }
        }
    }
}

/// A later command supersedes a start of playback by cancelling its task: both callers hear
/// success, and what the player ends up doing is what the last command asked for.
@Suite(.timeLimit(.minutes(1))) struct SupersedeTests {
    /// A double-tapped play/pause key while the item loads: the second press supersedes the
    /// first's start, both answer success, and the player rests paused, as two presses mean.
    @Test func aDoubleTappedToggleAnswersSuccessTwiceAndRestsPaused() async throws {
        let p = await ScriptedPlayer(["a", "b"])
        p.engine.state.withLock { $0.loadTime = .milliseconds(200) }
        let remote = InOrderRemote()
        let first = remote.send { await p.commands.togglePlayPauseCommand.perform() }
        let second = remote.send { await p.commands.togglePlayPauseCommand.perform() }
        #expect(await first.value == .success)
        #expect(await second.value == .success)
        #expect(p.current == "a")
        #expect(p.state == .paused)
        // The first start gave way before it played (before it loaded, when the second press came first).
        #expect(!p.engine.calls.contains("play"), "\(p.engine.calls)")
        #expect(p.engine.state.withLock { $0.playing } == false)
        // A third press plays, from where it rests.
        #expect(await remote.send { await p.commands.togglePlayPauseCommand.perform() }.value == .success)
        #expect(p.state == .playing)
    }

    /// A stream that never answers holds no command: a pause ends its start at once, the start
    /// answers success once the pause took effect, and the player rests paused on it.
    @Test func aPauseEndsAStalledStartAndBothAnswerSuccess() async throws {
        let p = await ScriptedPlayer(["stalled", "b"])
        let remote = InOrderRemote()
        let sent = ContinuousClock.now
        let play = remote.send { await p.commands.playCommand.perform() }
        let pause = remote.send { await p.commands.pauseCommand.perform() }
        #expect(await pause.value == .success)
        #expect(await play.value == .success)
        #expect(ContinuousClock.now - sent < .seconds(10), "neither waited on the stream")
        #expect(p.current == "stalled")
        #expect(p.state == .paused)
        // The later command's turn came after the superseded one's: a stop then rests stopped.
        #expect(await remote.send { await p.commands.stopCommand.perform() }.value == .success)
        #expect(p.state == .stopped)
    }

    /// A "next" at the end of the queue supersedes a start but changes nothing: the start it
    /// ended is taken up again, and only the "next" answers an error (it had none to go to).
    @Test func aSupersedingCommandThatChangesNothingLeavesTheStartToPlay() async throws {
        let p = await ScriptedPlayer(["a"])
        p.engine.state.withLock { $0.loadTime = .milliseconds(200) }
        let remote = InOrderRemote()
        let play = remote.send { await p.commands.playCommand.perform() }
        let next = remote.send { await p.commands.nextTrackCommand.perform(RemoteCommandEvent()) }
        #expect(await play.value == .success)
        // Unavailable (nil) when the player already disabled it, or no such content: never a start's failure.
        #expect([nil, .noSuchContent].contains(await next.value))
        try await p.waitFor("a", .playing)
        #expect(p.engine.state.withLock { $0.playing })
    }

    /// Several remotes at once, each sending a burst of play/pause, next, go-to and add: every
    /// command answers success, and the player ends where the last command asked. Each remote
    /// sends the same sequence, so whichever remote's command runs last, it is the sequence's
    /// last: a go-to, which plays.
    @Test func burstsFromSeveralRemotesAnswerSuccessAndEndAsTheLastCommandAsked() async throws {
        let names = (0..<40).map { "t\($0)" }
        let p = await ScriptedPlayer(names)
        p.engine.state.withLock { $0.loadTime = .milliseconds(2) }
        // Repeating the queue: a next on the last entry (an added one, reached by the remotes'
        // nexts in some orders of the burst) has a successor, as every command here must.
        let repeatAll = ChangeRepeatModeCommandEvent(repeatType: .all)
        #expect(await p.commands.changeRepeatModeCommand.perform(repeatAll) == .success)
        let remotes = (0..<4).map { _ in InOrderRemote() }
        let c = p.commands
        let toggle: @Sendable () async -> RemoteCommandHandlerStatus? = { await c.togglePlayPauseCommand.perform() }
        let next: @Sendable () async -> RemoteCommandHandlerStatus? = { await c.nextTrackCommand.perform(RemoteCommandEvent()) }
        let goTo: @Sendable (String) async -> RemoteCommandHandlerStatus? = { identifier in
            await c.playItemInQueueCommand.perform(PlayItemInQueueCommandEvent(identifier: identifier))
        }
        let add: @Sendable (String, Bool) async -> RemoteCommandHandlerStatus? = { name, playing in
            await c.addItemToQueueCommand.perform(
                AddItemToQueueCommandEvent(
                    url: URL(fileURLWithPath: "/added/\(name).ogg"), afterIdentifier: "t39", playsImmediately: playing))
        }

        // A mixed burst, ending on a go-to.
        var sent: [Task<RemoteCommandHandlerStatus?, Never>] = []
        for (number, remote) in remotes.enumerated() {
            sent += [
                remote.send { await toggle() }, remote.send { await next() }, remote.send { await add("r\(number)a", false) },
                remote.send { await goTo("t10") }, remote.send { await next() }, remote.send { await toggle() },
                remote.send { await add("r\(number)b", true) }, remote.send { await toggle() },
                remote.send { await next() }, remote.send { await goTo("t20") },
            ]
        }
        for (index, task) in sent.enumerated() {
            let status = await task.value
            #expect(status == .success, "command \(index) of the burst (remote \(index / 10), its command \(index % 10))")
        }
        #expect(p.current == "t20")
        #expect(p.state == .playing)
        #expect(p.engine.state.withLock { $0.playing && $0.loaded?.lastPathComponent == "t20.ogg" })
        #expect(await p.player.itemCount == names.count + 2 * remotes.count, "every add added its entry")

        // Play/pause alone: 4 remotes × 5 presses, an even count, end where they began: playing.
        sent = remotes.flatMap { remote in (0..<5).map { _ in remote.send { await toggle() } } }
        for task in sent { #expect(await task.value == .success) }
        #expect(p.state == .playing)
        #expect(p.engine.state.withLock { $0.playing })
        // One more press from each of three remotes: an odd count, paused.
        sent = remotes.prefix(3).map { remote in remote.send { await toggle() } }
        for task in sent { #expect(await task.value == .success) }
        #expect(p.state == .paused)
        #expect(p.engine.state.withLock { !$0.playing })

        // Next alone: 4 remotes × 3, twelve entries on from t20, still paused.
        sent = remotes.flatMap { remote in (0..<3).map { _ in remote.send { await next() } } }
        for task in sent { #expect(await task.value == .success) }
        #expect(p.current == "t32")
        #expect(p.state == .paused)
    }
}
