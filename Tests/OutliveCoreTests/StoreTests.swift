import COutliveSystem
import XCTest
@testable import OutliveCore

final class StoreTests: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/outlive-swift-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        _ = directory.withCString { path in system("rm -rf '\(String(cString: path))'") }
    }

    func testEndHooksRunWhenARunClosesAndOnlyOnce() throws {
        let loop = try Loop()
        let first = try Store(path: directory, processName: "app", loop: loop, components: [])
        var ended: [EndedRun] = []
        let second = try Store(path: directory, processName: "app", loop: loop, components: [])
        second.onRunEnded { _, run in ended.append(run) }
        first.close()
        // The first store ran its own end (with no hooks of its own); the second
        // sees nothing because the run is already gone.
        try second.reapEndedRuns()
        XCTAssertEqual(ended.count, 0)
        var own: [EndedRun] = []
        second.onRunEnded { _, run in own.append(run) }
        second.close()
        XCTAssertEqual(own.count, 1)
        XCTAssertEqual(own.first?.died, false)
    }

    func testFeedDeliversOnlyEntriesCommittedAfterSubscribing() throws {
        let loop = try Loop()
        let store = try Store(path: directory, processName: "app", loop: loop, components: [KeyValueStore.schema])
        let kv = KeyValueStore(store: store)
        try kv.set("before", [1])
        var keys: [String] = []
        _ = try store.subscribe(topic: KeyValueStore.topic) { keys.append(contentsOf: $0.keys) }
        try kv.set("after", [2])
        let deadline = Clock.monotonic() + 5
        while keys.isEmpty && Clock.monotonic() < deadline { try loop.dispatch(timeoutMilliseconds: 100) }
        XCTAssertEqual(keys, ["after"])
        store.close()
    }

    func testAReaderReadsInTheFeedsTransactionAndItsWorkRunsAfterIt() throws {
        let loop = try Loop()
        let store = try Store(path: directory, processName: "app", loop: loop, components: [KeyValueStore.schema])
        let kv = KeyValueStore(store: store)
        var read: [String: [UInt8]] = [:]
        var storeUsableInWork = false
        var handled = 0
        _ = try store.subscribe(topic: KeyValueStore.topic, reading: { batch, transaction in
            for key in batch.keys { read[key] = try KeyValueStore.read(key, in: transaction) }
            // Inside the transaction the store refuses a transaction of its own ...
            XCTAssertThrowsError(try kv.get("a")) { XCTAssertEqual(($0 as? OutliveError)?.code, .state) }
            // ... and the work it returns runs once the transaction has ended.
            return { storeUsableInWork = (try? kv.get("a")) == [1] }
        }) { _ in handled += 1 }
        try kv.set("a", [1])
        let deadline = Clock.monotonic() + 5
        while !storeUsableInWork && Clock.monotonic() < deadline { try loop.dispatch(timeoutMilliseconds: 100) }
        XCTAssertEqual(read, ["a": [1]])
        XCTAssertTrue(storeUsableInWork)
        XCTAssertEqual(handled, 0, "the handler is for a reader that threw")
        store.close()
    }

    func testABatchWhoseReaderThrowsReachesTheHandlerAfterTheTransaction() throws {
        let loop = try Loop()
        let store = try Store(path: directory, processName: "app", loop: loop, components: [KeyValueStore.schema])
        let kv = KeyValueStore(store: store)
        var handled: [String] = []
        var otherRead: [String] = []
        _ = try store.subscribe(topic: KeyValueStore.topic, reading: { _, _ in
            throw OutliveError.corrupt("a reader that cannot read its batch")
        }) { batch in
            // After the transaction: the store is usable again.
            XCTAssertEqual(try? kv.get(batch.keys[0]), [2])
            handled.append(contentsOf: batch.keys)
        }
        // Another subscriber of the same wake-up still gets its batch read in the transaction.
        _ = try store.subscribe(topic: KeyValueStore.topic, reading: { batch, transaction in
            for key in batch.keys where try KeyValueStore.read(key, in: transaction) != nil { otherRead.append(key) }
            return nil
        }) { _ in XCTFail("this reader did not throw") }
        try kv.set("b", [2])
        let deadline = Clock.monotonic() + 5
        while handled.isEmpty && Clock.monotonic() < deadline { try loop.dispatch(timeoutMilliseconds: 100) }
        XCTAssertEqual(handled, ["b"])
        XCTAssertEqual(otherRead, ["b"])
        store.close()
    }

    func testLiveRunsListsOpenHandlesOnly() throws {
        let loop = try Loop()
        let a = try Store(path: directory, processName: "a", loop: loop, components: [])
        let b = try Store(path: directory, processName: "b", loop: loop, components: [])
        XCTAssertEqual(Set(try a.liveRuns().map(\.processName)), ["a", "b"])
        XCTAssertTrue(a.isAlive(run: b.runID))
        b.close()
        XCTAssertEqual(try a.liveRuns().map(\.processName), ["a"])
        XCTAssertFalse(a.isAlive(run: b.runID))
        XCTAssertFalse(a.isAlive(run: "not-a-run"))
        a.close()
    }

    func testComponentFromANewerLibraryIsRefused() throws {
        let loop = try Loop()
        let newer = SchemaComponent(name: "future", migrations: ["CREATE TABLE f1(x)", "CREATE TABLE f2(x)"])
        try Store(path: directory, processName: "app", loop: loop, components: [newer]).close()
        let older = SchemaComponent(name: "future", migrations: ["CREATE TABLE f1(x)"])
        XCTAssertThrowsError(try Store(path: directory, processName: "app", loop: loop, components: [older])) {
            XCTAssertEqual(($0 as? OutliveError)?.code, .version)
        }
    }
}
