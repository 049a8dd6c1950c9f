import XCTest
import COutliveSystem
@testable import OutliveCore

/// What the built-in test handlers saw, in call order.
private final class Journal: @unchecked Sendable {
    let lock = Lock()
    var calls: [(name: String, label: String, taskID: String, attempt: Int64)] = []
    var completions: [Handler] = []
    var failLabels: Set<String> = []

    func labels(_ name: String? = nil) -> [String] {
        lock.withLock { calls.filter { name == nil || $0.name == name }.map(\.label) }
    }
}

private let journal = Journal()

private func registerTestHandlers() {
    func label(_ arguments: Arguments) -> String {
        if case .id(let value)? = arguments["label"] { return value.string ?? "" }
        return ""
    }
    func record(_ name: String, _ arguments: Arguments) {
        var taskID = ""
        if case .id(let value)? = arguments["task_id"] { taskID = value.string ?? "" }
        var attempt: Int64 = 0
        if case .integer(let value)? = arguments["attempt"] { attempt = value }
        journal.lock.withLock { journal.calls.append((name, label(arguments), taskID, attempt)) }
    }
    // Succeeds when it returns.
    try? HandlerRegistry.shared.registerBuiltin(name: "test.tasks.record", signature: "ID label, ID task_id, INTEGER attempt") {
        record("test.tasks.record", $0)
    }
    // Completes at once through its completion: success unless its label is in failLabels.
    try? HandlerRegistry.shared.registerBuiltin(name: "test.tasks.judge", signature: "ID label, HANDLER completion") { arguments in
        record("test.tasks.judge", arguments)
        let fail = journal.lock.withLock { journal.failLabels.contains(label(arguments)) }
        guard case .handler(let completion)? = arguments["completion"] else { return }
        var result = Arguments([("success", .bool(!fail))])
        if fail { result.set("error", .id(IDValue(string: "refused \(label(arguments))"))) }
        try HandlerRegistry.shared.call(completion, with: result)
    }
    // Keeps its completion for the test to call later.
    try? HandlerRegistry.shared.registerBuiltin(name: "test.tasks.later", signature: "ID label, HANDLER completion") { arguments in
        record("test.tasks.later", arguments)
        if case .handler(let completion)? = arguments["completion"] {
            journal.lock.withLock { journal.completions.append(completion) }
        }
    }
}

final class TaskQueueTests: XCTestCase {
    var directory = ""
    var store: OutliveStore!

    override func setUp() {
        registerTestHandlers()
        journal.lock.withLock { journal.calls = []; journal.completions = []; journal.failLabels = [] }
        var template = Array("/tmp/outlive-tasks-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, let made = mkdtemp(base) else { return "" }
            return String(cString: made)
        }
        store = try? OutliveStore(path: directory, processName: "test", loop: nil)
        XCTAssertNotNil(store)
        var triggers = TaskTriggers()
        triggers.pendingCount = 0
        triggers.delay = 1_000
        try? store.tasks.setTriggers(triggers)
    }

    override func tearDown() {
        store?.close()
        store = nil
    }

    private func task(_ name: String, _ label: String, start: String? = nil, members: [String] = []) throws -> NewTask {
        NewTask(work: try Handler(name: name, bound: Arguments([("label", .id(IDValue(string: label)))])),
                groupStart: start, groupMembers: members)
    }

    /// Dispatches the loop until `condition` holds (bounded).
    private func dispatch(until condition: () throws -> Bool, seconds: Double = 10) throws {
        let deadline = Clock.monotonic() + seconds
        while try !condition() {
            guard Clock.monotonic() < deadline else { XCTFail("condition not reached in \(seconds) s"); return }
            try store.loop.dispatch(timeoutMilliseconds: 20)
        }
    }

    private func runToEnd() throws {
        try store.tasks.runNow()
        try dispatch(until: { try store.tasks.run == nil && !store.tasks.wantsRun && store.loop.dispatch(timeoutMilliseconds: 0) == 0 })
    }

    func testTasksRunInOrderAndSuccessDeletesThem() throws {
        let ids = try store.tasks.add(batch: (0..<5).map { try task("test.tasks.record", "t\($0)") })
        XCTAssertEqual(ids.count, 5)
        XCTAssertEqual(try store.tasks.pendingCount(), 5)
        try runToEnd()
        XCTAssertEqual(journal.labels(), ["t0", "t1", "t2", "t3", "t4"])
        XCTAssertEqual(journal.lock.withLock { journal.calls.map(\.taskID) }, ids)
        XCTAssertEqual(journal.lock.withLock { journal.calls.map(\.attempt) }, [1, 1, 1, 1, 1])
        XCTAssertEqual(try store.tasks.pendingCount(), 0)
        XCTAssertEqual(try store.tasks.list().count, 0)
    }

    func testAddsOfAProducerThatDoesNotDispatchQueueOneTriggerEvaluation() throws {
        while try store.loop.dispatch(timeoutMilliseconds: 0) > 0 {}  // what opening the store posted
        for index in 0..<200 { _ = try store.tasks.add(task("test.tasks.record", "p\(index)")) }
        XCTAssertEqual(try store.tasks.pendingCount(), 200)
        // One posted evaluation plus, at most, the feed delivery of the adds.
        XCTAssertLessThanOrEqual(try store.loop.dispatch(timeoutMilliseconds: 0), 2)
    }

    func testCountTriggerStartsARunByItself() throws {
        var triggers = TaskTriggers()
        triggers.pendingCount = 3
        triggers.delay = 1_000
        try store.tasks.setTriggers(triggers)
        try store.tasks.add(try task("test.tasks.record", "a"))
        try store.tasks.add(try task("test.tasks.record", "b"))
        _ = try store.loop.dispatch(timeoutMilliseconds: 0)
        XCTAssertEqual(journal.labels(), [])
        try store.tasks.add(try task("test.tasks.record", "c"))
        try dispatch(until: { journal.labels().count == 3 })
        XCTAssertEqual(journal.labels(), ["a", "b", "c"])
    }

    func testDelayTriggerStartsARunAfterAnAdd() throws {
        var triggers = TaskTriggers()
        triggers.pendingCount = 0
        triggers.delay = 0.05
        try store.tasks.setTriggers(triggers)
        try store.tasks.add(try task("test.tasks.record", "later"))
        try dispatch(until: { journal.labels() == ["later"] })
    }

    func testFailureKeepsTheTaskWithBackoffAndTheRunGoesOn() throws {
        journal.lock.withLock { journal.failLabels = ["bad"] }
        var policy = TaskPolicy()
        policy.initialBackoff = 100
        try store.tasks.setPolicy(policy)
        let before = Clock.wall()
        try store.tasks.add(batch: [try task("test.tasks.judge", "bad"), try task("test.tasks.judge", "good")])
        try runToEnd()
        XCTAssertEqual(journal.labels(), ["bad", "good"])
        let listed = try store.tasks.list()
        XCTAssertEqual(listed.count, 1)
        XCTAssertEqual(listed.first?.state, .pending)
        XCTAssertEqual(listed.first?.attempts, 1)
        XCTAssertEqual(listed.first?.lastError, "refused bad")
        let next = try XCTUnwrap(listed.first?.nextAttempt)
        XCTAssertGreaterThanOrEqual(next, before + 50)   // jitter keeps it within [50, 100] s
        XCTAssertLessThanOrEqual(next, Clock.wall() + 100)
        // Not due: another run leaves it alone.
        try runToEnd()
        XCTAssertEqual(journal.labels(), ["bad", "good"])
    }

    func testBackoffDoublesUpToTheMaximum() {
        var policy = TaskPolicy()
        policy.initialBackoff = 2
        policy.maxBackoff = 10
        for _ in 0..<100 {
            let first = policy.backoff(afterAttempt: 1), third = policy.backoff(afterAttempt: 3), tenth = policy.backoff(afterAttempt: 10)
            XCTAssert(first >= 1 && first <= 2)
            XCTAssert(third >= 4 && third <= 8)
            XCTAssert(tenth >= 5 && tenth <= 10)
        }
    }

    func testATaskComingDueStartsARunByItself() throws {
        journal.lock.withLock { journal.failLabels = ["flaky"] }
        var policy = TaskPolicy()
        policy.initialBackoff = 0.05
        policy.maxBackoff = 0.05
        try store.tasks.setPolicy(policy)
        try store.tasks.add(try task("test.tasks.judge", "flaky"))
        try store.tasks.runNow()
        try dispatch(until: { journal.labels().count == 1 })
        journal.lock.withLock { journal.failLabels = [] }
        try dispatch(until: { try store.tasks.pendingCount() == 0 })
        XCTAssertEqual(journal.labels(), ["flaky", "flaky"])
        XCTAssertEqual(journal.lock.withLock { journal.calls.map(\.attempt) }, [1, 2])
    }

    func testCompletionFromAnotherThreadEndsTheTask() throws {
        try store.tasks.add(try task("test.tasks.later", "slow"))
        try store.tasks.add(try task("test.tasks.record", "after"))
        try store.tasks.runNow()
        try dispatch(until: { journal.lock.withLock { journal.completions.count } == 1 })
        _ = try store.loop.dispatch(timeoutMilliseconds: 50)
        XCTAssertEqual(journal.labels(), ["slow"])  // one at a time: "after" waits
        XCTAssertEqual(try store.tasks.list().first?.state, .running)
        let completion = journal.lock.withLock { journal.completions[0] }
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(completion)).toOpaque()
        pthread_create(&thread, nil, { raw in
            let handler = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().handler
            try? HandlerRegistry.shared.call(handler, with: Arguments([("success", .bool(true))]))
            return nil
        }, box)
        pthread_join(thread, nil)
        try dispatch(until: { try store.tasks.pendingCount() == 0 })
        XCTAssertEqual(journal.labels(), ["slow", "after"])
        // A second completion of the same attempt is refused and changes nothing.
        XCTAssertThrowsError(try HandlerRegistry.shared.call(completion, with: Arguments([("success", .bool(false))]))) {
            XCTAssertEqual(($0 as? OutliveError)?.code, .state)
        }
    }

    func testNoCompletionWithinTheTimeoutFailsTheAttemptAndALateOneIsIgnored() throws {
        var policy = TaskPolicy()
        policy.timeout = 0.1
        policy.initialBackoff = 100
        try store.tasks.setPolicy(policy)
        let id = try store.tasks.add(try task("test.tasks.later", "hangs"))
        try store.tasks.runNow()
        try dispatch(until: { (try store.tasks.list().first?.lastError) != nil })
        let info = try XCTUnwrap(try store.tasks.list().first)
        XCTAssertEqual(info.id, id)
        XCTAssertEqual(info.state, .pending)
        XCTAssertTrue(info.lastError?.contains("timeout") ?? false, info.lastError ?? "")
        let late = journal.lock.withLock { journal.completions[0] }
        XCTAssertThrowsError(try HandlerRegistry.shared.call(late, with: Arguments([("success", .bool(true))])))
        _ = try store.loop.dispatch(timeoutMilliseconds: 20)
        XCTAssertEqual(try store.tasks.pendingCount(), 1)
    }

    func testAfterMaxAttemptsATaskIsDeadKeptListedAndRetryable() throws {
        journal.lock.withLock { journal.failLabels = ["doomed"] }
        var policy = TaskPolicy()
        policy.maxAttempts = 2
        policy.initialBackoff = 0
        policy.maxBackoff = 0
        try store.tasks.setPolicy(policy)
        let id = try store.tasks.add(try task("test.tasks.judge", "doomed"))
        try runToEnd()
        try dispatch(until: { try store.tasks.deadCount() == 1 })
        XCTAssertEqual(journal.labels(), ["doomed", "doomed"])
        XCTAssertEqual(try store.tasks.pendingCount(), 0)
        let dead = try XCTUnwrap(try store.tasks.list().first)
        XCTAssertEqual(dead.id, id)
        XCTAssertEqual(dead.state, .dead)
        XCTAssertEqual(dead.attempts, 2)
        try runToEnd()
        XCTAssertEqual(journal.labels().count, 2)  // dead tasks do not run
        journal.lock.withLock { journal.failLabels = [] }
        try store.tasks.retry(id: id)
        XCTAssertEqual(try store.tasks.pendingCount(), 1)
        XCTAssertEqual(try store.tasks.deadCount(), 0)
        try runToEnd()
        XCTAssertEqual(journal.labels(), ["doomed", "doomed", "doomed"])
        XCTAssertEqual(try store.tasks.list().count, 0)
    }

    func testPastMaxAgeAFailingTaskIsDeadButAGroupStartIsNot() throws {
        journal.lock.withLock { journal.failLabels = ["old", "old-start"] }
        var policy = TaskPolicy()
        policy.maxAge = 0.001
        policy.initialBackoff = 100
        try store.tasks.setPolicy(policy)
        try store.tasks.add(try task("test.tasks.judge", "old"))
        try store.tasks.add(try task("test.tasks.judge", "old-start", start: "g"))
        usleep(5_000)
        try runToEnd()
        let listed = try store.tasks.list()
        XCTAssertEqual(listed.map(\.state), [.dead, .pending])
        XCTAssertEqual(journal.labels(), ["old-start"])  // too old to be tried at all
    }

    func testFailedGroupStartSkipsItsMembersAndOthersStillRun() throws {
        journal.lock.withLock { journal.failLabels = ["identify A"] }
        var policy = TaskPolicy()
        policy.initialBackoff = 100
        try store.tasks.setPolicy(policy)
        try store.tasks.add(try task("test.tasks.judge", "identify A", start: "A"))
        try store.tasks.add(try task("test.tasks.judge", "track A", members: ["A"]))
        try store.tasks.add(try task("test.tasks.judge", "push Z"))
        try store.tasks.add(try task("test.tasks.judge", "identify B", start: "B"))
        try store.tasks.add(try task("test.tasks.judge", "track B", members: ["B"]))
        try runToEnd()
        XCTAssertEqual(journal.labels(), ["identify A", "push Z", "identify B", "track B"])
        // The member waits while its group start is stored, whatever its state.
        try runToEnd()
        XCTAssertEqual(journal.labels().count, 4)
        let start = try XCTUnwrap(try store.tasks.list().first { $0.groupStart == "A" })
        journal.lock.withLock { journal.failLabels = [] }
        try store.tasks.retry(id: start.id)
        try runToEnd()
        XCTAssertEqual(journal.labels().suffix(2), ["identify A", "track A"])
        XCTAssertEqual(try store.tasks.pendingCount(), 0)
    }

    func testAMemberAddedBeforeItsGroupStartWaitsForIt() throws {
        try store.tasks.add(try task("test.tasks.judge", "member", members: ["G"]))
        try store.tasks.add(try task("test.tasks.judge", "start", start: "G"))
        try runToEnd()
        XCTAssertEqual(journal.labels(), ["start", "member"])
    }

    func testTasksAddedDuringARunAreTakenByIt() throws {
        try store.tasks.add(try task("test.tasks.later", "first"))
        try store.tasks.runNow()
        try dispatch(until: { journal.lock.withLock { journal.completions.count } == 1 })
        try store.tasks.add(try task("test.tasks.record", "added meanwhile"))
        let completion = journal.lock.withLock { journal.completions[0] }
        try HandlerRegistry.shared.call(completion, with: Arguments([("success", .bool(true))]))
        try dispatch(until: { try store.tasks.pendingCount() == 0 })
        XCTAssertEqual(journal.labels(), ["first", "added meanwhile"])
    }

    func testAnUnresolvedHandlerIsLeftAndDoesNotBlockOthers() throws {
        let foreign = try store.tasks.add(NewTask(work: try Handler(name: "test.tasks.elsewhere")))
        try store.tasks.add(try task("test.tasks.record", "mine"))
        try runToEnd()
        XCTAssertEqual(journal.labels(), ["mine"])
        let left = try store.tasks.list()
        XCTAssertEqual(left.map(\.id), [foreign])
        XCTAssertEqual(left.first?.attempts, 0)
        XCTAssertEqual(left.first?.state, .pending)
        // Not a failure, but it says why it waits (for `outlive tasks`).
        XCTAssertTrue(left.first?.lastError?.contains("no handler named test.tasks.elsewhere is declared") ?? false)
    }

    func testConcurrencyKeepsSeveralAttemptsInFlight() throws {
        try store.tasks.setConcurrency(3)
        try store.tasks.add(batch: (0..<4).map { try task("test.tasks.later", "c\($0)") })
        try store.tasks.runNow()
        try dispatch(until: { journal.lock.withLock { journal.completions.count } == 3 })
        _ = try store.loop.dispatch(timeoutMilliseconds: 20)
        XCTAssertEqual(journal.labels(), ["c0", "c1", "c2"])
        let first = journal.lock.withLock { journal.completions[1] }
        try HandlerRegistry.shared.call(first, with: Arguments([("success", .bool(true))]))
        try dispatch(until: { journal.labels().count == 4 })
        XCTAssertThrowsError(try store.tasks.setConcurrency(0))
    }

    func testListPagesInOrderAndBadInputChangesNothing() throws {
        let ids = try store.tasks.add(batch: (0..<5).map { try task("test.tasks.record", "p\($0)", members: ["m\($0)"]) })
        XCTAssertEqual(try store.tasks.list(limit: 2).map(\.id), Array(ids[0..<2]))
        XCTAssertEqual(try store.tasks.list(after: ids[1], limit: 10).map(\.id), Array(ids[2...]))
        XCTAssertEqual(try store.tasks.list().first?.groupMembers, ["m0"])
        XCTAssertEqual(try store.tasks.list().first?.handlerName, "test.tasks.record")
        func code(_ body: () throws -> Void) -> OutliveError.Code? {
            do { try body(); return nil } catch { return (error as? OutliveError)?.code }
        }
        XCTAssertEqual(code { _ = try store.tasks.list(after: "nope") }, .invalidArgument)
        XCTAssertEqual(code { _ = try store.tasks.list(after: Identifier.make()) }, .notFound)
        XCTAssertEqual(code { try store.tasks.retry(id: Identifier.make()) }, .notFound)
        XCTAssertEqual(code { try store.tasks.retry(id: ids[0]) }, .state)
        XCTAssertEqual(code { try store.tasks.delete(id: "x") }, .invalidArgument)
        XCTAssertEqual(code { _ = try store.tasks.add(batch: []) }, .invalidArgument)
        XCTAssertEqual(code { _ = try store.tasks.add(batch: [try task("test.tasks.record", "ok"), try task("test.tasks.record", "bad", start: "")]) }, .invalidArgument)
        XCTAssertEqual(code { _ = try store.tasks.add(try task("test.tasks.record", "bad", members: ["a\u{0}b"])) }, .invalidArgument)
        var policy = TaskPolicy()
        policy.timeout = .nan
        XCTAssertEqual(code { try store.tasks.setPolicy(policy) }, .invalidArgument)
        var triggers = TaskTriggers()
        triggers.delay = -1
        XCTAssertEqual(code { try store.tasks.setTriggers(triggers) }, .invalidArgument)
        XCTAssertEqual(try store.tasks.pendingCount(), 5)
        try store.tasks.delete(id: ids[0])
        XCTAssertEqual(try store.tasks.pendingCount(), 4)
        XCTAssertEqual(code { try store.tasks.delete(id: ids[0]) }, .notFound)
    }

    func testAHandlerTooLargeToSerializeIsRefusedBeforeAnythingIsStored() throws {
        // Two IDs at the size limit of one ID: the handler is over the limit of a serialized handler.
        let half = IDValue(bytes: [UInt8](repeating: 0x61, count: ValueLimits.maxIDSize))
        let work = try Handler(name: "test.tasks.record", bound: Arguments([("a", .id(half)), ("b", .id(half))]))
        XCTAssertThrowsError(try store.tasks.add(NewTask(work: work))) { error in
            XCTAssertEqual((error as? OutliveError)?.code, .invalidArgument)
        }
        XCTAssertThrowsError(try store.tasks.add(batch: [try task("test.tasks.record", "fits"), NewTask(work: work)])) { error in
            XCTAssertEqual((error as? OutliveError)?.code, .invalidArgument)
            XCTAssertTrue((error as? OutliveError)?.message.hasPrefix("tasks[1]:") ?? false)
        }
        XCTAssertEqual(try store.tasks.pendingCount(), 0)
        XCTAssertEqual(try store.tasks.list(), [])
    }

    func testARunnerThatClosesReturnsItsTaskToPendingAndReleasesTheClaim() throws {
        try store.tasks.add(try task("test.tasks.later", "interrupted"))
        try store.tasks.runNow()
        try dispatch(until: { journal.lock.withLock { journal.completions.count } == 1 })
        let other = try OutliveStore(path: directory, processName: "other", loop: nil)
        defer { other.close() }
        XCTAssertEqual(try other.tasks.list().first?.state, .running)
        store.close()
        let info = try XCTUnwrap(try other.tasks.list().first)
        XCTAssertEqual(info.state, .pending)
        XCTAssertTrue(info.lastError?.contains("closed during the attempt") ?? false)
        var claim: Int64?
        try other.store.database.read { claim = try $0.integer("SELECT count(*) FROM outlive_task_runner") }
        XCTAssertEqual(claim, 0)
    }
}

private final class Box {
    let handler: Handler
    init(_ handler: Handler) { self.handler = handler }
}
