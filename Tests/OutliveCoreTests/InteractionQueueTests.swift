import XCTest
@testable import OutliveCore

final class InteractionQueueTests: XCTestCase {
    /// Dispatches until `done()` or about `seconds`.
    private func dispatch(_ loop: Loop, until done: () -> Bool, seconds: Double = 5) {
        let deadline = Clock.monotonic() + seconds
        while !done() && Clock.monotonic() < deadline { _ = try? loop.dispatch(timeoutMilliseconds: 10) }
    }

    func testInteractionsStartOneAtATimeInOrderAndOnlyInDispatch() throws {
        let loop = try Loop()
        let queue = InteractionQueue(loop: loop)
        var started: [Int] = []
        var running: [Interaction] = []
        for index in 0..<3 {
            try queue.add { interaction in started.append(index); running.append(interaction) }
        }
        XCTAssertEqual(started, [], "nothing starts inside add")
        dispatch(loop, until: { !started.isEmpty })
        _ = try loop.dispatch(timeoutMilliseconds: 20)
        XCTAssertEqual(started, [0])
        XCTAssertEqual(queue.unfinishedCount, 3)
        try running[0].finish()
        XCTAssertEqual(started, [0], "a finish never starts the next one itself")
        dispatch(loop, until: { started.count == 2 })
        XCTAssertEqual(started, [0, 1])
        try running[1].finish()
        dispatch(loop, until: { started.count == 3 })
        try running[2].finish()
        XCTAssertEqual(started, [0, 1, 2])
        XCTAssertEqual(queue.unfinishedCount, 0)
    }

    func testSecondFinishIsAStateErrorAndChangesNothing() throws {
        let loop = try Loop()
        let queue = InteractionQueue(loop: loop)
        var running: [Interaction] = []
        try queue.add { running.append($0) }
        try queue.add { running.append($0) }
        dispatch(loop, until: { running.count == 1 })
        let first = running[0]
        XCTAssertTrue(first.isRunning)
        try first.finish()
        XCTAssertFalse(first.isRunning)
        XCTAssertThrowsError(try first.finish()) { XCTAssertEqual(($0 as? OutliveError)?.code, .state) }
        dispatch(loop, until: { running.count == 2 })
        XCTAssertThrowsError(try Interaction.finish(token: first.token))
        XCTAssertTrue(running[1].isRunning)
        XCTAssertEqual(queue.unfinishedCount, 1)
        try running[1].finish()
    }

    func testSuspendedQueueStartsNothingAndRunningOneGoesOn() throws {
        let loop = try Loop()
        let queue = InteractionQueue(loop: loop)
        var running: [Interaction] = []
        try queue.add { running.append($0) }
        try queue.add { running.append($0) }
        dispatch(loop, until: { running.count == 1 })
        try queue.suspend()
        XCTAssertTrue(queue.isSuspended)
        try running[0].finish()
        dispatch(loop, until: { false }, seconds: 0.1)
        XCTAssertEqual(running.count, 1)
        try queue.resume()
        dispatch(loop, until: { running.count == 2 })
        XCTAssertEqual(running.count, 2)
        try running[1].finish()
    }

    func testClosingDropsWaitingWorkWithoutRunningIt() throws {
        final class Witness { let onDeinit: () -> Void; init(_ f: @escaping () -> Void) { onDeinit = f }; deinit { onDeinit() } }
        let loop = try Loop()
        let queue = InteractionQueue(loop: loop)
        var released = 0
        var ran = 0
        var running: [Interaction] = []
        for _ in 0..<3 {
            let witness = Witness { released += 1 }
            try queue.add { interaction in _ = witness; ran += 1; running.append(interaction) }
        }
        dispatch(loop, until: { ran == 1 })
        queue.close()
        XCTAssertEqual(released, 2)
        XCTAssertThrowsError(try queue.add { _ in })
        try running[0].finish()
        XCTAssertEqual(released, 3)
        dispatch(loop, until: { false }, seconds: 0.05)
        XCTAssertEqual(ran, 1)
    }

    func testStalledInteractionIsReportedOnce() throws {
        let loop = try Loop()
        let queue = InteractionQueue(loop: loop)
        var reports: [(UInt64, Double)] = []
        try queue.setStallReport(after: 0.02) { interaction, seconds in reports.append((interaction.token, seconds)) }
        XCTAssertThrowsError(try queue.setStallReport(after: -1, nil))
        var running: [Interaction] = []
        try queue.add { running.append($0) }
        dispatch(loop, until: { !reports.isEmpty })
        dispatch(loop, until: { false }, seconds: 0.1)
        XCTAssertEqual(reports.count, 1)
        XCTAssertEqual(reports.first?.0, running.first?.token)
        XCTAssertEqual(reports.first?.1, 0.02)
        try running[0].finish()
    }
}
