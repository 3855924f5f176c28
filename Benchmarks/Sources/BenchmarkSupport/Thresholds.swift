/// A benchmark's goals and regression thresholds, read from `Benchmarks/Thresholds/NAME.json`
/// (one object of numbers by name), so that a new baseline changes data, not code. What each
/// value means is said where the benchmark reads it.
///
/// Read without Foundation: the benchmarks' services measure their own memory, which Foundation's
/// mapped pages would grow.
public struct ThresholdFile: Sendable {
    public let path: String
    private let values: [String: Double]

    /// Reads the file of benchmark `name`. A missing or malformed file stops the benchmark with a
    /// message: it would otherwise judge its figures against nothing.
    public init(benchmark name: String) {
        path = Self.folder + "/" + name + ".json"
        guard let text = readWholeFile(path), let values = Self.numbers(inObject: text) else {
            fatalError("\(name): cannot read its thresholds from \(path) (an object of numbers by name)")
        }
        self.values = values
    }

    /// The value named `key`; a name the file lacks stops the benchmark with a message.
    public subscript(_ key: String) -> Double {
        guard let value = values[key] else { fatalError("\(path) has no threshold '\(key)'") }
        return value
    }

    /// `{ "name": number, … }` (names without escapes), or nil for anything else.
    static func numbers(inObject text: String) -> [String: Double]? {
        var rest = Substring(text).drop { $0.isWhitespace }
        guard rest.popFirst() == "{" else { return nil }
        var values: [String: Double] = [:]
        while true {
            rest = rest.drop { $0.isWhitespace }
            if rest.first == "}" { return values }
            guard rest.popFirst() == "\"", let close = rest.firstIndex(of: "\"") else { return nil }
            let name = String(rest[..<close])
            rest = rest[rest.index(after: close)...].drop { $0.isWhitespace }
            guard rest.popFirst() == ":" else { return nil }
            rest = rest.drop { $0.isWhitespace }
            let number = rest.prefix { "0123456789.-+eE".contains($0) }
            guard let value = Double(number) else { return nil }
            values[name] = value
            rest = rest.dropFirst(number.count).drop { $0.isWhitespace }
            if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" { return nil }
        }
    }

    /// Benchmarks/Thresholds, from this file's path.
    private static let folder: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path + "/Thresholds"
    }()
}
