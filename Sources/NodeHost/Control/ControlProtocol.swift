/// The local control socket speaks one JSON object per line each way:
///   {"op":"invoke","command":"device.info","params":{…},"timeoutMs":30000}
///     → {"ok":true,"payload":…} | {"ok":false,"error":{"code":…,"message":…}}
///   {"op":"presence","set":"foreground"|"background"|"auto"} → {"ok":true,"presence":…,"reason":…}
///   {"op":"status"} → {"ok":true,"status":{…}}
enum ControlProtocol {
    /// Invoke params and payloads can be large (photos): 64 MiB per line.
    static let maxLineBytes = 64 * 1024 * 1024

    static func errorReply(_ e: NodeError) -> JSONValue { ["ok": false, "error": e.json] }
}
