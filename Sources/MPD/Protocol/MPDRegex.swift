/// A regular expression of a filter's `=~` and `!~`, matched without backtracking, so that no
/// pattern a client sends can make a search run for ever.
///
/// mpd hands the pattern to PCRE, whose backtracking makes `(a+)+$` exponential in the length of
/// the value. Here the pattern is compiled to a program of at most ``maximumProgramLength``
/// instructions and run as a Thompson NFA (every possible state advanced together, one input
/// scalar at a time): the work for one value is at most its length times the program's, whatever
/// the pattern. The price is the part of PCRE that needs backtracking, refused when parsed:
/// back-references, look-around, possessive quantifiers, inline options.
///
/// The syntax is PCRE's common core: literals, `.` (any scalar but a newline), `[…]` and `[^…]`
/// with ranges and the escapes below, `\d \D \w \W \s \S`, `\t \n \r`, a backslash before any
/// punctuation, `^` and `$` (start and end of the value), `\b` and `\B`, groups `(…)` and `(?:…)`,
/// `|`, and the quantifiers `* + ? {n} {n,} {n,m}` (n, m at most 100), each possibly lazy (`*?`),
/// which cannot change whether a value matches. A `{` that starts no quantifier is a literal, as
/// in PCRE. The search is unanchored: the pattern may match anywhere in the value.
struct MPDRegex: Sendable {
    /// The longest pattern accepted, in UTF-8 bytes.
    static let maximumPatternBytes = 256
    /// The most instructions a compiled pattern may have (counted repetitions are copies).
    static let maximumProgramLength = 2_048
    /// The most scalars of a value that are searched; the rest is not looked at (no tag is longer
    /// in practice, and it keeps one value's cost within `maximumValueScalars × program length`).
    static let maximumValueScalars = 4_096

    private let program: [Instruction]
    /// The bracket expressions and class escapes, which `.set` instructions name by index (so
    /// that reading an instruction copies no array).
    private let sets: [ScalarSet]
    private let foldsCase: Bool

    /// Compiles `pattern`, case-insensitively when `foldsCase`.
    ///
    /// - Throws: ``MPDError`` (``MPDError/Code/argument``) naming what is wrong or unsupported.
    init(_ pattern: String, foldsCase: Bool) throws(MPDError) {
        guard pattern.utf8.count <= Self.maximumPatternBytes else {
            throw MPDError(.argument, "Error in regex: longer than \(Self.maximumPatternBytes) bytes")
        }
        var parser = Parser(scalars: Array(pattern.unicodeScalars), foldsCase: foldsCase)
        let tree = try parser.parseAlternation()
        if parser.position < parser.scalars.count {
            throw MPDError(.argument, "Error in regex at offset \(parser.position): unmatched closing parenthesis")
        }
        var compiler = Compiler()
        try compiler.emit(tree)
        compiler.program.append(.match)
        program = compiler.program
        sets = compiler.sets
        self.foldsCase = foldsCase
    }

    /// Whether the pattern matches somewhere in `value`.
    func matches(_ value: String) -> Bool {
        // Five lists of instruction indices, on the stack: a search calls this once per value.
        let count = program.count
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 5 * count + 1) { buffer in
            buffer.initialize(repeating: -1)
            var machine = Machine(
                program: program, sets: sets, foldsCase: foldsCase,
                addedAt: UnsafeMutableBufferPointer(rebasing: buffer[0..<count]),
                current: UnsafeMutableBufferPointer(rebasing: buffer[count..<2 * count]),
                next: UnsafeMutableBufferPointer(rebasing: buffer[2 * count..<3 * count]),
                pending: UnsafeMutableBufferPointer(rebasing: buffer[(3 * count)..<buffer.count]))
            return machine.run(value.unicodeScalars)
        }
    }

    /// The scalar's lower-case form when it is one scalar, else the scalar itself.
    static func lowercase(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        if scalar.isASCII {
            return ("A"..."Z").contains(scalar) ? Unicode.Scalar(UInt8(scalar.value) + 0x20) : scalar
        }
        guard scalar.properties.changesWhenLowercased else { return scalar }
        let mapping = scalar.properties.lowercaseMapping.unicodeScalars
        return mapping.count == 1 ? mapping.first! : scalar
    }

    static func uppercase(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        if scalar.isASCII {
            return ("a"..."z").contains(scalar) ? Unicode.Scalar(UInt8(scalar.value) - 0x20) : scalar
        }
        guard scalar.properties.changesWhenUppercased else { return scalar }
        let mapping = scalar.properties.uppercaseMapping.unicodeScalars
        return mapping.count == 1 ? mapping.first! : scalar
    }

    // MARK: The tree

    fileprivate indirect enum Node {
        case empty
        case scalar(Unicode.Scalar)
        case set(ScalarSet)
        case anyButNewline
        case start, end
        case wordBoundary(Bool)
        case sequence([Node])
        case alternation([Node])
        case repetition(Node, minimum: Int, maximum: Int?)
    }

    /// A bracket expression or class escape: ranges, and whether it is negated.
    fileprivate struct ScalarSet: Sendable {
        var ranges: [ClosedRange<UInt32>] = []
        var negated = false

        func contains(_ scalar: Unicode.Scalar) -> Bool {
            ranges.contains { $0.contains(scalar.value) } != negated
        }

        static let digits = ScalarSet(ranges: [0x30...0x39])
        static let word = ScalarSet(ranges: [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A])
        static let space = ScalarSet(ranges: [0x09...0x0D, 0x20...0x20])
    }

    // MARK: Parsing

    private struct Parser {
        let scalars: [Unicode.Scalar]
        let foldsCase: Bool
        var position = 0
        var depth = 0

        private var next: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

        private func error(_ message: String) -> MPDError {
            MPDError(.argument, "Error in regex at offset \(position): \(message)")
        }

        mutating func parseAlternation() throws(MPDError) -> Node {
            var branches = [try parseSequence()]
            while next == "|" {
                position += 1
                branches.append(try parseSequence())
            }
            return branches.count == 1 ? branches[0] : .alternation(branches)
        }

        private mutating func parseSequence() throws(MPDError) -> Node {
            var items: [Node] = []
            while let scalar = next, scalar != "|", scalar != ")" {
                let atom = try parseAtom()
                items.append(try parseQuantifiers(of: atom))
            }
            return items.count == 1 ? items[0] : .sequence(items)
        }

        private mutating func parseQuantifiers(of atom: Node) throws(MPDError) -> Node {
            var node = atom
            while let scalar = next {
                let bounds: (Int, Int?)
                switch scalar {
                case "*": bounds = (0, nil)
                case "+": bounds = (1, nil)
                case "?": bounds = (0, 1)
                case "{":
                    guard let counted = countedBounds() else { return node }
                    bounds = counted.bounds
                    position = counted.end - 1
                default: return node
                }
                if case .start = node { throw error("quantifier does not follow a repeatable item") }
                position += 1
                if next == "?" {
                    position += 1  // lazy: the same values match
                } else if next == "+" {
                    throw error("possessive quantifiers are not supported")
                }
                node = .repetition(node, minimum: bounds.0, maximum: bounds.1)
            }
            return node
        }

        /// `{n}`, `{n,}` or `{n,m}` at the current position, and the index after its `}`; nil
        /// when the brace starts no quantifier (it is then a literal).
        private func countedBounds() -> (bounds: (Int, Int?), end: Int)? {
            var index = position + 1
            func number() -> Int? {
                var value: Int?
                while index < scalars.count, ("0"..."9").contains(scalars[index]) {
                    value = min((value ?? 0) * 10 + Int(scalars[index].value - 0x30), 1_000_000)
                    index += 1
                }
                return value
            }
            guard let minimum = number() else { return nil }
            var maximum: Int? = minimum
            if index < scalars.count, scalars[index] == "," {
                index += 1
                maximum = number()
            }
            guard index < scalars.count, scalars[index] == "}" else { return nil }
            return ((minimum, maximum), index + 1)
        }

        private mutating func parseAtom() throws(MPDError) -> Node {
            let scalar = scalars[position]
            position += 1
            switch scalar {
            case "(":
                if next == "?" {
                    guard position + 1 < scalars.count, scalars[position + 1] == ":" else {
                        throw error("only (?: groups are supported")
                    }
                    position += 2
                }
                depth += 1
                guard depth <= 32 else { throw error("parentheses are nested too deeply") }
                let inner = try parseAlternation()
                guard next == ")" else { throw error("missing closing parenthesis") }
                position += 1
                depth -= 1
                return inner
            case "*", "+", "?": throw error("quantifier does not follow a repeatable item")
            case ".": return .anyButNewline
            case "^": return .start
            case "$": return .end
            case "[": return .set(try parseBracket())
            case "\\": return try parseEscape(inBracket: false)
            default: return literal(scalar)
            }
        }

        private func literal(_ scalar: Unicode.Scalar) -> Node {
            .scalar(foldsCase ? MPDRegex.lowercase(scalar) : scalar)
        }

        private mutating func parseEscape(inBracket: Bool) throws(MPDError) -> Node {
            guard let escaped = next else { throw error("\\ at end of pattern") }
            position += 1
            switch escaped {
            case "d": return .set(.digits)
            case "D": return .set(ScalarSet(ranges: ScalarSet.digits.ranges, negated: true))
            case "w": return .set(.word)
            case "W": return .set(ScalarSet(ranges: ScalarSet.word.ranges, negated: true))
            case "s": return .set(.space)
            case "S": return .set(ScalarSet(ranges: ScalarSet.space.ranges, negated: true))
            case "t": return literal("\t")
            case "n": return literal("\n")
            case "r": return literal("\r")
            case "b" where !inBracket: return .wordBoundary(true)
            case "B" where !inBracket: return .wordBoundary(false)
            default:
                guard !escaped.properties.isAlphabetic, escaped.properties.numericType == nil else {
                    throw error("\\\(escaped) is not supported")
                }
                return literal(escaped)
            }
        }

        private mutating func parseBracket() throws(MPDError) -> ScalarSet {
            var set = ScalarSet()
            if next == "^" {
                set.negated = true
                position += 1
            }
            var first = true
            while true {
                guard let scalar = next else { throw error("missing terminating ] for character class") }
                if scalar == "]" && !first {
                    position += 1
                    return set
                }
                first = false
                position += 1
                var low = scalar
                if scalar == "\\" {
                    switch try parseEscape(inBracket: true) {
                    case .scalar(let value): low = value
                    case .set(let inner) where !inner.negated:
                        set.ranges += inner.ranges
                        continue
                    default: throw error("a negated class escape inside [] is not supported")
                    }
                }
                if next == "-", position + 1 < scalars.count, scalars[position + 1] != "]" {
                    position += 1
                    var high = scalars[position]
                    position += 1
                    if high == "\\" {
                        guard case .scalar(let value) = try parseEscape(inBracket: true) else {
                            throw error("invalid range in character class")
                        }
                        high = value
                    }
                    guard low.value <= high.value else { throw error("range out of order in character class") }
                    set.ranges.append(low.value...high.value)
                } else {
                    set.ranges.append(low.value...low.value)
                }
            }
        }
    }

    // MARK: Compiling

    fileprivate enum Instruction {
        case scalar(Unicode.Scalar)
        /// The set at this index of the program's sets.
        case set(Int)
        case anyButNewline
        /// Continue at both targets.
        case split(Int, Int)
        case jump(Int)
        case assertStart, assertEnd
        case wordBoundary(Bool)
        case match
    }

    private struct Compiler {
        var program: [Instruction] = []
        var sets: [ScalarSet] = []

        mutating func emit(_ node: Node) throws(MPDError) {
            guard program.count < MPDRegex.maximumProgramLength else {
                throw MPDError(.argument, "Error in regex: the pattern is too complex")
            }
            switch node {
            case .empty: break
            case .scalar(let scalar): program.append(.scalar(scalar))
            case .set(let set):
                program.append(.set(sets.count))
                sets.append(set)
            case .anyButNewline: program.append(.anyButNewline)
            case .start: program.append(.assertStart)
            case .end: program.append(.assertEnd)
            case .wordBoundary(let at): program.append(.wordBoundary(at))
            case .sequence(let items):
                for item in items { try emit(item) }
            case .alternation(let branches):
                // split L1, next; L1: branch; jump end; next: split L2, …; last branch.
                var jumps: [Int] = []
                for (index, branch) in branches.enumerated() {
                    if index < branches.count - 1 {
                        let split = program.count
                        program.append(.split(split + 1, 0))
                        try emit(branch)
                        jumps.append(program.count)
                        program.append(.jump(0))
                        program[split] = .split(split + 1, program.count)
                    } else {
                        try emit(branch)
                    }
                }
                for jump in jumps { program[jump] = .jump(program.count) }
            case .repetition(let inner, let minimum, let maximum):
                guard minimum <= 100, (maximum ?? minimum) <= 100, minimum <= (maximum ?? minimum) else {
                    throw MPDError(.argument, "Error in regex: a repetition count is over 100 or out of order")
                }
                for _ in 0..<minimum { try emit(inner) }
                if let maximum {
                    // Each optional copy may be skipped to the end.
                    var splits: [Int] = []
                    for _ in minimum..<maximum {
                        splits.append(program.count)
                        program.append(.split(program.count + 1, 0))
                        try emit(inner)
                    }
                    for split in splits { program[split] = .split(split + 1, program.count) }
                } else {
                    let loop = program.count
                    program.append(.split(loop + 1, 0))
                    try emit(inner)
                    program.append(.jump(loop))
                    program[loop] = .split(loop + 1, program.count)
                }
            }
            guard program.count <= MPDRegex.maximumProgramLength else {
                throw MPDError(.argument, "Error in regex: the pattern is too complex")
            }
        }
    }

    // MARK: Running

    /// Every thread of the NFA advanced together: each instruction is entered at most once per
    /// input position, so the work is bounded by positions × instructions.
    private struct Machine {
        let program: [Instruction]
        let sets: [ScalarSet]
        let foldsCase: Bool
        /// The position at which each instruction was last added, to add it once per position.
        let addedAt: UnsafeMutableBufferPointer<Int>
        /// The threads waiting for the scalar at the position, and for the one after; each holds
        /// an instruction at most once (`addedAt`), so `program.count` entries suffice.
        var current: UnsafeMutableBufferPointer<Int>
        var next: UnsafeMutableBufferPointer<Int>
        /// What ``add(_:at:before:after:toNext:)`` has still to follow: each instruction entered
        /// pushes at most two, so `2 × program.count + 1` entries suffice.
        let pending: UnsafeMutableBufferPointer<Int>
        var currentCount = 0
        var nextCount = 0

        init(
            program: [Instruction], sets: [ScalarSet], foldsCase: Bool, addedAt: UnsafeMutableBufferPointer<Int>,
            current: UnsafeMutableBufferPointer<Int>, next: UnsafeMutableBufferPointer<Int>,
            pending: UnsafeMutableBufferPointer<Int>
        ) {
            self.program = program
            self.sets = sets
            self.foldsCase = foldsCase
            self.addedAt = addedAt
            self.current = current
            self.next = next
            self.pending = pending
        }

        mutating func run(_ value: String.UnicodeScalarView) -> Bool {
            var scalars = value.makeIterator()
            func read() -> Unicode.Scalar? {
                guard let scalar = scalars.next() else { return nil }
                return foldsCase ? MPDRegex.lowercase(scalar) : scalar
            }
            var before: Unicode.Scalar?
            var scalar = read()
            var position = 0
            while true {
                // Unanchored: a new thread starts at every position.
                if add(0, at: position, before: before, after: scalar, toNext: false) { return true }
                guard let consumed = scalar, position < MPDRegex.maximumValueScalars else { return false }
                let following = read()
                nextCount = 0
                for index in 0..<currentCount {
                    let pc = current[index]
                    if consumes(program[pc], consumed),
                        add(pc + 1, at: position + 1, before: consumed, after: following, toNext: true)
                    {
                        return true
                    }
                }
                swap(&current, &next)
                currentCount = nextCount
                (before, scalar) = (consumed, following)
                position += 1
            }
        }

        private func consumes(_ instruction: Instruction, _ scalar: Unicode.Scalar) -> Bool {
            switch instruction {
            case .scalar(let expected): return scalar == expected
            case .anyButNewline: return scalar != "\n"
            case .set(let index):
                // The input is lower-cased when folding; a set written in capitals (`[A-Z]`)
                // still matches through the upper-case form.
                return sets[index].contains(scalar) || (foldsCase && sets[index].contains(MPDRegex.uppercase(scalar)))
            default: return false
            }
        }

        /// Adds `start` and everything reachable from it without input at `position` (between
        /// `before` and `after`, nil at the ends) to the current or next threads; true when the
        /// match instruction is reached.
        private mutating func add(
            _ start: Int, at position: Int, before: Unicode.Scalar?, after: Unicode.Scalar?, toNext: Bool
        ) -> Bool {
            var pendingCount = 1
            pending[0] = start
            while pendingCount > 0 {
                pendingCount -= 1
                let pc = pending[pendingCount]
                guard addedAt[pc] != position else { continue }
                addedAt[pc] = position
                switch program[pc] {
                case .match: return true
                case .jump(let target):
                    pending[pendingCount] = target
                    pendingCount += 1
                case .split(let first, let second):
                    pending[pendingCount] = second
                    pending[pendingCount + 1] = first
                    pendingCount += 2
                case .assertStart, .assertEnd, .wordBoundary:
                    if holds(program[pc], before: before, after: after) {
                        pending[pendingCount] = pc + 1
                        pendingCount += 1
                    }
                case .scalar, .set, .anyButNewline:
                    if toNext {
                        next[nextCount] = pc
                        nextCount += 1
                    } else {
                        current[currentCount] = pc
                        currentCount += 1
                    }
                }
            }
            return false
        }

        private func holds(_ assertion: Instruction, before: Unicode.Scalar?, after: Unicode.Scalar?) -> Bool {
            switch assertion {
            case .assertStart: return before == nil
            case .assertEnd: return after == nil
            case .wordBoundary(let wanted):
                let isWordBefore = before.map { ScalarSet.word.contains($0) } ?? false
                let isWordAfter = after.map { ScalarSet.word.contains($0) } ?? false
                return (isWordBefore != isWordAfter) == wanted
            default: return false
            }
        }
    }
}
