import Foundation

/// Whether a language option is heard (an audio track) or read (subtitles, captions).
public enum MPNowPlayingInfoLanguageOptionType: UInt, Sendable {
    /// An audio track in a language.
    case audible = 0
    /// Subtitles or captions in a language.
    case legible = 1
}

/// How far a change of language option reaches.
public enum MPChangeLanguageOptionSetting: Int, Sendable {
    /// No change of language option.
    case none = 0
    /// The change applies to the now-playing item only.
    case nowPlayingItemOnly = 1
    /// The change applies to every later item too.
    case permanent = 2
}

/// One language option of the now-playing item: an audio track or a subtitle track.
///
/// No remote on Linux offers language options yet; an app builds them for
/// ``MPRemoteCommandCenter/enableLanguageOptionCommand`` events and for its now-playing
/// information as it does on iOS.
open class MPNowPlayingInfoLanguageOption: NSObject, @unchecked Sendable {  // immutable after init
    private let type: MPNowPlayingInfoLanguageOptionType
    private let tag: String?
    private let characteristics: [String]?
    private let name: String?
    private let optionIdentifier: String?

    /// An option for `languageTag` (IETF BCP 47, such as `"en-GB"`).
    ///
    /// - Parameters:
    ///   - languageOptionType: audible or legible.
    ///   - languageTag: the language; see ``languageTag``.
    ///   - languageOptionCharacteristics: what describes the content (AVFoundation's media
    ///     characteristics, such as `"public.easy-to-read"`), if any.
    ///   - displayName: the name people see ("English (SDH)").
    ///   - identifier: a unique identifier of the option.
    public init(
        type languageOptionType: MPNowPlayingInfoLanguageOptionType, languageTag: String,
        characteristics languageOptionCharacteristics: [String]?, displayName: String, identifier: String
    ) {
        self.type = languageOptionType
        self.tag = languageTag
        self.characteristics = languageOptionCharacteristics
        self.name = displayName
        self.optionIdentifier = identifier
        super.init()
    }

    /// An option with no type, tag or names, as Objective-C's `init` makes one.
    public override init() {
        self.type = .audible
        self.tag = nil
        self.characteristics = nil
        self.name = nil
        self.optionIdentifier = nil
        super.init()
    }

    /// Whether this option stands for "the best legible option by the user's preferences".
    /// Only the system makes such an option (on iOS too, no tag or argument of the initializer
    /// makes one), and no remote on Linux sends one: always false here.
    open func isAutomaticLegibleLanguageOption() -> Bool { false }

    /// Whether this option stands for "the best audible option by the user's preferences".
    /// Only the system makes such an option, and no remote on Linux sends one: always false here.
    open func isAutomaticAudibleLanguageOption() -> Bool { false }

    /// Audible or legible.
    open var languageOptionType: MPNowPlayingInfoLanguageOptionType { type }
    /// The IETF BCP 47 language tag; nil means the option turns the language off.
    open var languageTag: String? { tag }
    /// What describes the content of the option (AVFoundation's media characteristics).
    open var languageOptionCharacteristics: [String]? { characteristics }
    /// The name people see.
    open var displayName: String? { name }
    /// The option's unique identifier.
    open var identifier: String? { optionIdentifier }
}

/// Language options of which at most one is active at a time, such as the subtitle tracks.
open class MPNowPlayingInfoLanguageOptionGroup: NSObject, @unchecked Sendable {  // immutable after init
    private let options: [MPNowPlayingInfoLanguageOption]
    private let defaultOption: MPNowPlayingInfoLanguageOption?
    private let allowsEmpty: Bool

    /// A group of `languageOptions`, `defaultLanguageOption` chosen unless the user picks
    /// another; `allowEmptySelection` says whether none may be active.
    public init(
        languageOptions: [MPNowPlayingInfoLanguageOption], defaultLanguageOption: MPNowPlayingInfoLanguageOption?,
        allowEmptySelection: Bool
    ) {
        self.options = languageOptions
        self.defaultOption = defaultLanguageOption
        self.allowsEmpty = allowEmptySelection
        super.init()
    }

    /// An empty group, as Objective-C's `init` makes one.
    public override convenience init() {
        self.init(languageOptions: [], defaultLanguageOption: nil, allowEmptySelection: true)
    }

    /// The options of the group.
    open var languageOptions: [MPNowPlayingInfoLanguageOption] { options }
    /// The option active unless the user picks another, if any.
    open var defaultLanguageOption: MPNowPlayingInfoLanguageOption? { defaultOption }
    /// Whether the group may have no active option.
    open var allowEmptySelection: Bool { allowsEmpty }
}
