import XCTest
import COutliveSystem
@testable import OutliveCore

/// Unique keys and result consumers in the core: what the C suite cannot
/// express (a NUL inside a key) and batches.
final class TaskLifecycleTests: XCTestCase {
    var directory = ""
    var store: OutliveStore!

    override func setUp() {
        var template = Array("/tmp/outlive-lifecycle-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, let made = mkdtemp(base) else { return "" }
            return String(cString: made)
        }
        store = try? OutliveStore(path: directory, processName: "test", loop: nil)
        XCTAssertNotNil(store)
    }

    override func tearDown() {
        store?.close()
        store = nil
    }

    private func task(key: String? = nil, signal: String? = nil, consumer: TaskResultConsumer? = nil) throws -> NewTask {
        var task = NewTask(work: try Handler(name: "test.lifecycle.never"))
        task.uniqueKey = key
        task.resultSignal = signal
        task.resultConsumer = consumer
        return task
    }

    private func code(_ body: () throws -> Void) -> OutliveError.Code? {
        do { try body(); return nil } catch { return (error as? OutliveError)?.code }
    }

    func testBadKeysAndAConsumerWithoutASignalStoreNothing() throws {
        let consumer = TaskResultConsumer(handler: try Handler(name: "test.lifecycle.reader"), lifetime: .process)
        for key in ["", "a\u{0}b", String(repeating: "k", count: NewTask.maxUniqueKeySize + 1)] {
            XCTAssertEqual(code { _ = try store.tasks.enqueue(try task(key: key)) }, .invalidArgument, "key of \(key.utf8.count) bytes")
        }
        XCTAssertEqual(code { _ = try store.tasks.enqueue(try task(consumer: consumer)) }, .invalidArgument)
        XCTAssertEqual(code { _ = try store.tasks.enqueue(try task(signal: "nope")) }, .invalidArgument)
        XCTAssertEqual(try store.tasks.pendingCount(), 0)
        XCTAssertEqual(try store.signals.consumers().count, 0)
    }

    func testTheSameKeyTwiceInOneBatchAddsOneTaskAndCountsIt() throws {
        let signal = Identifier.make()
        let consumer = TaskResultConsumer(handler: try Handler(name: "test.lifecycle.reader"), lifetime: .thisRun)
        let added = try store.tasks.enqueue(batch: [try task(key: "k", signal: signal, consumer: consumer),
                                                    try task(key: "k", consumer: nil), try task(key: "other")])
        XCTAssertEqual(added.map(\.existing), [false, true, false])
        XCTAssertEqual(added[0].id, added[1].id)
        XCTAssertEqual(try store.tasks.pendingCount(), 2)
        XCTAssertEqual(try store.signals.consumers(of: signal).count, 1)
        let listed = try store.tasks.list()
        XCTAssertEqual(listed.map(\.uniqueKey), ["k", "other"])
        XCTAssertEqual(listed.first?.resultSignal, signal)
    }
}
