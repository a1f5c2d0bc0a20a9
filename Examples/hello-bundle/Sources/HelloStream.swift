import Kit

/// hello.stream: the smallest long-running command, to show the Kit's duplex API
/// (InvocationContext.duplex): it streams text while it runs, reads what the caller sends, and
/// stops when cancelled — no frame, sequence number or chunk size in sight. Its manifest row says
/// `duplex: true`, so the node also keeps it alive with heartbeats while it waits.
enum HelloStream {
    /// The params as the manifest row describes them: the node has checked the ranges and filled
    /// in the defaults before `run` sees them.
    struct Params: CommandParams {
        var blocks: Int
        var blockChars: Int
        var echo: Bool
        var holdMs: Int
        var framed: Bool
    }

    struct Result: Encodable, Sendable {
        /// UTF-8 bytes of text streamed (the echoes included).
        let bytes: Int
        /// The inputs read, in order.
        let inputs: [String]
        /// Whether the caller still took progress at the end (false after `ignored`).
        let streaming: Bool
    }

    /// 1-, 2-, 3- and 4-byte characters, so chunk cuts land inside multi-byte ones.
    static let pattern = Array("hello é ✓ 🦀 ".unicodeScalars)

    static func block(_ index: Int, chars: Int) -> String {
        var s = String.UnicodeScalarView()
        for i in 0..<chars { s.append(pattern[(index + i) % pattern.count]) }
        return String(s)
    }

    static func run(_ p: Params, _ ctx: InvocationContext) async throws(NodeError) -> Result {
        var bytes = 0
        for i in 0..<p.blocks {
            let text = block(i, chars: p.blockChars)
            guard await ctx.duplex.write(text) else { break }  // the caller stopped listening
            bytes += text.utf8.count
        }
        if ctx.isCancelled { throw NodeError(.cancelled, "hello.stream was cancelled") }
        var inputs: [String] = []
        if p.framed { return try await echoFramed(ctx, streamed: bytes) }
        if p.echo {
            if p.holdMs > 0 {
                do { try await Task.sleep(for: .milliseconds(p.holdMs)) } catch { throw NodeError(.cancelled, "hello.stream was cancelled") }
            }
            while let input = try await ctx.duplex.nextInput(), input != "end", input != "\"end\"" {
                inputs.append(input)
                let echo = "echo: \(input)\n"
                if await ctx.duplex.write(echo) { bytes += echo.utf8.count }
            }
        }
        return Result(bytes: bytes, inputs: inputs, streaming: ctx.duplex.isOpen)
    }

    /// Binary messages over the fragment framing (FramedChannel): each message the caller sends
    /// comes back reversed, until an empty one. `inputs` lists the sizes received.
    static func echoFramed(_ ctx: InvocationContext, streamed: Int) async throws(NodeError) -> Result {
        let channel = FramedChannel(ctx.duplex)
        guard await channel.open() else { return Result(bytes: streamed, inputs: [], streaming: false) }
        var sizes: [String] = []
        while let message = try await channel.receive(), !message.isEmpty {
            sizes.append(String(message.count))
            guard try await channel.send(message.reversed()) else { break }
        }
        return Result(bytes: streamed, inputs: sizes, streaming: ctx.duplex.isOpen)
    }
}
