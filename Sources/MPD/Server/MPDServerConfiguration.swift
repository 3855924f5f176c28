import Glibc

/// Where ``MPDServer`` listens, who may do what, and the bounds of every client.
public struct MPDServerConfiguration: Sendable {
    /// The address of the TCP listener (a loopback address keeps it to this machine); nil: no TCP.
    public var tcpHost: String? = "127.0.0.1"
    /// The TCP port; 0 binds any free port (``MPDServer/boundTCPPort`` tells which).
    public var tcpPort: Int = 6600
    /// The path of the Unix socket (`$XDG_RUNTIME_DIR/mpris-bridge/mpd.socket`); nil: none.
    ///
    /// A socket file left there by a server that ended is removed first; a socket another
    /// server listens on, or a file that is not a socket, is left alone and the server does not
    /// start. The socket is made readable and writable by its owner only (0600), and removed
    /// when the server ends.
    public var unixSocketPath: String?
    /// Each password and what it grants (`password`); empty: every client has ``MPDPermissions/all``.
    public var passwords: [String: MPDPermissions] = [:]
    /// What a client may do before it gives a password; nil: ``MPDPermissions/all`` when there
    /// are no ``passwords``, nothing when there are (mpd's rule).
    public var defaultPermissions: MPDPermissions?
    /// The bounds of what a client may send and be sent, and of how many may connect.
    public var limits = MPDLimits()
    /// The protocol version the greeting announces (`OK MPD 0.23.0`), which clients read to know
    /// which commands to expect.
    public var protocolVersion = "0.23.0"

    /// A configuration; every parameter defaults to its property's default.
    public init(
        tcpHost: String? = "127.0.0.1", tcpPort: Int = 6600, unixSocketPath: String? = nil,
        passwords: [String: MPDPermissions] = [:], defaultPermissions: MPDPermissions? = nil,
        limits: MPDLimits = MPDLimits(), protocolVersion: String = "0.23.0"
    ) {
        self.tcpHost = tcpHost
        self.tcpPort = tcpPort
        self.unixSocketPath = unixSocketPath
        self.passwords = passwords
        self.defaultPermissions = defaultPermissions
        self.limits = limits
        self.protocolVersion = protocolVersion
    }

    /// What a client may do when it connects: ``defaultPermissions``, or mpd's rule without it.
    public var initialPermissions: MPDPermissions {
        defaultPermissions ?? (passwords.isEmpty ? .all : [])
    }

    /// Reads a password file: one password a line, as mpd's `password` setting spells it,
    /// `secret@read,add,control,admin`, or a bare `secret`, which grants everything. Blank lines
    /// and lines starting with `#` are ignored; spaces around a line are not part of it.
    ///
    /// - Throws: ``MPDPasswordFileError`` when the file cannot be read, is readable by other
    ///   users than its owner (anyone could read the passwords), or has a bad line (its number
    ///   is given).
    public static func load(passwordFile path: String) throws(MPDPasswordFileError) -> [String: MPDPermissions] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .unreadable(path: path, reason: "not a regular file") }
        guard info.st_mode & (S_IRWXG | S_IRWXO) == 0 else { throw .readableByOthers(path: path) }
        // A password file is a few lines; a larger one is a mistake, not worth reading.
        let maximumBytes = 64 * 1024
        guard info.st_size <= maximumBytes else { throw .unreadable(path: path, reason: "larger than 64 KiB") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let received = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if received < 0 && errno == EINTR { continue }
            guard received >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
            if received == 0 { break }
            count += received
        }
        guard let text = String(validating: bytes[..<count], as: UTF8.self) else {
            throw .unreadable(path: path, reason: "not UTF-8 text")
        }
        return try parse(passwordLines: text, path: path)
    }

    /// The passwords of a password file's text (see ``load(passwordFile:)``).
    static func parse(passwordLines text: String, path: String) throws(MPDPasswordFileError) -> [String: MPDPermissions] {
        var passwords: [String: MPDPermissions] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingBlanks()
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let password: Substring
            let permissions: MPDPermissions
            if let at = line.lastIndex(of: "@") {
                password = line[..<at]
                guard let granted = MPDPermissions(names: line[line.index(after: at)...]) else {
                    throw .badLine(path: path, line: index + 1, reason: "unknown permission (read, add, control, admin)")
                }
                permissions = granted
            } else {
                password = line
                permissions = .all
            }
            guard !password.isEmpty else { throw .badLine(path: path, line: index + 1, reason: "empty password") }
            guard passwords[String(password)] == nil else {
                throw .badLine(path: path, line: index + 1, reason: "password given twice")
            }
            passwords[String(password)] = permissions
        }
        return passwords
    }
}

/// Why a password file (``MPDServerConfiguration/load(passwordFile:)``) was refused.
public enum MPDPasswordFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// It could not be opened or read, or is not a small text file.
    case unreadable(path: String, reason: String)
    /// Users other than its owner may read or write it: `chmod 600` it.
    case readableByOthers(path: String)
    /// A line (counted from 1) is not `password` or `password@permission,…`.
    case badLine(path: String, line: Int, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read the MPD password file \(path): \(reason)"
        case .readableByOthers(let path):
            "the MPD password file \(path) may be read or written by other users; allow only its owner (chmod 600)"
        case .badLine(let path, let line, let reason): "\(path), line \(line): \(reason)"
        }
    }
}

extension Substring {
    fileprivate func trimmingBlanks() -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
