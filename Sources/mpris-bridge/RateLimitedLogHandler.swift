import Logging
import Synchronization

/// A log handler that lets each place in the code log a burst of lines, then
/// at a steady rate, and counts what it holds back.
///
/// Much of what the daemon logs, a client can trigger: a refused `OpenUri`, a
/// head unit's limits, a stream that fails. Any program of the user (or, on
/// the system bus, the policy's group) could otherwise fill the journal with
/// one call in a loop. Each call site (file and line) has a bucket of
/// ``burst`` lines, refilled by one line every ``interval``; a line that
/// finds the bucket empty is dropped and counted, and the site's next line
/// says how many were. Distinct sites never hold each other back, so a
/// flood of one message cannot hide another.
struct RateLimitedLogHandler: LogHandler {
    /// How many lines a call site may log at once.
    static let burst = 10
    /// How long a call site earns one more line after its burst.
    static let interval = Duration.seconds(6)

    private var upstream: any LogHandler
    private let budget: Budget

    /// Limits `upstream`, sharing `budget` with every handler made from it, so
    /// loggers with different labels share each call site's allowance.
    init(_ upstream: any LogHandler, budget: Budget) {
        self.upstream = upstream
        self.budget = budget
    }

    func log(event: LogEvent) {
        guard let suppressed = budget.take(site: Site(file: event.file, line: event.line)) else { return }
        guard suppressed > 0 else { return upstream.log(event: event) }
        var event = event
        event.message = "\(event.message) (\(suppressed) more like this were not logged)"
        upstream.log(event: event)
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { upstream.metadataProvider }
        set { upstream.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { upstream[metadataKey: key] }
        set { upstream[metadataKey: key] = newValue }
    }

    var metadata: Logger.Metadata {
        get { upstream.metadata }
        set { upstream.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { upstream.logLevel }
        set { upstream.logLevel = newValue }
    }

    struct Site: Hashable {
        var file: String
        var line: UInt
    }

    /// Every call site's allowance. Call sites are places in the code, so
    /// their number is bounded by the program, not by its input.
    final class Budget: Sendable {
        private struct Bucket {
            var tokens: Double
            var updated: ContinuousClock.Instant
            var suppressed = 0
        }

        private let buckets = Mutex<[Site: Bucket]>([:])
        private let burst: Double
        private let interval: Duration
        private let clock: @Sendable () -> ContinuousClock.Instant

        init(
            burst: Int = RateLimitedLogHandler.burst, interval: Duration = RateLimitedLogHandler.interval,
            clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
        ) {
            self.burst = Double(burst)
            self.interval = interval
            self.clock = clock
        }

        /// Spends one line of `site`'s allowance: how many lines were dropped
        /// since its last one, or nil when this one must be dropped too.
        func take(site: Site) -> Int? {
            let now = clock()
            return buckets.withLock { buckets in
                var bucket = buckets[site] ?? Bucket(tokens: burst, updated: now)
                bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated) / interval)
                bucket.updated = now
                var dropped: Int? = nil
                if bucket.tokens >= 1 {
                    bucket.tokens -= 1
                    dropped = bucket.suppressed
                    bucket.suppressed = 0
                } else {
                    bucket.suppressed += 1
                }
                buckets[site] = bucket
                return dropped
            }
        }
    }
}
