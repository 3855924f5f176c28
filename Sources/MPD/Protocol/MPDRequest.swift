/// One command a client sent: its name and arguments, as MPD's protocol spells them.
///
/// A line is a command name (`[a-z_]`, lower-case) followed by arguments separated by spaces or
/// tabs; an argument is a run of characters other than space, tab and `"`, or a double-quoted
/// string in which `\"` and `\\` stand for `"` and `\`. The line must be UTF-8.
public struct MPDRequest: Sendable, Equatable {
    /// The command's name, lower-case.
    public var name: String
    /// The arguments, unquoted.
    public var arguments: [String]

    public init(name: String, arguments: [String] = []) {
        self.name = name
        self.arguments = arguments
    }

    /// Reads a request line (without its newline; a trailing `\r` is ignored).
    ///
    /// - Throws: ``MPDError`` with ``MPDError/Code/unknown`` for an empty line or a bad command name, and
    ///   ``MPDError/Code/argument`` for invalid UTF-8, an unterminated quote or more than
    ///   `maximumArguments` arguments.
    public static func parse<Bytes: Collection<UInt8>>(_ line: Bytes, maximumArguments: Int = MPDLimits().maximumArguments)
        throws(MPDError) -> MPDRequest
    {
        var bytes = Array(line)
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw MPDError(.argument, "the line is not valid UTF-8")
        }
        var scalars = Substring(text).unicodeScalars[...]
        func skipBlanks() { while let s = scalars.first, s == " " || s == "\t" { scalars.removeFirst() } }
        skipBlanks()
        var name = ""
        while let s = scalars.first, s != " ", s != "\t" {
            name.unicodeScalars.append(s)
            scalars.removeFirst()
        }
        guard !name.isEmpty else { throw MPDError(.unknown, "No command given") }
        guard name.utf8.count <= 64, name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || $0 == "_" || ("0"..."9").contains($0) })
        else {
            throw MPDError(.unknown, "unknown command \"\(name)\"")
        }
        var arguments: [String] = []
        while true {
            skipBlanks()
            guard let first = scalars.first else { break }
            guard arguments.count < maximumArguments else { throw MPDError(.argument, "too many arguments") }
            var argument = ""
            if first == "\"" {
                scalars.removeFirst()
                var closed = false
                while let s = scalars.popFirst() {
                    if s == "\"" {
                        closed = true
                        break
                    }
                    if s == "\\" {
                        guard let escaped = scalars.popFirst() else { break }
                        argument.unicodeScalars.append(escaped)
                    } else {
                        argument.unicodeScalars.append(s)
                    }
                }
                guard closed else { throw MPDError(.argument, "Missing closing '\"'") }
                if let after = scalars.first, after != " ", after != "\t" {
                    throw MPDError(.argument, "Space expected after closing '\"'")
                }
            } else {
                while let s = scalars.first, s != " ", s != "\t" {
                    guard s != "\"" else { throw MPDError(.argument, "Invalid unquoted character") }
                    argument.unicodeScalars.append(s)
                    scalars.removeFirst()
                }
            }
            arguments.append(argument)
        }
        return MPDRequest(name: name, arguments: arguments)
    }

    /// A value quoted for a request line: what a client writes, and what the tests send.
    public static func quoted(_ argument: String) -> String {
        var result = "\""
        for c in argument {
            if c == "\"" || c == "\\" { result.append("\\") }
            result.append(c)
        }
        return result + "\""
    }
}
