// The one wrapper of the sqlite3 C library: connection and statement handles never leave this file.
import CSQLite

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A failed SQLite call: its result code and SQLite's message.
package struct SQLiteError: Error, CustomStringConvertible {
    /// The primary result code (`SQLITE_CORRUPT`, `SQLITE_NOTADB`, ...).
    package var code: Int32
    /// SQLite's own sentence for what went wrong ("database or disk is full").
    package var message: String

    package init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The file is not a database, or its contents are damaged.
    package var isCorruption: Bool { code == SQLITE_CORRUPT || code == SQLITE_NOTADB }

    /// The file could not be written: the disk is full or read-only, or the folder is not ours.
    package var isUnwritable: Bool {
        [SQLITE_FULL, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_PERM, SQLITE_AUTH].contains(code)
    }

    package var description: String { "SQLite error \(code): \(message)" }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}

/// A value bound to a statement parameter.
package enum SQLiteValue {
    case null
    case integer(Int64)
    /// A floating-point number; SQLite stores a NaN as NULL.
    case real(Double)
    case text(String)
    case blob(Data)

    package init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    package init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
    package init(_ value: String?) { self = value.map { .text($0) } ?? .null }
}

/// One SQLite connection with a cache of prepared statements.
///
/// Not thread-safe: an owner keeps it behind a lock (the connection is opened with
/// `SQLITE_OPEN_NOMUTEX`, so SQLite itself does not lock).
package final class SQLiteDatabase {
    private let connection: OpaquePointer
    /// Prepared statements by their SQL text, reused for the connection's life.
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (creating if needed) the database file at `path`; with `immutable`, only reads it,
    /// taking no lock and writing nothing (no journal, no shared memory), as a file on a full or
    /// read-only disk must be read. `:memory:` is a database in memory, as SQLite has it.
    package init(path: String, immutable: Bool = false) throws(SQLiteError) {
        var connection: OpaquePointer?
        let flags =
            immutable
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let name = immutable ? "file:" + Self.uriEscaped(path) + "?immutable=1" : path
        let result = sqlite3_open_v2(name, &connection, flags, nil)
        guard result == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
            sqlite3_close_v2(connection)
            throw SQLiteError(code: result, message: message)
        }
        self.connection = connection
        // Another connection of this process may be checkpointing; wait instead of failing.
        sqlite3_busy_timeout(connection, 5000)
    }

    /// `path` as the path of a `file:` URI: the characters a URI gives meaning to, escaped.
    private static func uriEscaped(_ path: String) -> String {
        var escaped = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x21, 0x7F...:
                escaped += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            default:
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return escaped
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(connection)
    }

    /// Runs one or more statements without parameters or results (schema, pragmas).
    package func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(connection, sql, nil, nil, &errorMessage)
        guard result == SQLITE_OK else {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(connection))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: result & 0xFF, message: message)
        }
    }

    /// Runs a statement that returns no rows, with `arguments` bound to its `?` parameters in order.
    package func run(_ sql: String, _ arguments: SQLiteValue...) throws(SQLiteError) {
        try forEachRow(sql, arguments) { _ throws(SQLiteError) in }
    }

    /// Runs a query and calls `body` with each row, in order. A row is valid only inside `body`.
    package func forEachRow(
        _ sql: String, _ arguments: [SQLiteValue] = [], _ body: (SQLiteRow) throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (offset, argument) in arguments.enumerated() {
            try check(bind(argument, to: statement, at: Int32(offset + 1)))
        }
        while true {
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { return }
            guard result == SQLITE_ROW else { throw error(result) }
            try body(SQLiteRow(statement: statement))
        }
    }

    /// The first row's first column as an integer, or nil when there is no row or it is NULL.
    package func integer(_ sql: String, _ arguments: SQLiteValue...) throws(SQLiteError) -> Int64? {
        var value: Int64?
        try forEachRow(sql, arguments) { row throws(SQLiteError) in
            if value == nil { value = row.integer(0) }
        }
        return value
    }

    /// Runs `body` in a transaction that takes the write lock at once: committed when `body`
    /// returns, rolled back when it throws.
    package func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body`'s reads in one transaction: one read lock for all of them, rather than a
    /// lock taken and released (system calls on the file) for each statement.
    package func readTransaction<Result>(_ body: () throws -> Result) throws -> Result {
        try execute("BEGIN")
        defer { try? execute("COMMIT") }
        return try body()
    }

    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard result == SQLITE_OK, let statement else { throw error(result) }
        statements[sql] = statement
        return statement
    }

    private func bind(_ value: SQLiteValue, to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch value {
        case .null:
            sqlite3_bind_null(statement, index)
        case .integer(let number):
            sqlite3_bind_int64(statement, index, number)
        case .real(let number):
            sqlite3_bind_double(statement, index, number)
        case .text(let text):
            sqlite3_bind_text(statement, index, text, -1, mb_sqlite_transient())
        case .blob(let data):
            data.withUnsafeBytes { bytes in
                // A zero-length blob still needs a non-null pointer to be a blob rather than NULL.
                sqlite3_bind_blob64(
                    statement, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(bytes.count),
                    mb_sqlite_transient())
            }
        }
    }

    private func check(_ result: Int32) throws(SQLiteError) {
        guard result == SQLITE_OK else { throw error(result) }
    }

    private func error(_ result: Int32) -> SQLiteError {
        SQLiteError(code: result & 0xFF, message: String(cString: sqlite3_errmsg(connection)))
    }
}

/// The current row of a running query; columns are numbered from 0.
package struct SQLiteRow {
    fileprivate let statement: OpaquePointer

    /// Whether the column holds NULL.
    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    /// The column as an integer (converted as SQLite converts), or nil when NULL.
    package func integer(_ column: Int32) -> Int64? {
        isNull(column) ? nil : sqlite3_column_int64(statement, column)
    }

    /// The column as a floating-point number, or nil when NULL.
    package func real(_ column: Int32) -> Double? {
        isNull(column) ? nil : sqlite3_column_double(statement, column)
    }

    /// The column as text, or nil when NULL.
    package func text(_ column: Int32) -> String? {
        guard let characters = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: characters, count: count), as: UTF8.self)
    }

    /// The column as bytes, or nil when NULL.
    package func blob(_ column: Int32) -> Data? {
        guard !isNull(column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}
