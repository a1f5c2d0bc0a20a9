import Support

/// The fragment framing that carries binary messages over a duplex invoke's text channels
/// (docs/PROTOCOL.md "Binary messages over a duplex invoke"): each side announces `{"v":1,
/// "kind":"ready"}` when it listens; a message of bytes travels as data frames `{v, kind:"data",
/// message, index, last, data}` of at most 8192 bytes each (every fragment but the last exactly
/// 8192), base64 in its canonical padded form. Any violation closes the channel.
public enum DuplexFrame: Sendable, Equatable {
    case ready
    case data(message: Int, index: Int, last: Bool, bytes: [UInt8])

    public static let fragmentBytes = 8192
    public static let maxMessageBytes = 100 * 1024 * 1024

    /// The frame's text (what goes into a progress chunk or comes in an input's payloadJSON).
    public var text: String {
        switch self {
        case .ready: return (["v": 1, "kind": "ready"] as JSONValue).jsonString()
        case .data(let message, let index, let last, let bytes):
            return (["v": 1, "kind": "data", "message": .number(Double(message)), "index": .number(Double(index)),
                     "last": .bool(last), "data": .string(Base64.encode(bytes))] as JSONValue).jsonString()
        }
    }

    /// The data frames of message number `message`.
    public static func fragments(of bytes: [UInt8], message: Int) -> [DuplexFrame] {
        if bytes.isEmpty { return [.data(message: message, index: 0, last: true, bytes: [])] }
        let starts = Array(stride(from: 0, to: bytes.count, by: fragmentBytes))
        return starts.enumerated().map { i, start in
            .data(message: message, index: i, last: i == starts.count - 1,
                  bytes: Array(bytes[start..<min(start + fragmentBytes, bytes.count)]))
        }
    }

    /// Reads one frame; throws DUPLEX_FRAMING for anything but exactly the keys of a ready or a
    /// data frame, with `v` 1, non-negative integers and canonical base64 of at most 8192 bytes.
    public static func parse(_ text: String) throws(NodeError) -> DuplexFrame {
        func bad(_ why: String) -> NodeError { NodeError(.duplexFraming, why) }
        guard let v = JSONValue.parse(text), let o = v.objectValue else { throw bad("a frame is not a JSON object") }
        guard o["v"]?.intValue == 1, o["v"]?.doubleValue == 1 else { throw bad("a frame's v is not 1") }
        switch o["kind"]?.stringValue {
        case "ready":
            guard o.count == 2 else { throw bad("a ready frame has keys besides v and kind") }
            return .ready
        case "data":
            guard Set(o.keys) == ["v", "kind", "message", "index", "last", "data"] else { throw bad("a data frame must have exactly v, kind, message, index, last, data") }
            guard let m = o["message"]?.intValue, m >= 0, o["message"]?.doubleValue == Double(m),
                  let i = o["index"]?.intValue, i >= 0, o["index"]?.doubleValue == Double(i) else { throw bad("message and index must be integers ≥ 0") }
            guard let last = o["last"]?.boolValue else { throw bad("last must be a boolean") }
            guard let b64 = o["data"]?.stringValue, let bytes = Base64.decode(b64), Base64.encode(bytes) == b64 else {
                throw bad("data is not canonical padded base64")
            }
            guard bytes.count <= fragmentBytes else { throw bad("a fragment carries more than \(fragmentBytes) bytes") }
            return .data(message: m, index: i, last: last, bytes: bytes)
        default:
            throw bad("unsupported frame kind")
        }
    }
}

/// Puts data frames back together into messages, enforcing their order: message ids from 0 one
/// after the other, fragment indexes from 0, every fragment but the last exactly 8192 bytes, an
/// empty last fragment only for an empty message, at most 100 MiB a message.
public struct DuplexReassembler: Sendable {
    private var nextMessage = 0
    private var nextIndex = 0
    private var partial: [UInt8] = []

    public init() {}

    /// The whole message when `frame` completes one, nil while it is still in parts.
    public mutating func accept(_ frame: DuplexFrame) throws(NodeError) -> [UInt8]? {
        func bad(_ why: String) -> NodeError { NodeError(.duplexFraming, why) }
        guard case .data(let message, let index, let last, let bytes) = frame else { return nil }
        guard message == nextMessage, index == nextIndex else {
            throw bad("fragment \(message)/\(index) out of sequence (expected \(nextMessage)/\(nextIndex))")
        }
        if !last, bytes.count != DuplexFrame.fragmentBytes { throw bad("a fragment before the last is not \(DuplexFrame.fragmentBytes) bytes") }
        if last, bytes.isEmpty, index > 0 { throw bad("an empty last fragment after others") }
        guard partial.count + bytes.count <= DuplexFrame.maxMessageBytes else { throw bad("a message over 100 MiB") }
        partial += bytes
        guard last else { nextIndex += 1; return nil }
        defer { partial = []; nextIndex = 0; nextMessage += 1 }
        return partial
    }
}

/// Binary messages in both directions over one duplex invoke, for a command that needs them
/// (docs/PROTOCOL.md): `open()` says the node listens, `receive()` returns the caller's next
/// message, `send(_:)` sends one once the caller has said it listens. Used by one task at a time
/// (send and receive take turns); a framing violation throws DUPLEX_FRAMING, which should end the
/// invoke.
public actor FramedChannel {
    private let channel: DuplexChannel
    private var peerReady = false
    private var received: [[UInt8]] = []
    private var reassembler = DuplexReassembler()
    private var nextOutgoing = 0

    public init(_ channel: DuplexChannel) { self.channel = channel }

    /// Announces that the node listens (the caller sends data only after this).
    public func open() async -> Bool { await channel.write(DuplexFrame.ready.text) }

    /// The caller's next whole message; nil when the invoke is over.
    public func receive() async throws(NodeError) -> [UInt8]? {
        while received.isEmpty {
            guard try await pump() else { return nil }
        }
        return received.removeFirst()
    }

    /// Sends one message, after the caller's own ready (waiting for it; messages that arrive
    /// meanwhile are kept for `receive`). False when the invoke no longer streams.
    public func send(_ bytes: [UInt8]) async throws(NodeError) -> Bool {
        while !peerReady {
            guard try await pump() else { return false }
        }
        defer { nextOutgoing += 1 }
        for frame in DuplexFrame.fragments(of: bytes, message: nextOutgoing) where !(await channel.write(frame.text)) { return false }
        return true
    }

    /// Reads one input frame; false when no more can come.
    private func pump() async throws(NodeError) -> Bool {
        guard let text = try await channel.nextInput() else { return false }
        if text.isEmpty { return true }  // a heartbeat
        let frame = try DuplexFrame.parse(text)
        if frame == .ready { peerReady = true; return true }
        guard peerReady else { throw NodeError(.duplexFraming, "data arrived before the caller's ready frame") }
        if let message = try reassembler.accept(frame) { received.append(message) }
        return true
    }
}
