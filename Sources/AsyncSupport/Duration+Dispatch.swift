import Dispatch

extension Duration {
    /// The same span as Dispatch takes it, to the nanosecond: a negative one as none, one too
    /// long for Dispatch's nanoseconds as `.never`.
    public var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow, seconds >= 0 else { return seconds < 0 ? .nanoseconds(0) : .never }
        return .nanoseconds(Int(nanoseconds.partialValue + attoseconds / 1_000_000_000))
    }
}
