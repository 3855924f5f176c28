#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Playback

extension PlaybackError {
    /// The engine's reading of a GStreamer error about `url`.
    init(_ failure: PipelineError, url: URL?) {
        let isRemote = ["http", "https"].contains(url?.scheme?.lowercased() ?? "")
        let kind: Kind =
            switch failure.category {
            case .notFound: .notFound
            case .input: isRemote ? .network : .notFound
            case .output: .outputDevice
            case .decode: .unsupported
            case .other: isRemote ? .network : .other
            }
        var message = failure.message
        if message.hasSuffix(".") { message.removeLast() }
        // libsoup 3 reports a refused or lost connection as a bare "Internal data stream error".
        if kind == .network { message = "Network error: " + message }
        if !failure.detail.isEmpty { message += ": " + failure.detail }
        self.init(kind: kind, url: url, message: message)
    }
}
