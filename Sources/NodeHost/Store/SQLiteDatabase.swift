import CSQLite
import Config
import Glibc
import Kit
import Support

/// A failed SQLite call, with SQLite's own message.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public var description: String { "SQLite error \(code): \(message)" }
    /// The file is not a database or is damaged (as opposed to busy, full or read-only).
    public var isCorruption: Bool {
        let primary = code & 0xff
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
    }
}

/// A value bound into or read out of a statement.
public enum SQLiteValue: Sendable, Equatable {
    case null, integer(Int64), text(String), blob([UInt8])
    public var text: String? { if case .text(let s) = self { return s }; return nil }
    public var integer: Int64? { if case .integer(let i) = self { return i }; return nil }
    public var blob: [UInt8]? { if case .blob(let b) = self { return b }; return nil }
}

/// Thin owner of one sqlite3 connection. Not shared across threads: StateStore serialises access.
final class SQLiteDatabase {
    private var db: OpaquePointer?
    let path: String

    /// `readOnlyImmutable`: for a file on a read-only mount, opened without locks or WAL index.
    init(path: String, readOnlyImmutable: Bool = false) throws(SQLiteError) {
        self.path = path
        var handle: OpaquePointer?
        let rc: Int32
        if readOnlyImmutable {
            let uri = "file:" + path.replacing("%", with: "%25").replacing("?", with: "%3f").replacing("#", with: "%23") + "?mode=ro&immutable=1"
            rc = sqlite3_open_v2(uri, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
        } else {
            rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        }
        guard rc == SQLITE_OK, let handle else {
            let msg = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(handle)
            throw SQLiteError(code: rc, message: msg)
        }
        db = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit { sqlite3_close_v2(db) }

    func execute(_ sql: String) throws(SQLiteError) {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let msg = err.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(err)
            throw SQLiteError(code: rc, message: msg)
        }
    }

    /// Runs one statement with bound parameters and returns its rows.
    @discardableResult
    func query(_ sql: String, _ params: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        var stmt: OpaquePointer?
        var rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK else { throw SQLiteError(code: rc, message: lastMessage) }
        defer { sqlite3_finalize(stmt) }
        for (i, p) in params.enumerated() {
            let idx = Int32(i + 1)
            switch p {
            case .null: rc = sqlite3_bind_null(stmt, idx)
            case .integer(let v): rc = sqlite3_bind_int64(stmt, idx, v)
            case .text(let s): rc = sqlite3_bind_text(stmt, idx, s, -1, csqlite_transient())
            case .blob(let b): rc = b.withUnsafeBytes { sqlite3_bind_blob(stmt, idx, $0.baseAddress, Int32(b.count), csqlite_transient()) }
            }
            guard rc == SQLITE_OK else { throw SQLiteError(code: rc, message: lastMessage) }
        }
        var rows: [[SQLiteValue]] = []
        while true {
            rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw SQLiteError(code: rc, message: lastMessage) }
            var row: [SQLiteValue] = []
            for c in 0..<sqlite3_column_count(stmt) {
                switch sqlite3_column_type(stmt, c) {
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(stmt, c)))
                case SQLITE_TEXT: row.append(.text(String(cString: sqlite3_column_text(stmt, c))))
                case SQLITE_BLOB:
                    let n = Int(sqlite3_column_bytes(stmt, c))
                    if n > 0, let p = sqlite3_column_blob(stmt, c) {
                        row.append(.blob(Array(UnsafeRawBufferPointer(start: p, count: n))))
                    } else { row.append(.blob([])) }
                case SQLITE_FLOAT: row.append(.integer(Int64(sqlite3_column_double(stmt, c))))
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
        return rows
    }

    func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let v = try body()
            try execute("COMMIT")
            return v
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private var lastMessage: String { String(cString: sqlite3_errmsg(db)) }
}
