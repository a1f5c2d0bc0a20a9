@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

@Suite struct StateStoreTests {
    func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func identityIsCreatedOnceAndReused() throws {
        let dir = TestPaths.tempDir("store") + "/state"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try StateStore(stateDir: dir).identity()
        let second = try StateStore(stateDir: dir).identity()
        #expect(first.deviceId == second.deviceId)
        #expect(first.publicKey == second.publicKey)
        #expect(first.deviceId.count == 64)
        #expect(first.deviceId == Encoding.hex(Crypto.sha256(first.publicKey)))
        #expect(first.publicKeyBase64url.count == 43)
        #expect(mode(dir) == 0o700)
        #expect(mode(dir + "/state.db") == 0o600)
    }

    /// A daemon starting on a new state directory while CLI commands run beside it: every one of
    /// them creates the schema or finds it made, none fails with "table … already exists", and
    /// they share one identity.
    @Test func processesOpeningANewStateAtOnceAllSucceed() throws {
        for round in 0..<5 {
            let e = CLIEnv("")
            defer { e.cleanup() }
            let script = "for i in 0 1 2 3 4 5; do (\"$0\" status --json --config \"$1\" > \"$2/out$i\" 2> \"$2/err$i\"; echo $? > \"$2/rc$i\") & done; wait"
            _ = try runProcess("/bin/sh", ["-c", script, TestPaths.nodeBinary, e.config, e.dir], env: e.vars)
            var ids: Set<String> = []
            for i in 0..<6 {
                let out = (try? String(contentsOfFile: e.dir + "/out\(i)", encoding: .utf8)) ?? ""
                let rc = (try? String(contentsOfFile: e.dir + "/rc\(i)", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                let err = (try? String(contentsOfFile: e.dir + "/err\(i)", encoding: .utf8)) ?? ""
                #expect(rc == "0", "round \(round), process \(i): \(err)")
                if let id = JSONValue.parse(out)?["deviceId"]?.stringValue { ids.insert(id) }
            }
            #expect(ids.count == 1, "round \(round): \(ids)")
        }
    }

    @Test func walAndStrictTables() throws {
        let dir = TestPaths.tempDir("store")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try StateStore(stateDir: dir)
        _ = try store.identity()
        #expect(FileManager.default.fileExists(atPath: dir + "/state.db-wal"))
        #expect(try store.schemaVersion() == Migrations.latest)
        let db = try SQLiteDatabase(path: dir + "/state.db")
        let sql = try db.query("SELECT sql FROM sqlite_master WHERE type='table' AND name='device_tokens'").first?.first?.text ?? ""
        #expect(sql.contains("STRICT"))
    }

    @Test func deviceTokensPerGatewayAndRole() throws {
        let dir = TestPaths.tempDir("store")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try StateStore(stateDir: dir)
        let t = StateStore.DeviceToken(token: "tok-1", role: "node", scopes: [], issuedAtMs: 42)
        try store.saveDeviceToken(gateway: "ws://a:18789", t)
        try store.saveDeviceToken(gateway: "ws://b:18789", StateStore.DeviceToken(token: "tok-b", role: "node", scopes: ["x", "y"], issuedAtMs: nil))
        #expect(try store.deviceToken(gateway: "ws://a:18789", role: "node") == t)
        #expect(try store.deviceToken(gateway: "ws://a:18789", role: "operator") == nil)
        #expect(try StateStore(stateDir: dir).deviceToken(gateway: "ws://b:18789", role: "node")?.scopes == ["x", "y"])
        try store.saveDeviceToken(gateway: "ws://a:18789", StateStore.DeviceToken(token: "tok-2", role: "node", scopes: [], issuedAtMs: 43))
        #expect(try store.deviceToken(gateway: "ws://a:18789", role: "node")?.token == "tok-2")
        try store.deleteDeviceToken(gateway: "ws://a:18789", role: "node")
        #expect(try store.deviceToken(gateway: "ws://a:18789", role: "node") == nil)
    }

    @Test func gatewayRecordsRoundTrip() throws {
        let dir = TestPaths.tempDir("store")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try StateStore(stateDir: dir)
        var g = StateStore.GatewayRecord(gateway: "wss://gw:18789", url: "wss://gw:18789", tlsPin: "ab12",
                                         pairingState: .pending, pairingRequestId: "req-1")
        try store.saveGateway(g)
        #expect(try store.gateway("wss://gw:18789") == g)
        #expect(g.pairingDescription == "pending approval (request req-1)")
        g.pairingState = .paired
        g.pairingRequestId = nil
        try store.saveGateway(g)
        #expect(try StateStore(stateDir: dir).gateways() == [g])
    }

    @Test func corruptDatabaseIsMovedAsideNotSilentlyReplaced() throws {
        let dir = TestPaths.tempDir("store")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        _ = FileManager.default.createFile(atPath: dir + "/state.db", contents: garbage)
        let store = try StateStore(stateDir: dir)
        let aside = try #require(store.movedAside)
        #expect(aside.hasPrefix(dir + "/state.db.corrupt-"))
        // The damaged bytes are kept, untouched, for the user to inspect or recover.
        #expect(FileManager.default.contents(atPath: aside) == garbage)
        _ = try store.identity()
        #expect(mode(dir + "/state.db") == 0o600)
    }

    @Test func newerSchemaIsRefused() throws {
        let dir = TestPaths.tempDir("store")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try StateStore(stateDir: dir)
        let db = try SQLiteDatabase(path: dir + "/state.db")
        try db.execute("UPDATE schema_version SET version = 99")
        #expect(throws: StateStore.Failure.self) { try StateStore(stateDir: dir) }
    }

    @Test func stateDirThatIsAFileIsAClearError() throws {
        let dir = TestPaths.tempDir("store")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = FileManager.default.createFile(atPath: dir + "/file", contents: Data())
        do {
            _ = try StateStore(stateDir: dir + "/file")
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("not a directory"))
        }
    }
}

@Suite struct CryptoTests {
    // RFC 8032 §7.1 TEST 1 and TEST 2.
    @Test func rfc8032Vectors() throws {
        func bytes(_ hex: String) -> [UInt8] {
            var out: [UInt8] = []
            var i = hex.startIndex
            while i < hex.endIndex { let j = hex.index(i, offsetBy: 2); out.append(UInt8(hex[i..<j], radix: 16)!); i = j }
            return out
        }
        let seed1 = bytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
        #expect(Encoding.hex(try Crypto.ed25519PublicKey(seed: seed1)) == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        #expect(Encoding.hex(try Crypto.ed25519Sign(seed: seed1, message: [])) ==
                "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        let seed2 = bytes("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")
        let sig2 = try Crypto.ed25519Sign(seed: seed2, message: [0x72])
        #expect(Encoding.hex(sig2) ==
                "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00")
        let pub2 = try Crypto.ed25519PublicKey(seed: seed2)
        #expect(Crypto.ed25519Verify(publicKey: pub2, message: [0x72], signature: sig2))
        #expect(!Crypto.ed25519Verify(publicKey: pub2, message: [0x73], signature: sig2))
    }

    /// FIPS 180 examples and the RFC 6455 handshake's own example (§1.3).
    @Test func sha1Vectors() {
        #expect(Encoding.hex(Crypto.sha1(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(Encoding.hex(Crypto.sha1([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(Encoding.hex(Crypto.sha1(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        let accept = Data(Crypto.sha1(Array("dGhlIHNhbXBsZSBub25jZQ==258EAFA5-E914-47DA-95CA-C5AB0DC85B11".utf8))).base64EncodedString()
        #expect(accept == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func randomBytesDiffer() {
        let a = Crypto.randomBytes(32), b = Crypto.randomBytes(32)
        #expect(a.count == 32 && a != b && a != [UInt8](repeating: 0, count: 32))
    }

    @Test func base64urlRoundTrip() {
        for n in 0..<70 {
            let b = Crypto.randomBytes(n)
            let s = Encoding.base64url(b)
            #expect(!s.contains("=") && !s.contains("+") && !s.contains("/"))
            #expect(Encoding.fromBase64url(s) == b)
        }
    }
}
