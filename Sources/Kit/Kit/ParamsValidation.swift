import Config
import Support

/// Checks an invoke's params against its command's manifest row and fills in the defaults, before
/// the params are decoded and the handler runs: the one place a command's types, ranges, allowed
/// values and defaults are enforced. Messages keep the shapes callers already see
/// ("maxWidth must be between 16 and 8192 (got 9000)", "facing must be one of front, back (got
/// \"side\")", "command required" as upstream words it, "maxWidth: expected an integer, found a
/// string (\"big\")").
/// Keys the row does not declare are left alone: gateways and other nodes send extra keys.
public enum ParamsValidation {
    /// The params tree a handler's type is decoded from: absent params, `null` and "" all mean "no
    /// params" (the gateway sends paramsJSON: null); checked against `row` when one is given.
    static func tree(_ params: InvokeParams, row: BundleManifest.Command?) throws(NodeError) -> JSONValue {
        let tree: JSONValue
        switch params {
        case .none, .value(.null): tree = .object([:])
        case .value(let v): tree = v
        case .unparsable: throw NodeError.invalidRequest("params are not valid JSON")
        }
        guard let row else { return tree }
        return try checked(tree, against: row.params)
    }

    public static func checked(_ params: JSONValue, against fields: [ConfigField]) throws(NodeError) -> JSONValue {
        guard case .object(let object) = params else {
            throw NodeError.invalidRequest("params must be a JSON object, found \(params.brief)")
        }
        return .object(try checked(object, fields, path: ""))
    }

    private static func checked(_ object: [String: JSONValue], _ fields: [ConfigField], path: String) throws(NodeError) -> [String: JSONValue] {
        var out = object
        for f in fields {
            let p = path.isEmpty ? f.key : "\(path).\(f.key)"
            guard let v = object[f.key], v != .null else {
                // Absent and null are the same to every caller: the default, or nothing.
                if let d = f.defaultValue { out[f.key] = d }
                // Upstream's wording ("command required", "bins required", "url required").
                else if f.required { throw NodeError.invalidRequest("\(p) required") }
                else { out[f.key] = nil }
                continue
            }
            // Clamped into range; a fraction for an integer param is still refused below.
            if f.clamps, case .number(let n) = v, n.isFinite, let range = f.type.numberRange, n.rounded() == n || f.type.isNumber {
                out[f.key] = .number(min(max(n, range.lowerBound), range.upperBound))
                continue
            }
            out[f.key] = try checked(v, f.type, path: p)
        }
        return out
    }

    private static func checked(_ v: JSONValue, _ type: ConfigType, path: String) throws(NodeError) -> JSONValue {
        func expected(_ noun: String) -> NodeError { NodeError.invalidRequest("\(path): expected \(noun), found \(v.brief)") }
        switch type {
        case .any:
            return v
        case .string, .domainName, .hostPort:
            guard case .string = v else { throw expected("a string") }
            return v
        case .bool:
            guard case .bool = v else { throw expected("a boolean") }
            return v
        case .integer(let r):
            guard case .number(let n) = v, n.isFinite, n.rounded() == n else { throw expected("an integer") }
            try inRange(n, Double(r.lowerBound)...Double(r.upperBound), path)
            return v
        case .number(let r):
            guard case .number(let n) = v, n.isFinite else { throw expected("a number") }
            try inRange(n, r, path)
            return v
        case .enumeration(let allowed):
            guard case .string(let s) = v else { throw expected("a string") }
            guard allowed.contains(s) else {
                throw NodeError.invalidRequest("\(path) must be one of \(allowed.joined(separator: ", ")) (got \"\(s.prefix(60))\")")
            }
            return v
        case .stringArray:
            return try checked(v, .list(.string), path: path)
        case .list(let item):
            guard case .array(let items) = v else { throw expected("an array") }
            var out: [JSONValue] = []
            out.reserveCapacity(items.count)
            for (i, x) in items.enumerated() { out.append(try checked(x, item, path: "\(path)[\(i)]")) }
            return .array(out)
        case .object(let fields):
            guard case .object(let o) = v else { throw expected("an object") }
            return .object(try checked(o, fields, path: path))
        case .map(let value):
            guard case .object(let o) = v else { throw expected("an object") }
            var out: [String: JSONValue] = [:]
            for (k, x) in o { out[k] = try checked(x, value, path: "\(path).\(k)") }
            return .object(out)
        case .exactlyOne(let keys, let inner):
            let filled = try checked(v, inner, path: path)
            let present = keys.filter { (filled[$0] ?? .null) != .null }
            guard present.count == 1 else {
                throw NodeError.invalidRequest(present.isEmpty ? "\(path) needs one of \(keys.joined(separator: " or "))"
                                                               : "\(path) may have only one of \(keys.joined(separator: " and "))")
            }
            return filled
        }
    }

    private static func inRange(_ n: Double, _ r: ClosedRange<Double>, _ path: String) throws(NodeError) {
        guard r.contains(n) else {
            throw NodeError.invalidRequest("\(path) must be between \(NumberText.plain(r.lowerBound)) and \(NumberText.plain(r.upperBound)) (got \(NumberText.plain(n)))")
        }
    }
}
