import TestMedia
import Testing

@testable import GStreamerPlayback
@testable import Playback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite struct PlaybackTests {
    @Test(arguments: TestMedia.Format.allCases)
    func playsEachFormatToTheEnd(format: TestMedia.Format) async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let url = try await media.make("tone", format, seconds: 1)
        let (engine, log) = try makeEngine()

        try await engine.load(url)
        let started = try await log.first { if case .streamStarted = $0 { true } else { false } }
        #expect(started.index == 0 && started.entry.event == .streamStarted(url))
        // MP3 has no length header: its duration is first unknown (nil), then estimated.
        let reported = try await log.first { $0.duration != nil && $0.duration! != nil }.entry.event.duration
        let duration = try #require(reported ?? nil)
        // MP3 adds encoder padding; Opus ends a few samples short.
        #expect(abs(duration.seconds - 1) < 0.1, "duration \(duration)")
        #expect(engine.duration == duration)
        #expect(engine.position == .zero)

        let playRequested = ContinuousClock.now
        try await engine.play()
        try await log.first { $0 == .stateChanged(.playing) }
        let end = try await log.first(timeout: .seconds(5)) { $0.isEndOfStream }
        // In real time: not before the end (events reach this task late on a busy machine, never early).
        let playedFor = end.entry.time - playRequested
        #expect(playedFor > duration - .milliseconds(50), "played for \(playedFor)")
        #expect(!log.events.contains { $0.isError })
    }
}

@Suite struct TransportTests {
    @Test func rateOneAndAHalfAdvancesOneAndAHalfTimesAsFast() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let (engine, log) = try makeEngine()
        let output = OutputLog(engine)
        try await engine.load(try await media.make("tone", .ogg, seconds: 10))
        try await engine.play()
        try await engine.setRate(1.5)
        #expect(engine.rate == 1.5)
        // From the rate change's flush on, a second of the pipeline clock plays 1.5 s of media.
        try await output.wait { output in
            output.streams.last.map { $0.first!.flushes == 1 && $0.end - $0.start >= .seconds(1) } ?? false
        }
        let changed = try #require(output.streams.last)
        #expect(abs(changed.speed - 1.5) < 0.01, "\(output.summary)")
        // A rate change is not a state change, and it did not pause playback for good.
        #expect(log.events.last == .stateChanged(.playing))
    }

    @Test func rateSetBeforeLoadingAppliesToTheItem() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let (engine, _) = try makeEngine()
        let output = OutputLog(engine)
        try await engine.setRate(1.5)
        try await engine.load(try await media.make("tone", .ogg, seconds: 3))
        #expect(engine.position == .zero)
        try await engine.play()
        // From its first buffer on, 1.5 s of media per second of the pipeline clock.
        try await output.wait { output in output.streams.last.map { $0.end - $0.start >= .seconds(1) } ?? false }
        let played = try #require(output.streams.last)
        #expect(played.first?.position == .zero, "\(output.summary)")
        #expect(abs(played.speed - 1.5) < 0.01, "\(output.summary)")
    }

    @Test func invalidRatesAreRefusedAndChangeNothing() async throws {
        let (engine, _) = try makeEngine()
        for rate in [0, -1, .nan, .infinity] {
            await #expect(throws: PlaybackError.self) { try await engine.setRate(rate) }
            do {
                try await engine.setRate(rate)
            } catch {
                #expect(error.kind == .invalidArgument)
            }
        }
        #expect(engine.rate == 1)
    }

    @Test func seekLandsWhereAskedPausedAndPlaying() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let (engine, log) = try makeEngine()
        let output = OutputLog(engine)
        try await engine.load(try await media.make("tone", .ogg, seconds: 3))
        try await engine.seek(to: .milliseconds(1234))
        let paused = try #require(engine.position)
        #expect(abs(paused.seconds - 1.234) < 0.005, "paused at \(paused)")

        try await engine.play()
        let seekRequested = ContinuousClock.now
        try await engine.seek(to: .milliseconds(500))
        // Where it seeked to, and since then at most as far as the clock went.
        let playing = try #require(engine.position)
        let sinceSeek = ContinuousClock.now - seekRequested
        #expect(playing >= .milliseconds(500) && playing <= .milliseconds(500) + sinceSeek, "playing at \(playing)")
        // What plays after the seek's flush starts exactly there.
        try await output.wait { output in output.streams.last?.first?.flushes == 2 }
        #expect(output.streams.last?.first?.position == .milliseconds(500), "\(output.summary)")
        // The seek passed through PAUSED without reporting it (the item may have ended since, on
        // a slow machine: that is reported, and is not a pause).
        let reported = try await log.first { $0 == .stateChanged(.playing) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(!log.events[(reported.index + 1)...].contains(.stateChanged(.paused)), "\(log.events)")
    }

    @Test func seekOutsideTheItemIsRefused() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let (engine, _) = try makeEngine()
        await #expect(throws: PlaybackError(kind: .notLoaded, url: nil, message: "Nothing is loaded")) {
            try await engine.seek(to: .seconds(1))
        }
        try await engine.load(try await media.make("tone", .ogg, seconds: 1))
        try await engine.seek(to: .milliseconds(300))
        for position in [Duration.seconds(-1), .seconds(5)] {
            do {
                try await engine.seek(to: position)
                Issue.record("seek to \(position) succeeded")
            } catch {
                #expect(error.kind == .invalidArgument)
            }
        }
        let unchanged = try #require(engine.position)
        #expect(abs(unchanged.seconds - 0.3) < 0.005)
    }

    @Test func pauseStopsThePosition() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let (engine, log) = try makeEngine()
        try await engine.load(try await media.make("tone", .ogg, seconds: 3))
        try await engine.play()
        #expect(try await eventually { (engine.position ?? .zero) > .milliseconds(250) })
        let playing = try await log.first { $0 == .stateChanged(.playing) }
        try await engine.pause()
        try await log.first(from: playing.index) { $0 == .stateChanged(.paused) }
        let paused = try #require(engine.position)
        #expect(paused > .milliseconds(250))
        try await Task.sleep(for: .milliseconds(300))
        #expect(engine.position == paused)

        // Playing again moves it on (as fast as a busy machine lets the pipeline go).
        try await engine.play()
        #expect(try await eventually { (engine.position ?? .zero) > paused + .milliseconds(150) })
    }

    @Test func volumeAndMuteRoundTrip() async throws {
        let (engine, _) = try makeEngine()
        #expect(engine.volume == 1)
        #expect(engine.isMuted == false)
        engine.volume = 0.25
        #expect(engine.volume == 0.25)
        engine.volume = 20
        #expect(engine.volume == 10)
        engine.volume = -3
        #expect(engine.volume == 0)
        engine.volume = 0.5
        engine.volume = .nan
        #expect(engine.volume == 0.5)
        engine.isMuted = true
        #expect(engine.isMuted)
        #expect(engine.volume == 0.5)
        engine.isMuted = false
        #expect(!engine.isMuted)
    }

    @Test(arguments: ["nosuchsink", "fakesink nosuchproperty=1", "fakesink ! fakesink", ""])
    func badSinkDescriptionIsRefused(description: String) throws {
        do {
            _ = try GStreamerEngine(audioSink: description)
            Issue.record("\"\(description)\" was accepted")
        } catch {
            #expect(error.kind == .invalidArgument)
            #expect(error.message.contains("Invalid audio sink"), "\(error)")
        }
    }

    @Test func nothingLoadedMeansNothingToPlay() async throws {
        let (engine, log) = try makeEngine()
        for call in [engine.play, engine.pause] {
            do {
                try await call()
                Issue.record("succeeded with nothing loaded")
            } catch {
                #expect(error.kind == .notLoaded)
            }
        }
        #expect(engine.position == nil)
        #expect(engine.duration == nil)
        await #expect(throws: PlaybackError.self) { try await engine.load(URL(string: "ftp://example.com/a.ogg")!) }
        #expect(log.events.isEmpty)
    }
}

@Suite struct SequencingTests {
    @Test func stopThenPlayOrLoadAtOnceNeverFails() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let first = try await media.make("first", .ogg, seconds: 2)
        let second = try await media.make("second", .mp3, seconds: 2)
        let (engine, log) = try makeEngine()
        try await engine.load(first)
        for round in 0..<20 {
            try await engine.play()
            await engine.stop()
            #expect(engine.position == nil)
            if round.isMultiple(of: 2) {
                let played = ContinuousClock.now
                try await engine.play()  // the stopped item again, from its start
                // From its start: no further than the clock went since play() was asked, however
                // late a loaded machine schedules this task. Nil once the 2 s item has ended.
                if let position = engine.position {
                    #expect(position <= ContinuousClock.now - played + .milliseconds(50), "at \(position)")
                }
                await engine.stop()
            }
            try await engine.load(round.isMultiple(of: 3) ? second : first)
        }
        // A stop is reported once its teardown reaches the bus thread, if nothing was started
        // since: on a loaded machine the loop's next command may always come first. A stop
        // with nothing after it is reported.
        let beforeStop = log.events.count
        await engine.stop()
        let stopped = try await log.first(from: beforeStop) { $0 == .stateChanged(.stopped) }
        try await engine.play()
        try await log.first(from: stopped.index) { $0 == .stateChanged(.playing) }
        #expect(!log.events.contains { $0.isError })
    }

    @Test func callsFromManyTasksAreSequenced() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let url = try await media.make("tone", .ogg, seconds: 3)
        let (engine, log) = try makeEngine()
        try await engine.load(url)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<12 {
                group.addTask {
                    switch task % 4 {
                    case 0: try await engine.play()
                    case 1: try await engine.pause()
                    case 2: try await engine.seek(to: .milliseconds(100 * task))
                    default: try await engine.setRate(task.isMultiple(of: 2) ? 1.25 : 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        try await engine.setRate(1)
        let seekRequested = ContinuousClock.now
        try await engine.seek(to: .milliseconds(500))
        try await engine.play()
        // The last seek holds: from 0.5 s on, at most as far as the clock went since.
        let position = try #require(engine.position)
        let sinceSeek = ContinuousClock.now - seekRequested
        #expect(position >= .milliseconds(500) && position <= .milliseconds(500) + sinceSeek, "at \(position)")
        #expect(try await eventually { (engine.position ?? .zero) > .milliseconds(800) })
        try await log.first { $0 == .stateChanged(.playing) }
        #expect(!log.events.contains { $0.isError })
    }

    /// A later command supersedes a call by cancelling its task: the call ends, whether it
    /// waited for its turn or on the pipeline, the engine stops, and the call says it was superseded.
    @Test func aCancelledCallEndsAsSupersededAndStopsTheEngine() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let url = try await media.make("tone", .ogg, seconds: 2)
        let (engine, log) = try makeEngine()
        try await engine.load(url)
        let playing = Task { try await engine.play() }
        playing.cancel()
        do {
            try await playing.value
            Issue.record("a cancelled play finished")
        } catch {
            #expect((error as? PlaybackError)?.kind == .superseded, "\(error)")
        }
        try await log.first { $0 == .stateChanged(.stopped) }
        #expect(engine.position == nil)
        // The item stays current: a play after it starts it again.
        try await engine.play()
        #expect(try await eventually { engine.position != nil })
        #expect(!log.events.contains { $0.isError })
    }
}

@Suite struct TagTests {
    @Test func tagsOfTheLoadedItemAreReported() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let tags = TestMedia.Tags(title: "A Title", artist: "Ann, Bob", album: "An Album", genre: "Jazz")
        let (engine, log) = try makeEngine()
        try await engine.load(try await media.make("tagged", .flac, seconds: 1, tags: tags))
        try await log.first {
            $0 == .tagsChanged(StreamTags(title: "A Title", artist: "Ann, Bob", album: "An Album", genre: "Jazz"))
        }
    }

    @Test func aChainedOggStreamChangesTitleMidStream() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let first = try await media.make("first", .ogg, seconds: 1, tags: TestMedia.Tags(title: "First"))
        let second = try await media.make("second", .ogg, seconds: 1, tags: TestMedia.Tags(title: "Second"))
        let chained = media.url("chained.ogg")
        try (try Data(contentsOf: first) + Data(contentsOf: second)).write(to: chained)
        let (engine, log) = try makeEngine()
        try await engine.load(chained)
        let playRequested = ContinuousClock.now
        try await engine.play()
        let playing = try await log.first { $0 == .stateChanged(.playing) }
        let changed = try await log.first {
            if case .tagsChanged(let tags) = $0 { tags.title == "Second" } else { false }
        }
        // The title changes when the second chain plays, a second in.
        #expect(changed.entry.time - playRequested > .milliseconds(800))
        #expect(changed.index > playing.index, "the new title came before playback: \(log.events)")
        try await log.first { $0.isEndOfStream }
        // One item: the new chain is not a new stream for the consumer.
        #expect(log.events.filter { if case .streamStarted = $0 { true } else { false } } == [.streamStarted(chained)])
    }
}
