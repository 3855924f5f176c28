import Glibc
import ProcessTestSupport

// Files and folders for generated media, with the system's reason in every error.

public func makeDirectories(_ path: String) throws {
    var prefix = ""
    for component in path.split(separator: "/") {
        prefix += "/" + component
        if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
            throw BenchmarkFailure(description: "cannot create \(prefix): \(String(cString: strerror(errno)))")
        }
    }
}

public func copyFile(_ source: String, to destination: String) throws {
    let input = open(source, O_RDONLY | O_CLOEXEC)
    guard input >= 0 else { throw BenchmarkFailure(description: "cannot read \(source): \(String(cString: strerror(errno)))") }
    defer { close(input) }
    let output = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard output >= 0 else {
        throw BenchmarkFailure(description: "cannot write \(destination): \(String(cString: strerror(errno)))")
    }
    defer { close(output) }
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count >= 0 else { throw BenchmarkFailure(description: "cannot read \(source)") }
        if count == 0 { return }
        var offset = 0
        while offset < count {
            let written = buffer.withUnsafeBytes { write(output, $0.baseAddress! + offset, count - offset) }
            guard written > 0 else { throw BenchmarkFailure(description: "cannot write \(destination)") }
            offset += written
        }
    }
}

public func hardLink(_ source: String, to destination: String) throws {
    guard link(source, destination) == 0 || errno == EEXIST else {
        throw BenchmarkFailure(
            description: "cannot link \(source) to \(destination): \(String(cString: strerror(errno)))")
    }
}

public func writeFile(_ path: String, _ text: String) throws {
    guard let file = fopen(path, "w") else {
        throw BenchmarkFailure(description: "cannot write \(path): \(String(cString: strerror(errno)))")
    }
    fputs(text, file)
    fclose(file)
}

/// Copies every file directly in `source` (the index and its journal files) into `destination`.
public func copyFolderFiles(_ source: String, to destination: String) throws {
    try makeDirectories(destination)
    guard let names = directoryEntries(source) else { throw BenchmarkFailure(description: "cannot read \(source)") }
    for name in names {
        var info = stat()
        guard stat(source + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
        try copyFile(source + "/" + name, to: destination + "/" + name)
    }
}

public func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return "." }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
