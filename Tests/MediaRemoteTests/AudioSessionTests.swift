import AsyncSupport
import MediaRemote
import Synchronization
import Testing

@Suite("AudioSession")
struct AudioSessionTests {
    let session = AudioSession()
    let speakers = AudioSession.OutputRoute(identifier: "speakers", name: "Speakers")
    let headphones = AudioSession.OutputRoute(identifier: "headphones", name: "Headphones")

    @Test func withoutAHandlerNothingCanBeChosen() async {
        session.outputRoutes = [speakers]
        #expect(!session.canSelectOutputRoute && !session.canSetReplayGain)
        await #expect(throws: AudioSession.RequestError.notSupported("The player cannot choose its audio output")) {
            try await session.selectOutputRoute("speakers")
        }
        await #expect(throws: AudioSession.RequestError.notSupported("The player has no ReplayGain")) {
            try await session.setReplayGain(.track)
        }
        #expect(session.currentOutputRoute == nil && session.replayGain == .off)
    }

    @Test func aListedRouteIsPassedToTheHandlerAndBecomesCurrent() async throws {
        let chosen = Mutex<[AudioSession.OutputRoute?]>([])
        session.outputRoutes = [speakers, headphones]
        session.setOutputRouteHandler { route in chosen.withLock { $0.append(route) } }
        try await session.selectOutputRoute("headphones")
        #expect(session.currentOutputRoute == "headphones")
        // Empty is the system's default: the handler hears nil.
        try await session.selectOutputRoute("")
        #expect(session.currentOutputRoute == nil)
        #expect(chosen.withLock { $0 } == [headphones, nil])
    }

    @Test func anUnknownRouteOrAFailingHandlerChangesNothing() async throws {
        let calls = Mutex(0)
        session.outputRoutes = [speakers]
        session.setOutputRouteHandler { _ in
            calls.withLock { $0 += 1 }
            struct Unplugged: Error, CustomStringConvertible { var description: String { "unplugged" } }
            throw Unplugged()
        }
        // The reason names no D-Bus member: the D-Bus interface adds where the outputs are listed.
        await #expect(throws: AudioSession.RequestError.invalidArgument("No audio output \"usb\"")) {
            try await session.selectOutputRoute("usb")
        }
        #expect(calls.withLock { $0 } == 0)
        let error = await #expect(throws: AudioSession.RequestError.self) { try await session.selectOutputRoute("speakers") }
        #expect(error == .failed("Cannot switch the audio output: unplugged"))
        #expect(session.currentOutputRoute == nil)
    }

    @Test func aReplayGainModeIsPassedToTheHandlerAndBecomesCurrentUnlessItFails() async throws {
        let modes = Mutex<[AudioSession.ReplayGainMode]>([])
        let failing = Mutex(false)
        session.setReplayGainHandler { mode in
            modes.withLock { $0.append(mode) }
            struct Refused: Error, CustomStringConvertible { var description: String { "refused" } }
            if failing.withLock({ $0 }) { throw Refused() }
        }
        try await session.setReplayGain(.album)
        #expect(session.replayGain == .album)
        failing.withLock { $0 = true }
        let error = await #expect(throws: AudioSession.RequestError.self) { try await session.setReplayGain(.track) }
        #expect(error == .failed("Cannot change ReplayGain: refused"))
        #expect(session.replayGain == .album)
        #expect(modes.withLock { $0 } == [.album, .track])
    }

    @Test func observersHearEachChangeOnce() {
        let changes = Mutex(0)
        let observation = session.observe { changes.withLock { $0 += 1 } }
        session.outputRoutes = [speakers]
        session.outputRoutes = [speakers]  // the same: no change
        session.currentOutputRoute = "speakers"
        session.replayGain = .track
        #expect(changes.withLock { $0 } == 3)
        observation.cancel()
        session.replayGain = .album
        #expect(changes.withLock { $0 } == 3)
    }
}
