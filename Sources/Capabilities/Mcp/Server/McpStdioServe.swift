import Glibc
import Kit
import Support

/// `openclaw-node mcp serve`: the node's commands as an MCP server on stdin/stdout (the MCP stdio
/// transport: one JSON-RPC message per line each way, nothing else on stdout; the log goes to
/// stderr), for an agent that starts it from its `mcpServers` entry. It ends when the client
/// closes stdin; calls still running are cancelled.
enum McpStdioServe {
    /// Messages longer than this are dropped (a tools/call's arguments are small; 16 MiB leaves
    /// room for an upload's base64).
    static let maxLineBytes = 16 << 20

    /// How often the tools offered are compared with what the client was last sent.
    static let toolsCheck = Duration.seconds(2)

    static func run(server: McpToolServer, log: Logger) async {
        let out = StdoutWriter()
        let watcher = Task { await server.watchTools(every: toolsCheck) { out.write($0) } }
        defer { watcher.cancel() }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            BlockingExecutor.startLoop(name: "mcp-serve-stdin") {
                var lines = LineSplitter(maxLineBytes: maxLineBytes)
                var chunk = [UInt8](repeating: 0, count: 65536)
                while true {
                    let n = chunk.withUnsafeMutableBytes { (try? SystemIO.live.read(STDIN_FILENO, into: $0)) ?? 0 }
                    if n <= 0 { break }
                    for line in lines.take(Array(chunk[..<n])) where !line.isEmpty {
                        guard let message = JSONValue.parse(line) else {
                            out.write(McpToolServer.parseError)
                            continue
                        }
                        server.receive(message) { if let reply = $0 { out.write(reply) } }
                    }
                    if lines.dropped > 0 {
                        log.warn("dropped \(lines.dropped) message(s) longer than \(maxLineBytes >> 20) MiB")
                        lines.dropped = 0
                    }
                }
                done.resume()
            }
        }
        let left = server.running
        if left > 0 { log.info("the MCP client closed stdin with \(left) call(s) running; cancelling them") }
        server.cancelAll()
    }

    /// Writes one message a line on stdout; one writer at a time, so two never interleave.
    final class StdoutWriter: Sendable {
        private let lock = Locked(())
        func write(_ message: JSONValue) {
            var bytes = message.jsonBytes
            bytes.append(0x0A)
            lock.withLock { _ in _ = try? SystemIO.live.writeAll(STDOUT_FILENO, bytes) }
        }
    }
}
