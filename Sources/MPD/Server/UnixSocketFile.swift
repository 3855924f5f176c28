import Glibc

/// The file of the server's Unix socket: made ready before binding, kept to its owner, and
/// removed when the server ends, but only if it is still the server's own.
struct UnixSocketFile: Sendable {
    let path: String
    private let device: UInt
    private let inode: UInt

    /// Clears `path` for binding: creates its folder (0700) when missing, and removes a socket
    /// file no server listens on any more.
    ///
    /// - Throws: ``MPDServerError/socketPathInUse(_:reason:)`` when a server listens there or
    ///   the path is something else than a socket.
    static func prepare(_ path: String) throws(MPDServerError) {
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            let folder = String(path[..<slash])
            if mkdir(folder, 0o700) != 0 && errno != EEXIST {
                throw .socketPathInUse(path, reason: "cannot create its folder: \(String(cString: strerror(errno)))")
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw .socketPathInUse(path, reason: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw .socketPathInUse(path, reason: "it is not a socket") }
        guard !someoneListens(on: path) else { throw .socketPathInUse(path, reason: "another server listens on it") }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw .socketPathInUse(path, reason: "cannot remove the stale socket: \(String(cString: strerror(errno)))")
        }
    }

    /// The socket just bound at `path`, made readable and writable by its owner only.
    init(boundAt path: String) throws(MPDServerError) {
        guard chmod(path, 0o600) == 0 else {
            throw .socketPathInUse(path, reason: "cannot restrict it to its owner: \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { throw .socketPathInUse(path, reason: String(cString: strerror(errno))) }
        self.path = path
        device = UInt(info.st_dev)
        inode = UInt(info.st_ino)
    }

    /// Removes the socket file, unless another server replaced it meanwhile.
    func remove() {
        var info = stat()
        guard lstat(path, &info) == 0, UInt(info.st_dev) == device, UInt(info.st_ino) == inode else { return }
        unlink(path)
    }

    /// Whether a server accepts connections on the socket at `path`. The probe does not block:
    /// a server whose backlog is full answers `EAGAIN`, which still means it is there.
    private static func someoneListens(on path: String) -> Bool {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let probe = socket(AF_UNIX, type, 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            bytes.copyBytes(from: path.utf8)
            bytes[path.utf8.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 || errno == EAGAIN || errno == EINPROGRESS
    }
}
