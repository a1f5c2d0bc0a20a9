import Foundation
@testable import Kit
@testable import Support
import Testing

/// The one place that says whether a result fits (PayloadBudget) and the one way a service reads
/// the deadline to plan with it (InvokeDeadline).
struct PayloadBudgetTests {
    @Test func budgetsLeaveRoomForTheFrame() {
        let b = PayloadBudget(maxPayloadBytes: 25 * 1024 * 1024)
        #expect(b.base64Bytes == 25 * 1024 * 1024 - PayloadBudget.envelopeReserve)
        #expect(b.stillImageBase64Bytes == PayloadBudget.stillImageCap)
        #expect(b.mediaBytes == b.base64Bytes / 4 * 3)
        #expect(b.base64Bytes(cappedAt: 1000) == 1000)
        let tiny = PayloadBudget(maxPayloadBytes: 100)
        #expect(tiny.base64Bytes == 0 && tiny.mediaBytes == 0 && tiny.stillImageBase64Bytes == 0)
    }

    @Test func base64Arithmetic() {
        #expect(PayloadBudget.base64Length(of: 0) == 0 && PayloadBudget.base64Length(of: 1) == 4 && PayloadBudget.base64Length(of: 3) == 4)
        #expect(PayloadBudget.base64Length(of: 4) == 8)
        for n in [0, 1, 2, 3, 100, 4097] {
            #expect(PayloadBudget.base64Length(of: n) == Data(count: n).base64EncodedString().utf8.count)
            #expect(PayloadBudget.fits(bytes: PayloadBudget.rawBytes(fittingBase64: n * 4), base64Budget: n * 4))
        }
        #expect(!PayloadBudget.fits(bytes: 4, base64Budget: 7))
    }

    @Test func aFrameOverTheLimitIsTheOneError() throws {
        let b = PayloadBudget(maxPayloadBytes: 1000)
        try b.check(frameBytes: 1000, command: "x.y")
        #expect(throws: NodeError(.payloadTooLarge, "the result of x.y is 1001 bytes; the gateway accepts at most 1000")) {
            try b.check(frameBytes: 1001, command: "x.y")
        }
        #expect(PayloadBudget.tooLarge("what").code == .payloadTooLarge)
    }

    @Test func theDeadlinePlansWaitsAndRefusesWhatCannotFinish() throws {
        let none = InvokeDeadline(nil)
        #expect(none.timeLeft == nil)
        #expect(none.bounding(.seconds(30), endingBefore: .milliseconds(300), atLeast: .milliseconds(200)) == .seconds(30))
        try none.requireRoom(forDurationMs: 60_000)

        let soon = InvokeDeadline(.now + .seconds(2))
        let bounded = soon.bounding(.seconds(30), endingBefore: .milliseconds(300), atLeast: .milliseconds(200))
        #expect(bounded <= .milliseconds(1700) && bounded > .milliseconds(1000))
        #expect(InvokeDeadline(.now).bounding(.seconds(30), endingBefore: .milliseconds(300), atLeast: .milliseconds(200)) == .milliseconds(200))
        let own = ContinuousClock.now + .seconds(10)
        #expect(soon.earliest(own, endingBefore: .milliseconds(50)) == soon.instant! - .milliseconds(50))
        #expect(none.earliest(own, endingBefore: .milliseconds(50)) == own)
        #expect(throws: NodeError.invalidRequest("durationMs 1000 does not fit the invoke timeout; allow at least 3000 ms (timeoutMs / --timeout)")) {
            try soon.requireRoom(forDurationMs: 1000)
        }
        try InvokeDeadline(.now + .seconds(10)).requireRoom(forDurationMs: 1000)
    }
}
