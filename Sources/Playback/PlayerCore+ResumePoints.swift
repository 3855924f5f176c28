import MediaRemote

/// Where the app says long items were left, read by ``PlayerCore`` (a ``ResumePointStore``'s
/// answers, or a test's).
package struct ResumePointLookup: Sendable {
    /// The resume point of an item that remembers its position; nil when it does not, or has none.
    package var resumePoint: @Sendable (QueueItem) -> ResumePoint?

    package init(_ resumePoint: @escaping @Sendable (QueueItem) -> ResumePoint?) {
        self.resumePoint = resumePoint
    }

    /// No item remembers its position.
    package static let none = ResumePointLookup { _ in nil }

    /// The store's answers.
    package static func store(_ store: (any ResumePointStore)?) -> ResumePointLookup {
        guard let store else { return .none }
        return ResumePointLookup { item in store.remembersPosition(of: item) ? store.resumePoint(of: item) : nil }
    }
}

/// Resume points: where an item starts when loaded from its beginning, and what is saved as
/// items are left (the shell saves a ``PlayerEffect/saveResumePoint(_:of:)`` only for an item
/// its store says remembers its position).
extension PlayerCore {
    /// Where `item` starts when it is loaded from its beginning: its resume point, unless it has
    /// none, finished, or one past its end.
    func resumePosition(of item: QueueItem) -> Duration {
        guard !item.isLiveStream, let point = resumePoints.resumePoint(item), !point.isFinished, point.position > .zero
        else { return .zero }
        if let duration = item.info.playbackDuration, point.position >= duration { return .zero }
        return point.position
    }

    /// Saves where `item` was left: within the last ``ResumePoint/finishingShare`` it counts as
    /// finished, unless `finishing` is false.
    mutating func rememberPosition(of item: QueueItem, at position: Duration, finishing: Bool = true) {
        guard !item.isLiveStream else { return }
        let duration = item.info.playbackDuration ?? (item.identifier == loaded?.identifier ? engineDuration : nil)
        let point = finishing ? ResumePoint(leftAt: position, of: duration) : ResumePoint(position: position)
        effects.append(.saveResumePoint(point, of: item))
    }

    /// Saves that `item` played to its end: it starts from its beginning next time.
    mutating func rememberFinished(_ item: QueueItem) {
        guard !item.isLiveStream else { return }
        effects.append(.saveResumePoint(.finished, of: item))
    }
}
