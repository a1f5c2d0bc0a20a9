@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import ScreenCapability
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// screen.* rows of the command table and their params: defaults, clamping and refusals.
@Suite struct ScreenParamsTests {
    static func snapshot(_ json: String) throws(NodeError) -> ScreenSnapshotParams {
        try ScreenSnapshotParams.decode(InvokeParams(text: json), command: "screen.snapshot")
    }

    static func record(_ json: String) throws(NodeError) -> ScreenRecordParams {
        try ScreenRecordParams.decode(InvokeParams(text: json), command: "screen.record")
    }

    @Test func rowsAreForegroundOnlyAndRecordIsDangerous() {
        let byName = Dictionary(uniqueKeysWithValues: ScreenCapability(settings: ScreenSettings()).commands.map { ($0.name, $0) })
        #expect(byName["screen.snapshot"]?.requiresForeground == true)
        #expect(byName["screen.snapshot"]?.dangerous == false)
        #expect(byName["screen.record"]?.requiresForeground == true)
        #expect(byName["screen.record"]?.dangerous == true)
        #expect(ScreenCapability(settings: ScreenSettings()).commands.map(\.name) == ["screen.snapshot", "screen.record"])
    }

    @Test func snapshotDefaults() throws {
        let p = try Self.snapshot("{}")
        #expect(p.format == .jpeg && !p.isPNG)
        #expect(p.maxWidth == 1600)
        #expect(p.jpegQuality == 72)
        #expect(p.screenIndex == 0)
        #expect(p.includePointer == true)
        #expect(try Self.snapshot(#"{"format": "png"}"#).maxWidth == 900)
        #expect(try Self.snapshot(#"{"format": "png", "maxWidth": 300}"#).maxWidth == 300)
        #expect(try Self.snapshot(#"{"format": "jpg"}"#).format == .jpg)
    }

    @Test func qualityIsAFractionOrAPercentage() throws {
        #expect(try Self.snapshot(#"{"quality": 0.9}"#).jpegQuality == 90)
        #expect(try Self.snapshot(#"{"quality": 1}"#).jpegQuality == 100)
        #expect(try Self.snapshot(#"{"quality": 0}"#).jpegQuality == 5)
        #expect(try Self.snapshot(#"{"quality": 80}"#).jpegQuality == 80)
        #expect(throws: NodeError.self) { try Self.snapshot(#"{"quality": 101}"#) }
    }

    @Test func badSnapshotParamsAreInvalidRequest() {
        for bad in [#"{"format": "gif"}"#, #"{"maxWidth": 4}"#, #"{"screenIndex": -1}"#, #"{"includePointer": "yes"}"#, "[1]"] {
            do { _ = try Self.snapshot(bad); Issue.record("\(bad) accepted") } catch {
                #expect(error.code == "INVALID_REQUEST", "\(bad)")
            }
        }
    }

    @Test func recordDefaultsAndRanges() throws {
        let p = try Self.record("{}")
        #expect(p.durationMs == 10_000)
        #expect(p.fps == 10)
        #expect(p.includeAudio == false)
        for bad in [#"{"durationMs": 100}"#, #"{"durationMs": 60001}"#, #"{"fps": 0}"#, #"{"fps": 31}"#, #"{"format": "webm"}"#] {
            do { _ = try Self.record(bad); Issue.record("\(bad) accepted") } catch {
                #expect(error.code == "INVALID_REQUEST", "\(bad)")
            }
        }
    }

    @Test func configKeysReachTheSettings() throws {
        var config = NodeConfig(environment: [:])
        config.capabilities["screen"] = .init(enabled: true, settings: ["backend": "fbdev", "display": ":3", "fbdev": "/dev/fb1"])
        let s = ScreenSettings(config: config, environment: ["DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-1"])
        #expect(s.backend == .fbdev)
        #expect(s.display == ":3")
        #expect(s.framebuffer == "/dev/fb1")
        #expect(s.wayland == "WAYLAND_DISPLAY=wayland-1")
        #expect(ScreenSettings.waylandEvidence(["XDG_SESSION_TYPE": "wayland"]) == "XDG_SESSION_TYPE=wayland")
        #expect(ScreenSettings.waylandEvidence(["XDG_SESSION_TYPE": "x11"]) == nil)
        let defaults = ScreenSettings(config: NodeConfig(environment: [:]), environment: [:])
        #expect(defaults.backend == .auto && defaults.display == nil && defaults.framebuffer == "/dev/fb0")
    }
}
