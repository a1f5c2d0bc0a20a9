import CSQLite
import Config
import Glibc
import Kit
import Support

/// The node's durable state in one SQLite file inside stateDir (0700 dir, 0600 file, WAL, STRICT
/// tables, versioned migrations): device key, device tokens, gateway records.
public final class StateStore: Sendable {
    public enum Failure: Error, Sendable, CustomStringConvertible {
        case directory(String)
        case database(path: String, SQLiteError)
        case tooNew(path: String, version: Int)
        case crypto(String)

        public var description: String {
            switch self {
            case .directory(let m): return m
            case .database(let path, let e):
                let hint = StorageCondition.hint(code: e.code, directory: PathName.directory(path))
                return "\(path): \(e.message)" + (hint.map { "; \($0)" } ?? "")
            case .tooNew(let path, let v):
                return "\(path) has schema version \(v), newer than this openclaw-node understands (\(Migrations.latest)); upgrade openclaw-node"
            case .crypto(let m): return m
            }
        }
    }

    public static let fileName = "state.db"

    public let stateDir: String
    public let path: String
    /// Set when a damaged database was found and moved aside on open (its new name).
    public let movedAside: String?
    /// The one connection (not thread-safe): reached only through `locked`.
    private let db: Locked<Confined<SQLiteDatabase>>
    private let log = Logger(component: "state")

    public init(stateDir: String) throws(Failure) {
        self.stateDir = stateDir
        self.path = stateDir + "/" + StateStore.fileName
        try StateStore.prepareDirectory(stateDir)
        try StateStore.createFileIfMissing(path)
        do {
            db = Locked(confining: try StateStore.openAndMigrate(path))
            movedAside = nil
        } catch Failure.database(_, let e) where e.isCorruption {
            let aside = "\(path).corrupt-\(Int(WallClock.seconds))"
            log.error("\(path) is damaged (\(e.message)); moved it to \(aside) and started a new state database. " +
                      "The old device key is in that file: a new key means this node must be approved again")
            for suffix in ["", "-wal", "-shm"] where FileSystem.exists(path + suffix) {
                rename(path + suffix, aside + suffix)
            }
            movedAside = aside
            try StateStore.createFileIfMissing(path)
            db = Locked(confining: try StateStore.openAndMigrate(path))
        }
    }

    private static func prepareDirectory(_ dir: String) throws(Failure) {
        if FileSystem.exists(dir) {
            guard FileSystem.isDirectory(dir) else { throw .directory("stateDir \(dir) exists but is not a directory") }
            if let why = StateTrust.problem(directory: dir) { throw .directory(why) }
            return
        }
        do {
            try FileSystem.createDirectory(dir, intermediates: true, mode: 0o700)
        } catch {
            throw .directory("cannot create stateDir \(dir): \(error.reason) (set node.stateDir to a writable place)")
        }
        chmod(dir, 0o700)
    }

    /// SQLite would create the file with the umask; create it 0600 first so no window exists.
    /// O_EXCL: an existing file is never opened here, because closing any descriptor of a file drops
    /// every POSIX lock this process holds on it — including those of a connection this process
    /// already has open (the daemon opens the database a second time for capability documents).
    /// Without its locks that connection looked absent to other processes, which then checkpointed
    /// and reset the WAL under it, and it went on reading an old snapshot.
    private static func createFileIfMissing(_ path: String) throws(Failure) {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 { fchmod(fd, 0o600); close(fd); return }
        guard errno == EEXIST else { throw .directory("cannot create \(path): \(String(cString: strerror(errno)))") }
        if let why = StateTrust.problem(database: path) { throw .directory(why) }
        chmod(path, 0o600)
    }

    private static func openAndMigrate(_ path: String) throws(Failure) -> SQLiteDatabase {
        do {
            return try openReadWrite(path)
        } catch Failure.database(_, let e) where [SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_IOERR].contains(e.code & 0xff)
                    && StorageCondition.of(directory: PathName.directory(path)) == .readOnly {
            // A state directory on a read-only mount: reads (status, caps, doctor) still work;
            // every write fails and says why. Nothing can write the file meanwhile, so SQLite may
            // treat it as immutable (no WAL index to create).
            // Commits still in the WAL are invisible to an immutable open: rather than serve an old
            // state (an older token, no identity), say what is needed.
            if let size = FileSystem.size(path + "-wal"), size > 0 {
                throw Failure.database(path: path, SQLiteError(code: SQLITE_READONLY,
                    message: "its write-ahead log (\(PathName.lastComponent(path))-wal) holds changes that cannot be merged on a read-only file system"))
            }
            do {
                let db = try SQLiteDatabase(path: path, readOnlyImmutable: true)
                let version = try schemaVersion(db)
                guard version == Migrations.latest else { throw Failure.database(path: path, e) }
                return db
            } catch let e2 as SQLiteError {
                throw .database(path: path, e2)
            } catch let f as Failure {
                throw f
            } catch {
                throw .database(path: path, e)
            }
        }
    }

    /// The migration step the database is at (0: none yet).
    private static func schemaVersion(_ db: SQLiteDatabase) throws(SQLiteError) -> Int {
        Int(try db.query("SELECT version FROM schema_version").first?.first?.integer ?? 0)
    }

    private static func openReadWrite(_ path: String) throws(Failure) -> SQLiteDatabase {
        do {
            let db = try SQLiteDatabase(path: path)
            // A damaged or foreign file fails here, before anything is written to it.
            let check = try db.query("PRAGMA quick_check")
            if let first = check.first?.first?.text, first != "ok" {
                throw SQLiteError(code: SQLITE_CORRUPT, message: "integrity check failed: \(first)")
            }
            _ = try db.query("PRAGMA journal_mode=WAL")
            try db.execute("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL")
            try db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL) STRICT")
            var version = try schemaVersion(db)
            if version > Migrations.latest { throw Failure.tooNew(path: path, version: version) }
            while version < Migrations.latest {
                let due = version
                version = try db.transaction { () throws(SQLiteError) -> Int in
                    // Another process may have migrated since the read above (a CLI command beside a
                    // daemon starting on a new state directory: CI saw "table device_identity
                    // already exists"). Read again under the write lock; run the step only if due.
                    let now = try schemaVersion(db)
                    guard now == due else { return now }
                    try db.execute(Migrations.steps[due])
                    try db.execute("DELETE FROM schema_version")
                    try db.query("INSERT INTO schema_version (version) VALUES (?)", [.integer(Int64(due + 1))])
                    return due + 1
                }
            }
            if version > Migrations.latest { throw Failure.tooNew(path: path, version: version) }
            return db
        } catch let e as SQLiteError {
            throw .database(path: path, e)
        } catch let e as Failure {
            throw e
        } catch {
            throw .database(path: path, SQLiteError(code: SQLITE_ERROR, message: "\(error)"))
        }
    }

    @discardableResult
    func locked<T>(_ body: (SQLiteDatabase) throws(SQLiteError) -> T) throws(Failure) -> T {
        do { return try db.withConfined { (db: inout SQLiteDatabase) throws(SQLiteError) -> T in try body(db) } }
        catch { throw .database(path: path, error) }
    }

    public static func nowMs() -> Int64 { WallClock.milliseconds }

    // MARK: identity

    /// The device key: loaded if stored, created (once) otherwise.
    public func identity() throws(Failure) -> DeviceIdentity {
        let row = try locked { (db: SQLiteDatabase) throws(SQLiteError) in
            try db.query("SELECT private_seed, public_key, created_at_ms FROM device_identity WHERE id = 1").first
        }
        // The public key was derived once, when the key was made, and stored beside the seed:
        // reading the identity (`status`) needs no cryptography library.
        if let row, let seed = row[0].blob, let pub = row[1].blob, let created = row[2].integer {
            guard seed.count == 32, pub.count == 32 else { throw .crypto("the stored device key in \(path) is unusable (wrong size)") }
            return DeviceIdentity(seed: seed, publicKey: pub, createdAtMs: created)
        }
        let fresh: DeviceIdentity
        do { fresh = try DeviceIdentity.generate(nowMs: StateStore.nowMs()) } catch { throw .crypto("\(error)") }
        try locked { (db: SQLiteDatabase) throws(SQLiteError) in
            // INSERT OR IGNORE + re-read: two processes starting at once still end up with one key.
            try db.query("INSERT OR IGNORE INTO device_identity (id, algorithm, private_seed, public_key, created_at_ms) VALUES (1, 'ed25519', ?, ?, ?)",
                         [.blob(fresh.seed), .blob(fresh.publicKey), .integer(fresh.createdAtMs)])
        }
        log.info("created device key \(fresh.deviceId) in \(path)")
        return try identity()
    }

    // MARK: device tokens

    public struct DeviceToken: Sendable, Equatable {
        public let token: String
        public let role: String
        public let scopes: [String]
        public let issuedAtMs: Int64?

        public init(token: String, role: String, scopes: [String], issuedAtMs: Int64?) {
            self.token = token; self.role = role; self.scopes = scopes; self.issuedAtMs = issuedAtMs
        }
    }

    public func deviceToken(gateway: String, role: String) throws(Failure) -> DeviceToken? {
        try locked { (db: SQLiteDatabase) throws(SQLiteError) in
            guard let r = try db.query("SELECT token, scopes, issued_at_ms FROM device_tokens WHERE gateway = ? AND role = ?",
                                       [.text(gateway), .text(role)]).first, let token = r[0].text else { return nil }
            let scopes = (r[1].text ?? "").split(separator: ",").map(String.init)
            return DeviceToken(token: token, role: role, scopes: scopes, issuedAtMs: r[2].integer)
        }
    }

    public func saveDeviceToken(gateway: String, _ t: DeviceToken) throws(Failure) {
        try locked { (db: SQLiteDatabase) throws(SQLiteError) in
            try db.query("""
                INSERT INTO device_tokens (gateway, role, token, scopes, issued_at_ms, stored_at_ms) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (gateway, role) DO UPDATE SET token = excluded.token, scopes = excluded.scopes,
                  issued_at_ms = excluded.issued_at_ms, stored_at_ms = excluded.stored_at_ms
                """, [.text(gateway), .text(t.role), .text(t.token), .text(t.scopes.joined(separator: ",")),
                      t.issuedAtMs.map { .integer($0) } ?? .null, .integer(StateStore.nowMs())])
        }
    }

    public func deleteDeviceToken(gateway: String, role: String) throws(Failure) {
        try locked { (db: SQLiteDatabase) throws(SQLiteError) in
            try db.query("DELETE FROM device_tokens WHERE gateway = ? AND role = ?", [.text(gateway), .text(role)])
        }
    }

    // MARK: gateway records

    public struct GatewayRecord: Sendable, Equatable {
        public var gateway: String
        public var url: String
        public var tlsPin: String?
        public var displayName: String?
        public var pairingState: PairingState
        public var pairingRequestId: String?
        public var lastError: String?
        public var lastSeenMs: Int64?

        public init(gateway: String, url: String, tlsPin: String? = nil, displayName: String? = nil,
                    pairingState: PairingState = .unknown, pairingRequestId: String? = nil, lastError: String? = nil,
                    lastSeenMs: Int64? = nil) {
            self.gateway = gateway; self.url = url; self.tlsPin = tlsPin; self.displayName = displayName
            self.pairingState = pairingState; self.pairingRequestId = pairingRequestId
            self.lastError = lastError; self.lastSeenMs = lastSeenMs
        }
    }

    public func gateways() throws(Failure) -> [GatewayRecord] {
        try locked { (db: SQLiteDatabase) throws(SQLiteError) in
            try db.query("SELECT gateway, url, tls_pin, display_name, pairing_state, pairing_request_id, last_error, last_seen_ms FROM gateways ORDER BY gateway")
                .map { r in
                    GatewayRecord(gateway: r[0].text ?? "", url: r[1].text ?? "", tlsPin: r[2].text, displayName: r[3].text,
                                  pairingState: r[4].text.flatMap(PairingState.init(rawValue:)) ?? .unknown, pairingRequestId: r[5].text,
                                  lastError: r[6].text, lastSeenMs: r[7].integer)
                }
        }
    }

    public func gateway(_ key: String) throws(Failure) -> GatewayRecord? {
        try gateways().first { $0.gateway == key }
    }

    public func saveGateway(_ g: GatewayRecord) throws(Failure) {
        try locked { (db: SQLiteDatabase) throws(SQLiteError) in
            try db.query("""
                INSERT INTO gateways (gateway, url, tls_pin, display_name, pairing_state, pairing_request_id, last_error, last_seen_ms, updated_at_ms)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (gateway) DO UPDATE SET url = excluded.url, tls_pin = excluded.tls_pin,
                  display_name = excluded.display_name, pairing_state = excluded.pairing_state,
                  pairing_request_id = excluded.pairing_request_id, last_error = excluded.last_error,
                  last_seen_ms = excluded.last_seen_ms, updated_at_ms = excluded.updated_at_ms
                """, [.text(g.gateway), .text(g.url), g.tlsPin.map { .text($0) } ?? .null,
                      g.displayName.map { .text($0) } ?? .null, .text(g.pairingState.rawValue),
                      g.pairingRequestId.map { .text($0) } ?? .null, g.lastError.map { .text($0) } ?? .null,
                      g.lastSeenMs.map { .integer($0) } ?? .null, .integer(StateStore.nowMs())])
        }
    }

    // MARK: settings (small key/value facts such as the chosen gateway)

    public func setting(_ key: String) throws(Failure) -> String? {
        try locked { (db: SQLiteDatabase) throws(SQLiteError) in
            try db.query("SELECT value FROM settings WHERE key = ?", [.text(key)]).first?.first?.text
        }
    }

    public func setSetting(_ key: String, _ value: String?) throws(Failure) {
        try locked { (db: SQLiteDatabase) throws(SQLiteError) in
            if let value {
                try db.query("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                             [.text(key), .text(value)])
            } else {
                try db.query("DELETE FROM settings WHERE key = ?", [.text(key)])
            }
        }
    }

    /// The schema version on disk (for status/doctor).
    public func schemaVersion() throws(Failure) -> Int {
        try locked { (db: SQLiteDatabase) throws(SQLiteError) in
            try Self.schemaVersion(db)
        }
    }
}

/// Where pairing with one gateway stands (stored as its raw value).
public enum PairingState: String, Sendable, Equatable {
    /// Never connected, or nothing known yet.
    case unknown
    /// The gateway asked an operator to approve this device (`openclaw devices approve <id>`).
    case pending
    /// Approved: a device token is stored.
    case paired
    case rejected
    /// The last connect failed for a reason retrying cannot fix.
    case error
}

extension StateStore.GatewayRecord {
    /// How the stored pairing state reads to a person (status, doctor).
    public var pairingDescription: String {
        switch pairingState {
        case .paired: return "paired"
        case .pending: return "pending approval (request \(pairingRequestId ?? "unknown"))"
        case .rejected: return "rejected\(lastError.map { ": \($0)" } ?? "")"
        case .error: return "error\(lastError.map { ": \($0)" } ?? "")"
        case .unknown: return "not paired yet"
        }
    }
}
