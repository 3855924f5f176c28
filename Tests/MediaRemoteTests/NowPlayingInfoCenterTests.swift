import AsyncSupport
import MediaRemote
import Testing

@Suite("NowPlayingInfoCenter")
struct NowPlayingInfoCenterTests {
    let center = NowPlayingInfoCenter()
    let updates = Recorder<NowPlayingUpdate>()
    let t0 = ContinuousClock.now
    let observation: Observation

    init() { observation = center.observe { [updates] in updates.record($0) } }

    static func song(
        _ id: String = "song", at seconds: Double, _ state: PlaybackState = .playing, rate: Double = 1,
        live: Bool = false
    ) -> NowPlayingInfo {
        NowPlayingInfo(
            identifier: id, playbackDuration: .seconds(180), isLiveStream: live, playbackState: state,
            elapsedPlaybackTime: .seconds(seconds), playbackRate: rate)
    }

    /// Publishes `previous` at `t0`, then `next` `after` later, and returns what observers heard of `next`.
    func heard(from previous: NowPlayingInfo?, to next: NowPlayingInfo?, after: Duration) -> NowPlayingUpdate? {
        center.publish(previous, at: t0)
        center.publish(next, at: t0 + after)
        return updates.values.last
    }

    @Test func positionIsExtrapolatedFromThePublication() {
        #expect(center.position(at: t0) == nil, "nothing loaded")
        center.publish(Self.song(at: 10), at: t0)
        #expect(center.publishedAt == t0)
        #expect(center.position(at: t0) == .seconds(10))
        #expect(center.position(at: t0 + .seconds(4)) == .seconds(14))
        #expect(center.position(at: t0 - .seconds(4)) == .seconds(10), "never extrapolates backwards")
        #expect(center.position(at: t0 + .seconds(600)) == .seconds(180), "stays within the item")
        center.publish(Self.song(at: 10, rate: 2), at: t0)
        #expect(center.position(at: t0 + .seconds(4)) == .seconds(18))
        center.publish(Self.song(at: 10, .paused), at: t0)
        #expect(center.position(at: t0 + .seconds(4)) == .seconds(10))
        center.publish(nil, at: t0)
        #expect(center.position(at: t0 + .seconds(4)) == nil, "unloaded")
    }

    @Test func observersGetPreviousAndCurrentValues() throws {
        let first = Self.song("a", at: 0)
        let second = Self.song("b", at: 0)
        center.publish(first, at: t0)
        center.publish(second, at: t0 + .seconds(1))
        center.nowPlayingInfo = second  // an equal value still tells observers
        try #require(updates.count == 3)
        let (load, change, repeated) = (updates.values[0], updates.values[1], updates.values[2])
        #expect(load.previous == nil && load.current == first && load.publishedAt == t0)
        #expect(load.isNewItem)
        #expect(change.previous == first && change.current == second && change.publishedAt == t0 + .seconds(1))
        #expect(change.isNewItem)
        #expect(repeated.previous == second && repeated.current == second)
        #expect(!repeated.isNewItem)
        #expect(center.nowPlayingInfo == second)
    }

    @Test(arguments: [60.0, 5.0, 12.3, 11.7])
    func aSeekOfTheSameItemBeyondTheToleranceIsAJump(to seconds: Double) throws {
        let update = try #require(heard(from: Self.song(at: 10), to: Self.song(at: seconds), after: .seconds(2)))
        #expect(update.isPositionJump)
        #expect(!update.isNewItem)
    }

    @Test(arguments: [12.0, 12.2, 11.8])
    func jitterWithinTheToleranceIsNotAJump(seconds: Double) throws {
        let update = try #require(heard(from: Self.song(at: 10), to: Self.song(at: seconds), after: .seconds(2)))
        #expect(!update.isPositionJump)
    }

    @Test func jumpDetectionFollowsTheRateAndTheState() throws {
        let doubleSpeed = try #require(
            heard(from: Self.song(at: 10, rate: 2), to: Self.song(at: 16, rate: 2), after: .seconds(3)))
        #expect(!doubleSpeed.isPositionJump, "10 s + 3 s at rate 2 is where it should be")
        let slowedDown = try #require(
            heard(from: Self.song(at: 10, rate: 2), to: Self.song(at: 13, rate: 2), after: .seconds(3)))
        #expect(slowedDown.isPositionJump)
        let paused = try #require(
            heard(from: Self.song(at: 10, .paused), to: Self.song(at: 10, .playing), after: .seconds(5)))
        #expect(!paused.isPositionJump)
    }

    @Test func theSameItemRestartingIsAJump() throws {
        let atEnd = try #require(heard(from: Self.song(at: 179.9), to: Self.song(at: 0), after: .seconds(1)))
        #expect(atEnd.isPositionJump && !atEnd.isNewItem)
        let midway = try #require(heard(from: Self.song(at: 30), to: Self.song(at: 0), after: .milliseconds(100)))
        #expect(midway.isPositionJump)
    }

    @Test func anotherItemTheFirstLoadOrALiveStreamIsNeverAJump() throws {
        let other = try #require(heard(from: Self.song("a", at: 10), to: Self.song("b", at: 90), after: .seconds(1)))
        #expect(!other.isPositionJump && other.isNewItem)
        let firstLoad = try #require(heard(from: nil, to: Self.song(at: 90), after: .seconds(1)))
        #expect(!firstLoad.isPositionJump && firstLoad.isNewItem)
        let live = try #require(
            heard(from: Self.song(at: 10, live: true), to: Self.song(at: 90, live: true), after: .seconds(1)))
        #expect(!live.isPositionJump && !live.isNewItem)
        let unloaded = try #require(heard(from: Self.song(at: 10), to: nil, after: .seconds(1)))
        #expect(!unloaded.isPositionJump && unloaded.isNewItem)
    }

    @Test func volumeChangesNotifyObserversWithTheNewVolume() throws {
        let info = Self.song(at: 10)
        center.publish(info, at: t0)
        #expect(center.volume == 1)
        center.volume = 0.5
        #expect(center.volume == 0.5)
        try #require(updates.count == 2)
        let update = updates.values[1]
        #expect(update.volume == 0.5)
        #expect(update.previous == info && update.current == info && update.publishedAt == t0)
        #expect(!update.isPositionJump && !update.isNewItem)
        center.volume = 0.5
        #expect(updates.count == 2, "an equal volume does not notify")
    }

    @Test(arguments: [-0.5, -.infinity, .nan])
    func negativeOrNaNVolumeBecomesZero(volume: Double) {
        center.volume = volume
        #expect(center.volume == 0)
        #expect(updates.values.map(\.volume) == [0])
        center.volume = volume
        #expect(updates.count == 1, "still 0: no change to announce")
    }

    @Test func cancelStopsObservation() {
        let heard = Recorder<NowPlayingUpdate>()
        let observation = center.observe { heard.record($0) }
        center.publish(Self.song(at: 0), at: t0)
        #expect(heard.count == 1)
        observation.cancel()
        center.publish(Self.song(at: 60), at: t0 + .seconds(1))
        center.volume = 0.2
        #expect(heard.count == 1)
        #expect(updates.count == 3, "other observers keep observing")
    }
}
