import ArgumentParser
import Foundation
import Glibc
import Testing

@testable import mpris_bridge

/// An ordinary start's arguments are parsed without ArgumentParser (it costs about a
/// millisecond of every start); both parsers must read them alike, and the quick one must
/// leave everything else to ArgumentParser.
@Suite struct ServeOptionsTests {
    static let library = FileManager.default.temporaryDirectory.path

    /// Argument lists the quick parser takes, each read as ArgumentParser reads it.
    static let ordinary: [[String]] = [
        [],
        ["serve"],
        ["--library", library, "--cache-dir", "/tmp/c", "--state-dir", "/tmp/s", "--audio-sink", "fakesink sync=true"],
        ["serve", "--name", "car", "--no-scan", "--no-watch", "--no-mpd", "--unless-running", "--bluetooth"],
        ["--log-level", "debug", "--bus", "system", "--tree-layout", "car", "--tree-cache-rows", "500"],
        ["--replay-gain=album", "--mpd-port=0", "--mpd-bind", "0.0.0.0", "--mpd-socket", "/tmp/m.socket"],
        ["--resume-longer-than", "20m", "--resume-genre", "Audiobook", "--resume-genre=Podcast"],
        ["--resume-longer-than=off", "--library", library, "--resume-folder", library, "--resume-folder", library],
        ["--name=a_b-c", "--library=" + library],
    ]

    @Test(arguments: ordinary) func theQuickParserReadsAnOrdinaryStartAsArgumentParserDoes(_ arguments: [String]) throws {
        let quick = try #require(ServeOptions(quickParsing: arguments))
        let parsed = try Serve.parse(arguments.first == "serve" ? Array(arguments.dropFirst()) : arguments)
        #expect(quick == parsed.options)
    }

    @Test func aPasswordFileIsReadAlike() throws {
        let path = Self.library + "/serve-options-\(getpid()).passwords"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("secret@read\n".utf8), attributes: [.posixPermissions: 0o600]))
        defer { try? FileManager.default.removeItem(atPath: path) }
        try theQuickParserReadsAnOrdinaryStartAsArgumentParserDoes(["--mpd-password-file", path])
    }

    /// Left to ArgumentParser: what it answers itself, and every error, with its own message.
    static let others: [[String]] = [
        ["--help"], ["-h"], ["help"], ["--version"], ["scan"], ["scan", "--quiet"], ["serve", "--help"],
        ["--generate-completion-script", "bash"], ["--bogus"], ["--name"], ["--name", "--no-scan"],
        ["--no-scan=yes"], ["--name", "a", "--name", "b"], ["--no-mpd", "--no-mpd"], ["--log-level", "loud"],
        ["--bus", "both"], ["--tree-layout", "tv"], ["--tree-cache-rows", "many"], ["--mpd-port", "http"],
        ["--resume-longer-than", "soon"], ["-v"], ["--"], ["--audio-sink", "-x"], ["serve", "serve"],
        ["--no-scan", "serve"],
    ]

    @Test(arguments: others) func theQuickParserLeavesTheRestToArgumentParser(_ arguments: [String]) {
        #expect(ServeOptions(quickParsing: arguments) == nil)
    }

    /// Every option `serve --help` lists is one the quick parser knows: a new option must be
    /// added there too, or every start that uses it pays for ArgumentParser.
    @Test func theQuickParserKnowsEveryOptionOfServe() throws {
        let help = Serve.helpMessage(columns: 1000)
        let names = Set(
            help.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," }).filter { $0.hasPrefix("--") }
                .map { String($0.split(separator: "=").first!) })
        #expect(names.count > 20, "\(help)")
        for name in names.subtracting(["--help", "--version"]) {
            let flag = ServeOptions(quickParsing: [name])
            let option = ServeOptions(quickParsing: [name, "1"])
            #expect(flag != nil || option != nil || ServeOptions(quickParsing: [name, "car"]) != nil
                || ServeOptions(quickParsing: [name, "debug"]) != nil || ServeOptions(quickParsing: [name, "system"]) != nil,
                "\(name)")
        }
    }
}
