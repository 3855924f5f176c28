import CMalloc

/// What a received message may still hold while it is read.
struct ReadBudget {
    var values: Int
    var stringBytes: Int
    /// Whether an array's elements are counted and paid for before any is read; an unlimited
    /// budget reads them as they come, which spares libdbus a walk over each array.
    let countsArrays: Bool

    /// A method call's or signal's: anyone on the bus may send one.
    static let forUntrustedMessage = ReadBudget(
        values: Message.maximumValueCount, stringBytes: Message.maximumStringBytes, countsArrays: true)
    /// A reply's: it answers a call this process chose to make.
    static let unlimited = ReadBudget(values: .max, stringBytes: .max, countsArrays: false)

    mutating func take(values count: Int) throws {
        values -= count
        if values < 0 {
            throw DBusError(
                .limitsExceeded, "The message holds more than \(Message.maximumValueCount) values, the most this service reads")
        }
    }

    mutating func take(stringBytes count: Int) throws {
        stringBytes -= count
        if stringBytes < 0 {
            throw DBusError(
                .limitsExceeded,
                "The message holds more than \(Message.maximumStringBytes >> 20) MiB of strings, the most this service reads")
        }
    }

    /// Whether reading took so much from `start` that the heap is worth trimming afterwards.
    func spent(since start: ReadBudget) -> Bool {
        start.values - values >= 16_384 || start.stringBytes - stringBytes >= 1 << 20
    }
}

/// Returns the heap's free pages to the system when it is freed. glibc gives back only the
/// top of its heap on its own; the many small strings of a large message leave free pages
/// in the middle, which would stay in the process's memory for good.
final class HeapReturn: Sendable {
    deinit { _ = malloc_trim(0) }
}
