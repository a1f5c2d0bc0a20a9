@testable import Kit
@testable import Support
import Testing

/// The pure parts of duplex invokes: cutting text into progress chunks, keeping a UTF-8 sequence
/// whole across reads, the input buffer of DuplexChannel, and the binary fragment framing (legit
/// messages beside each kind of malformed frame, which must be refused).
struct DuplexTests {
    @Test func chunksAreAtMost16KiBOfUTF8AndNeverCutACodePoint() {
        let text = String(repeating: "a🦀é✓", count: 10_000)  // 1+4+2+3 bytes
        let chunks = ProgressText.chunks(text)
        #expect(chunks.joined() == text)
        #expect(chunks.allSatisfy { $0.utf8.count <= 16_384 })
        #expect(chunks.dropLast().allSatisfy { $0.utf8.count >= 16_381 })
        #expect(ProgressText.chunks("").isEmpty)
        #expect(ProgressText.chunks("abc", limit: 4) == ["abc"])
        #expect(ProgressText.chunks("🦀🦀", limit: 5) == ["🦀", "🦀"])
    }

    @Test func aSequenceSplitAcrossReadsIsHeldBack() {
        let crab = Array("🦀".utf8)
        #expect(ProgressText.completeLength(Array("ab".utf8) + crab.prefix(2)) == 2)
        #expect(ProgressText.completeLength(Array("ab".utf8) + crab) == 6)
        #expect(ProgressText.completeLength(Array("é".utf8).prefix(1)) == 0)
        #expect(ProgressText.completeLength([0xFF, 0x41]) == 2)  // invalid bytes are not held
    }

    @Test func inputIsDedupedBufferedAndBounded() async throws {
        let c = DuplexChannel { _ in .accepted }
        #expect(c.deliver(seq: 0, payload: "a") == .queued)
        #expect(c.deliver(seq: 0, payload: "a") == .duplicate)
        #expect(c.deliver(seq: 3, payload: "b") == .queued)  // a gap is accepted
        #expect(try await c.nextInput() == "a")
        #expect(try await c.nextInput() == "b")
        let big = String(repeating: "x", count: 40_000)
        #expect(c.deliver(seq: 4, payload: big) == .queued)
        #expect(c.deliver(seq: 5, payload: big) == .overflow)
        await #expect(throws: NodeError.self) { _ = try await c.nextInput() }
        c.end()
        #expect(c.deliver(seq: 6, payload: "late") == .ended)
        #expect(!c.isOpen)
    }

    @Test func ignoredStopsWriting() async {
        let sent = Locked(0)
        let c = DuplexChannel { _ in sent.withLock { $0 += 1; return $0 >= 2 ? .ignored : .accepted } }
        #expect(await c.write("one"))
        #expect(!(await c.write("two")))
        #expect(!(await c.write("three")))
        #expect(sent.withLock { $0 } == 2)
        #expect(!(await DuplexChannel.detached().write("nobody")))
    }

    @Test func framesRoundTripAndMalformedOnesAreRefused() throws {
        let bytes = (0..<20_000).map { UInt8($0 % 251) }
        let frames = DuplexFrame.fragments(of: bytes, message: 0)
        #expect(frames.count == 3)
        var r = DuplexReassembler()
        var out: [UInt8]?
        for f in frames { out = try r.accept(try DuplexFrame.parse(f.text)) }
        #expect(out == bytes)
        #expect(try DuplexFrame.parse(#"{"v":1,"kind":"ready"}"#) == .ready)
        #expect(try r.accept(DuplexFrame.fragments(of: [], message: 1)[0]) == [])
        let refused = [
            #"{"v":2,"kind":"ready"}"#, #"{"v":1,"kind":"ready","x":1}"#, #"{"v":1,"kind":"hello"}"#,
            #"{"v":1,"kind":"data","message":0,"index":0,"last":true}"#,
            #"{"v":1,"kind":"data","message":0,"index":0,"last":true,"data":"aGVsbG8"}"#,   // unpadded
            #"{"v":1,"kind":"data","message":0,"index":0,"last":true,"data":"aGVsbG9="}"#,  // non-zero pad bits
            #"{"v":1,"kind":"data","message":-1,"index":0,"last":true,"data":""}"#,
            #"{"v":1,"kind":"data","message":0.5,"index":0,"last":true,"data":""}"#,
        ]
        for text in refused { #expect(throws: NodeError.self, "\(text)") { _ = try DuplexFrame.parse(text) } }
        // Out of sequence, and a short fragment before the last.
        var seq = DuplexReassembler()
        #expect(throws: NodeError.self) { _ = try seq.accept(.data(message: 1, index: 0, last: true, bytes: [1])) }
        var short = DuplexReassembler()
        #expect(throws: NodeError.self) { _ = try short.accept(.data(message: 0, index: 0, last: false, bytes: [1])) }
    }
}
