import AsyncSupport
import Dispatch
import MediaRemote
import Playback
import Synchronization
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An engine that plays nothing: it records what it was asked, fails to load
/// URLs containing "broken", waits on URLs containing "stalled" until its call is cancelled (a
/// stream that never answers), and lets a test emit engine events and trigger the gapless
/// hand-over. A cancelled call stops it and throws `superseded`, as the protocol says.
final class ScriptedEngine: PlaybackEngine {
    struct State {
        var loaded: URL?
        var playing = false
        var position: Duration = .zero
        var rate = 1.0
        var volume = 1.0
        var isMuted = false
        var provider: (@Sendable (URL) -> URL?)?
        var calls: [String] = []
        /// Like GStreamer with a short file: ask what follows while prerolling.
        var asksWhileLoading = false
        var answersWhileLoading: [URL?] = []
        /// How long each load takes (a file's preroll), during which a later command may supersede it.
        var loadTime: Duration = .zero
    }
    let state = Mutex(State())
    let events: AsyncStream<PlaybackEvent>
    private let continuation: AsyncStream<PlaybackEvent>.Continuation

    init() {
        (events, continuation) = AsyncStream.makeStream()
    }

    func emit(_ event: PlaybackEvent) { continuation.yield(event) }
    /// What a gapless hand-over looks like: the next stream starts without a load.
    func startHandedOverStream(_ url: URL) {
        state.withLock { $0.loaded = url }
        emit(.streamStarted(url))
    }
    /// What GStreamer's about-to-finish does: asks the provider what follows the loaded URL.
    func aboutToFinish() -> URL? {
        let (provider, loaded) = state.withLock { ($0.provider, $0.loaded) }
        guard let provider, let loaded else { return nil }
        return provider(loaded)
    }
    var calls: [String] { state.withLock { $0.calls } }

    /// Throws `superseded`, stopped, when the calling task was cancelled.
    private func superseded(_ url: URL?) -> PlaybackError? {
        guard Task.isCancelled else { return nil }
        state.withLock { state in
            state.loaded = nil
            state.playing = false
            state.calls.append("superseded")
        }
        return PlaybackError(kind: .superseded, url: url, message: "superseded")
    }

    func load(_ url: URL) async throws(PlaybackError) {
        let loadTime = state.withLock { state in
            state.calls.append("load \(url.lastPathComponent)")
            return state.loadTime
        }
        if url.path().contains("stalled") {
            try? await Task.sleep(for: .seconds(3600))
        } else if loadTime > .zero {
            try? await Task.sleep(for: loadTime)
        }
        if let error = superseded(url) { throw error }
        guard !url.path().contains("broken") else {
            throw PlaybackError(kind: .unsupported, url: url, message: "could not decode \(url.lastPathComponent)")
        }
        let provider = state.withLock { state in
            state.loaded = url
            state.position = .zero
            return state.asksWhileLoading ? state.provider : nil
        }
        if let provider {
            let answer = provider(url)
            state.withLock { $0.answersWhileLoading.append(answer) }
        }
        emit(.streamStarted(url))
    }
    func play() async throws(PlaybackError) {
        if let error = superseded(nil) { throw error }
        try state.withLock { (state) throws(PlaybackError) in
            guard state.loaded != nil else { throw PlaybackError(kind: .notLoaded, url: nil, message: "nothing loaded") }
            state.playing = true
            state.calls.append("play")
        }
    }
    func pause() async throws(PlaybackError) {
        if let error = superseded(nil) { throw error }
        state.withLock {
            $0.playing = false
            $0.calls.append("pause")
        }
    }
    func stop() async {
        state.withLock {
            $0.loaded = nil
            $0.playing = false
            $0.calls.append("stop")
        }
    }
    func seek(to position: Duration) async throws(PlaybackError) {
        if let error = superseded(nil) { throw error }
        state.withLock {
            $0.position = position
            $0.calls.append("seek \(position)")
        }
    }
    func setRate(_ rate: Double) async throws(PlaybackError) {
        if let error = superseded(nil) { throw error }
        state.withLock {
            $0.rate = rate
            $0.calls.append("rate \(rate)")
        }
    }
    var volume: Double {
        get { state.withLock { $0.volume } }
        set { state.withLock { $0.volume = newValue } }
    }
    var isMuted: Bool {
        get { state.withLock { $0.isMuted } }
        set { state.withLock { $0.isMuted = newValue } }
    }
    var position: Duration? { state.withLock { $0.loaded == nil ? nil : $0.position } }
    var duration: Duration? { state.withLock { $0.loaded == nil ? nil : .seconds(60) } }
    func setSuccessorProvider(_ provider: (@Sendable (URL) -> URL?)?) { state.withLock { $0.provider = provider } }
}

/// A player over a scripted engine, with its centres.
struct ScriptedPlayer {
    let commands = RemoteCommandCenter()
    let nowPlaying = NowPlayingInfoCenter()
    let engine = ScriptedEngine()
    let player: QueuePlayer

    init(
        _ names: [String], configuration: QueuePlayer.Configuration = .init(),
        resumePoints: (any ResumePointStore)? = nil
    ) async {
        let engine = self.engine
        player = QueuePlayer(
            commands: commands, nowPlaying: nowPlaying, configuration: configuration, resumePoints: resumePoints,
            makeEngine: { engine },
            resolve: { url in QueueItem(identifier: url.lastPathComponent, url: url, info: NowPlayingInfo(title: "opened")) })
        await player.start()
        await player.replaceQueue(with: queueItems(names), play: false)
    }

    /// Events are handled in order: a failed output after them stops the player visibly, and
    /// by then none of them may have made the engine play (calls from `since` on).
    func expectNoPlayAfterTheEvents(since: Int) async throws {
        let current = try #require(self.current)
        engine.emit(.error(PlaybackError(kind: .outputDevice, url: nil, message: "marker")))
        try await waitFor(current, .stopped)
        #expect(!engine.calls.dropFirst(since).contains("play"), "\(engine.calls)")
    }

    var current: String? { nowPlaying.nowPlayingInfo?.identifier }
    var state: PlaybackState? { nowPlaying.nowPlayingInfo?.playbackState }

    /// Waits until the now-playing centre shows `identifier` in `state`: engine events are
    /// handled by the player's own task, so the test awaits their publication.
    func waitFor(_ identifier: String, _ state: PlaybackState) async throws {
        let (updates, continuation) = AsyncStream.makeStream(of: NowPlayingInfo?.self)
        let observation = nowPlaying.observe { continuation.yield($0.current) }
        defer { observation.cancel() }
        continuation.yield(nowPlaying.nowPlayingInfo)
        let reached = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await info in updates where info?.identifier == identifier && info?.playbackState == state {
                    return true
                }
                return false
            }
            group.addTask {
                try await Task.sleep(for: .seconds(5))
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            continuation.finish()
            return first
        }
        #expect(reached, "still \(current ?? "nothing") \(String(describing: self.state)), not \(identifier) \(state)")
    }
}

/// A catalog whose entry `k` is `/music/k.ogg` titled "Title of k" (or `prefix` + k), but for
/// `gone`, which it no longer has; it records every key it is asked to describe.
final class CountingCatalog: QueueItemCatalog {
    private let state = Mutex<(asked: [String], prefix: String)>(([], "Title of "))
    var asked: [String] { state.withLock { $0.asked } }
    var prefix: String {
        get { state.withLock { $0.prefix } }
        set { state.withLock { $0.prefix = newValue } }
    }
    func url(ofItem key: String) -> URL { URL(fileURLWithPath: "/music/\(key).ogg") }
    func info(ofItem key: String) -> NowPlayingInfo? {
        let prefix = state.withLock { state in
            state.asked.append(key)
            return state.prefix
        }
        return key == "gone" ? nil : NowPlayingInfo(title: prefix + key)
    }
}

func queueItems(_ names: [String]) -> [QueueItem] {
    names.map { QueueItem(identifier: $0, url: URL(fileURLWithPath: "/music/\($0).ogg"), info: NowPlayingInfo(title: $0)) }
}

/// A serial executor on a dispatch queue that also takes tasks: where a player given one runs
/// (the daemon's runs on its bus connection's thread).
final class QueueExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {  // only the queue is stored, and it is thread-safe
    let queue = DispatchQueue(label: "test.player-executor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(isolatedTo: self.asUnownedSerialExecutor(), taskExecutor: self.asUnownedTaskExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

/// Waits for `semaphore` on a thread of Dispatch's, not of Swift's pool; false after `timeout`.
func signalled(_ semaphore: DispatchSemaphore, within timeout: DispatchTimeInterval) async -> Bool {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: semaphore.wait(timeout: .now() + timeout) == .success) }
    }
}

@Suite struct QueuePlayerTests {
    /// The engine is made (GStreamer loading its plugins) off the executor the player runs on:
    /// a player on a bus connection's thread leaves that thread free for other calls meanwhile,
    /// and the play it was made for goes on once it exists.
    @Test func makingTheEngineLeavesThePlayersExecutorFree() async throws {
        let executor = QueueExecutor()
        let commands = RemoteCommandCenter()
        let engine = ScriptedEngine()
        let making = DispatchSemaphore(value: 0)
        let made = DispatchSemaphore(value: 0)
        let player = QueuePlayer(
            commands: commands, nowPlaying: NowPlayingInfoCenter(), executor: executor,
            makeEngine: {
                making.signal()
                made.wait()
                return engine
            },
            resolve: { url in QueueItem(identifier: url.lastPathComponent, url: url, info: NowPlayingInfo(title: "opened")) })
        await player.start()
        await player.replaceQueue(with: queueItems(["a"]), play: false)
        let play = Task { await commands.playCommand.perform() }
        #expect(await signalled(making, within: .seconds(10)), "the engine was never asked for")
        let ran = DispatchSemaphore(value: 0)
        executor.queue.async { ran.signal() }
        let executorFree = await signalled(ran, within: .seconds(5))
        made.signal()
        #expect(executorFree, "work on the player's executor waited for the engine to be made")
        #expect(await play.value == .success)
        #expect(engine.calls == ["load a.ogg", "play"])
    }

    @Test func playLoadsTheCurrentItemAndPublishesIt() async throws {
        let p = await ScriptedPlayer(["a", "b"])
        #expect(p.state == .stopped)
        #expect(p.nowPlaying.playbackQueue.map(\.identifier) == ["a", "b"])
        let status = await p.commands.playCommand.perform()
        #expect(status == .success)
        #expect(p.current == "a")
        #expect(p.state == .playing)
        #expect(p.engine.calls == ["load a.ogg", "play"])
        #expect(p.nowPlaying.nowPlayingInfo?.playbackQueueIndex == 0)
    }

    /// Remotes are shown the entries around the current one, not the whole queue; the window
    /// follows the current entry, and the now-playing value says where it is in the whole.
    @Test func remotesAreShownAWindowOfTheQueueAroundTheCurrentEntry() async throws {
        var configuration = QueuePlayer.Configuration()
        #expect(configuration.shownQueueWindow == .init(before: 5, after: 50))
        configuration.shownQueueWindow = .init(before: 2, after: 3)
        let names = (0..<1000).map { "t\($0)" }
        let p = await ScriptedPlayer(names, configuration: configuration)
        #expect(p.nowPlaying.playbackQueue.map(\.identifier) == ["t0", "t1", "t2", "t3"])

        #expect(await p.commands.playItemInQueueCommand.perform(PlayItemInQueueCommandEvent(identifier: "t500")) == .success)
        #expect(p.nowPlaying.playbackQueue.map(\.identifier) == ["t498", "t499", "t500", "t501", "t502", "t503"])
        #expect(p.nowPlaying.nowPlayingInfo?.playbackQueueIndex == 500)
        #expect(p.nowPlaying.nowPlayingInfo?.playbackQueueCount == 1000)

        #expect(await p.commands.nextTrackCommand.perform() == .success)
        #expect(p.nowPlaying.playbackQueue.map(\.identifier) == ["t499", "t500", "t501", "t502", "t503", "t504"])
        // The commands still reach the whole queue: an entry far outside the window plays.
        #expect(await p.commands.playItemInQueueCommand.perform(PlayItemInQueueCommandEvent(identifier: "t999")) == .success)
        #expect(p.current == "t999")
        #expect(p.nowPlaying.playbackQueue.map(\.identifier) == ["t997", "t998", "t999"])
        #expect(await p.player.itemCount == 1000)
    }

    @Test func theNextItemIsHandedOverGaplesslyAndTheQueueFollows() async throws {
        let p = await ScriptedPlayer(["a", "b"])
        _ = await p.commands.playCommand.perform()
        #expect(p.engine.aboutToFinish()?.lastPathComponent == "b.ogg")
        p.engine.startHandedOverStream(URL(fileURLWithPath: "/music/b.ogg"))
        try await p.waitFor("b", .playing)
        #expect(p.engine.calls == ["load a.ogg", "play"], "no reload: the engine went on by itself")
        // Last item, repeat off: nothing to hand over, and the end stops at the first item.
        #expect(p.engine.aboutToFinish() == nil)
        #expect(p.commands.nextTrackCommand.isEnabled == false)
    }

    @Test func theNextItemIsKnownWhileTheFirstPrerolls() async throws {
        let p = await ScriptedPlayer(["a", "b"])
        p.engine.state.withLock { $0.asksWhileLoading = true }
        _ = await p.commands.playCommand.perform()
        #expect(p.engine.state.withLock { $0.answersWhileLoading } == [URL(fileURLWithPath: "/music/b.ogg")])
    }

    @Test func shortItemsAreHandedOverBeforeTheirStreamsAreAnnounced() async throws {
        let p = await ScriptedPlayer(["a", "b", "c"])
        _ = await p.commands.playCommand.perform()
        let music = URL(fileURLWithPath: "/music")
        // The engine reads ahead: it asks for what follows b before b's stream has started.
        #expect(p.engine.state.withLock { $0.provider }?(music.appending(path: "a.ogg"))?.lastPathComponent == "b.ogg")
        #expect(p.engine.state.withLock { $0.provider }?(music.appending(path: "b.ogg"))?.lastPathComponent == "c.ogg")
        p.engine.startHandedOverStream(music.appending(path: "b.ogg"))
        try await p.waitFor("b", .playing)
        p.engine.startHandedOverStream(music.appending(path: "c.ogg"))
        try await p.waitFor("c", .playing)
        #expect(p.engine.calls == ["load a.ogg", "play"])
    }

    @Test func repeatOneHandsOverTheSameItemAndRepeatAllWraps() async throws {
        let p = await ScriptedPlayer(["a", "b"])
        _ = await p.commands.playCommand.perform()
        _ = await p.commands.changeRepeatModeCommand.perform(ChangeRepeatModeCommandEvent(repeatType: .one))
        #expect(p.engine.aboutToFinish()?.lastPathComponent == "a.ogg")
        _ = await p.commands.nextTrackCommand.perform()
        _ = await p.commands.changeRepeatModeCommand.perform(ChangeRepeatModeCommandEvent(repeatType: .all))
        #expect(p.current == "b")
        #expect(p.engine.aboutToFinish()?.lastPathComponent == "a.ogg")
        #expect(p.commands.nextTrackCommand.isEnabled)
    }

    @Test func theEndOfTheQueueStopsAtItsFirstItem() async throws {
        let p = await ScriptedPlayer(["a", "b"])
        _ = await p.commands.nextTrackCommand.perform()
        _ = await p.commands.playCommand.perform()
        p.engine.state.withLock { $0.position = .seconds(60) }
        _ = await p.commands.changePlaybackPositionCommand.perform(
            ChangePlaybackPositionCommandEvent(positionTime: .seconds(60)))
        p.engine.emit(.endOfStream)
        try await p.waitFor("a", .stopped)
    }

    @Test func anItemThatFailsToLoadIsSkipped() async throws {
        let p = await ScriptedPlayer(["broken", "b"])
        let status = await p.commands.playCommand.perform()
        #expect(status == .success)
        #expect(p.current == "b")
        #expect(p.state == .playing)
        #expect(p.engine.calls == ["load broken.ogg", "load b.ogg", "play"])
    }

    @Test func whenNothingCanPlayPlayFailsAndThePlayerStops() async throws {
        let p = await ScriptedPlayer(["broken-1", "broken-2"])
        let status = await p.commands.playCommand.perform()
        #expect(status == .commandFailed)
        #expect(p.state == .stopped)
    }

    @Test func anErrorWhilePlayingMovesToTheNextItem() async throws {
        let p = await ScriptedPlayer(["a", "b"])
        _ = await p.commands.playCommand.perform()
        p.engine.emit(.error(PlaybackError(kind: .network, url: URL(fileURLWithPath: "/music/a.ogg"), message: "gone")))
        try await p.waitFor("b", .playing)
        // An error about an item no longer loaded is stale and ignored.
        p.engine.emit(.error(PlaybackError(kind: .network, url: URL(fileURLWithPath: "/music/a.ogg"), message: "late")))
        _ = await p.commands.pauseCommand.perform()
        #expect(p.current == "b")
        #expect(p.state == .paused)
    }

    @Test func anInterruptionShowsInterruptedAndItsEndResumes() async throws {
        let p = await ScriptedPlayer(["a", "b"])
        _ = await p.commands.playCommand.perform()
        p.engine.state.withLock { $0.playing = false }  // the engine paused itself, as it must
        p.engine.emit(.interruption(.began))
        try await p.waitFor("a", .interrupted)
        #expect(!p.engine.state.withLock { $0.playing })
        p.engine.emit(.interruption(.ended))
        try await p.waitFor("a", .playing)
        #expect(p.engine.state.withLock { $0.playing })
        #expect(p.engine.calls.last == "play")
    }

    @Test func aPauseDuringAnInterruptionStandsAtItsEnd() async throws {
        let p = await ScriptedPlayer(["a", "b"])
        _ = await p.commands.playCommand.perform()
        p.engine.emit(.interruption(.began))
        try await p.waitFor("a", .interrupted)
        _ = await p.commands.pauseCommand.perform()
        #expect(p.state == .paused)
        let before = p.engine.calls.count
        p.engine.emit(.interruption(.ended))
        try await p.expectNoPlayAfterTheEvents(since: before)
    }

    @Test func anInterruptionWhilePausedChangesNothing() async throws {
        let p = await ScriptedPlayer(["a"])
        _ = await p.commands.playCommand.perform()
        _ = await p.commands.pauseCommand.perform()
        let before = p.engine.calls.count
        p.engine.emit(.interruption(.began))
        p.engine.emit(.interruption(.ended))
        try await p.expectNoPlayAfterTheEvents(since: before)
    }

    @Test func previousRestartsTheItemPastThreeSeconds() async throws {
        let p = await ScriptedPlayer(["a", "b"])
        _ = await p.commands.nextTrackCommand.perform()
        _ = await p.commands.playCommand.perform()
        _ = await p.commands.changePlaybackPositionCommand.perform(
            ChangePlaybackPositionCommandEvent(positionTime: .seconds(10)))
        _ = await p.commands.previousTrackCommand.perform()
        #expect(p.current == "b")
        #expect(p.engine.calls.last == "seek 0.0 seconds")
        _ = await p.commands.previousTrackCommand.perform()
        #expect(p.current == "a")
        #expect(p.state == .playing)
    }

    @Test func stopThenPlayAtOnceAlwaysPlays() async throws {
        let p = await ScriptedPlayer(["a"])
        for _ in 0..<20 {
            async let stopped = p.commands.stopCommand.perform()
            async let played = p.commands.playCommand.perform()
            let statuses = await (stopped, played)
            #expect(statuses.0 == .success)
            #expect(statuses.1 == .success)
        }
        // Both orders are possible for a concurrent pair; a sequenced play after a stop always plays.
        _ = await p.commands.stopCommand.perform()
        let status = await p.commands.playCommand.perform()
        #expect(status == .success)
        #expect(p.state == .playing)
    }

    @Test func aSnapshotRestoresQueueModesPositionAndVolumePaused() async throws {
        let p = await ScriptedPlayer(["a", "b", "c"])
        _ = await p.commands.nextTrackCommand.perform()
        _ = await p.commands.changeShuffleModeCommand.perform(ChangeShuffleModeCommandEvent(shuffleType: .items))
        _ = await p.commands.changeRepeatModeCommand.perform(ChangeRepeatModeCommandEvent(repeatType: .all))
        _ = await p.commands.changeVolumeCommand.perform(ChangeVolumeCommandEvent(volume: 0.25))
        _ = await p.commands.changePlaybackPositionCommand.perform(
            ChangePlaybackPositionCommandEvent(positionTime: .seconds(12)))
        let snapshot = await p.player.snapshot
        let data = try JSONEncoder().encode(snapshot)
        let decoded = try JSONDecoder().decode(PlayerSnapshot.self, from: data)

        let q = await ScriptedPlayer([])
        await q.player.restore(decoded, items: queueItems(["a", "b", "c"]))
        #expect(q.current == "b")
        #expect(q.state == .paused)
        #expect(q.nowPlaying.nowPlayingInfo?.elapsedPlaybackTime == .seconds(12))
        #expect(q.nowPlaying.volume == 0.25)
        #expect(q.commands.changeShuffleModeCommand.currentShuffleType == .items)
        #expect(q.commands.changeRepeatModeCommand.currentRepeatType == .all)
        #expect(q.nowPlaying.playbackQueue.map(\.identifier) == p.nowPlaying.playbackQueue.map(\.identifier))
        #expect(q.engine.calls.isEmpty, "restoring loads nothing until something plays")
        _ = await q.commands.playCommand.perform()
        #expect(q.engine.calls == ["load b.ogg", "seek 12.0 seconds", "play"])
    }

    /// Snapshots taken at each track change share the queue's entries until the queue changes:
    /// a saver compares and keeps one array, not a copy per change. An edit shows at once.
    /// A queue of catalogued entries holds keys: the catalog is asked only for what is played
    /// or shown (the current entry and the window), and asked again after a refresh; a saved
    /// entry keeps no URL, and a second copy is found by its first one's key.
    @Test func catalogedEntriesAreDescribedOnlyWhenPlayedOrShown() async throws {
        let catalog = CountingCatalog()
        let p = await ScriptedPlayer([])
        let keys = (0..<10_000).map { "t\($0)" }
        await p.player.replaceQueue(with: keys.map { QueueItem(identifier: $0, catalog: catalog) }, play: false)
        let shown = QueuePlayer.Configuration().shownQueueWindow
        #expect(p.nowPlaying.playbackQueue.count == shown.after + 1)
        #expect(p.nowPlaying.playbackQueue.first?.title == "Title of t0")
        #expect(catalog.asked.count <= shown.before + shown.after + 1, "asked for \(catalog.asked.count) of 10,000")

        #expect(await p.commands.playCommand.perform() == .success)
        #expect(p.engine.calls.first == "load t0.ogg")
        #expect(await p.commands.playItemInQueueCommand.perform(PlayItemInQueueCommandEvent(identifier: "t9000")) == .success)
        #expect(p.current == "t9000")
        #expect(p.nowPlaying.nowPlayingInfo?.title == "Title of t9000")
        #expect(catalog.asked.count < 200, "asked for \(catalog.asked.count) of 10,000")

        catalog.prefix = "Retagged "
        await p.player.refreshItemDescriptions()
        #expect(p.nowPlaying.nowPlayingInfo?.title == "Retagged t9000")
        #expect(p.nowPlaying.nowPlayingInfo?.playbackState == .playing)
        #expect(p.nowPlaying.playbackQueue.allSatisfy { $0.title?.hasPrefix("Retagged ") == true })

        let snapshot = await p.player.snapshot
        #expect(snapshot.addedOrder.count == 10_000)
        #expect(snapshot.addedOrder.allSatisfy { $0.url == nil })

        // A second copy is a new identifier for the same key; a key the catalog lost shows its file name.
        await p.player.replaceQueue(
            with: [QueueItem(identifier: "t1", catalog: catalog), QueueItem(identifier: "t1", catalog: catalog),
                   QueueItem(identifier: "gone", catalog: catalog)], play: false)
        #expect(p.nowPlaying.playbackQueue.map(\.identifier) == ["t1", "t1#2", "gone"])
        #expect(p.nowPlaying.playbackQueue.map(\.title) == ["Retagged t1", "Retagged t1", "gone"])
        #expect((await p.player.items).map(\.url.lastPathComponent) == ["t1.ogg", "t1.ogg", "gone.ogg"])
    }

    @Test func snapshotsShareTheQueueUntilItChanges() async throws {
        let p = await ScriptedPlayer(["a", "b", "c"])
        func buffer(_ snapshot: PlayerSnapshot) -> UnsafeRawPointer? {
            snapshot.addedOrder.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        }
        let first = await p.player.snapshot
        _ = await p.commands.nextTrackCommand.perform()
        let afterNext = await p.player.snapshot
        #expect(afterNext.currentIdentifier == "b")
        #expect(buffer(afterNext) == buffer(first))

        _ = await p.commands.addItemToQueueCommand.perform(
            AddItemToQueueCommandEvent(url: URL(fileURLWithPath: "/music/d.ogg"), afterIdentifier: "c", playsImmediately: false))
        let afterAdd = await p.player.snapshot
        #expect(afterAdd.addedOrder.map(\.identifier) == ["a", "b", "c", "d.ogg"])
        #expect(afterAdd.playOrder == [0, 1, 2, 3])
        _ = await p.commands.changeShuffleModeCommand.perform(ChangeShuffleModeCommandEvent(shuffleType: .items))
        let shuffled = await p.player.snapshot
        #expect(shuffled.playOrder.first == 1 && Set(shuffled.playOrder) == [0, 1, 2, 3])

        // A restored queue is its own: its snapshot is built from it, not from the one before.
        await p.player.restore(afterNext, items: queueItems(["a", "b", "c"]))
        #expect(await p.player.snapshot.addedOrder.map(\.identifier) == ["a", "b", "c"])
    }

    /// What a restart resumes is told at every jump, even while playing on, and at each
    /// checkpoint while playing; nothing wakes up while paused.
    @Test(.timeLimit(.minutes(1))) func observersHearEveryJumpAndACheckpointWhilePlayingOnly() async throws {
        var configuration = QueuePlayer.Configuration()
        configuration.positionCheckpointInterval = .milliseconds(100)
        let p = await ScriptedPlayer(["a", "b", "c"], configuration: configuration)
        let (snapshots, continuation) = AsyncStream.makeStream(of: PlayerSnapshot.self)
        let observation = await p.player.observeChanges { continuation.yield($0) }
        defer { observation.cancel() }
        var heard = snapshots.makeAsyncIterator()

        _ = await p.commands.playCommand.perform()
        #expect(await heard.next()?.currentIdentifier == "a")
        _ = await p.commands.nextTrackCommand.perform()
        var next = await heard.next()
        while next?.currentIdentifier == "a" { next = await heard.next() }
        #expect(next?.currentIdentifier == "b", "a track change while playing is told")
        _ = await p.commands.changePlaybackPositionCommand.perform(
            ChangePlaybackPositionCommandEvent(positionTime: .seconds(42)))
        var seeked = await heard.next()
        while let snapshot = seeked, snapshot.positionMilliseconds < 42_000 { seeked = await heard.next() }
        #expect(seeked?.positionMilliseconds ?? 0 >= 42_000, "a seek while playing is told")
        // Checkpoints follow while playing, with the position advancing.
        let first = await heard.next()
        let second = await heard.next()
        #expect((second?.positionMilliseconds ?? 0) > (first?.positionMilliseconds ?? .max))

        _ = await p.commands.pauseCommand.perform()
        var paused = await heard.next()
        while paused != nil, await p.player.playbackState != .paused { paused = await heard.next() }
        // Paused: ten checkpoint intervals pass with nothing to tell.
        let quiet = Task {
            try await Task.sleep(for: .seconds(1))
            continuation.finish()
        }
        var afterPause = 0
        while await heard.next() != nil { afterPause += 1 }
        _ = try await quiet.value
        #expect(afterPause <= 1, "\(afterPause) checkpoints while paused")
    }

    /// Every entry costs memory and any client may add one: past its maximum the queue takes no more.
    @Test func aFullQueueRefusesMoreEntriesAndAReplacementKeepsTheFirst() async throws {
        var configuration = QueuePlayer.Configuration()
        configuration.maximumQueueLength = 3
        let p = await ScriptedPlayer(["a", "b", "c", "d", "e"], configuration: configuration)
        #expect(p.nowPlaying.playbackQueue.map(\.identifier) == ["a", "b", "c"])
        let url = URL(fileURLWithPath: "/x/new.ogg")
        #expect(
            await p.commands.openURLCommand.perform(OpenURLCommandEvent(url: url))
                == .notPlayable(reason: "the queue is full (3 entries)"))
        #expect(
            await p.commands.addItemToQueueCommand.perform(
                AddItemToQueueCommandEvent(url: url, afterIdentifier: nil, playsImmediately: false))
                == .notPlayable(reason: "the queue is full (3 entries)"))
        #expect(p.nowPlaying.playbackQueue.map(\.identifier) == ["a", "b", "c"])
        _ = await p.commands.removeItemFromQueueCommand.perform(RemoveItemFromQueueCommandEvent(identifier: "b"))
        #expect(await p.commands.openURLCommand.perform(OpenURLCommandEvent(url: url)) == .success)
    }

    @Test func openingAURLPlaysItAfterTheCurrentItem() async throws {
        let p = await ScriptedPlayer(["a", "b"])
        let status = await p.commands.openURLCommand.perform(OpenURLCommandEvent(url: URL(fileURLWithPath: "/x/new.ogg")))
        #expect(status == .success)
        #expect(p.current == "new.ogg")
        #expect(p.nowPlaying.playbackQueue.map(\.identifier) == ["a", "new.ogg", "b"])
    }
}
