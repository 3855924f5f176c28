import Glibc

/// Summary statistics of a set of durations.
struct Summary {
    let count: Int
    let p50: Double  // microseconds
    let p90: Double
    let p99: Double
    let mean: Double
    let min: Double
    let max: Double

    init(nanoseconds samples: [UInt64]) {
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

    static func median(_ samples: ArraySlice<UInt64>) -> Double {
        let sorted = samples.sorted()
        return Double(sorted[(sorted.count - 1) / 2]) / 1000
    }
}

/// Formats `value` with `digits` decimals, without Foundation.
func fixed(_ value: Double, _ digits: Int) -> String {
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
func grouped(_ value: Int) -> String {
    let digits = String(abs(value))
    var result = ""
    for (index, character) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
        result.append(character)
    }
    return (value < 0 ? "-" : "") + result
}

func pad(_ text: String, _ width: Int, right: Bool = true) -> String {
    let padding = String(repeating: " ", count: max(0, width - text.count))
    return right ? padding + text : text + padding
}

/// A small JSON writer: enough for numbers, strings, booleans, arrays and ordered objects.
indirect enum JSON {
    case number(Double)
    case integer(Int)
    case string(String)
    case bool(Bool)
    case null
    case array([JSON])
    case object([(String, JSON)])

    func render(indent: Int = 0) -> String {
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

    static func quote(_ text: String) -> String {
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
    var json: JSON {
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

/// Writes `text` to standard error, unbuffered.
func writeError(_ text: String) {
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
