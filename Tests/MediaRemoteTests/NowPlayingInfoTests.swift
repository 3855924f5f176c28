#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MediaRemote
import Testing

@Suite("NowPlayingInfo")
struct NowPlayingInfoTests {
    let url = URL(string: "file:///music/song.flac")!

    @Test func effectiveIdentifierIsTheIdentifierElseTheAssetURL() {
        #expect(NowPlayingInfo(identifier: "track-42", title: "Song", assetURL: url).effectiveIdentifier == "track-42")
        #expect(NowPlayingInfo(title: "Song", artists: ["A"], assetURL: url).effectiveIdentifier == url.absoluteString)
    }

    @Test func effectiveIdentifierFallsBackToTitleArtistsAndAlbum() {
        let song = NowPlayingInfo(title: "Song", artists: ["A", "B"], albumTitle: "Album")
        let same = NowPlayingInfo(title: "Song", artists: ["A", "B"], albumTitle: "Album", elapsedPlaybackTime: .seconds(9))
        #expect(song.effectiveIdentifier == same.effectiveIdentifier, "stable for the same item")
        let others = [
            NowPlayingInfo(title: "Other", artists: ["A", "B"], albumTitle: "Album"),
            NowPlayingInfo(title: "Song", artists: ["A"], albumTitle: "Album"),
            NowPlayingInfo(title: "Song", artists: ["A", "B"], albumTitle: "Live"),
        ]
        for other in others { #expect(other.effectiveIdentifier != song.effectiveIdentifier) }
    }

    @Test func nominalRateIsThePlayingRateOrTheDefaultRateWhileZero() {
        #expect(NowPlayingInfo(playbackState: .playing, playbackRate: 1.5).nominalRate == 1.5)
        #expect(NowPlayingInfo(playbackState: .paused, playbackRate: 0, defaultPlaybackRate: 1.25).nominalRate == 1.25)
        #expect(NowPlayingInfo(playbackRate: 0).nominalRate == 1)
    }

    @Test(arguments: [(1.0, 15.0), (2.0, 20.0), (0.5, 12.5)])
    func playingPositionAdvancesByTheRate(rate: Double, expectedSeconds: Double) {
        let info = NowPlayingInfo(playbackState: .playing, elapsedPlaybackTime: .seconds(10), playbackRate: rate)
        #expect(info.extrapolatedPosition(after: .seconds(5)) == .seconds(expectedSeconds))
    }

    @Test(arguments: [PlaybackState.paused, .stopped, .interrupted])
    func positionDoesNotAdvanceUnlessPlaying(state: PlaybackState) {
        let info = NowPlayingInfo(playbackState: state, elapsedPlaybackTime: .seconds(10), playbackRate: 1)
        #expect(info.extrapolatedPosition(after: .seconds(5)) == .seconds(10))
    }

    @Test func positionIsClampedToTheDuration() {
        let info = NowPlayingInfo(
            playbackDuration: .seconds(180), playbackState: .playing, elapsedPlaybackTime: .seconds(170))
        #expect(info.extrapolatedPosition(after: .seconds(5)) == .seconds(175))
        #expect(info.extrapolatedPosition(after: .seconds(30)) == .seconds(180))
    }

    @Test func liveStreamPositionIsNotClamped() {
        let info = NowPlayingInfo(
            playbackDuration: .seconds(180), isLiveStream: true, playbackState: .playing,
            elapsedPlaybackTime: .seconds(170))
        #expect(info.extrapolatedPosition(after: .seconds(30)) == .seconds(200))
    }
}
