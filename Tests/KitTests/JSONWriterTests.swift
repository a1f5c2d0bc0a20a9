import Foundation
@testable import Support
import Testing

/// JSONWriter writes what JSONEncoder (jsonString) writes, and as a quoted value exactly what
/// encoding the text again as a JSON string gives — the payloadJSON of a result frame.
struct JSONWriterTests {
    static let samples: [JSONValue] = [
        .null, true, 0, -3, 1.5, 1e-7, 12345678901234, "",
        "quote \" backslash \\ slash / newline \n tab \t cr \r bell \u{07} nul \u{00} é 🦀",
        ["b": 1, "a": ["x", ["nested": .null]], "c": "\"q\""],
        .array((0..<50).map { .number(Double($0) / 7) }),
        ["payload": .string(String(repeating: "QUJD", count: 5000)), "format": "png", "width": 1920],
    ]

    @Test func compactTextIsJSONEncodersText() {
        for v in Self.samples {
            #expect(String(decoding: v.jsonBytes, as: UTF8.self) == v.jsonString(), "\(v)")
        }
    }

    @Test func quotedIsTheTextEncodedAgainAsAString() {
        for v in Self.samples {
            var w = JSONWriter()
            w.raw("\"")
            w.write(v, quoted: true)
            w.raw("\"")
            #expect(String(decoding: w.bytes, as: UTF8.self) == JSONValue.string(v.jsonString()).jsonString(), "\(v)")
            // And it parses back to the value.
            let outer = JSONValue.parse(String(decoding: w.bytes, as: UTF8.self))
            #expect(outer?.stringValue.flatMap(JSONValue.parse) == v, "\(v)")
        }
    }

    @Test func nonFiniteNumbersAreNull() {
        #expect(String(decoding: JSONValue.number(.infinity).jsonBytes, as: UTF8.self) == "null")
    }
}
