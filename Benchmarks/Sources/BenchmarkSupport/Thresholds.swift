import Foundation

/// A benchmark's goals and regression thresholds, read from `Benchmarks/Thresholds/NAME.json`
/// (one object of numbers by name), so that a new baseline changes data, not code. What each
/// value means is said where the benchmark reads it.
public struct ThresholdFile: Sendable {
    public let path: String
    private let values: [String: Double]

    /// Reads the file of benchmark `name`. A missing or unreadable file stops the benchmark with
    /// a message: it would otherwise judge its figures against nothing.
    public init(benchmark name: String) {
        path = Self.folder + "/" + name + ".json"
        guard let data = FileManager.default.contents(atPath: path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { fatalError("\(name): cannot read its thresholds from \(path)") }
        values = object.compactMapValues { ($0 as? NSNumber)?.doubleValue }
    }

    /// The value named `key`; a name the file lacks stops the benchmark with a message.
    public subscript(_ key: String) -> Double {
        guard let value = values[key] else { fatalError("\(path) has no threshold '\(key)'") }
        return value
    }

    /// Benchmarks/Thresholds, from this file's path.
    private static let folder: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path + "/Thresholds"
    }()
}
