import Foundation
@testable import Kit
@testable import Support
import Testing

/// JSONValueEncoder gives the tree JSONEncoder's text parses to (the result a handler returns is
/// the JSON it sent before it was typed), leaves nil optionals out, and keeps JSONValue as it is.
struct JSONValueEncoderTests {
    struct Inner: Codable, Equatable { let name: String; let tags: [String] }
    struct Sample: Codable, Equatable {
        let int: Int
        let negative: Int64
        let double: Double
        let float: Float
        let flag: Bool
        let text: String
        let missing: String?
        let present: Int?
        let list: [Int]
        let nested: Inner
        let nestedList: [Inner]
        let map: [String: Double]
        let free: JSONValue
        let byte: UInt8
    }

    static let sample = Sample(int: 42, negative: -7, double: 1.5, float: 0.1, flag: true, text: "a \"q\" \n é",
                               missing: nil, present: 3, list: [1, 2, 3], nested: Inner(name: "n", tags: ["x"]),
                               nestedList: [Inner(name: "a", tags: []), Inner(name: "b", tags: ["y", "z"])],
                               map: ["k": 2.25], free: ["raw": [1, "two", .null]], byte: 255)

    @Test func treeIsWhatJSONEncoderWrites() throws {
        let tree = try JSONValueEncoder.encode(Self.sample)
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let viaBytes = JSONValue.parse([UInt8](try enc.encode(Self.sample)))
        #expect(tree == viaBytes)
        let encoded = try enc.encode(Self.sample)  // outside #expect: Swift 6.0's macro cannot hold a `try` on the right
        #expect(tree.jsonString() == String(decoding: encoded, as: UTF8.self))
    }

    @Test func nilOptionalsAreOmitted() throws {
        let tree = try JSONValueEncoder.encode(Self.sample)
        #expect(tree.objectValue?.keys.contains("missing") == false)
        #expect(tree["present"] == 3)
        #expect(tree["float"] == 0.1)
        #expect(tree["nested"] == ["name": "n", "tags": ["x"]])
        #expect(tree["free"] == ["raw": [1, "two", .null]])
    }

    @Test func roundTripsThroughTheDecoder() throws {
        let tree = try JSONValueEncoder.encode(Self.sample)
        #expect(try JSONValueDecoder.decode(Sample.self, from: tree) == Self.sample)
    }

    @Test func jsonValueAndScalarsAtTheTop() throws {
        let free: JSONValue = ["a": [true, 1.25, "s"], "b": .null]
        #expect(try JSONValueEncoder.encode(free) == free)
        #expect(try JSONValueEncoder.encode(5) == 5)
        #expect(try JSONValueEncoder.encode("s") == "s")
        #expect(try JSONValueEncoder.encode([1, 2]) == [1, 2])
        #expect(try JSONValueEncoder.encode(Optional<Int>.none) == .null)
        #expect(try JSONValueEncoder.encode([String: Int]()) == [:])
    }

    enum Kind: String, Codable { case photo, video }
    struct Custom: Encodable {
        let kind: Kind
        let payload: String
        enum CodingKeys: String, CodingKey { case kind, payload, extra }
        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(kind, forKey: .kind)
            try c.encode(payload, forKey: .payload)
            var n = c.nestedUnkeyedContainer(forKey: .extra)
            try n.encode(1)
            try n.encodeNil()
            var o = n.nestedContainer(keyedBy: CodingKeys.self)
            try o.encode(true, forKey: .kind)
        }
    }

    @Test func customEncodersAndNestedContainers() throws {
        let big = String(repeating: "QUJD", count: 100_000)
        let tree = try JSONValueEncoder.encode(Custom(kind: .video, payload: big))
        #expect(tree == ["kind": "video", "payload": .string(big), "extra": [1, .null, ["kind": true]]])
    }
}

/// A handler's typed result is encoded once, by the prepared call, into the payload tree.
struct TypedResultTests {
    struct EchoParams: CommandParams { var text: String? }
    struct EchoResult: Encodable, Sendable { let text: String; let note: String? }

    @Test func thePreparedCallEncodesTheResult() async throws {
        let handler = CommandHandler("t.echo", params: EchoParams.self) { p, _ in EchoResult(text: p.text ?? "", note: nil) }
        let call = try handler.prepare(.value(["text": "hi"]))
        let context = InvocationContext(invokeId: "1", command: "t.echo", deadline: nil, maxPayloadBytes: 1 << 20)
        #expect(try await call(context) == ["text": "hi"])
        let free = CommandHandler("t.free", params: NoParams.self) { _, _ -> JSONValue in [1, "two"] }
        #expect(try await free.prepare(.none)(context) == [1, "two"])
        let null = CommandHandler("t.null", params: NoParams.self) { _, _ in NullResult() }
        #expect(try await null.prepare(.none)(context) == .null)
    }
}
