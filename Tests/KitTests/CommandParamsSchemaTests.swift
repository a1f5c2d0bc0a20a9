@testable import Config
@testable import Kit
import Support
import Testing

/// A command's params described once, in its manifest row: the host checks them and fills in the
/// defaults before the handler runs, and the loader refuses a Swift params type that does not fit.
struct CommandParamsSchemaTests {
    static let manifest = """
        {
          name: "demo",
          summary: "a demo",
          commands: {
            "demo.shoot": {
              summary: "shoot",
              params: {
                width: { type: "integer", min: 16, max: 8192, default: 1600, doc: "widest" },
                quality: { type: "number", min: 0, max: 100, default: 0.9, doc: "0..1 or 1..100" },
                mode: { type: "enum", values: ["fast", "fine"], default: "fast", doc: "how" },
                label: { type: "string", required: true, doc: "what to call it" },
                note: { type: "string", doc: "optional words" },
                region: { type: "object", doc: "where", fields: {
                  x: { type: "integer", min: 0, max: 100, default: 0, doc: "left" },
                  w: { type: "integer", min: 1, max: 100, required: true, doc: "width" },
                } },
                tags: { type: "array", of: { type: "string", doc: "a tag" }, default: [], doc: "tags" },
                extra: { type: "any", doc: "passed through" },
              },
            },
          },
        }
        """

    static var row: BundleManifest.Command {
        get throws { try BundleManifestReader.read(manifest, file: "demo.manifest.json5", expectedName: "demo", library: nil).commands[0] }
    }

    enum Mode: String, Decodable, Sendable { case fast, fine }
    struct Region: Decodable, Sendable { var x: Int; var w: Int }
    struct Good: CommandParams {
        var width: Int
        var quality: Double
        var mode: Mode
        var label: String
        var note: String?
        var region: Region?
        var tags: [String]
        var extra: JSONValue?
    }

    func decode(_ params: JSONValue) throws -> Good { try Good.decode(.value(params), row: try Self.row) }
    func refusal(_ params: JSONValue) throws -> String {
        do { _ = try decode(params); return "(accepted)" } catch let e as NodeError {
            // Upstream's shape: the code, then the field and what is wrong with it.
            #expect(e.code == .invalidRequest && e.message.hasPrefix("INVALID_REQUEST: "))
            return String(e.message.dropFirst("INVALID_REQUEST: ".count))
        }
    }

    @Test func defaultsAreFilledInBeforeTheHandlerSeesThem() throws {
        let p = try decode(["label": "a"])
        #expect(p.width == 1600 && p.quality == 0.9 && p.mode == .fast && p.tags == [] && p.note == nil && p.region == nil)
        // null is the same as absent.
        #expect(try decode(["label": "a", "width": nil, "note": nil]).width == 1600)
        let q = try decode(["label": "b", "width": 320, "mode": "fine", "region": ["w": 5], "tags": ["x"], "unknown": 1])
        #expect(q.width == 320 && q.mode == .fine && q.region?.x == 0 && q.region?.w == 5 && q.tags == ["x"])
    }

    @Test func badParamsAreRefusedWithTheFieldNamed() throws {
        let r = try refusal(["label": "a", "width": 9000]); #expect(r == "width must be between 16 and 8192 (got 9000)")
        #expect(try refusal(["label": "a", "width": 12.5]) == "width: expected an integer, found 12.5")
        #expect(try refusal(["label": "a", "width": "big"]) == "width: expected an integer, found a string (\"big\")")
        #expect(try refusal(["label": "a", "quality": 101]) == "quality must be between 0 and 100 (got 101)")
        #expect(try refusal(["label": "a", "mode": "slow"]) == "mode must be one of fast, fine (got \"slow\")")
        #expect(try refusal([:]) == "label required")
        #expect(try refusal(["label": nil]) == "label required")
        #expect(try refusal(["label": "a", "region": ["x": 1]]) == "region.w required")
        #expect(try refusal(["label": "a", "region": ["w": 500]]) == "region.w must be between 1 and 100 (got 500)")
        #expect(try refusal(["label": "a", "tags": ["x", 3]]) == "tags[1]: expected a string, found 3")
        #expect(try refusal(["label": "a", "region": [1]]) == "region: expected an object, found an array")
        #expect(throws: NodeError.self) { try Good.decode(.value([1, 2]), row: try Self.row) }
        #expect(throws: NodeError.self) { try Good.decode(.unparsable, row: try Self.row) }
    }

    @Test func aFittingTypePassesTheLoadCheck() throws {
        #expect(ParamsSchemaProbe.mismatches(Good.self, fields: try Self.row.params) == [])
    }

    struct OptionalWithDefault: Decodable {
        var width: Int?; var quality: Double; var mode: Mode; var label: String; var note: String?
        var region: Region?; var tags: [String]; var extra: JSONValue?
    }
    struct PlainWithoutDefault: Decodable {
        var width: Int; var quality: Double; var mode: Mode; var label: String; var note: String
        var region: Region?; var tags: [String]; var extra: JSONValue?
    }
    struct Undeclared: Decodable {
        var width: Int; var quality: Double; var mode: Mode; var label: String; var note: String?
        var region: Region?; var tags: [String]; var extra: JSONValue?; var colour: String?
    }
    struct Unread: Decodable { var width: Int; var label: String }
    enum ShortMode: String, Decodable { case fast }
    struct MissingCase: Decodable {
        var width: Int; var quality: Double; var mode: ShortMode; var label: String; var note: String?
        var region: Region?; var tags: [String]; var extra: JSONValue?
    }
    struct WrongType: Decodable {
        var width: String; var quality: Double; var mode: Mode; var label: String; var note: String?
        var region: Region?; var tags: [String]; var extra: JSONValue?
    }
    struct IntForNumber: Decodable {
        var width: Int; var quality: Int; var mode: Mode; var label: String; var note: String?
        var region: Region?; var tags: [String]; var extra: JSONValue?
    }
    struct NestedUndeclared: Decodable {
        struct R: Decodable { var x: Int; var w: Int; var h: Int }
        var width: Int; var quality: Double; var mode: Mode; var label: String; var note: String?
        var region: R?; var tags: [String]; var extra: JSONValue?
    }

    @Test func aTypeThatDoesNotFitIsRefusedNamingTheField() throws {
        let fields = try Self.row.params
        func problems<T: Decodable>(_ t: T.Type) -> String { ParamsSchemaProbe.mismatches(t, fields: fields).joined(separator: "; ") }
        #expect(problems(OptionalWithDefault.self) == "width is given a default in the manifest, so OptionalWithDefault's field for it must not be Optional")
        #expect(problems(PlainWithoutDefault.self) == "note may be absent (no default in the manifest), so PlainWithoutDefault's field for it must be Optional")
        #expect(problems(Undeclared.self) == "Undeclared reads colour, which the manifest does not declare")
        #expect(problems(Unread.self).contains("the manifest declares quality, which Unread does not read"))
        #expect(problems(MissingCase.self) == "the manifest allows mode \"fine\", which ShortMode does not accept")
        #expect(problems(WrongType.self) == "WrongType reads width as a String, but the manifest says integer 16..8192")
        #expect(problems(IntForNumber.self) == "IntForNumber reads quality as an integer (Int), but the manifest says number 0..100")
        #expect(problems(NestedUndeclared.self) == "NestedUndeclared reads region.h, which the manifest does not declare")
    }

    @Test func theManifestRefusesRulesThatCannotHold() {
        func problems(_ param: String) -> String {
            let text = "{ name: \"demo\", summary: \"s\", commands: { \"demo.x\": { summary: \"x\", params: { p: \(param) } } } }"
            do { _ = try BundleManifestReader.read(text, file: "m", expectedName: "demo", library: nil); return "" }
            catch { return error.description }
        }
        #expect(problems(#"{ type: "integer", min: 0, max: 9, default: 1, required: true, doc: "d" }"#).contains("a param with a default is not required"))
        #expect(problems(#"{ type: "integer", min: 0, max: 9, default: 10, doc: "d" }"#).contains("the default does not fit the type"))
        #expect(problems(#"{ type: "array", doc: "d" }"#).contains("an array needs \"of\""))
        #expect(problems(#"{ type: "string", requird: true, doc: "d" }"#).contains("unknown key"))
        #expect(problems(#"{ type: "number", min: 1, doc: "d" }"#).contains("a number key needs \"min\" and \"max\""))
        #expect(problems(#""int, default 3""#).contains("not as a line of text"))
        #expect(problems(#"{ type: "bool", clamp: true, doc: "d" }"#).contains("only an integer or number is clamped"))
    }

    @Test func paramsReadInWords() throws {
        let doc = Dictionary(try Self.row.paramsDoc, uniquingKeysWith: { a, _ in a })
        #expect(doc["width"] == "integer 16..8192, default 1600: widest")
        #expect(doc["label"] == "string, required: what to call it")
        #expect(doc["mode"] == "one of fast, fine, default \"fast\": how")
    }
}
