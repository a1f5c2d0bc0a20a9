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

/// The gpsd client against a fake gpsd (Tests/gpsd/fake_gpsd.py) that sends hostile JSON: the
/// client must skip what it cannot use, never crash, and never put null/NaN into a payload.
@Suite(.serialized) struct LocationFakeGpsdTests {
    static let goodTPV = #"{"class":"TPV","device":"/dev/ttyFAKE0","mode":3,"time":"2026-01-02T03:04:05.678Z","lat":1.2345678,"lon":-2.3456789,"altMSL":12.5,"speed":0.5,"track":270.0,"eph":4.2}"#

    func start() throws -> (GpsdScript, LocationCapability) {
        let fake = try GpsdScript("fake_gpsd.py")
        return (fake, makeLocationCapability(GpsdEndpoint(host: "127.0.0.1", port: fake.port)))
    }

    /// Starts the watch (as the daemon does) and waits until the fake has seen its ?WATCH.
    func watch(_ fake: GpsdScript, _ cap: LocationCapability) async throws {
        #expect(await cap.availability() == .available)
        #expect(await cap.start() == .available)
        guard fake.waitForEvent("watch") != nil else { throw TestFailure("no ?WATCH from the client") }
    }

    /// Waits until a location.get is waiting in the client, so what the fake sends next is new to it.
    func waitForAWaiter(_ cap: LocationCapability) async throws {
        let client = try #require(cap.client)
        let deadline = ContinuousClock.now + .seconds(20)
        while await client.waitingCount == 0 {
            guard ContinuousClock.now < deadline else { throw TestFailure("no location.get waiting after 20 s") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func malformedJSONIsSkipped() async throws {
        let (fake, cap) = try start(); defer { fake.stop(); Task { await cap.shutdown() } }
        try await watch(fake, cap)
        let hostile: [String] = [
            #"{"class":"TPV","lat":"#, "not json at all", "[1,2,3]", #"{"class":5}"#, "null", "{}", #""TPV""#,
            #"{"class":"TPV","mode":3,"lat":"abc","lon":null}"#,
            #"{"class":"TPV","mode":3,"lat":1e999,"lon":2}"#,
            #"{"class":"TPV","mode":3,"lat":NaN,"lon":2}"#,
            #"{"class":"TPV","mode":3,"lat":91.5,"lon":10}"#,
            #"{"class":"TPV","mode":3,"lat":10,"lon":-181}"#,
            #"{"class":"TPV","mode":"3","lat":10,"lon":10}"#,
            #"{"class":"TPV","mode":1,"lat":10,"lon":10}"#,
            #"{"class":"SKY","satellites":"many"}"#, #"{"class":"DEVICES","devices":7}"#,
            #"{"class":"ERROR","message":"unrecognized request"}"#, #"{"class":"GST","lat":-1}"#,
            "\u{FEFF}\u{7F}", String(repeating: "{", count: 5000),
        ]
        for line in hostile { try fake.command(["send": .string(line)]) }
        try fake.command(["junk": 4096])
        // A line of 300 KB without a newline for a while, then its end: dropped whole.
        try fake.command(["sendNoNewline": .string(String(repeating: "x", count: 300_000))])
        try fake.command(["send": "tail-of-the-long-line"])

        let pending = Task { await locationGet(cap, LocationGetParams(timeoutMs: 5000)) }
        try await waitForAWaiter(cap)
        try fake.command(["send": .string(Self.goodTPV)])
        let v = try await pending.value.get()
        #expect(v["lat"]?.doubleValue == 1.2345678)
        #expect(v["lon"]?.doubleValue == -2.3456789)
        #expect(v["altitudeMeters"]?.doubleValue == 12.5)
        #expect(v["accuracyMeters"]?.doubleValue == 4.2)
        #expect(v["headingDeg"]?.doubleValue == 270)
        #expect(v["timestamp"] == "2026-01-02T03:04:05.678Z")
        #expect(!containsNullOrNaN(v))
        let snap = try await #require(cap.client).snapshot
        #expect(snap.malformedLines >= 5)
        #expect(snap.status == .connected)
    }

    @Test func absentAndNullFieldsAreOmittedNotNull() async throws {
        let (fake, cap) = try start(); defer { fake.stop(); Task { await cap.shutdown() } }
        try await watch(fake, cap)
        let pending = Task { await locationGet(cap, LocationGetParams(timeoutMs: 5000)) }
        try await waitForAWaiter(cap)
        // 3D but no altitude, null speed, a string track, no eph: accuracy from epx/epy.
        try fake.command(["send": #"{"class":"TPV","mode":3,"lat":10.5,"lon":20.25,"altMSL":null,"speed":null,"track":"east","epx":3.0,"epy":4.0}"#])
        let v = try await pending.value.get()
        #expect(v["altitudeMeters"] == nil)
        #expect(v["speedMps"] == nil)
        #expect(v["headingDeg"] == nil)
        #expect(v["accuracyMeters"]?.doubleValue == 5)
        #expect(v["timestamp"]?.stringValue.flatMap(ISOTime.parse) != nil)
        #expect(!containsNullOrNaN(v))
        #expect(Set(v.objectValue?.keys.map { $0 } ?? []) == ["lat", "lon", "accuracyMeters", "timestamp", "isPrecise", "source"])
    }

    @Test func reconnectsWhenTheConnectionDrops() async throws {
        let (fake, cap) = try start(); defer { fake.stop(); Task { await cap.shutdown() } }
        try await watch(fake, cap)
        try fake.command(["close": true])
        // The client reconnects and watches again without being asked.
        #expect(fake.waitForEvent("watch", timeout: 5) != nil)
        let pending = Task { await locationGet(cap, LocationGetParams(timeoutMs: 5000)) }
        try await waitForAWaiter(cap)
        try fake.command(["send": .string(Self.goodTPV)])
        #expect((try? await pending.value.get())?["lat"]?.doubleValue == 1.2345678)
    }

    @Test func emptyDeviceListIsUnavailable() async throws {
        let fake = try GpsdScript("fake_gpsd.py"); defer { fake.stop() }
        try fake.command(["devices": []])
        let cap = makeLocationCapability(GpsdEndpoint(host: "127.0.0.1", port: fake.port))
        defer { Task { await cap.shutdown() } }
        try await watch(fake, cap)
        // Once the client has read gpsd's (empty) device list.
        let client = try #require(cap.client)
        for _ in 0..<2000 where await client.snapshot.devices == nil { try await Task.sleep(for: .milliseconds(10)) }
        guard case .failure(let e) = await locationGet(cap) else { Issue.record("fix without device"); return }
        #expect(e.code == "LOCATION_UNAVAILABLE")
        #expect(e.message.contains("no GPS device"))
    }

    @Test func nobodyListeningIsUnavailableQuickly() async throws {
        let port = try freeLoopbackPort()
        let cap = makeLocationCapability(GpsdEndpoint(host: "127.0.0.1", port: port))
        defer { Task { await cap.shutdown() } }
        // gpsd being down does not hide the command.
        #expect(await cap.availability() == .available)
        let start = ContinuousClock.now
        guard case .failure(let e) = await locationGet(cap, LocationGetParams(timeoutMs: 30_000)) else {
            Issue.record("fix without gpsd"); return
        }
        #expect(elapsedSeconds(since: start) < 10, "said at once, not after the 30 s timeout")
        #expect(e.code == "LOCATION_UNAVAILABLE")
        #expect(e.message.hasPrefix("LOCATION_UNAVAILABLE: gpsd not running at 127.0.0.1:\(port)"), "\(e.message)")
        #expect(e.message.contains("Start it with"))
    }

    @Test func cancellationEndsTheWait() async throws {
        let (fake, cap) = try start(); defer { fake.stop(); Task { await cap.shutdown() } }
        try await watch(fake, cap)
        let start = ContinuousClock.now
        let pending = Task { await locationGet(cap, LocationGetParams(timeoutMs: 30_000)) }
        try await waitForAWaiter(cap)
        pending.cancel()
        let r = await pending.value
        #expect(elapsedSeconds(since: start) < 10, "ended by the cancel, not by the 30 s timeout")
        if case .failure(let e) = r { #expect(e.code == "CANCELLED") } else { Issue.record("no error after cancel") }
    }

    @Test func invokeDeadlineShorterThanTimeoutGivesLocationTimeout() async throws {
        let (fake, cap) = try start(); defer { fake.stop(); Task { await cap.shutdown() } }
        try await watch(fake, cap)
        let start = ContinuousClock.now
        let r = await locationGet(cap, LocationGetParams(timeoutMs: 30_000), deadline: .now + .milliseconds(1200))
        #expect(elapsedSeconds(since: start) < 10, "ended at the 1.2 s deadline, not at the 30 s timeout")
        if case .failure(let e) = r { #expect(e.code == "LOCATION_TIMEOUT") } else { Issue.record("fix from nothing") }
    }
}
