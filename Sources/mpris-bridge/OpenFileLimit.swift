#if canImport(Glibc)
    import Glibc
#endif

/// The number of files the daemon may hold open, settled before it connects to the bus.
enum OpenFileLimit {
    /// The fewest open files the daemon serves with. Playing, with its media tree and the
    /// library followed, it holds about 45: the bus connection, the index and the state
    /// databases with their journals, each connection's thread (a pipe and a poll set), the
    /// timers and signals, the sound server's stream and the library's watch; each MPD client
    /// takes one more. With fewer, a start could leave the handling of SIGTERM without the
    /// descriptor it needs, and the daemon would then ignore the signal.
    static let minimum = 64

    /// Why the daemon does not start: its limit is below ``minimum`` and cannot be raised.
    struct TooLow: Error, CustomStringConvertible {
        /// The hard limit the daemon was given.
        let limit: Int
        var description: String {
            "the open-file limit is \(limit) (ulimit -n) and the daemon needs at least \(OpenFileLimit.minimum)"
        }
    }

    /// Raises the soft limit to the hard one, as a daemon that waits with `poll`, never
    /// `select`, may (a descriptor above 1024 is no trouble to it), so that many MPD clients or
    /// a large library do not run it out of files.
    ///
    /// - Throws: ``TooLow`` when even the hard limit is below ``minimum``; nothing is changed.
    static func raise() throws(TooLow) {
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        let infinity = rlim_t.max  // RLIM_INFINITY, which Swift imports as the literal -1
        var limits = rlimit()
        // Unreadable (it never is on Linux): the limit is left as it is.
        guard getrlimit(resource, &limits) == 0 else { return }
        guard limits.rlim_max == infinity || limits.rlim_max >= rlim_t(minimum) else {
            throw TooLow(limit: Int(limits.rlim_max))
        }
        guard limits.rlim_cur != limits.rlim_max else { return }
        limits.rlim_cur = limits.rlim_max
        // Refused for an infinite hard limit (the kernel's nr_open bounds files): the soft limit stays.
        _ = setrlimit(resource, &limits)
    }
}
