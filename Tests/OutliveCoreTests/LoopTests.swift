import COutliveSystem
import XCTest
@testable import OutliveCore

final class LoopTests: XCTestCase {
    func testPostedWorkRunsOnlyInsideDispatchOnTheDispatchingThread() throws {
        let loop = try Loop()
        var ran = 0
        loop.post { ran += 1 }
        XCTAssertEqual(ran, 0)
        XCTAssertEqual(try loop.dispatch(timeoutMilliseconds: 0), 1)
        XCTAssertEqual(ran, 1)
    }

    func testTimersFireInDeadlineOrderAndCancelledOnesNever() throws {
        let loop = try Loop()
        var order: [Int] = []
        loop.schedule(after: 0.03) { order.append(3) }
        loop.schedule(after: 0.01) { order.append(1) }
        let cancelled = loop.schedule(after: 0.02) { order.append(2) }
        XCTAssertTrue(loop.cancelTimer(cancelled))
        XCTAssertFalse(loop.cancelTimer(cancelled))
        let deadline = Clock.monotonic() + 5
        while order.count < 2 && Clock.monotonic() < deadline { try loop.dispatch(timeoutMilliseconds: 100) }
        XCTAssertEqual(order, [1, 3])
    }

    func testIdleLoopFdIsNotReadable() throws {
        let loop = try Loop()
        var pfd = pollfd(fd: loop.fileDescriptor, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&pfd, 1, 50), 0)
        loop.post {}
        XCTAssertEqual(poll(&pfd, 1, 1000), 1)
    }

    func testDispatchFromInsideACallbackIsAStateError() throws {
        let loop = try Loop()
        var nested: OutliveError?
        loop.post {
            do { try loop.dispatch(timeoutMilliseconds: 0) } catch { nested = error as? OutliveError }
        }
        try loop.dispatch(timeoutMilliseconds: 0)
        XCTAssertEqual(nested?.code, .state)
    }

    func testWorkPostedFromManyThreadsAllRunsOnTheLoopThread() throws {
        let loop = try Loop()
        let me = ThreadIdentity.current
        let lock = Lock()
        var count = 0
        var wrongThread = false
        var threads: [pthread_t] = []
        final class Box { let body: () -> Void; init(_ body: @escaping () -> Void) { self.body = body } }
        for _ in 0..<4 {
            let box = Box {
                for _ in 0..<250 {
                    loop.post {
                        if ThreadIdentity.current != me { wrongThread = true }
                        lock.withLock { count += 1 }
                    }
                }
            }
            var thread = pthread_t()
            pthread_create(&thread, nil, { argument in
                Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue().body()
                return nil
            }, Unmanaged.passRetained(box).toOpaque())
            threads.append(thread)
        }
        for thread in threads { pthread_join(thread, nil) }
        let deadline = Clock.monotonic() + 5
        while lock.withLock({ count }) < 1_000 && Clock.monotonic() < deadline { try loop.dispatch(timeoutMilliseconds: 100) }
        XCTAssertEqual(count, 1_000)
        XCTAssertFalse(wrongThread)
    }

    func testRunThreadOwnsDispatchUntilStopped() throws {
        let loop = try Loop()
        try loop.runThread()
        XCTAssertThrowsError(try loop.dispatch(timeoutMilliseconds: 0)) { XCTAssertEqual(($0 as? OutliveError)?.code, .state) }
        let lock = Lock()
        var ran = false
        loop.post { lock.withLock { ran = true } }
        let deadline = Clock.monotonic() + 5
        while !lock.withLock({ ran }) && Clock.monotonic() < deadline { usleep(1_000) }
        XCTAssertTrue(ran)
        loop.stop()
        XCTAssertNoThrow(try loop.dispatch(timeoutMilliseconds: 0))
    }
}
