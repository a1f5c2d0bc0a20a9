@testable import Config
import Foundation
import Testing

/// `invoke`'s client finds the daemon's control socket from the config file alone, without the
/// installed bundles' manifests: the same state directory `load` gives, whatever the capability
/// sections say; nil when the file cannot be read or parsed, so that `load` explains why.
@Suite struct ConfigStateDirTests {
    @Test func theFilesStateDirWithoutReadingBundles() throws {
        let dir = TestPaths.tempDir("statedir"); defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/c.json5"
        // `screen` is known to the full load (and valid there); `nosuchbundle` is not.
        try "{ node: { stateDir: '~/ocn-state' }, capabilities: { screen: { enabled: false } } }".write(toFile: file, atomically: true, encoding: .utf8)
        let env = ["HOME": "/home/u"]
        #expect(ConfigLoader.stateDir(path: file, environment: env) == "/home/u/ocn-state")
        #expect(try ConfigLoader.load(path: file, environment: env).stateDir == "/home/u/ocn-state")
        try "{ node: { stateDir: '/srv/n' }, capabilities: { nosuchbundle: { x: 1 } } }".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(ConfigLoader.stateDir(path: file, environment: env) == "/srv/n")
    }

    @Test func noFileIsTheDefaultAndABrokenOneIsNil() throws {
        let env = ["HOME": "/home/u"]
        #expect(ConfigLoader.stateDir(path: nil, environment: env) == (try ConfigLoader.load(path: nil, environment: env).stateDir))
        let dir = TestPaths.tempDir("statedir"); defer { try? FileManager.default.removeItem(atPath: dir) }
        try "{ node: { stateDir: ".write(toFile: dir + "/bad.json5", atomically: true, encoding: .utf8)
        #expect(ConfigLoader.stateDir(path: dir + "/bad.json5", environment: env) == nil)
        #expect(ConfigLoader.stateDir(path: dir + "/missing.json5", environment: env) == nil)
    }
}
