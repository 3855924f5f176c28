import Foundation

/// One episode or track of the app's catalog.
struct Episode {
    let identifier: String
    let title: String
    let artist: String
    let album: String
    let duration: TimeInterval
    let trackNumber: Int
}

/// A show or album: what the app lists under a tab.
struct Collection {
    let identifier: String
    let title: String
    let subtitle: String
    let episodes: [Episode]
}

/// A tab of the car's browse screen.
struct Tab {
    let identifier: String
    let title: String
    let collections: [Collection]
}

/// The app's content: two tabs of shows and albums, as a podcast and music app has.
enum Catalog {
    static let tabs: [Tab] = [
        Tab(
            identifier: "tab.podcasts", title: "Podcasts",
            collections: [
                show("show.swift", "Swift Over Coffee", "Paul & Sean", count: 5, minutes: 42),
                show("show.linux", "Linux Unplugged", "Jupiter Broadcasting", count: 4, minutes: 65),
            ]),
        Tab(
            identifier: "tab.music", title: "Music",
            collections: [
                album("album.tones", "Test Tones", "Oscillator", ["Sine at 440 Hz", "Square at 220 Hz", "Pink Noise"]),
                album("album.rain", "Rain Sounds", "Field Recordings", ["Light Rain", "Thunderstorm"]),
            ]),
    ]

    private static func show(_ id: String, _ title: String, _ host: String, count: Int, minutes: Double) -> Collection {
        Collection(
            identifier: id, title: title, subtitle: host,
            episodes: (1...count).map { number in
                Episode(
                    identifier: "\(id).\(number)", title: "\(title) #\(number)", artist: host, album: title,
                    duration: minutes * 60, trackNumber: number)
            })
    }

    private static func album(_ id: String, _ title: String, _ artist: String, _ tracks: [String]) -> Collection {
        Collection(
            identifier: id, title: title, subtitle: artist,
            episodes: tracks.enumerated().map { index, name in
                Episode(
                    identifier: "\(id).\(index + 1)", title: name, artist: artist, album: title,
                    duration: Double(180 + 20 * index), trackNumber: index + 1)
            })
    }

    /// The episodes of the collection with `identifier`, and where the one with
    /// `episodeIdentifier` is among them.
    static func collection(containing episodeIdentifier: String) -> Collection? {
        tabs.lazy.flatMap(\.collections).first { $0.episodes.contains { $0.identifier == episodeIdentifier } }
    }
}
