import Foundation

/// The app's player, on the main actor as UIKit-era code is. It plays no sound: it keeps a queue, a
/// position that advances with the clock at the rate, and moves to the next episode when one
/// ends. (On iOS this class would wrap an `AVPlayer`; the MediaPlayer code around it would not change.)
@MainActor final class AudioPlayer {
    private(set) var queue: [Episode] = []
    private(set) var index = 0
    private(set) var isPlaying = false
    private(set) var rate: Float = 1
    var repeatsAll = false
    var isShuffled = false
    /// Called after every change, for the app to publish what is playing.
    var onChange: () -> Void = {}

    private var position: TimeInterval = 0
    private var positionDate = Date()
    private var endTimer: Timer?

    var current: Episode? { queue.indices.contains(index) ? queue[index] : nil }

    /// The position now, in seconds.
    var currentTime: TimeInterval {
        guard isPlaying, let current else { return position }
        return min(current.duration, position + Date().timeIntervalSince(positionDate) * Double(rate))
    }

    /// Makes `episodes` the queue, at `start`, playing or (as after a launch) paused.
    func load(_ episodes: [Episode], startingAt start: Int, playing: Bool = true) {
        queue = episodes
        index = min(max(start, 0), max(episodes.count - 1, 0))
        move(to: 0, playing: playing)
    }

    func play() -> Bool {
        guard current != nil else { return false }
        move(to: currentTime, playing: true)
        return true
    }

    func pause() -> Bool {
        guard current != nil else { return false }
        move(to: currentTime, playing: false)
        return true
    }

    func stop() {
        move(to: 0, playing: false)
    }

    func next() -> Bool {
        if index + 1 < queue.count {
            index += 1
        } else if repeatsAll, !queue.isEmpty {
            index = 0
        } else {
            return false
        }
        move(to: 0, playing: isPlaying)
        return true
    }

    func previous() -> Bool {
        guard current != nil else { return false }
        if currentTime < 3, index > 0 { index -= 1 }
        move(to: 0, playing: isPlaying)
        return true
    }

    func seek(to time: TimeInterval) -> Bool {
        guard let current, time.isFinite else { return false }
        move(to: min(max(time, 0), current.duration), playing: isPlaying)
        return true
    }

    func setRate(_ newRate: Float) {
        let now = currentTime
        rate = newRate
        move(to: now, playing: isPlaying)
    }

    private func move(to time: TimeInterval, playing: Bool) {
        position = time
        positionDate = Date()
        isPlaying = playing
        endTimer?.invalidate()
        endTimer = nil
        if playing, let current, rate > 0 {
            let remaining = (current.duration - time) / Double(rate)
            endTimer = Timer.scheduledTimer(withTimeInterval: max(remaining, 0), repeats: false) { [weak self] _ in
                // The main run loop fires it, on the main thread.
                MainActor.assumeIsolated {
                    guard let self else { return }
                    if !self.next() { self.stop() }
                }
            }
        }
        onChange()
    }
}
