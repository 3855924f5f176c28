/// How an engine evens out the loudness of items by their ReplayGain tags (written by a
/// ReplayGain scanner); items without tags play as they are.
///
/// An engine's own setting, beside ``PlaybackEngine``: an engine takes it without knowing
/// where the choice was made, and an app maps its model's choice (MediaRemote's
/// `AudioSession.ReplayGainMode`, say) onto it.
public enum ReplayGainMode: Sendable, Equatable, CaseIterable {
    /// Items play at the level they were mastered at.
    case off
    /// Each track is brought to the reference level on its own.
    case track
    /// Each album is, keeping the differences between its tracks (a track with no album gain
    /// uses its track gain).
    case album
}
