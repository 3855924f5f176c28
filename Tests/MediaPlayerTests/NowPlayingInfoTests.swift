import DBus
import DBusTestSupport
import Dispatch
import Foundation
@testable import MediaPlayer
import MediaRemote
import ProcessTestSupport
import Synchronization
import Testing

extension MediaPlayerTests {
    /// `MPNowPlayingInfoCenter` as remotes see it: each key in its MPRIS field, the status the
    /// rate (or `playbackState`) implies, the position extrapolated at the rate, hostile values
    /// ignored. Each test leaves the centre empty and its `playbackState` unknown.
    @Suite(.timeLimit(.minutes(1))) struct NowPlayingInfoTests {
        @Test func everyKeyHasApplesName() {
            let keys: [(String, String)] = [
                (MPMediaItemPropertyTitle, "title"), (MPMediaItemPropertyArtist, "artist"),
                (MPMediaItemPropertyAlbumTitle, "albumTitle"), (MPMediaItemPropertyAlbumArtist, "albumArtist"),
                (MPMediaItemPropertyComposer, "composer"), (MPMediaItemPropertyGenre, "genre"),
                (MPMediaItemPropertyAlbumTrackCount, "albumTrackCount"),
                (MPMediaItemPropertyAlbumTrackNumber, "albumTrackNumber"),
                (MPMediaItemPropertyDiscCount, "discCount"), (MPMediaItemPropertyDiscNumber, "discNumber"),
                (MPMediaItemPropertyArtwork, "artwork"), (MPMediaItemPropertyPersistentID, "persistentID"),
                (MPMediaItemPropertyPlaybackDuration, "playbackDuration"),
                (MPMediaItemPropertyReleaseDate, "releaseDate"), (MPMediaItemPropertyAssetURL, "assetURL"),
                (MPMediaItemPropertyMediaType, "mediaType"), (MPMediaItemPropertyPodcastTitle, "podcastTitle"),
                (MPMediaItemPropertyIsExplicit, "isExplicit"), (MPMediaItemPropertyRating, "rating"),
                (MPMediaItemPropertyLyrics, "lyrics"), (MPMediaItemPropertyComments, "comments"),
                (MPMediaItemPropertyAlbumPersistentID, "albumPID"), (MPMediaItemPropertyArtistPersistentID, "artistPID"),
                (MPMediaItemPropertyAlbumArtistPersistentID, "albumArtistPID"),
                (MPMediaItemPropertyGenrePersistentID, "genrePID"), (MPMediaItemPropertyComposerPersistentID, "composerPID"),
                (MPMediaItemPropertyPodcastPersistentID, "podcastPID"), (MPMediaItemPropertyIsCompilation, "isCompilation"),
                (MPMediaItemPropertyBeatsPerMinute, "beatsPerMinute"), (MPMediaItemPropertyIsCloudItem, "isCloudItem"),
                (MPMediaItemPropertyPlayCount, "playCount"), (MPMediaItemPropertySkipCount, "skipCount"),
                (MPMediaItemPropertyLastPlayedDate, "lastPlayedDate"), (MPMediaItemPropertyUserGrouping, "userGrouping"),
                (MPMediaItemPropertyBookmarkTime, "bookmarkTime"),
            ]
            for (key, value) in keys { #expect(key == value) }
            let ownNames: [(String, String)] = [
                (MPNowPlayingInfoPropertyElapsedPlaybackTime, "ElapsedPlaybackTime"),
                (MPNowPlayingInfoPropertyPlaybackRate, "PlaybackRate"),
                (MPNowPlayingInfoPropertyDefaultPlaybackRate, "DefaultPlaybackRate"),
                (MPNowPlayingInfoPropertyPlaybackQueueIndex, "PlaybackQueueIndex"),
                (MPNowPlayingInfoPropertyPlaybackQueueCount, "PlaybackQueueCount"),
                (MPNowPlayingInfoPropertyChapterNumber, "ChapterNumber"),
                (MPNowPlayingInfoPropertyChapterCount, "ChapterCount"),
                (MPNowPlayingInfoPropertyIsLiveStream, "IsLiveStream"),
                (MPNowPlayingInfoPropertyPlaybackProgress, "PlaybackProgress"),
                (MPNowPlayingInfoPropertyMediaType, "MediaType"), (MPNowPlayingInfoPropertyAssetURL, "AssetURL"),
                (MPNowPlayingInfoPropertyCurrentPlaybackDate, "CurrentPlaybackDate"),
                (MPNowPlayingInfoPropertyExternalContentIdentifier, "ExternalContentIdentifier"),
                (MPNowPlayingInfoPropertyExternalUserProfileIdentifier, "ExternalUserProfileIdentifier"),
                (MPNowPlayingInfoPropertyServiceIdentifier, "ServiceIdentifier"),
                (MPNowPlayingInfoPropertyAvailableLanguageOptions, "AvailableLanguageOptions"),
                (MPNowPlayingInfoPropertyCurrentLanguageOptions, "CurrentLanguageOptions"),
            ]
            for (key, name) in ownNames { #expect(key == "MPNowPlayingInfoProperty" + name) }
            #expect(MPNowPlayingInfoCollectionIdentifier == "MPNowPlayingInfoCollectionIdentifier")
            #expect(MPNowPlayingPlaybackState(rawValue: 4) == .interrupted)
            #expect(MPNowPlayingPlaybackState.unknown.rawValue == 0 && MPNowPlayingPlaybackState.stopped.rawValue == 3)
            #expect(MPNowPlayingInfoMediaType(rawValue: 2) == .video && MPNowPlayingInfoMediaType.none.rawValue == 0)
            #expect(MPMediaType.podcast.rawValue == 2 && MPMediaType.audioBook.rawValue == 4)
            #expect(MPMediaType.anyAudio.contains([.music, .podcast, .audioBook, .audioITunesU]))
            #expect(MPMediaType.movie.rawValue == 256 && MPMediaType.anyVideo.rawValue == 0xFF00)
        }

        @Test func theCentreAlonePublishesThePlayer() async throws {
            let bus = try await MediaPlayerBus.start()
            let center = MPNowPlayingInfoCenter.default()
            // Nothing else asks for the publication: the name appears on its own (first in the
            // process when this test runs alone).
            let deadline = ContinuousClock.now + .seconds(10)
            var owned = false
            while !owned && ContinuousClock.now < deadline {
                let reply = try await bus.run(
                    "gdbus", ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                              "--method", "org.freedesktop.DBus.NameHasOwner", MediaPlayerBus.mprisName])
                owned = reply.stdout.contains("true")
                if !owned { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(owned)
            let remote = NowPlayingRemote(bus: bus)
            #expect(center === MPNowPlayingInfoCenter.default())
            #expect(center.playbackState == .unknown)
            #expect(center.nowPlayingInfo == nil)
            #expect(try await LinuxMediaPlayer.playerBusName().description == MediaPlayerBus.mprisName)
            let identity = try await remote.gdbus(
                "org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2", "Identity")
            #expect(identity == "(<'MediaPlayer Tests'>,)")
            #expect(try await remote.playerctl("status") == "Stopped")
        }

        @Test func everyKeyShowsInItsMPRISField() async throws {
            let remote = try await NowPlayingRemote.start()
            let center = MPNowPlayingInfoCenter.default()
            defer { center.nowPlayingInfo = nil }
            let cover = NowPlayingRemote.png(width: 2, height: 3)
            let handlerRanOnMain = Mutex<[Bool]>([])
            let artwork = MPMediaItemArtwork(boundsSize: CGSize(width: 2, height: 3)) { _ in
                handlerRanOnMain.withLock { $0.append(NowPlayingRemote.isOnMainQueue) }
                return ArtworkImage(data: cover)!
            }
            let info: [String: Any] = [
                MPMediaItemPropertyTitle: "Blue in Green",
                MPMediaItemPropertyArtist: "Miles Davis",
                MPMediaItemPropertyAlbumTitle: "Kind of Blue",
                MPMediaItemPropertyAlbumArtist: "Miles Davis Sextet",
                MPMediaItemPropertyComposer: "Bill Evans",
                MPMediaItemPropertyGenre: "Jazz",
                MPMediaItemPropertyAlbumTrackNumber: 3,
                MPMediaItemPropertyAlbumTrackCount: 5,
                MPMediaItemPropertyDiscNumber: 1,
                MPMediaItemPropertyDiscCount: 2,
                MPMediaItemPropertyPlaybackDuration: 337.5,
                MPMediaItemPropertyArtwork: artwork,
                MPMediaItemPropertyReleaseDate: Date(timeIntervalSince1970: 1_000_000_000),
                MPMediaItemPropertyAssetURL: URL(fileURLWithPath: "/music/Kind of Blue/03.flac"),
                MPNowPlayingInfoPropertyExternalContentIdentifier: "track-3",
                MPNowPlayingInfoPropertyElapsedPlaybackTime: 12.0,
                MPNowPlayingInfoPropertyPlaybackRate: 0.0,
                MPNowPlayingInfoPropertyPlaybackQueueIndex: 4,
                MPNowPlayingInfoPropertyPlaybackQueueCount: 9,
            ]
            center.nowPlayingInfo = info

            let metadata = try await remote.metadata()
            #expect(metadata["mpris:trackid"] == "o /org/mprisbridge/Track/track_2d3")
            #expect(metadata["xesam:title"] == "s Blue in Green")
            #expect(metadata["xesam:artist"] == "as [Miles Davis]")
            #expect(metadata["xesam:album"] == "s Kind of Blue")
            #expect(metadata["xesam:albumArtist"] == "as [Miles Davis Sextet]")
            #expect(metadata["xesam:composer"] == "as [Bill Evans]")
            #expect(metadata["xesam:genre"] == "as [Jazz]")
            #expect(metadata["xesam:trackNumber"] == "i 3")
            #expect(metadata["xesam:discNumber"] == "i 1")
            #expect(metadata["mpris:length"] == "x 337500000")
            #expect(metadata["xesam:contentCreated"] == "s 2001-09-09T01:46:40Z")
            #expect(metadata["xesam:url"] == "s file:///music/Kind%20of%20Blue/03.flac")
            #expect(metadata.count == 13)

            // The artwork is a file of the image's very bytes, made on the main queue.
            let artURL = try #require(metadata["mpris:artUrl"].flatMap { URL(string: String($0.dropFirst(2))) })
            #expect(artURL.isFileURL)
            #expect(FileManager.default.contents(atPath: artURL.path) == cover)
            #expect(handlerRanOnMain.withLock { $0 } == [true])
            // playerctl prints metadata only for a player that can play.
            try await NowPlayingRemote.withPlayCommand {
                let shownArtURL = try await remote.playerctl("metadata", "mpris:artUrl")
                #expect(shownArtURL == artURL.absoluteString)
                let shown = try await remote.playerctl("metadata", "--format", "{{artist}} - {{title}}")
                #expect(shown == "Miles Davis - Blue in Green")
            }
            #expect(try await remote.playerctl("position") == "12.000000")

            // What MPRIS has no field for is in MediaRemote's value.
            let published = try #require(MediaPlayerRuntime.shared.nowPlaying.nowPlayingInfo)
            #expect(published.trackCount == 5 && published.discCount == 2)
            #expect(published.playbackQueueIndex == 4 && published.playbackQueueCount == 9)

            // The getter returns what was set.
            let stored = try #require(center.nowPlayingInfo)
            #expect(Set(stored.keys) == Set(info.keys))
            #expect(stored[MPMediaItemPropertyTitle] as? String == "Blue in Green")
            #expect(stored[MPMediaItemPropertyArtwork] as? MPMediaItemArtwork === artwork)

            // Nothing playing: no metadata, stopped.
            center.nowPlayingInfo = nil
            #expect(try await remote.metadata() == ["mpris:trackid": "o /org/mpris/MediaPlayer2/TrackList/NoTrack"])
            #expect(try await remote.playerctl("status") == "Stopped")
        }

        @Test func aHandlerOnTheMainQueueMaySetNowPlayingInfoWithArtwork() async throws {
            let remote = try await NowPlayingRemote.start()
            let center = MPNowPlayingInfoCenter.default()
            defer { center.nowPlayingInfo = nil }
            let cover = NowPlayingRemote.png(width: 4, height: 4)
            // What a command handler does on iOS: on the main queue, publish the new item. The
            // artwork's handler runs there too, at once, not waiting for the queue it is on.
            let ranOnMainQueue = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
                DispatchQueue.main.async {
                    var handlerOnMainQueue = false
                    let artwork = MPMediaItemArtwork(boundsSize: CGSize(width: 4, height: 4)) { _ in
                        // The centre is free while the handler runs: reading it does not wait.
                        handlerOnMainQueue =
                            NowPlayingRemote.isOnMainQueue
                            && MPNowPlayingInfoCenter.default().nowPlayingInfo?[MPMediaItemPropertyTitle] as? String
                                == "From a handler"
                        return ArtworkImage(data: cover)!
                    }
                    MPNowPlayingInfoCenter.default().nowPlayingInfo = [
                        MPMediaItemPropertyTitle: "From a handler", MPMediaItemPropertyArtwork: artwork,
                    ]
                    done.resume(returning: handlerOnMainQueue)
                }
            }
            #expect(ranOnMainQueue)
            let artURL = try #require(try await remote.metadata()["mpris:artUrl"].flatMap { URL(string: String($0.dropFirst(2))) })
            #expect(FileManager.default.contents(atPath: artURL.path) == cover)
        }

        @Test func whenThreadsSetAtOnceTheLastValueSetIsShown() async throws {
            let remote = try await NowPlayingRemote.start()
            let center = MPNowPlayingInfoCenter.default()
            defer {
                center.nowPlayingInfo = nil
                center.playbackState = .unknown
            }
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        center.nowPlayingInfo = [
                            MPMediaItemPropertyTitle: "Track \(index)", MPNowPlayingInfoPropertyPlaybackRate: index % 2,
                        ]
                        if index.isMultiple(of: 3) { center.playbackState = index.isMultiple(of: 2) ? .paused : .unknown }
                    }
                }
            }
            let title = try #require(center.nowPlayingInfo?[MPMediaItemPropertyTitle] as? String)
            #expect(try await remote.metadata()["xesam:title"] == "s \(title)")
            let rate = try #require(center.nowPlayingInfo?[MPNowPlayingInfoPropertyPlaybackRate] as? Int)
            let expected = center.playbackState == .paused || rate == 0 ? "Paused" : "Playing"
            #expect(try await remote.playerctl("status") == expected)
        }

        @Test func theContentIdentifierOrElseThePersistentIDNamesTheTrack() async throws {
            let remote = try await NowPlayingRemote.start()
            let center = MPNowPlayingInfoCenter.default()
            defer { center.nowPlayingInfo = nil }
            let persistentID: UInt64 = 18_000_000_000_000_000_001  // above Int64.max, as iOS's are
            center.nowPlayingInfo = [MPMediaItemPropertyTitle: "A", MPMediaItemPropertyPersistentID: persistentID]
            #expect(try await remote.metadata()["mpris:trackid"] == "o /org/mprisbridge/Track/18000000000000000001")
            center.nowPlayingInfo = [
                MPMediaItemPropertyTitle: "A", MPMediaItemPropertyPersistentID: NSNumber(value: persistentID),
                MPNowPlayingInfoPropertyExternalContentIdentifier: "album/1 track/2",
            ]
            #expect(try await remote.metadata()["mpris:trackid"] == "o /org/mprisbridge/Track/album_2f1_20track_2f2")
            // Neither: MediaRemote's identifier of the asset URL.
            center.nowPlayingInfo = [
                MPMediaItemPropertyTitle: "A", MPNowPlayingInfoPropertyAssetURL: URL(string: "https://radio.example/a")!,
            ]
            let metadata = try await remote.metadata()
            #expect(metadata["mpris:trackid"]?.hasPrefix("o /org/mprisbridge/Track/https_3a_2f_2fradio") == true)
            #expect(metadata["xesam:url"] == "s https://radio.example/a")
        }

        @Test func theRateSaysPlayingOrPausedUnlessPlaybackStateIsSet() async throws {
            let remote = try await NowPlayingRemote.start()
            let center = MPNowPlayingInfoCenter.default()
            defer {
                center.nowPlayingInfo = nil
                center.playbackState = .unknown
            }
            let watcher = try await remote.watch()
            defer { watcher.kill() }
            var info: [String: Any] = [
                MPMediaItemPropertyTitle: "Episode 12", MPMediaItemPropertyPlaybackDuration: 3600.0,
                MPNowPlayingInfoPropertyElapsedPlaybackTime: 60.0, MPNowPlayingInfoPropertyPlaybackRate: 1.0,
            ]
            center.nowPlayingInfo = info
            #expect(try await remote.next(watcher).contains("PlaybackStatus=Playing"))
            #expect(try await remote.playerctl("status") == "Playing")
            let first = try await remote.position()
            let second = try await remote.position()
            #expect(first >= 60_000_000 && second > first)

            // Pausing with the elapsed time of 60 s is a jump back by the time the reads took: a
            // Seeked that may come, as it should, and that `change` passes over.
            info[MPNowPlayingInfoPropertyPlaybackRate] = 0.0
            center.nowPlayingInfo = info
            #expect(try await remote.change(watcher) == "changed PlaybackStatus=Paused")
            #expect(try await remote.playerctl("status") == "Paused")
            #expect(try await remote.position() == 60_000_000)
            #expect(try await remote.position() == 60_000_000)

            // An absent rate is 1, as Apple documents.
            info[MPNowPlayingInfoPropertyPlaybackRate] = nil
            info[MPNowPlayingInfoPropertyElapsedPlaybackTime] = 61.0
            center.nowPlayingInfo = info
            #expect(try await remote.change(watcher) == "changed PlaybackStatus=Playing")
            #expect(try await remote.next(watcher) == "seeked 61000000")
            center.nowPlayingInfo = nil
            #expect(try await remote.next(watcher).contains("PlaybackStatus=Stopped"))

            // playbackState, once said, wins over the rate; setting it alone republishes. (From
            // here on the position never advances, so no republication is a jump.)
            center.playbackState = .paused
            center.nowPlayingInfo = info
            #expect(try await remote.next(watcher).contains("PlaybackStatus=Paused"))
            #expect(try await remote.playerctl("status") == "Paused")
            center.playbackState = .stopped
            #expect(try await remote.next(watcher) == "changed PlaybackStatus=Stopped")
            #expect(try await remote.playerctl("status") == "Stopped")
            center.playbackState = .interrupted
            #expect(try await remote.next(watcher) == "changed PlaybackStatus=Paused")
            info[MPNowPlayingInfoPropertyPlaybackRate] = 0.0
            center.nowPlayingInfo = info
            center.playbackState = .playing
            #expect(try await remote.next(watcher) == "changed PlaybackStatus=Playing")
            center.playbackState = .unknown
            #expect(try await remote.next(watcher) == "changed PlaybackStatus=Paused")
            #expect(center.playbackState == .unknown)

            // No information at all is stopped, whatever the state says.
            center.playbackState = .playing
            #expect(try await remote.next(watcher) == "changed PlaybackStatus=Playing")
            center.nowPlayingInfo = nil
            #expect(try await remote.next(watcher).contains("PlaybackStatus=Stopped"))
            #expect(try await remote.playerctl("status") == "Stopped")
        }

        @Test func thePositionAdvancesAtTheRateAndAJumpIsSeeked() async throws {
            let remote = try await NowPlayingRemote.start()
            let center = MPNowPlayingInfoCenter.default()
            defer { center.nowPlayingInfo = nil }
            let watcher = try await remote.watch()
            defer { watcher.kill() }
            var info: [String: Any] = [
                MPMediaItemPropertyTitle: "Lecture 4", MPMediaItemPropertyPlaybackDuration: 5400.0,
                MPNowPlayingInfoPropertyElapsedPlaybackTime: 10.0, MPNowPlayingInfoPropertyPlaybackRate: 2.0,
            ]
            let clock = ContinuousClock()
            let beforeSet = clock.now
            center.nowPlayingInfo = info
            let afterSet = clock.now
            #expect(try await remote.next(watcher).contains("PlaybackStatus=Playing,Rate=2.0"))

            // Each read happened somewhere between the instants taken around it: the position
            // must lie within what rate 2 makes of those bounds (1 ms for the µs rounding).
            let (firstStart, first, firstEnd) = (clock.now, try await remote.position(), clock.now)
            try await Task.sleep(for: .milliseconds(400))
            let (secondStart, second, secondEnd) = (clock.now, try await remote.position(), clock.now)
            func microseconds(_ duration: Duration) -> Int64 {
                duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
            }
            #expect(first >= 10_000_000 + 2 * microseconds(firstStart - afterSet) - 1_000)
            #expect(first <= 10_000_000 + 2 * microseconds(firstEnd - beforeSet) + 1_000)
            #expect(second - first >= 2 * microseconds(secondStart - firstEnd) - 1_000)
            #expect(second - first <= 2 * microseconds(secondEnd - firstStart) + 1_000)

            // A new elapsed time far from the extrapolated one is a seek.
            info[MPNowPlayingInfoPropertyElapsedPlaybackTime] = 100.0
            info[MPNowPlayingInfoPropertyPlaybackRate] = 0.0
            center.nowPlayingInfo = info
            let paused = try await remote.next(watcher)
            #expect(paused == "changed MaximumRate=1.0,PlaybackStatus=Paused,Rate=1.0")
            let seeked = try await remote.next(watcher)
            #expect(seeked == "seeked 100000000")
            // The same position again is none; nor is a new item (the fence: its line comes next).
            center.nowPlayingInfo = info
            info[MPMediaItemPropertyTitle] = "Lecture 5"
            info[MPNowPlayingInfoPropertyElapsedPlaybackTime] = 0.0
            center.nowPlayingInfo = info
            #expect(try await remote.next(watcher).hasPrefix("changed Metadata=/org/mprisbridge/Track/"))
            #expect(try await remote.position() == 0)
        }

        @Test func whilePausedTheDefaultRateIsShown() async throws {
            let remote = try await NowPlayingRemote.start()
            let center = MPNowPlayingInfoCenter.default()
            defer { center.nowPlayingInfo = nil }
            center.nowPlayingInfo = [
                MPMediaItemPropertyTitle: "Audiobook", MPNowPlayingInfoPropertyPlaybackRate: 0.0,
                MPNowPlayingInfoPropertyDefaultPlaybackRate: 1.5,
            ]
            #expect(try await remote.playerctl("status") == "Paused")
            #expect(try await remote.playerProperty("Rate") == "(<1.5>,)")
            center.nowPlayingInfo = [
                MPMediaItemPropertyTitle: "Audiobook", MPNowPlayingInfoPropertyPlaybackRate: 1.25,
                MPNowPlayingInfoPropertyDefaultPlaybackRate: 1.5,
            ]
            #expect(try await remote.playerProperty("Rate") == "(<1.25>,)")
        }

        @Test func aLiveStreamHasNoLengthAndNoSeeks() async throws {
            let remote = try await NowPlayingRemote.start()
            let center = MPNowPlayingInfoCenter.default()
            defer { center.nowPlayingInfo = nil }
            let watcher = try await remote.watch()
            defer { watcher.kill() }
            var info: [String: Any] = [
                MPMediaItemPropertyTitle: "Radio Paradise", MPMediaItemPropertyPlaybackDuration: 300.0,
                MPNowPlayingInfoPropertyIsLiveStream: true, MPNowPlayingInfoPropertyElapsedPlaybackTime: 0.0,
                MPNowPlayingInfoPropertyPlaybackRate: 0.0,  // paused: the position holds, so only the live flag decides
            ]
            center.nowPlayingInfo = info
            _ = try await remote.next(watcher)
            #expect(try await remote.metadata()["mpris:length"] == nil)
            #expect(try await remote.playerProperty("CanSeek") == "(<false>,)")
            // A live stream's position moving is no seek; the fence (a new title) comes next.
            info[MPNowPlayingInfoPropertyElapsedPlaybackTime] = 500.0
            center.nowPlayingInfo = info
            info[MPNowPlayingInfoPropertyIsLiveStream] = NSNumber(value: false)
            center.nowPlayingInfo = info
            let fence = try await remote.next(watcher)
            #expect(fence.hasPrefix("changed Metadata=/org/mprisbridge/Track/Radio_20Paradise"))
            #expect(try await remote.metadata()["mpris:length"] == "x 300000000")
        }

        @Test func theNumberTypesAppsUseAreRead() async throws {
            let remote = try await NowPlayingRemote.start()
            let center = MPNowPlayingInfoCenter.default()
            defer { center.nowPlayingInfo = nil }
            let durations: [Any] = [
                200, 200.0, Float(200), NSNumber(value: 200), NSNumber(value: 200.0), UInt(200), UInt64(200), Int64(200),
                Int32(200), TimeInterval(200), CGFloat(200),
            ]
            let trackNumbers: [Any] = [7, NSNumber(value: 7), UInt(7), Int64(7), UInt64(7), 7.0, Float(7.9), UInt8(7)]
            for (index, duration) in durations.enumerated() {
                center.nowPlayingInfo = [
                    MPMediaItemPropertyTitle: "Types \(index)", MPMediaItemPropertyPlaybackDuration: duration,
                    MPMediaItemPropertyAlbumTrackNumber: trackNumbers[index % trackNumbers.count],
                    MPNowPlayingInfoPropertyElapsedPlaybackTime: index.isMultiple(of: 2) ? NSNumber(value: 5) : Float(5),
                    MPNowPlayingInfoPropertyPlaybackRate: index.isMultiple(of: 2) ? NSNumber(value: 0) : 0 as Int,
                ]
                let metadata = try await remote.metadata()
                #expect(metadata["mpris:length"] == "x 200000000", "duration \(type(of: duration))")
                #expect(metadata["xesam:trackNumber"] == "i 7", "track number \(type(of: trackNumbers[index % trackNumbers.count]))")
                #expect(try await remote.position() == 5_000_000)
                #expect(try await remote.playerctl("status") == "Paused")
            }
        }

        @Test func hostileValuesAreIgnoredNeverACrash() async throws {
            let remote = try await NowPlayingRemote.start()
            let center = MPNowPlayingInfoCenter.default()
            defer { center.nowPlayingInfo = nil }
            let hostile: [[String: Any]] = [
                [MPMediaItemPropertyPlaybackDuration: Double.nan, MPNowPlayingInfoPropertyPlaybackRate: Double.nan],
                [MPMediaItemPropertyPlaybackDuration: -1.0, MPNowPlayingInfoPropertyElapsedPlaybackTime: -30.0],
                [MPMediaItemPropertyPlaybackDuration: "337", MPMediaItemPropertyAlbumTrackNumber: "3"],
                [MPMediaItemPropertyPlaybackDuration: Double.infinity, MPNowPlayingInfoPropertyElapsedPlaybackTime: 1e300],
                [MPNowPlayingInfoPropertyPlaybackRate: 1e300, MPNowPlayingInfoPropertyElapsedPlaybackTime: 1e13],
                [MPNowPlayingInfoPropertyPlaybackRate: -2.0, MPNowPlayingInfoPropertyDefaultPlaybackRate: Double.infinity],
                [MPMediaItemPropertyAlbumTrackNumber: Int.min, MPMediaItemPropertyDiscNumber: UInt64.max],
                [MPMediaItemPropertyAlbumTrackNumber: Double.nan, MPNowPlayingInfoPropertyPlaybackQueueIndex: -1],
                [MPMediaItemPropertyPersistentID: -1, MPMediaItemPropertyReleaseDate: Date(timeIntervalSince1970: .nan)],
                [MPMediaItemPropertyReleaseDate: Date.distantFuture.addingTimeInterval(1e15)],
                [MPMediaItemPropertyArtist: 42, MPMediaItemPropertyArtwork: "cover.png", MPMediaItemPropertyAssetURL: "/a"],
                [MPMediaItemPropertyTitle: ["a", "b"], MPNowPlayingInfoPropertyIsLiveStream: "yes"],
                [MPMediaItemPropertyTitle: NSNull(), MPMediaItemPropertyGenre: Optional<String>.none as Any],
                [MPNowPlayingInfoPropertyExternalContentIdentifier: 12, MPNowPlayingInfoPropertyAssetURL: 3.5],
            ]
            for (index, dictionary) in hostile.enumerated() {
                var info = dictionary
                info[MPMediaItemPropertyAlbumTitle] = "Hostile \(index)"
                center.nowPlayingInfo = info
                #expect(center.nowPlayingInfo?.count == info.count)
                // Only the album survives; the player still answers every property.
                let metadata = try await remote.metadata()
                #expect(metadata.keys.sorted() == ["mpris:trackid", "xesam:album"], "dictionary \(index): \(metadata)")
                let all = try await remote.gdbus(
                    "org.freedesktop.DBus.Properties.GetAll", "org.mpris.MediaPlayer2.Player")
                #expect(all.contains("'PlaybackStatus'"))
                let position = try await remote.position()
                #expect(position >= 0 && position < 10_000_000, "dictionary \(index)")
            }
            // An ignored rate is the absent rate: 1, playing.
            center.nowPlayingInfo = [MPMediaItemPropertyTitle: "x", MPNowPlayingInfoPropertyPlaybackRate: "0"]
            #expect(try await remote.playerctl("status") == "Playing")
            #expect(try await remote.playerProperty("Rate") == "(<1.0>,)")
            // D-Bus strings cannot hold NUL: it is left out, the rest shown.
            center.nowPlayingInfo = [MPMediaItemPropertyTitle: "Nul\u{0}Title", MPMediaItemPropertyArtist: "\u{0}"]
            let metadata = try await remote.metadata()
            #expect(metadata["xesam:title"] == "s NulTitle")
            #expect(metadata["xesam:artist"] == "as []")
        }

        @Test func keysWithoutAnMPRISFieldAreKeptNotShown() async throws {
            let remote = try await NowPlayingRemote.start()
            let center = MPNowPlayingInfoCenter.default()
            defer { center.nowPlayingInfo = nil }
            let info: [String: Any] = [
                MPMediaItemPropertyTitle: "Chapter 2",
                MPNowPlayingInfoPropertyChapterNumber: 1, MPNowPlayingInfoPropertyChapterCount: 12,
                MPNowPlayingInfoPropertyAvailableLanguageOptions: ["en", "de"],
                MPNowPlayingInfoPropertyCurrentLanguageOptions: ["en"],
                MPNowPlayingInfoPropertyCurrentPlaybackDate: Date(),
                MPNowPlayingInfoPropertyServiceIdentifier: "com.example.service",
                MPNowPlayingInfoPropertyExternalUserProfileIdentifier: "profile-1",
                MPNowPlayingInfoCollectionIdentifier: "audiobook-9",
                MPNowPlayingInfoPropertyMediaType: MPNowPlayingInfoMediaType.audio.rawValue,
                MPMediaItemPropertyMediaType: MPMediaType.audioBook.rawValue,
                MPMediaItemPropertyPodcastTitle: "The Show", MPMediaItemPropertyIsExplicit: true,
                MPMediaItemPropertyRating: 4, MPMediaItemPropertyLyrics: "la la", MPMediaItemPropertyComments: "ok",
                MPMediaItemPropertyAlbumPersistentID: UInt64(77), MPMediaItemPropertyPlayCount: 12,
                MPMediaItemPropertyLastPlayedDate: Date(timeIntervalSince1970: 0), MPMediaItemPropertyBookmarkTime: 30.5,
                MPNowPlayingInfoPropertyPlaybackProgress: Float(0.25),
            ]
            center.nowPlayingInfo = info
            #expect(Set(try #require(center.nowPlayingInfo).keys) == Set(info.keys))
            #expect(center.nowPlayingInfo?[MPNowPlayingInfoCollectionIdentifier] as? String == "audiobook-9")
            #expect(try await remote.metadata().keys.sorted() == ["mpris:trackid", "xesam:title"])
        }
    }
}

/// The clients a user would run against the test player: playerctl, gdbus, and
/// `Python/now_playing.py` (python3-dbus) for typed metadata and signals.
struct NowPlayingRemote {
    let bus: PrivateBus

    /// The bus, with the player published.
    static func start() async throws -> NowPlayingRemote {
        let bus = try await MediaPlayerBus.start()
        _ = MPNowPlayingInfoCenter.default()
        _ = try await LinuxMediaPlayer.playerBusName()
        return NowPlayingRemote(bus: bus)
    }

    /// Whether the caller runs in a block of the main queue (on whichever thread libdispatch drains it).
    static var isOnMainQueue: Bool { DispatchQueue.getSpecific(key: mainQueueKey.key) == true }

    private static let mainQueueKey: MainQueueKey = {
        let marker = MainQueueKey()
        DispatchQueue.main.setSpecific(key: marker.key, value: true)
        return marker
    }()

    private final class MainQueueKey: @unchecked Sendable {  // immutable
        let key = DispatchSpecificKey<Bool>()
    }

    /// Runs `body` with a target on the play command, as an app's
    /// `MPRemoteCommandCenter.shared().playCommand.addTarget { … }` adds, then removes it.
    static func withPlayCommand(_ body: () async throws -> Void) async throws {
        let play = MediaPlayerRuntime.shared.commands.playCommand
        let target = play.addTarget { _ in .success }
        defer { play.removeTarget(target) }
        try await body()
    }

    /// playerctl's output for the test player, trimmed.
    func playerctl(_ arguments: String...) async throws -> String {
        let output = try await bus.run("playerctl", ["--player=\(MediaPlayerBus.playerName)"] + arguments)
        try #require(output.succeeded, "playerctl \(arguments): \(output.stderr)")
        return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A method of the MPRIS object called with gdbus: its printed reply, trimmed.
    func gdbus(_ method: String, _ arguments: String...) async throws -> String {
        let output = try await bus.run(
            "gdbus",
            ["call", "--session", "--dest", MediaPlayerBus.mprisName, "--object-path", "/org/mpris/MediaPlayer2",
             "--method", method] + arguments)
        try #require(output.succeeded, "gdbus: \(output.stderr)")
        return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A Player property as gdbus prints it: `(<value>,)`.
    func playerProperty(_ name: String) async throws -> String {
        try await gdbus("org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2.Player", name)
    }

    /// `Position` in µs, read with gdbus.
    func position() async throws -> Int64 {
        let reply = try await playerProperty("Position")  // (<int64 12345>,)
        let number = reply.split(separator: " ").last?.prefix { $0.isNumber || $0 == "-" }
        return try #require(number.flatMap { Int64($0) }, "Position: \(reply)")
    }

    /// `Metadata` as `key: "signature value"`.
    func metadata() async throws -> [String: String] {
        let output = try await bus.run(PrivateBus.systemPython, [pythonScript("now_playing.py"), MediaPlayerBus.mprisName, "metadata"])
        try #require(output.succeeded, "now_playing.py: \(output.stderr)")
        var fields: [String: String] = [:]
        for line in output.stdout.split(separator: "\n") where line != "END" {
            let parts = line.split(separator: " ", maxSplits: 1)
            fields[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return fields
    }

    /// A PropertiesChanged and Seeked watcher, subscribed.
    func watch() async throws -> ChildProcess {
        let watcher = try bus.spawn(PrivateBus.systemPython, ["-u", pythonScript("now_playing.py"), MediaPlayerBus.mprisName, "watch"])
        _ = try await watcher.waitForLine { $0 == "READY" }
        return watcher
    }

    /// The watcher's next line.
    func next(_ watcher: ChildProcess) async throws -> String {
        try await watcher.waitForLine { _ in true }
    }

    /// The watcher's next `changed` line, passing over `Seeked`.
    func change(_ watcher: ChildProcess) async throws -> String {
        try await watcher.waitForLine { !$0.hasPrefix("seeked ") }
    }

    /// A PNG's first bytes (signature and header): enough for its size and the artwork cache.
    static func png(width: UInt32, height: UInt32) -> Data {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        for value in [width, height] { bytes += withUnsafeBytes(of: value.bigEndian) { Array($0) } }
        bytes += [8, 6, 0, 0, 0, 0x00, 0x00, 0x00, 0x00]
        return Data(bytes)
    }
}
