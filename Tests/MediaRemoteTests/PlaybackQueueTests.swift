import AsyncSupport
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MediaRemote
import Testing

/// The play queue of the now-playing centre and the three queue commands.
@Suite("Playback queue")
struct PlaybackQueueTests {
    let center = NowPlayingInfoCenter()
    let commands = RemoteCommandCenter()
    let updates = Recorder<PlaybackQueueUpdate>()
    let observation: Observation

    init() { observation = center.observeQueue { [updates] in updates.record($0) } }

    static let a = NowPlayingInfo(identifier: "a", title: "A")
    static let b = NowPlayingInfo(identifier: "b", title: "B")
    static let c = NowPlayingInfo(identifier: "c", title: "C")

    @Test func theQueueIsEmptyUntilSetAndObserversGetPreviousAndCurrent() throws {
        #expect(center.playbackQueue.isEmpty)
        center.playbackQueue = [Self.a, Self.b]
        center.playbackQueue.append(Self.c)
        #expect(center.playbackQueue == [Self.a, Self.b, Self.c])
        try #require(updates.count == 2)
        #expect(updates.values[0].previous == [] && updates.values[0].current == [Self.a, Self.b])
        #expect(updates.values[1].previous == [Self.a, Self.b] && updates.values[1].current == [Self.a, Self.b, Self.c])
    }

    @Test func anEqualQueueTellsNobody() {
        center.playbackQueue = [Self.a, Self.b]
        center.playbackQueue = [Self.a, Self.b]
        center.playbackQueue = []
        center.playbackQueue = []
        #expect(updates.values.map(\.current) == [[Self.a, Self.b], []])
    }

    @Test func queueAndNowPlayingObserversAreSeparate() {
        let published = Recorder<NowPlayingUpdate>()
        let observation = center.observe { published.record($0) }
        defer { observation.cancel() }
        center.playbackQueue = [Self.a]
        #expect(published.count == 0, "a queue change is not a publication")
        center.nowPlayingInfo = Self.a
        center.volume = 0.5
        #expect(updates.count == 1, "publications and volume do not touch the queue")
        #expect(published.count == 2)
    }

    @Test func cancelStopsQueueObservation() {
        let heard = Recorder<PlaybackQueueUpdate>()
        let observation = center.observeQueue { heard.record($0) }
        center.playbackQueue = [Self.a]
        observation.cancel()
        center.playbackQueue = [Self.b]
        #expect(heard.count == 1)
        #expect(updates.count == 2, "other observers keep observing")
    }

    @Test func queueCommandsCarryTheirEvents() async {
        let received = Recorder<String>()
        commands.playItemInQueueCommand.addTarget { event in
            received.record("play \(event.identifier)")
            return .success
        }
        commands.addItemToQueueCommand.addTarget { event in
            received.record("add \(event.url.absoluteString) after \(event.afterIdentifier ?? "-") \(event.playsImmediately)")
            return .success
        }
        commands.removeItemFromQueueCommand.addTarget { event in
            received.record("remove \(event.identifier)")
            return .noSuchContent
        }
        let url = URL(string: "file:///music/x.ogg")!
        #expect(await commands.playItemInQueueCommand.perform(PlayItemInQueueCommandEvent(identifier: "b")) == .success)
        #expect(
            await commands.addItemToQueueCommand.perform(AddItemToQueueCommandEvent(url: url, afterIdentifier: nil))
                == .success)
        #expect(
            await commands.addItemToQueueCommand.perform(
                AddItemToQueueCommandEvent(url: url, afterIdentifier: "a", playsImmediately: true)) == .success)
        #expect(
            await commands.removeItemFromQueueCommand.perform(RemoveItemFromQueueCommandEvent(identifier: "c"))
                == .noSuchContent)
        #expect(
            received.values == [
                "play b", "add file:///music/x.ogg after - false", "add file:///music/x.ogg after a true", "remove c",
            ])
    }

    @Test func queueCommandsTakePartInChangesAndAvailability() {
        let changes = Recorder<Void>()
        let observation = commands.observeChanges { changes.record(()) }
        defer { observation.cancel() }
        let queueCommands: [(available: () -> Bool, add: () -> Void, disable: () -> Void)] = [
            (
                { commands.playItemInQueueCommand.isAvailable },
                { commands.playItemInQueueCommand.addTarget { _ in .success } },
                { commands.playItemInQueueCommand.isEnabled = false }
            ),
            (
                { commands.addItemToQueueCommand.isAvailable },
                { commands.addItemToQueueCommand.addTarget { _ in .success } },
                { commands.addItemToQueueCommand.isEnabled = false }
            ),
            (
                { commands.removeItemFromQueueCommand.isAvailable },
                { commands.removeItemFromQueueCommand.addTarget { _ in .success } },
                { commands.removeItemFromQueueCommand.isEnabled = false }
            ),
        ]
        for (index, command) in queueCommands.enumerated() {
            #expect(!commands.hasAvailableCommand)
            command.add()
            #expect(command.available())
            #expect(commands.hasAvailableCommand, "command \(index)")
            command.disable()
            #expect(!command.available())
            #expect(changes.count == 2 * (index + 1), "command \(index): each change of availability is observed")
        }
        #expect(!commands.hasAvailableCommand)
    }
}
