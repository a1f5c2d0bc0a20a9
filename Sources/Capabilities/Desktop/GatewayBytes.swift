import Kit
import Support

/// The attach socket's incoming side as a byte stream, for the part of the RFB handshake the node
/// reads from the gateway (its version answer; with the node's own wayvnc, the whole VNC
/// authentication). Binary messages may split or join RFB messages anywhere, so bytes are counted,
/// not messages; what is read beyond the handshake goes to the server first when the splice starts.
final class GatewayBytes: @unchecked Sendable {  // one reader: the stream's task
    private let stream: any GatewayStream
    private var buffer: [UInt8] = []

    init(_ stream: any GatewayStream) { self.stream = stream }

    /// Exactly `n` bytes; `.gateway` errors when the socket ends first or a text frame arrives.
    func read(exactly n: Int) async throws(DesktopStreamError) -> [UInt8] {
        while buffer.count < n {
            switch await stream.next() {
            case .binary(let b): buffer += b
            case .text: throw DesktopStream.nonBinary
            case .closed(let code, let reason):
                throw .gateway("desktop stream gateway closed the attach socket during the RFB handshake (\(code.map(String.init) ?? "no code")\(reason.isEmpty ? "" : ": " + reason))")
            }
        }
        let out = Array(buffer.prefix(n))
        buffer.removeFirst(n)
        return out
    }

    /// What arrived beyond the bytes read so far.
    func takeRest() -> [UInt8] {
        defer { buffer = [] }
        return buffer
    }
}
