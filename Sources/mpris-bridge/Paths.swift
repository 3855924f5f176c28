#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Where the daemon finds music and keeps its files, after the XDG base
/// directory and user-dirs specifications.
struct Paths {
    /// An environment variable's value.
    private let environment: @Sendable (String) -> String?

    /// The process's environment, each variable read when asked: no dictionary of it all, whose
    /// first use costs a scan of the binary's protocol conformances before the bus name.
    init() {
        environment = { name in getenv(name).map { String(cString: $0) } }
    }

    init(environment: [String: String]) {
        self.environment = { environment[$0] }
    }

    var home: String { environment("HOME") ?? "/" }

    /// A variable's value, nil when unset or empty: the XDG specifications treat both alike.
    private func nonEmpty(_ name: String) -> String? {
        environment(name).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `$XDG_MUSIC_DIR` from `user-dirs.dirs`, else `~/Music`.
    var musicDirectory: String {
        let configHome = nonEmpty("XDG_CONFIG_HOME") ?? home + "/.config"
        if let text = try? String(contentsOfFile: configHome + "/user-dirs.dirs", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("XDG_MUSIC_DIR=") })
        {
            var value = String(line.dropFirst("XDG_MUSIC_DIR=".count).filter { $0 != "\r" })
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            value = value.replacing("$HOME", with: home)
            // The spec says "$HOME/" on its own means the user disabled the folder.
            if value.hasPrefix("/"), value != home, value != home + "/" { return value }
        }
        return home + "/Music"
    }

    /// `$XDG_STATE_HOME/mpris-bridge`: the saved queue and position.
    var stateDirectory: String {
        (nonEmpty("XDG_STATE_HOME") ?? home + "/.local/state") + "/mpris-bridge"
    }

    /// `$XDG_CACHE_HOME/mpris-bridge`: the index and artwork, which can be rebuilt.
    var cacheDirectory: String {
        (nonEmpty("XDG_CACHE_HOME") ?? home + "/.cache") + "/mpris-bridge"
    }

    /// `$XDG_RUNTIME_DIR/mpris-bridge`: the MPD socket; nil when the session has no runtime folder.
    var runtimeDirectory: String? {
        nonEmpty("XDG_RUNTIME_DIR").map { $0 + "/mpris-bridge" }
    }
}

/// Makes `path` and its parents (mode 0700: these are one user's files).
func makeDirectory(_ path: String) throws {
    try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
}

/// Whether `path` is an existing directory.
func isDirectory(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
}
