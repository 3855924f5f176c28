import Glibc

/// Summary statistics of a set of durations.
public struct Summary: Sendable {
    public let count: Int
    public let p50: Double  // microseconds
    public let p90: Double
    public let p99: Double
    public let mean: Double
    public let min: Double
    public let max: Double

    public init(nanoseconds samples: [UInt64]) {
        precondition(!samples.isEmpty)
        let sorted = samples.sorted()
        func percentile(_ fraction: Double) -> Double {
            // Nearest rank.
            let rank = Int((fraction * Double(sorted.count)).rounded(.up))
            return Double(sorted[Swift.min(Swift.max(rank, 1), sorted.count) - 1]) / 1000
        }
        count = sorted.count
        p50 = percentile(0.50)
        p90 = percentile(0.90)
        p99 = percentile(0.99)
        mean = Double(sorted.reduce(0, +)) / Double(sorted.count) / 1000
        min = Double(sorted.first!) / 1000
        max = Double(sorted.last!) / 1000
    }

    public init(count: Int, p50: Double, p90: Double, p99: Double, mean: Double, min: Double, max: Double) {
        self.count = count
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.mean = mean
        self.min = min
        self.max = max
    }

    /// The header of a table of summaries, with `title` over the labels.
    public static func tableHeader(_ title: String) -> String {
        pad(title, 32, right: false) + pad("n", 6) + pad("p50", 8) + pad("p90", 8) + pad("p99", 8) + pad("mean", 8)
            + pad("min", 8)
    }

    /// This summary as a row of the table.
    public func tableRow(_ label: String) -> String {
        pad(label, 32, right: false) + pad(String(count), 6) + pad(fixed(p50, 1), 8) + pad(fixed(p90, 1), 8)
            + pad(fixed(p99, 1), 8) + pad(fixed(mean, 1), 8) + pad(fixed(min, 1), 8)
    }

    public static func median(_ samples: ArraySlice<UInt64>) -> Double {
        let sorted = samples.sorted()
        return Double(sorted[(sorted.count - 1) / 2]) / 1000
    }
}

/// Formats `value` with `digits` decimals, without Foundation.
public func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf") }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    let fraction = Int(scaled - Double(whole) * scale)
    var text = (value < 0 && scaled != 0 ? "-" : "") + String(whole)
    if digits > 0 {
        let digitsText = String(fraction)
        text += "." + String(repeating: "0", count: digits - digitsText.count) + digitsText
    }
    return text
}

/// Thousands separators for readability: 48213 -> "48,213".
public func grouped(_ value: Int) -> String {
    let digits = String(abs(value))
    var result = ""
    for (index, character) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
        result.append(character)
    }
    return (value < 0 ? "-" : "") + result
}

public func pad(_ text: String, _ width: Int, right: Bool = true) -> String {
    let padding = String(repeating: " ", count: max(0, width - text.count))
    return right ? padding + text : text + padding
}

/// A small JSON writer: enough for numbers, strings, booleans, arrays and ordered objects.
public indirect enum JSON: Sendable {
    case number(Double)
    case integer(Int)
    case string(String)
    case bool(Bool)
    case null
    case array([JSON])
    case object([(String, JSON)])

    public func render(indent: Int = 0) -> String {
        let inner = String(repeating: "  ", count: indent + 1)
        let outer = String(repeating: "  ", count: indent)
        switch self {
        case .number(let value): return value.isFinite ? fixed(value, 3) : "null"
        case .integer(let value): return String(value)
        case .string(let value): return JSON.quote(value)
        case .bool(let value): return value ? "true" : "false"
        case .null: return "null"
        case .array(let items):
            if items.isEmpty { return "[]" }
            return "[\n" + items.map { inner + $0.render(indent: indent + 1) }.joined(separator: ",\n") + "\n" + outer + "]"
        case .object(let fields):
            if fields.isEmpty { return "{}" }
            return "{\n"
                + fields.map { inner + JSON.quote($0.0) + ": " + $0.1.render(indent: indent + 1) }.joined(separator: ",\n")
                + "\n" + outer + "}"
        }
    }

    public static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}

extension Summary {
    public var json: JSON {
        .object([
            ("iterations", .integer(count)),
            ("p50Microseconds", .number(p50)),
            ("p90Microseconds", .number(p90)),
            ("p99Microseconds", .number(p99)),
            ("meanMicroseconds", .number(mean)),
            ("minMicroseconds", .number(min)),
            ("maxMicroseconds", .number(max)),
        ])
    }
}

extension JSON {
    /// Writes the rendered value and a newline to `path`.
    public func write(to path: String) throws {
        guard let file = fopen(path, "w") else {
            throw BenchmarkFailure(description: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        fputs(render() + "\n", file)
        fclose(file)
    }

    /// Writes the figures to `path` and says where, or reports why not on stderr under the
    /// benchmark's name. Returns false when writing failed (the run's exit status is then 2).
    public func writeFigures(to path: String, benchmark: String) -> Bool {
        do {
            try write(to: path)
        } catch {
            writeError("\(benchmark): \(error)\n")
            return false
        }
        print("Figures written to \(path)")
        return true
    }
}

/// One checked figure: a regression threshold (`gating`: exceeding it fails the run) or a goal
/// that is only reported. The limit is a maximum, or a minimum for a rate (`atLeast`).
public struct ThresholdCheck: Sendable {
    public let name: String
    public let limit: Double
    public let value: Double
    public let gating: Bool
    /// True when the value must be at least the limit (a throughput) rather than at most.
    public let atLeast: Bool
    public var passed: Bool { atLeast ? value >= limit : value <= limit }

    public init(name: String, limit: Double, value: Double, gating: Bool, atLeast: Bool = false) {
        self.name = name
        self.limit = limit
        self.value = value
        self.gating = gating
        self.atLeast = atLeast
    }

    /// The report's lines for the gating checks: one per check, then one per exceeded check.
    public static func reportLines(_ checks: [ThresholdCheck], nameWidth: Int = 24) -> [String] {
        var lines: [String] = []
        for check in checks where check.gating {
            lines.append(
                "  \(pad(check.name, nameWidth, right: false)) \(pad(fixed(check.value, 2), 8)) \(check.comparison) "
                    + "\(pad(fixed(check.limit, 2), 6))  " + (check.passed ? "ok" : "EXCEEDED"))
        }
        for check in checks where check.gating && !check.passed {
            let violated = check.atLeast ? "<" : ">"
            lines.append(
                "THRESHOLD EXCEEDED: \(check.name) = \(fixed(check.value, 2)) \(violated) \(fixed(check.limit, 2))")
        }
        return lines
    }

    /// "<=" for a maximum, ">=" for a minimum.
    public var comparison: String { atLeast ? ">=" : "<=" }

    public var json: JSON {
        .object([
            ("name", .string(name)), ("limit", .number(limit)), ("value", .number(value)),
            ("passed", .bool(passed)), ("gating", .bool(gating)),
        ] + (atLeast ? [("atLeast", .bool(true))] : []))
    }
}

public struct BenchmarkFailure: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// CPU time per operation in each process, in microseconds (or raw nanoseconds before `since`).
public struct CPUFigures: Sendable {
    public var client: Double
    public var service: Double
    public var daemon: Double
    public var total: Double { client + service + daemon }

    public init(client: Double, service: Double, daemon: Double) {
        self.client = client
        self.service = service
        self.daemon = daemon
    }

    /// CPU time used so far by this process, `service` and `daemon`, in nanoseconds.
    public static func now(service: Int32, daemon: Int32) -> CPUFigures {
        CPUFigures(
            client: Double(System.cpuNanoseconds(of: getpid())), service: Double(System.cpuNanoseconds(of: service)),
            daemon: Double(System.cpuNanoseconds(of: daemon)))
    }

    public func since(_ start: CPUFigures, per count: Int) -> CPUFigures {
        let scale = 1000 * Double(count)
        return CPUFigures(
            client: (client - start.client) / scale, service: (service - start.service) / scale,
            daemon: (daemon - start.daemon) / scale)
    }

    public var json: JSON {
        .object([
            ("clientMicroseconds", .number(client)), ("serviceMicroseconds", .number(service)),
            ("daemonMicroseconds", .number(daemon)), ("totalMicroseconds", .number(total)),
        ])
    }
}

/// Writes `text` to standard error, unbuffered.
public func writeError(_ text: String) {
    var text = text
    text.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
