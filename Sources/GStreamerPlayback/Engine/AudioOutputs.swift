import Playback

/// An audio output GStreamer's device monitor found: a sound server's sink (PulseAudio, or
/// PipeWire's pulse server), such as a sound card's analog output, headphones or a Bluetooth
/// speaker.
public struct AudioOutput: Sendable, Equatable {
    /// The sound server's name for it (PulseAudio's sink name): stable while it exists.
    public let identifier: String
    /// The name a person recognises (PulseAudio's `device.description`).
    public let name: String
    /// Whether the system used it as its default output when it was found (a later change of
    /// default is not followed).
    public let isDefault: Bool
    let device: DeviceReference

    public static func == (left: AudioOutput, right: AudioOutput) -> Bool {
        left.identifier == right.identifier && left.name == right.name && left.isDefault == right.isDefault
    }
}

/// Follows the audio outputs as they come and go (headphones plugged in, a Bluetooth speaker
/// connected), with GStreamer's device monitor. Its thread sleeps until an output changes.
public final class AudioOutputMonitor: Sendable {
    private let monitor: DeviceMonitor

    /// Starts following; `onChange` is called with every output each time one comes, goes or
    /// changes, on the monitor's thread (it must be quick). With no sound server to ask, there
    /// are no outputs.
    ///
    /// - Throws: ``PlaybackError/Kind/other`` if GStreamer cannot start.
    public init(onChange: @escaping @Sendable ([AudioOutput]) -> Void) throws(PlaybackError) {
        monitor = try DeviceMonitor { devices in onChange(devices.map(AudioOutput.init)) }
    }

    /// The outputs now.
    public var outputs: [AudioOutput] { monitor.devices.map(AudioOutput.init) }

    /// Stops following (``outputs`` still answers). Idempotent.
    public func stop() { monitor.stop() }
}

extension AudioOutput {
    init(_ found: FoundDevice) {
        self.init(identifier: found.identifier, name: found.name, isDefault: found.isDefault, device: found.reference)
    }
}
