import XCTest
@testable import OutliveCore

final class AsyncOperationTests: XCTestCase {
    private func dispatch(_ loop: Loop, until done: () -> Bool, seconds: Double = 5) {
        let deadline = Clock.monotonic() + seconds
        while !done() && Clock.monotonic() < deadline { _ = try? loop.dispatch(timeoutMilliseconds: 10) }
    }

    func testStateMovesNewWaitingExecutingFinishedAndRefusesOtherTransitions() throws {
        let loop = try Loop()
        let queue = try AsyncOperationQueue(loop: loop, maxUnfinished: 0)
        var ran = 0
        let operation = AsyncOperation { _ in ran += 1 }
        XCTAssertEqual(operation.currentState, .new)
        XCTAssertThrowsError(try operation.finish()) { XCTAssertEqual(($0 as? OutliveError)?.code, .state) }
        try queue.add(operation)
        XCTAssertEqual(operation.currentState, .waiting)
        XCTAssertThrowsError(try operation.finish())
        XCTAssertThrowsError(try queue.add(operation))
        dispatch(loop, until: { ran == 1 })
        XCTAssertEqual(operation.currentState, .executing)
        try operation.finish()
        XCTAssertEqual(operation.currentState, .finished)
        XCTAssertThrowsError(try operation.finish())
        XCTAssertThrowsError(try operation.cancel())
        XCTAssertFalse(operation.isCancelled)
        XCTAssertEqual(ran, 1)
    }

    func testFinishFromManyThreadsSucceedsExactlyOnce() throws {
        let loop = try Loop()
        let queue = try AsyncOperationQueue(loop: loop, maxUnfinished: 0)
        var started = false
        let operation = AsyncOperation { _ in started = true }
        try queue.add(operation)
        dispatch(loop, until: { started })
        final class Counter: @unchecked Sendable { let lock = Lock(); var successes = 0; var stateErrors = 0 }
        let counter = Counter()
        var threads: [pthread_t] = []
        final class Box { let operation: AsyncOperation; let counter: Counter; init(_ o: AsyncOperation, _ c: Counter) { operation = o; counter = c } }
        for _ in 0..<8 {
            var thread = pthread_t()
            let box = Unmanaged.passRetained(Box(operation, counter)).toOpaque()
            pthread_create(&thread, nil, { argument in
                let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
                do { try box.operation.finish(); box.counter.lock.withLock { box.counter.successes += 1 } }
                catch { box.counter.lock.withLock { box.counter.stateErrors += 1 } }
                return nil
            }, box)
            threads.append(thread)
        }
        for thread in threads { pthread_join(thread, nil) }
        XCTAssertEqual(counter.successes, 1)
        XCTAssertEqual(counter.stateErrors, 7)
        XCTAssertEqual(operation.currentState, .finished)
    }

    func testDependencyCyclesAndSelfDependencyAreRefused() throws {
        let a = AsyncOperation { _ in }, b = AsyncOperation { _ in }, c = AsyncOperation { _ in }
        XCTAssertThrowsError(try a.addDependency(a)) { XCTAssertEqual(($0 as? OutliveError)?.code, .invalidArgument) }
        try b.addDependency(a)
        try c.addDependency(b)
        XCTAssertThrowsError(try a.addDependency(c)) { XCTAssertEqual(($0 as? OutliveError)?.code, .invalidArgument) }
        try c.addDependency(b)
        XCTAssertEqual(c.dependencyCount, 1)
        XCTAssertEqual(a.dependencyCount, 0)
    }

    func testCancelledWaitingOperationFinishesOnlyAfterItsDependenciesAndNeverRuns() throws {
        let loop = try Loop()
        let queue = try AsyncOperationQueue(loop: loop, maxUnfinished: 0)
        var log: [String] = []
        let first = AsyncOperation { _ in log.append("first") }
        let middle = AsyncOperation { _ in log.append("middle") }
        let last = AsyncOperation { op in log.append("last sees cancelled \(op.dependency(at: 0)?.isCancelled == true)") }
        try middle.addDependency(first)
        try last.addDependency(middle)
        try middle.setCompletion { _, cancelled in log.append("middle completed cancelled=\(cancelled)") }
        for operation in [first, middle, last] { try queue.add(operation) }
        dispatch(loop, until: { log.count == 1 })
        try middle.cancel()
        XCTAssertEqual(middle.currentState, .waiting)
        try first.finish()
        XCTAssertEqual(middle.currentState, .finished)
        dispatch(loop, until: { log.count == 3 })
        XCTAssertEqual(log, ["first", "middle completed cancelled=true", "last sees cancelled true"])
        try last.finish()
    }

    func testLimitHoldsOperationsUntilRoomAndDrainedIsCalledOnce() throws {
        let loop = try Loop()
        let queue = try AsyncOperationQueue(loop: loop, maxUnfinished: 2)
        XCTAssertThrowsError(try AsyncOperationQueue(loop: loop, maxUnfinished: -1))
        var executing: [AsyncOperation] = []
        var drained = 0
        try queue.setDrained { drained += 1 }
        for _ in 0..<5 { try queue.add(AsyncOperation { executing.append($0) }) }
        dispatch(loop, until: { executing.count == 2 })
        dispatch(loop, until: { false }, seconds: 0.05)
        XCTAssertEqual(executing.count, 2)
        XCTAssertEqual(queue.executingCount, 2)
        var finished = 0
        while finished < 5 {
            dispatch(loop, until: { executing.count > finished })
            try executing[finished].finish()
            finished += 1
        }
        dispatch(loop, until: { drained == 1 })
        XCTAssertEqual(drained, 1)
        XCTAssertEqual(queue.unfinishedCount, 0)
    }

    func testClosingQueueCancelsWaitingOperationsAndReleasesThem() throws {
        let loop = try Loop()
        let queue = try AsyncOperationQueue(loop: loop, maxUnfinished: 1)
        var running: AsyncOperation?
        try queue.add(AsyncOperation { running = $0 })
        weak var waiting: AsyncOperation?
        do {
            let operation = AsyncOperation { _ in XCTFail("must not run") }
            waiting = operation
            try queue.add(operation)
        }
        dispatch(loop, until: { running != nil })
        XCTAssertNotNil(waiting)
        queue.close()
        XCTAssertNil(waiting, "the closed queue let go of its waiting operation")
        XCTAssertEqual(running?.currentState, .executing)
        try running?.finish()
        dispatch(loop, until: { false }, seconds: 0.05)
    }
}
