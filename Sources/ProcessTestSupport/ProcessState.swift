import Glibc

/// True if `pid` names no process at all (not even a zombie).
public func processIsGone(_ pid: Int32) -> Bool {
    kill(pid, 0) == -1 && errno == ESRCH
}

/// Whether `pid` ends (is gone, or a zombie) within `timeout`. A SIGKILL takes effect
/// asynchronously, and a process that is not our child has no exit event to wait on here,
/// so its state in /proc is read until it changes; this returns as soon as it has.
public func processEnds(_ pid: Int32, within timeout: Duration = .seconds(5)) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if processIsGone(pid) || processState(pid) == "Z" { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return false
}

/// The state letter of `pid` from /proc/PID/stat (`R`, `S`, `Z`, …), or nil if it cannot be read.
public func processState(_ pid: Int32) -> Character? {
    let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 512)
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { return nil }
    // "PID (COMMAND) STATE …": the command may contain spaces, so the state follows the last ')'.
    let text = String(decoding: buffer[..<count], as: UTF8.self)
    guard let close = text.lastIndex(of: ")") else { return nil }
    return text[text.index(after: close)...].first { $0 != " " }
}
