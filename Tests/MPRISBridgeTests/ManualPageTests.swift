import Foundation
import Glibc
import ProcessTestSupport
import Testing

/// The manual page, `man/mpris-bridge.1`, against the binary it describes: its OPTIONS list
/// every option `--help` lists, command by command, and name none the binary lacks; and it
/// renders with no warning, as `man` and Debian's checks read it.
@Suite(.timeLimit(.minutes(1))) struct ManualPageTests {
    static let pagePath = repositoryRoot + "/man/mpris-bridge.1"

    /// The page's roff source with `\-` read as `-`, as the page's readers see it.
    static func page() throws -> String {
        try String(contentsOfFile: pagePath, encoding: .utf8).replacingOccurrences(of: "\\-", with: "-")
    }

    /// The lines of section `name` (from `.SH name` to the next `.SH`).
    static func section(_ name: String, of page: String) throws -> [Substring] {
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0 == ".SH \(name)" || $0 == ".SH \"\(name)\"" }, "no .SH \(name)")
        let rest = lines[(start + 1)...]
        return Array(rest[..<(rest.firstIndex { $0.hasPrefix(".SH ") } ?? rest.endIndex)])
    }

    /// The options named on the tag lines (the line after each `.TP`) of `lines`.
    static func taggedOptions(_ lines: some Collection<Substring>) -> Set<String> {
        var options: Set<String> = []
        var previous: Substring = ""
        for line in lines {
            if previous.hasPrefix(".TP") { options.formUnion(optionNames(in: line)) }
            previous = line
        }
        return options
    }

    /// `-h`, `--library`, …: every option name in `text`.
    static func optionNames(in text: some StringProtocol) -> Set<String> {
        // An option starts a word: the `-bridge` of `mpris-bridge` is none.
        Set(String(text).matches(of: /(?:^|[^\w-])(--?[a-z][a-z0-9-]*)/).map { String($0.output.1) })
    }

    /// `serve` for `.SS "serve (the default)"`.
    static func firstWord(ofTitle line: Substring) -> Substring {
        line.dropFirst(4).filter { $0 != "\"" }.split(separator: " ").first.map { Substring($0) } ?? ""
    }

    /// What `mpris-bridge ARGUMENTS` (`--help`, `help scan`) lists under OPTIONS: the lines that
    /// start an option.
    static func helpOptions(_ arguments: [String]) async throws -> Set<String> {
        let output = try await ChildProcess.run(daemonExecutable, arguments).check()
        let lines = output.stdout.split(separator: "\n")
        let start = try #require(lines.firstIndex(of: "OPTIONS:"), "\(output)")
        var options: Set<String> = []
        for line in lines[(start + 1)...] {
            guard line.hasPrefix("  ") else { break }
            // An option's first line: two spaces, the option and its value, then two spaces or
            // more before its description; descriptions' further lines are indented further.
            if line.prefix(3) == "  -" { options.formUnion(optionNames(in: line.dropFirst(2).split(separator: "  ")[0])) }
        }
        return options
    }

    /// The subcommands the root's help lists (`serve (default)`, `scan`).
    static func subcommands() async throws -> [String] {
        let output = try await ChildProcess.run(daemonExecutable, ["--help"]).check()
        let lines = output.stdout.split(separator: "\n")
        let start = try #require(lines.firstIndex(of: "SUBCOMMANDS:"), "\(output)")
        return lines[(start + 1)...].prefix { $0.hasPrefix("  ") }
            .filter { $0.prefix(3) != "   " && !$0.contains("help <subcommand>") }
            .map { String($0.split(separator: " ")[0]) }
    }

    @Test func theOptionsSectionListsEveryOptionOfEveryCommandAndNoOther() async throws {
        let page = try Self.page()
        let optionsSection = try Self.section("OPTIONS", of: page)
        let general = try await Self.helpOptions(["--help"])
        #expect(general.isSuperset(of: ["-h", "--help"]), "\(general)")
        let subcommands = try await Self.subcommands()
        #expect(subcommands.contains("serve") && subcommands.contains("scan"), "\(subcommands)")
        var everyOption = general
        for subcommand in subcommands {
            let listed = try await Self.helpOptions(["help", subcommand])
            everyOption.formUnion(listed)
            // The subsection `.SS "serve …"` holds the subcommand's own options; -h and
            // --help (and --version) are described once, for every command.
            let start = try #require(
                optionsSection.firstIndex { $0.hasPrefix(".SS ") && Self.firstWord(ofTitle: $0) == subcommand },
                "OPTIONS has no .SS for \(subcommand)")
            let rest = optionsSection[(start + 1)...]
            let subsection = rest[..<(rest.firstIndex { $0.hasPrefix(".SS") } ?? rest.endIndex)]
            let documented = Self.taggedOptions(subsection)
            let own = listed.subtracting(general)
            #expect(own.subtracting(documented).isEmpty,
                "mpris-bridge \(subcommand) --help lists, the page's OPTIONS do not: \(own.subtracting(documented).sorted())")
            #expect(documented.subtracting(own).isEmpty,
                "the page's OPTIONS give \(subcommand), which has no: \(documented.subtracting(own).sorted())")
        }
        let documented = Self.taggedOptions(optionsSection)
        #expect(everyOption.subtracting(documented).isEmpty, "not in the page's OPTIONS: \(everyOption.subtracting(documented).sorted())")
        #expect(documented.subtracting(everyOption).isEmpty, "in the page's OPTIONS, not in the binary: \(documented.subtracting(everyOption).sorted())")
        let synopsis = Self.optionNames(in: try Self.section("SYNOPSIS", of: page).joined(separator: "\n"))
        #expect(synopsis.subtracting(everyOption).isEmpty, "in the SYNOPSIS, not in the binary: \(synopsis.subtracting(everyOption).sorted())")
        #expect(everyOption.subtracting(synopsis).isEmpty, "not in the SYNOPSIS: \(everyOption.subtracting(synopsis).sorted())")
        let synopsisWords = Set(try Self.section("SYNOPSIS", of: page).flatMap { $0.split(separator: " ") })
        for subcommand in subcommands {
            #expect(synopsisWords.contains(Substring(subcommand)), "the SYNOPSIS never shows mpris-bridge \(subcommand)")
        }
    }

    /// What man-db says of the page (`man --warnings`: groff's warnings, and man-db's own) is
    /// nothing, and `lexgrog` finds its NAME line, which `man -k` and `whatis` index.
    @Test(.enabled(if: access("/usr/bin/man", X_OK) == 0 && access("/usr/bin/lexgrog", X_OK) == 0,
        "man-db is not installed (packages man-db, groff-base): run Scripts/setup"))
    func thePageRendersWithoutAWarning() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["MANWIDTH"] = "80"
        environment["MAN_KEEP_FORMATTING"] = nil
        let rendered = try await ChildProcess.run(
            "/usr/bin/man", ["--warnings", "-E", "UTF-8", "-l", Self.pagePath], environment: environment)
        #expect(rendered.status == 0, "\(rendered)")
        #expect(rendered.stderr.isEmpty, "man --warnings:\n\(rendered.stderr)")
        #expect(rendered.stdout.contains("mpris-bridge"), "\(rendered)")
        let whatis = try await ChildProcess.run("/usr/bin/lexgrog", [Self.pagePath])
        #expect(whatis.status == 0 && whatis.stdout.contains("\"mpris-bridge - "), "\(whatis)")
    }
}
