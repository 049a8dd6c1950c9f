import COutliveSystem
import XCTest
@testable import OutliveCore

/// The durable queue in one process: two store handles are two runs, as two
/// processes would be (the C tests do it with real processes and kill -9).
final class DurableInteractionQueueTests: XCTestCase {
    var directory = ""

    /// What the interaction handler saw: (n, interaction_id, finish), in order.
    final class Shown {
        var entries: [(n: Int64, id: String, finish: Handler)] = []
    }
    nonisolated(unsafe) static var shown = Shown()

    override class func setUp() {
        super.setUp()
        try? HandlerRegistry.shared.registerBuiltin(name: "test.durable.show",
                                                    signature: "INTEGER n, ID interaction_id, HANDLER finish") { arguments in
            guard case .integer(let n)? = arguments["n"], case .id(let id)? = arguments["interaction_id"],
                  case .handler(let finish)? = arguments["finish"] else { return }
            DurableInteractionQueueTests.shown.entries.append((n, id.string ?? "", finish))
        }
    }

    override func setUpWithError() throws {
        var template = Array("/tmp/outlive-swift-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        DurableInteractionQueueTests.shown = Shown()
    }

    override func tearDown() {
        _ = directory.withCString { path in system("rm -rf '\(String(cString: path))'") }
    }

    private var shown: Shown { DurableInteractionQueueTests.shown }

    private func show(_ n: Int64) throws -> Handler {
        try Handler(name: "test.durable.show", bound: Arguments([("n", .integer(n))]))
    }

    private func dispatch(_ loop: Loop, until done: () -> Bool, seconds: Double = 10) {
        let deadline = Clock.monotonic() + seconds
        while !done() && Clock.monotonic() < deadline { _ = try? loop.dispatch(timeoutMilliseconds: 50) }
    }

    /// Dispatches what is due now (a few rounds, so posted work and feed
    /// wake-ups that follow each other settle).
    private func settle(_ loop: Loop) {
        for _ in 0..<5 { _ = try? loop.dispatch(timeoutMilliseconds: 20) }
    }

    func testInteractionsArePresentedOneAtATimeInOrderAndFinishDeletesThem() throws {
        let loop = try Loop()
        let store = try OutliveStore(path: directory, processName: "app", loop: loop)
        let queue = try store.durableInteractions.open("notices")
        let ids = try (1...3).map { try queue.add(show($0)) }
        dispatch(loop) { shown.entries.count == 1 }
        settle(loop)
        XCTAssertEqual(shown.entries.map(\.n), [1], "the second must wait for the first's finish")
        XCTAssertEqual(shown.entries.first?.id, ids[0])
        XCTAssertEqual(queue.presentingID, ids[0])
        try HandlerRegistry.shared.call(shown.entries[0].finish)
        XCTAssertEqual(try queue.count(), 2)
        dispatch(loop) { shown.entries.count == 2 }
        try HandlerRegistry.shared.call(shown.entries[1].finish)
        dispatch(loop) { shown.entries.count == 3 }
        try HandlerRegistry.shared.call(shown.entries[2].finish)
        XCTAssertEqual(shown.entries.map(\.n), [1, 2, 3])
        XCTAssertEqual(shown.entries.map(\.id), ids)
        XCTAssertEqual(try queue.count(), 0)
        queue.close()
        store.close()
    }

    func testASecondFinishThrowsStateAndChangesNothing() throws {
        let loop = try Loop()
        let store = try OutliveStore(path: directory, processName: "app", loop: loop)
        let queue = try store.durableInteractions.open("q")
        try queue.add(show(1))
        try queue.add(show(2))
        dispatch(loop) { shown.entries.count == 1 }
        let finish = shown.entries[0].finish
        try HandlerRegistry.shared.call(finish)
        XCTAssertThrowsError(try HandlerRegistry.shared.call(finish)) { error in
            XCTAssertEqual((error as? OutliveError)?.code, .state)
        }
        XCTAssertEqual(try queue.count(), 1, "the second finish must not delete the next interaction")
        queue.close()
        store.close()
    }

    func testOnlyOneRunPresentsAndClosingItGivesTheInteractionToTheOther() throws {
        let loop = try Loop()
        let first = try OutliveStore(path: directory, processName: "app", loop: loop)
        let second = try OutliveStore(path: directory, processName: "app", loop: loop)
        let a = try first.durableInteractions.open("q")
        let b = try second.durableInteractions.open("q")
        let id = try a.add(show(1))
        dispatch(loop) { shown.entries.count == 1 }
        settle(loop)
        XCTAssertEqual(shown.entries.count, 1)
        let presenter = a.presentingID != nil ? (a, first) : (b, second)
        let other = a.presentingID != nil ? (b, second) : (a, first)
        XCTAssertEqual(presenter.0.presentingID, id)
        XCTAssertNil(other.0.presentingID)

        // The presenting run ends without finishing: the other run presents it again.
        let staleFinish = shown.entries[0].finish
        presenter.0.close()
        presenter.1.close()
        dispatch(loop) { shown.entries.count == 2 }
        XCTAssertEqual(shown.entries.map(\.id), [id, id])
        XCTAssertEqual(try other.0.entries().first?.presentations, 2)
        XCTAssertThrowsError(try HandlerRegistry.shared.call(staleFinish)) { error in
            XCTAssertEqual((error as? OutliveError)?.code, .state)
        }
        try HandlerRegistry.shared.call(shown.entries[1].finish)
        XCTAssertEqual(try other.0.count(), 0)
        other.0.close()
        other.1.close()
    }

    func testASuspendedHandlePresentsNothingUntilResumed() throws {
        let loop = try Loop()
        let store = try OutliveStore(path: directory, processName: "app", loop: loop)
        let queue = try store.durableInteractions.open("q", suspended: true)
        try queue.add(show(1))
        settle(loop)
        XCTAssertTrue(shown.entries.isEmpty)
        try queue.resume()
        dispatch(loop) { shown.entries.count == 1 }
        try queue.suspend()  // the running interaction goes on
        try queue.add(show(2))
        try HandlerRegistry.shared.call(shown.entries[0].finish)
        settle(loop)
        XCTAssertEqual(shown.entries.count, 1)
        try queue.resume()
        dispatch(loop) { shown.entries.count == 2 }
        XCTAssertEqual(shown.entries.map(\.n), [1, 2])
        queue.close()
        store.close()
    }

    func testQueuesOfDifferentNamesAreIndependentAndRemoveTakesOneOut() throws {
        let loop = try Loop()
        let store = try OutliveStore(path: directory, processName: "app", loop: loop)
        let red = try store.durableInteractions.open("red", suspended: true)
        let blue = try store.durableInteractions.open("blue", suspended: true)
        let r1 = try red.add(show(1))
        let r2 = try red.add(show(2))
        let b1 = try blue.add(show(3))
        XCTAssertEqual(try red.entries().map(\.id), [r1, r2])
        XCTAssertEqual(try red.entries().map(\.handlerName), ["test.durable.show", "test.durable.show"])
        XCTAssertEqual(try blue.entries().map(\.id), [b1])
        XCTAssertThrowsError(try blue.remove(r1)) { XCTAssertEqual(($0 as? OutliveError)?.code, .notFound) }
        try red.remove(r1)
        XCTAssertEqual(try red.entries().map(\.id), [r2])
        try red.resume()
        dispatch(loop) { shown.entries.count == 1 }
        settle(loop)
        XCTAssertEqual(shown.entries.map(\.n), [2])
        XCTAssertEqual(try store.durableInteractions.storedCount(), 2)
        red.close()
        blue.close()
        store.close()
    }

    func testBadQueueNamesAreRejected() throws {
        let loop = try Loop()
        let store = try OutliveStore(path: directory, processName: "app", loop: loop)
        for name in ["", String(repeating: "x", count: 256), "line\nbreak"] {
            XCTAssertThrowsError(try store.durableInteractions.open(name)) {
                XCTAssertEqual(($0 as? OutliveError)?.code, .invalidArgument)
            }
        }
        store.close()
    }
}
