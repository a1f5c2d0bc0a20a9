@testable import Support
import Testing

/// Pause: the one way blocking code waits a moment; on a job thread the job's cancellation ends it.
struct PauseTests {
    @Test func aCancelledJobsPauseEndsAtOnce() async {
        let started = CancelFlag()  // raised by the job when it is in its pause's thread
        let job = Task {
            await BlockingExecutor.run("pause-test") { (_: CancelFlag) -> Bool in
                started.cancel()
                return Pause.for(.seconds(60))
            }
        }
        // Wait for the job to start (on the event, not a clock), then cancel the invoke's task.
        while !started.isCancelled { await Task.yield() }
        let before = ContinuousClock.now
        job.cancel()
        #expect(await job.value == false, "the pause says it was cut short")
        #expect(ContinuousClock.now - before < .seconds(30), "the 60 s pause ended with the job")
    }

    @Test func offAJobItIsAPlainWait() {
        let before = ContinuousClock.now
        #expect(Pause.for(.milliseconds(20)))
        #expect(ContinuousClock.now - before >= .milliseconds(20))
        #expect(CurrentJob.flag == nil)
    }
}
