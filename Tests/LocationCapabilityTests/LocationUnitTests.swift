@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import LocationCapability
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// The location capability's pieces without any process: parsing, fixes, accuracy modes,
/// payloads, params, the significant-change filter, and the client's wait logic fed events.
@Suite struct LocationUnitTests {
    // Lines as gpsd 3.22 wrote them in the feeder experiment.
    static let tpv3D = #"{"class":"TPV","device":"tcp://127.0.0.1:42805","mode":3,"time":"2026-11-30T04:10:41.110Z","ept":0.005,"lat":52.521600000,"lon":13.406600000,"altHAE":81.0000,"altMSL":34.0000,"alt":34.0000,"epx":16.110,"epy":26.670,"epv":26.910,"track":123.4000,"magtrack":127.4596,"magvar":4.1,"speed":2.570,"climb":0.000,"eps":266.70,"epc":269.10,"geoidSep":47.000,"eph":17.100,"sep":27.360}"#
    static let tpv2D = #"{"class":"TPV","device":"tcp://127.0.0.1:40409","mode":2,"time":"2026-11-30T04:11:33.900Z","ept":0.005,"lat":-33.868800000,"lon":-151.209300000,"epx":16.110,"epy":26.670,"epv":358.800,"magvar":19.4,"speed":0.000,"eps":177.80,"eph":228.000,"sep":364.8}"#
    static let sky = #"{"class":"SKY","device":"tcp://127.0.0.1:42805","xdop":1.07,"ydop":1.78,"hdop":0.90,"nSat":4,"uSat":3,"satellites":[{"PRN":2,"used":true}]}"#

    // MARK: parsing

    @Test func parsesTheReportsGpsdSends() throws {
        #expect(GpsdMessage.parse(#"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#)
                == .version(release: "3.22", protoMajor: 3, protoMinor: 14))
        #expect(GpsdMessage.parse(#"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyACM0"},{"class":"DEVICE","path":"tcp://x:1"}]}"#)
                == .devices(["/dev/ttyACM0", "tcp://x:1"]))
        #expect(GpsdMessage.parse(#"{"class":"DEVICE","path":"/dev/ttyACM0","activated":"2026-01-01T00:00:00.000Z"}"#)
                == .device(path: "/dev/ttyACM0", active: true))
        #expect(GpsdMessage.parse(#"{"class":"DEVICE","path":"/dev/ttyACM0","activated":0}"#)
                == .device(path: "/dev/ttyACM0", active: false))
        guard case .tpv(let t)? = GpsdMessage.parse(Self.tpv3D) else { Issue.record("no TPV"); return }
        #expect(t.mode == 3 && t.lat == 52.5216 && t.lon == 13.4066 && t.altMSL == 34 && t.eph == 17.1)
        #expect(t.speed == 2.57 && t.track == 123.4 && t.epx == 16.11 && t.epy == 26.67)
        #expect(GpsdMessage.parse(Self.sky) == .sky(.init(device: "tcp://127.0.0.1:42805", hdop: 0.9, seen: 4, used: 3)))
        #expect(GpsdMessage.parse(#"{"class":"GST","time":"2026-11-30T04:10:41.110Z","lat":3.0,"lon":4.0}"#)
                == .gst(.init(device: nil, time: "2026-11-30T04:10:41.110Z", lat: 3, lon: 4)))
        #expect(GpsdMessage.parse(#"{"class":"WATCH","enable":true}"#) == .watch)
        #expect(GpsdMessage.parse(#"{"class":"PPS","device":"/dev/pps0"}"#) == .other("PPS"))
        #expect(GpsdMessage.parse(#"{"class":"ERROR","message":"bad"}"#) == .error("bad"))
    }

    @Test func malformedLinesAreNil() {
        for line in ["", "x", "{", "[]", "null", "42", #"{"class":1}"#, #"{"klass":"TPV"}"#, #"{"class":"TPV","lat":NaN}"#, #"{"class":"DEVICES","devices":7}"#,
                     String(repeating: "[", count: 10_000)] {
            #expect(GpsdMessage.parse(line) == nil, "\(line.prefix(30))")
        }
    }

    @Test func outOfRangeAndNonNumbersAreAbsent() {
        guard case .tpv(let t)? = GpsdMessage.parse(#"{"class":"TPV","mode":7,"lat":95,"lon":"1","speed":-3,"track":400,"eph":0,"epx":-1,"altMSL":null}"#)
        else { Issue.record("no TPV"); return }
        #expect(t.mode == 0 && t.lat == nil && t.lon == nil && t.speed == nil && t.track == nil)
        #expect(t.eph == nil && t.epx == nil && t.altMSL == nil)
    }

    // MARK: fixes

    func fix(_ line: String, gst: GpsdMessage.GST? = nil) -> GpsFix? {
        guard case .tpv(let t)? = GpsdMessage.parse(line) else { return nil }
        return GpsFix(tpv: t, gst: gst, receivedAt: .now, receivedWallTime: WallTime.now)
    }

    @Test func fixFromTPV() throws {
        let f = try #require(fix(Self.tpv3D))
        #expect(f.mode == .threeD && f.altitudeMeters == 34 && f.accuracyMeters == 17.1 && f.headingDeg == 123.4)
        #expect(f.time.map(ISOTime.format) == "2026-11-30T04:10:41.110Z")
        let g = try #require(fix(Self.tpv2D))
        #expect(g.mode == .twoD && g.altitudeMeters == nil && g.accuracyMeters == 228)
        #expect(fix(#"{"class":"TPV","mode":1}"#) == nil)
        #expect(fix(#"{"class":"TPV","mode":3,"lat":1}"#) == nil)
        // A 2D fix never carries an altitude, even if the report has one.
        #expect(fix(#"{"class":"TPV","mode":2,"lat":1,"lon":2,"altMSL":100}"#)?.altitudeMeters == nil)
        #expect(fix(#"{"class":"TPV","mode":3,"lat":1,"lon":2,"track":360}"#)?.headingDeg == 0)
    }

    @Test func accuracyComesFromEphThenEpxEpyThenGST() throws {
        #expect(fix(#"{"class":"TPV","mode":3,"lat":1,"lon":2,"eph":9,"epx":3,"epy":4}"#)?.accuracyMeters == 9)
        #expect(fix(#"{"class":"TPV","mode":3,"lat":1,"lon":2,"epx":3,"epy":4}"#)?.accuracyMeters == 5)
        let gst = GpsdMessage.GST(device: nil, time: "2026-01-01T00:00:00.000Z", lat: 6, lon: 8)
        #expect(fix(#"{"class":"TPV","mode":3,"lat":1,"lon":2,"time":"2026-01-01T00:00:01.000Z"}"#, gst: gst)?.accuracyMeters == 10)
        // A GST from another time is not this fix's estimate.
        #expect(fix(#"{"class":"TPV","mode":3,"lat":1,"lon":2,"time":"2026-01-01T00:01:00.000Z"}"#, gst: gst)?.accuracyMeters == nil)
        #expect(fix(#"{"class":"TPV","mode":3,"lat":1,"lon":2}"#)?.accuracyMeters == nil)
    }

    @Test func distance() {
        // One degree of latitude ≈ 111.2 km; Berlin–Paris ≈ 878 km.
        #expect(abs(GpsFix.distance(0, 0, 1, 0) - 111_195) < 10)
        #expect(abs(GpsFix.distance(52.5200, 13.4050, 48.8566, 2.3522) - 877_500) < 2_000)
        #expect(GpsFix.distance(10, 20, 10, 20) == 0)
    }

    // MARK: accuracy modes and payload

    func makeFix(_ lat: Double = 52.5216, _ lon: Double = 13.4066, mode: GpsFix.Mode = .threeD, error: Double? = 10,
                 at: ContinuousClock.Instant = .now) -> GpsFix {
        GpsFix(latitude: lat, longitude: lon, mode: mode, altitudeMeters: mode == .threeD ? 34 : nil, speedMps: 1.25,
               headingDeg: 90, accuracyMeters: error, time: ISOTime.parse("2026-11-30T04:10:41.110Z"), receivedAt: at)
    }

    @Test func accuracyModesAccept() {
        #expect(LocationAccuracy.precise.accepts(makeFix(error: 500)))
        #expect(LocationAccuracy.precise.accepts(makeFix(mode: .twoD, error: 40)))
        #expect(!LocationAccuracy.precise.accepts(makeFix(mode: .twoD, error: 150)))
        #expect(!LocationAccuracy.precise.accepts(makeFix(mode: .twoD, error: nil)))
        #expect(LocationAccuracy.precise.acceptsAsFallback(makeFix(mode: .twoD)))
        #expect(LocationAccuracy.balanced.accepts(makeFix(mode: .twoD, error: 100)))
        #expect(!LocationAccuracy.balanced.accepts(makeFix(error: 100.5)))
        #expect(!LocationAccuracy.balanced.accepts(makeFix(error: nil)))
        #expect(!LocationAccuracy.balanced.acceptsAsFallback(makeFix()))
        #expect(LocationAccuracy.coarse.accepts(makeFix(error: 999)))
        #expect(LocationAccuracy.coarse.accepts(makeFix(error: nil)))
        #expect(!LocationAccuracy.coarse.accepts(makeFix(error: 1001)))
        #expect(LocationAccuracy.better(makeFix(error: 50), than: makeFix(mode: .twoD, error: 5)))
        #expect(LocationAccuracy.better(makeFix(mode: .twoD, error: 5), than: makeFix(mode: .twoD, error: 50)))
    }

    @Test func payloadShape() {
        let v = LocationPayload.make(makeFix(), accuracy: .precise)
        #expect(v == ["lat": 52.5216, "lon": 13.4066, "accuracyMeters": 10, "altitudeMeters": 34, "speedMps": 1.25,
                      "headingDeg": 90, "timestamp": "2026-11-30T04:10:41.110Z", "isPrecise": true, "source": "gps"])
        let noTime = GpsFix(latitude: 1, longitude: 2, mode: .twoD, accuracyMeters: nil,
                            receivedWallTime: WallTime(timeIntervalSince1970: 1_700_000_000.5))
        let w = LocationPayload.make(noTime, accuracy: .precise)
        #expect(w == ["lat": 1, "lon": 2, "accuracyMeters": 1000, "timestamp": "2023-11-14T22:13:20.500Z",
                      "isPrecise": false, "source": "gps"])
        #expect(LocationPayload.make(makeFix(error: 17.100000000000001), accuracy: .precise)["accuracyMeters"]?.jsonString() == "17.1")
    }

    @Test func coarseRoundsToAKilometerGrid() {
        let v = LocationPayload.make(makeFix(52.5216, -13.4066, error: 17), accuracy: .coarse)
        #expect(v["lat"] == 52.52)
        #expect(v["lon"] == -13.41)
        #expect(v["lat"]?.jsonString() == "52.52")
        #expect(v["isPrecise"] == false)
        // The reported error covers the rounding (half a cell diagonal, ~680 m at 52.5°).
        let err = v["accuracyMeters"]?.doubleValue ?? 0
        #expect(err > 17 + 600 && err < 17 + 800, "\(err)")
        #expect(LocationPayload.make(makeFix(error: 17), accuracy: .balanced)["lat"] == 52.5216)
    }

    @Test func isoTime() {
        #expect(ISOTime.parse("2026-11-30T04:10:41.110Z").map(ISOTime.format) == "2026-11-30T04:10:41.110Z")
        #expect(ISOTime.parse("2026-11-30T04:10:41Z").map(ISOTime.format) == "2026-11-30T04:10:41.000Z")
        #expect(ISOTime.parse("2026-11-30T06:10:41.5+02:00").map(ISOTime.format) == "2026-11-30T04:10:41.500Z")
        #expect(ISOTime.parse("1970-01-01T00:00:00.000Z")?.timeIntervalSince1970 == 0)
        for bad in ["", "2026-11-30", "2026-13-30T04:10:41Z", "2026-11-30T04:10:41", "2026-11-30T04:10:41.Z", "garbage-garbage-garbage"] {
            #expect(ISOTime.parse(bad) == nil, "\(bad)")
        }
    }

    // MARK: params and settings

    @Test func paramsDefaultsAndClamping() throws {
        // Through the manifest row, as the dispatcher does it.
        func get(_ v: JSONValue) throws(NodeError) -> LocationGetParams { try LocationGetParams.decode(.value(v), command: "location.get") }
        let d = try get([:])
        #expect(d.timeoutMs == 10_000 && d.accuracy == .precise && d.maxAge == nil)
        #expect(try get(["timeoutMs": 5]).timeoutMs == 1000)
        #expect(try get(["timeoutMs": -5]).timeoutMs == 1000)
        #expect(try get(["timeoutMs": 999_999]).timeoutMs == 60_000)
        #expect(throws: NodeError.self) { try get(["timeoutMs": 1500.5]) }
        #expect(try get(["desiredAccuracy": "coarse"]).accuracy == .coarse)
        #expect(throws: NodeError.self) { try get(["maxAgeMs": -1]) }
        #expect(throws: NodeError.self) { try get(["desiredAccuracy": "exact"]) }
        // Through the spec's decoder, as the dispatcher does it.
        let spec = try #require(LocationCommands.capability(config: NodeConfig()).commands.first)
        #expect(spec.name == "location.get" && !spec.requiresForeground && spec.capability == "location")
    }

    @Test func endpointParsing() {
        #expect(GpsdEndpoint("127.0.0.1:2947") == GpsdEndpoint(host: "127.0.0.1", port: 2947))
        #expect(GpsdEndpoint("gps.local") == GpsdEndpoint(host: "gps.local", port: 2947))
        #expect(GpsdEndpoint("[::1]:3000") == GpsdEndpoint(host: "::1", port: 3000))
        #expect(GpsdEndpoint("[::1]") == GpsdEndpoint(host: "::1", port: 2947))
        #expect(GpsdEndpoint("::1") == GpsdEndpoint(host: "::1", port: 2947))
        #expect(GpsdEndpoint("[::1]:3000")?.description == "[::1]:3000")
        for bad in ["", "host:", "host:0", "host:70000", ":2947", "[::1", "[::1]x", "h:p"] {
            #expect(GpsdEndpoint(bad) == nil, "\(bad)")
        }
    }

    @Test func settingsFromConfig() {
        var config = NodeConfig(environment: [:])
        #expect(LocationSettings(config.capability("location")).endpoint == .default)
        config.capabilities["location"] = .init(enabled: true, settings: ["gpsd": "10.0.0.5:4000", "significantChangeMeters": 250,
                                                                          "significantChangeMinIntervalMs": 5000])
        let s = LocationSettings(config.capability("location"))
        #expect(s.endpoint == GpsdEndpoint(host: "10.0.0.5", port: 4000))
        #expect(s.significantChangeMeters == 250 && s.significantChangeMinInterval == .seconds(5))
        #expect(LocationCommands.capability(config: config).settings.endpoint?.port == 4000)
    }

    @Test func badEndpointMakesTheCapabilityUnavailable() async {
        var config = NodeConfig(environment: [:])
        config.capabilities["location"] = .init(enabled: true, settings: ["gpsd": "nonsense:port"])
        let cap = LocationCommands.capability(config: config)
        guard case .unavailable(let why) = await cap.availability() else { Issue.record("available"); return }
        #expect(why.contains("nonsense:port"))
    }

    @Test func disabledIsRefusedByTheDispatcher() async throws {
        let config = NodeConfig(environment: [:])   // location is off by default
        let cap = LocationCommands.capability(config: config)
        let registry = await CommandRegistry.load([cap], enabled: { config.isEnabled($0) })
        #expect(registry.manifest.commands.isEmpty)
        let monitor = PresenceMonitor(mode: .manual, source: FixedPresenceSource(.background, reason: "test"))
        let d = Dispatcher(registry: registry, presence: monitor)
        guard case .failure(let e) = await d.invoke(id: "1", command: "location.get", params: nil, timeoutMs: 1000) else {
            Issue.record("ran while disabled"); return
        }
        #expect(e.code == "LOCATION_DISABLED")
        // Never started: a disabled capability opens no socket.
        #expect(await cap.client?.status == .idle)
    }

    @Test func enabledIsAdvertisedAndNotForegroundOnly() async throws {
        var config = NodeConfig(environment: [:])
        let port = try freeLoopbackPort()
        config.capabilities["location"] = .init(enabled: true, settings: ["gpsd": .string("127.0.0.1:\(port)")])
        let cap = LocationCommands.capability(config: config)
        defer { Task { await cap.shutdown() } }
        let registry = await CommandRegistry.load([cap], enabled: { config.isEnabled($0) })
        #expect(registry.manifest.commands == ["location.get"])
        #expect(registry.manifest.permissions["location"] == true)
        // Presence background: still runs (and fails only because nothing listens).
        let monitor = PresenceMonitor(mode: .manual, source: FixedPresenceSource(.background, reason: "test"))
        let d = Dispatcher(registry: registry, presence: monitor)
        guard case .failure(let e) = await d.invoke(id: "1", command: "location.get", params: Data(#"{"timeoutMs":2000}"#.utf8),
                                                    timeoutMs: 10_000) else { Issue.record("fix from nothing"); return }
        #expect(e.code == "LOCATION_UNAVAILABLE")
    }

    // MARK: line splitting

    @Test func lineBuffer() {
        var b = LineBuffer(maxLineBytes: 16)
        b.append(Array("one\r\ntw".utf8))
        #expect(b.takeLines() == ["one"])
        b.append(Array("o\n\nthree\n".utf8))
        #expect(b.takeLines() == ["two", "", "three"])
        b.append(Array(String(repeating: "x", count: 40).utf8))
        #expect(b.takeLines().isEmpty)
        b.append(Array("yyy\nfour\n".utf8))
        #expect(b.takeLines() == ["four"])
        #expect(b.droppedLines == 1)
    }

    // MARK: significant changes

    @Test func significantChangeFilter() {
        let t0 = ContinuousClock.now
        var f = SignificantChangeFilter(thresholdMeters: 100, minInterval: .seconds(60))
        #expect(f.offer(makeFix(52.5, 13.4, at: t0))?.movedMeters == nil)          // first fix
        #expect(f.offer(makeFix(52.5005, 13.4, at: t0 + .seconds(61))) == nil)       // 56 m: not significant
        #expect(f.offer(makeFix(52.51, 13.4, at: t0 + .seconds(10))) == nil)         // 1.1 km but rate-limited
        let u = f.offer(makeFix(52.51, 13.4, at: t0 + .seconds(61)))                 // still away: now reported
        #expect(abs((u?.movedMeters ?? 0) - 1112) < 5)
        #expect(f.offer(makeFix(53.0, 13.4, error: 500, at: t0 + .seconds(200))) == nil)  // too noisy to count
        var off = SignificantChangeFilter(thresholdMeters: 0, minInterval: .zero)
        #expect(off.offer(makeFix()) == nil)
    }

    // MARK: the client's waits, fed events directly (no socket)

    func connectedClient() async -> GpsdClient {
        let c = GpsdClient(endpoint: .default)
        await c.handle(.connected)
        await c.handle(.message(.devices(["/dev/ttyACM0"]), receivedAt: .now, wallTime: WallTime.now))
        return c
    }

    func tpv(_ lat: Double, mode: Int = 3, eph: Double = 10) -> WatchEvent {
        .message(.tpv(.init(device: nil, mode: mode, time: nil, lat: lat, lon: 2, altMSL: 5, speed: nil, track: nil,
                            eph: eph, epx: nil, epy: nil)), receivedAt: .now, wallTime: WallTime.now)
    }

    @Test func waitResolvesOnAnAcceptableFix() async {
        let c = await connectedClient()
        let waiting = Task { await c.waitForFix(accuracy: .balanced, until: .now + .seconds(5)) }
        try? await Task.sleep(for: .milliseconds(50))
        await c.handle(tpv(1, eph: 500))      // too coarse for balanced
        await c.handle(tpv(3, eph: 50))
        guard case .fix(let f) = await waiting.value else { Issue.record("no fix"); return }
        #expect(f.latitude == 3)
        #expect(await c.latestFix?.latitude == 3)
    }

    @Test func preciseFallsBackToTheBestFixAtTheDeadline() async {
        let c = await connectedClient()
        let waiting = Task { await c.waitForFix(accuracy: .precise, until: .now + .milliseconds(300)) }
        try? await Task.sleep(for: .milliseconds(50))
        await c.handle(tpv(1, mode: 2, eph: 800))
        await c.handle(tpv(2, mode: 2, eph: 200))
        await c.handle(tpv(3, mode: 2, eph: 400))
        guard case .timedOut(let best?) = await waiting.value else { Issue.record("no fallback"); return }
        #expect(best.latitude == 2)
    }

    @Test func unreachableFailsWaitersAtOnce() async {
        let c = await connectedClient()
        let waiting = Task { await c.waitForFix(accuracy: .precise, until: .now + .seconds(10)) }
        try? await Task.sleep(for: .milliseconds(50))
        await c.handle(.disconnected("gpsd closed the connection"))
        await c.handle(.unreachable("connect: Connection refused"))
        guard case .unreachable(let why) = await waiting.value else { Issue.record("still waiting"); return }
        #expect(why.contains("refused"))
        #expect(await c.devices == nil)
    }

    @Test func deviceHotplugUpdatesTheList() async {
        let c = await connectedClient()
        await c.handle(.message(.device(path: "/dev/ttyUSB1", active: true), receivedAt: .now, wallTime: WallTime.now))
        #expect(await c.devices == ["/dev/ttyACM0", "/dev/ttyUSB1"])
        await c.handle(.message(.device(path: "/dev/ttyACM0", active: false), receivedAt: .now, wallTime: WallTime.now))
        #expect(await c.devices == ["/dev/ttyUSB1"])
    }

    @Test func timeoutMessageSaysWhatGpsdSees() async {
        let c = await connectedClient()
        await c.handle(.message(.sky(.init(device: nil, hdop: 9, seen: 7, used: 3)), receivedAt: .now, wallTime: WallTime.now))
        await c.handle(tpv(1, mode: 2, eph: 228))
        let e = LocationErrors.timeout(mode: .balanced, waited: .milliseconds(1500), snapshot: await c.snapshot, endpoint: .default)
        #expect(e.code == "LOCATION_TIMEOUT")
        #expect(e.message == "LOCATION_TIMEOUT: no fix with an error estimate ≤ 100 m within 1500 ms (gpsd at 127.0.0.1:2947: " +
                "last fix 2D ±228 m, 3 of 7 satellites used, device /dev/ttyACM0). Give the receiver a view of the sky, " +
                "raise timeoutMs, or allow a cached fix with maxAgeMs")
    }
}
