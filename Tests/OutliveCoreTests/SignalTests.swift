import COutliveSystem
import Glibc
import XCTest
@testable import OutliveCore

/// Core logic of signals with built-in handlers. Several store handles in one
/// process stand for several processes (each is its own run with its own loop);
/// the C suite test_signals covers real processes and kill -9.
final class SignalTests: XCTestCase {
    private var directory = ""
    private var opened: [OutliveStore] = []

    /// What the built-in handlers received, by handler name.
    private final class Deliveries {
        var calls: [(signal: String, version: UInt64, terminated: Bool, payload: Arguments)] = []
    }

    override func setUpWithError() throws {
        var template = Array("/tmp/outlive-signal-tests-XXXXXX".utf8CString)
        let made = try XCTUnwrap(mkdtemp(&template))
        directory = String(cString: made)
    }

    override func tearDown() {
        for store in opened { store.close() }
        opened = []
        _ = system("rm -rf '\(directory)'")
    }

    private func open(_ name: String) throws -> OutliveStore {
        let store = try OutliveStore(path: directory + "/store", processName: name, loop: nil)
        opened.append(store)
        return store
    }

    /// Registers a built-in handler under a name unique to this test and
    /// returns the handler value and where its calls are recorded.
    private func recordingHandler(_ label: String) throws -> (Handler, Deliveries) {
        let name = "signals_test_\(label)_\(Identifier.make().prefix(8))"
        let deliveries = Deliveries()
        try HandlerRegistry.shared.registerBuiltin(name: name, signature: "ID signal_id, UINTEGER version, BOOL terminated") { arguments in
            guard case .id(let id)? = arguments["signal_id"], case .uinteger(let version)? = arguments["version"],
                  case .bool(let terminated)? = arguments["terminated"] else { return }
            var payload = arguments
            for reserved in Signals.reservedArgumentNames { payload.remove(reserved) }
            deliveries.calls.append((id.string ?? "", version, terminated, payload))
        }
        return (try Handler(name: name), deliveries)
    }

    /// Dispatches the stores' loops until `done` holds or 5 s passed.
    private func dispatch(_ stores: [OutliveStore], until done: () -> Bool) throws {
        let deadline = Clock.monotonic() + 5
        while !done() && Clock.monotonic() < deadline {
            for store in stores { try store.loop.dispatch(timeoutMilliseconds: 10) }
        }
    }

    /// Dispatches until every loop had nothing left to do for a moment: used
    /// only before asserting that something did *not* happen.
    private func settle(_ stores: [OutliveStore]) throws {
        var quiet = 0
        while quiet < 3 {
            var ran = 0
            for store in stores { ran += try store.loop.dispatch(timeoutMilliseconds: 20) }
            quiet = ran == 0 ? quiet + 1 : 0
        }
    }

    func testOnceConsumerGetsOneVersionAndIsRemovedWithItsRecord() throws {
        let app = try open("app"), worker = try open("worker")
        let (handler, got) = try recordingHandler("once")
        let signal = Identifier.make()
        try app.signals.consume(signalID: signal, handler: handler, delivery: .once, lifetime: .thisRun)
        XCTAssertEqual(try worker.signals.post(signalID: signal, payload: Arguments([("result", .integer(42))]), terminates: false), 1)
        try dispatch([app, worker]) { got.calls.count == 1 }
        XCTAssertEqual(got.calls.count, 1)
        XCTAssertEqual(got.calls.first?.signal, signal)
        XCTAssertEqual(got.calls.first?.version, 1)
        XCTAssertEqual(got.calls.first?.terminated, false)
        XCTAssertEqual(got.calls.first?.payload["result"], .integer(42))
        try settle([app, worker])
        XCTAssertEqual(try app.signals.consumers(of: signal), [])
        XCTAssertEqual(try app.signals.signals(), [])
        XCTAssertNil(try worker.signals.post(signalID: signal, terminates: true))
        try settle([app, worker])
        XCTAssertEqual(got.calls.count, 1)
    }

    func testUntilTerminatedConsumerGetsEachVersionInOrderThenGoes() throws {
        let app = try open("app"), worker = try open("worker")
        let (handler, got) = try recordingHandler("progress")
        let signal = Identifier.make()
        try app.signals.consume(signalID: signal, handler: handler, delivery: .untilTerminated, lifetime: .thisRun)
        for step in 1...5 {
            XCTAssertEqual(try worker.signals.post(signalID: signal, payload: Arguments([("step", .integer(Int64(step)))]),
                                                   terminates: step == 5), UInt64(step))
            try dispatch([app]) { got.calls.count == step }
        }
        XCTAssertEqual(got.calls.map(\.version), [1, 2, 3, 4, 5])
        XCTAssertEqual(got.calls.map(\.terminated), [false, false, false, false, true])
        XCTAssertEqual(got.calls.map { $0.payload["step"] }, (1...5).map { .integer(Int64($0)) })
        XCTAssertEqual(try app.signals.signals(), [])
        XCTAssertNil(try worker.signals.post(signalID: signal, terminates: false))
        try settle([app, worker])
        XCTAssertEqual(got.calls.count, 5)
    }

    func testQuickPostsReachAConsumerInIncreasingOrderEndingWithTheLast() throws {
        let app = try open("app"), worker = try open("worker")
        let (handler, got) = try recordingHandler("quick")
        let signal = Identifier.make()
        try app.signals.consume(signalID: signal, handler: handler, delivery: .untilTerminated, lifetime: .thisRun)
        for step in 1...20 { try worker.signals.post(signalID: signal, terminates: step == 20) }
        try dispatch([app]) { got.calls.last?.terminated == true }
        let versions = got.calls.map(\.version)
        XCTAssertEqual(versions, versions.sorted())
        XCTAssertEqual(Set(versions).count, versions.count)
        XCTAssertEqual(versions.last, 20)
    }

    func testPostAfterTerminationIsIgnoredWhileConsumersRemain() throws {
        let app = try open("app"), worker = try open("worker")
        let (handler, got) = try recordingHandler("late")
        let signal = Identifier.make()
        try app.signals.consume(signalID: signal, handler: handler, delivery: .untilTerminated, lifetime: .thisRun)
        XCTAssertEqual(try worker.signals.post(signalID: signal, payload: Arguments([("n", .int(1))]), terminates: true), 1)
        XCTAssertNil(try worker.signals.post(signalID: signal, payload: Arguments([("n", .int(2))]), terminates: false))
        try dispatch([app]) { !got.calls.isEmpty }
        try settle([app, worker])
        XCTAssertEqual(got.calls.count, 1)
        XCTAssertEqual(got.calls.first?.payload["n"], .int(1))
        XCTAssertEqual(got.calls.first?.terminated, true)
    }

    func testPostWithoutConsumerStoresNothing() throws {
        let worker = try open("worker")
        XCTAssertNil(try worker.signals.post(signalID: Identifier.make(), payload: Arguments([("x", .bool(true))]), terminates: true))
        XCTAssertEqual(try worker.signals.signals(), [])
        XCTAssertEqual(try worker.signals.consumers(), [])
        XCTAssertEqual(try worker.signals.inspectionCounts().map(\.1), [0, 0])
        XCTAssertThrowsError(try worker.signals.signal(Identifier.make())) { XCTAssertEqual(($0 as? OutliveError)?.code, .notFound) }
    }

    func testConsumerRegisteredAfterAPostGetsTheCurrentVersion() throws {
        let app = try open("app"), worker = try open("worker")
        let (first, _) = try recordingHandler("first")
        let (second, got) = try recordingHandler("second")
        let signal = Identifier.make()
        try app.signals.consume(signalID: signal, handler: first, delivery: .untilTerminated, lifetime: .process)
        try worker.signals.post(signalID: signal, terminates: false)
        try worker.signals.post(signalID: signal, terminates: false)
        try app.signals.consume(signalID: signal, handler: second, delivery: .once, lifetime: .thisRun)
        try dispatch([app]) { !got.calls.isEmpty }
        XCTAssertEqual(got.calls.map(\.version), [2])
    }

    func testThisRunConsumersGoWhenTheirRunCloses() throws {
        let app = try open("app"), worker = try open("worker")
        let (handler, got) = try recordingHandler("closed")
        let signal = Identifier.make()
        try app.signals.consume(signalID: signal, handler: handler, delivery: .once, lifetime: .thisRun)
        XCTAssertEqual(try worker.signals.signal(signal).consumerCount, 1)
        app.close()
        XCTAssertEqual(try worker.signals.signals(), [])
        XCTAssertNil(try worker.signals.post(signalID: signal, terminates: true))
        let again = try open("app")
        try settle([again, worker])
        XCTAssertEqual(got.calls.count, 0)
    }

    func testProcessConsumerIsDeliveredByTheNextRunOfItsProcessName() throws {
        let first = try open("app"), worker = try open("worker")
        let (handler, got) = try recordingHandler("next_run")
        let signal = Identifier.make()
        try first.signals.consume(signalID: signal, handler: handler, delivery: .once, lifetime: .process)
        first.close()
        XCTAssertEqual(try worker.signals.post(signalID: signal, payload: Arguments([("ok", .bool(true))]), terminates: true), 1)
        // Another process name resolves the handler too (same process here) but must not deliver it.
        try settle([worker])
        XCTAssertEqual(got.calls.count, 0)
        let second = try open("app")
        try dispatch([second]) { !got.calls.isEmpty }
        XCTAssertEqual(got.calls.count, 1)
        XCTAssertEqual(got.calls.first?.payload["ok"], .bool(true))
        XCTAssertEqual(try second.signals.signals(), [])
    }

    func testAnyProcessConsumerIsDeliveredExactlyOnceAmongThreeCandidates() throws {
        let app = try open("app")
        let candidates = [try open("worker-a"), try open("worker-b"), try open("worker-c")]
        let (handler, got) = try recordingHandler("anyone")
        var signals: [String] = []
        for _ in 0..<10 {
            let signal = Identifier.make()
            signals.append(signal)
            try app.signals.consume(signalID: signal, handler: handler, delivery: .once, lifetime: .anyProcess)
        }
        app.close()
        for signal in signals { try candidates[0].signals.post(signalID: signal, terminates: true) }
        try dispatch(candidates) { got.calls.count >= signals.count }
        try settle(candidates)
        XCTAssertEqual(got.calls.map(\.signal).sorted(), signals.sorted())
        XCTAssertEqual(try candidates[1].signals.signals(), [])
    }

    func testClaimOfARunThatEndsMidDeliveryIsReleasedAndDeliveredByAnother() throws {
        let app = try open("app"), dying = try open("worker-a"), survivor = try open("worker-b")
        let (handler, got) = try recordingHandler("reclaimed")
        let signal = Identifier.make()
        let consumer = try app.signals.consume(signalID: signal, handler: handler, delivery: .once, lifetime: .anyProcess)
        // As if worker-a had claimed the delivery and died inside the handler:
        // the claim is set in the same transaction as the post, so no one else
        // can take the version first.
        try dying.store.database.write { transaction in
            try transaction.execute("UPDATE outlive_signals SET version = 1, payload = ?, terminated = 1 WHERE signal_id = ?",
                                    [.blob(try Arguments().serialized()), .text(signal)])
            try transaction.execute("UPDATE outlive_signal_consumers SET claim_run = ? WHERE consumer_id = ?",
                                    [.text(dying.store.runID), .text(consumer)])
            try transaction.recordChange(topic: Signals.topic, key: signal)
        }
        try settle([app, survivor])
        XCTAssertEqual(got.calls.count, 0)
        XCTAssertEqual(try app.signals.consumers(of: signal).first?.deliveringRunID, dying.store.runID)
        dying.close()
        try dispatch([app, survivor]) { !got.calls.isEmpty }
        try settle([app, survivor])
        XCTAssertEqual(got.calls.map(\.version), [1])
        XCTAssertEqual(try survivor.signals.signals(), [])
    }

    func testHandlerRemovingAnotherConsumerOfTheSameSignalPreventsItsDelivery() throws {
        let app = try open("app"), worker = try open("worker")
        let signal = Identifier.make()
        let (second, secondGot) = try recordingHandler("second_victim")
        var victim = ""
        let name = "signals_test_remover_\(Identifier.make().prefix(8))"
        try HandlerRegistry.shared.registerBuiltin(name: name, signature: "") { [unowned app] _ in
            try app.signals.removeConsumer(victim)
        }
        try app.signals.consume(signalID: signal, handler: try Handler(name: name), delivery: .once, lifetime: .thisRun)
        victim = try app.signals.consume(signalID: signal, handler: second, delivery: .once, lifetime: .thisRun)
        try worker.signals.post(signalID: signal, terminates: true)
        try dispatch([app]) { (try? app.signals.signals().isEmpty) == true }
        try settle([app, worker])
        XCTAssertEqual(secondGot.calls.count, 0)
        XCTAssertEqual(try app.signals.signals(), [])
    }

    func testRemovingAConsumerAndAScope() throws {
        let app = try open("app"), worker = try open("worker")
        let (handler, got) = try recordingHandler("removed")
        let kept = Identifier.make(), scoped = Identifier.make()
        let single = try app.signals.consume(signalID: kept, handler: handler, delivery: .once, lifetime: .process)
        try app.signals.consume(signalID: kept, handler: handler, delivery: .once, lifetime: .thisRun, scope: "account-1")
        try app.signals.consume(signalID: scoped, handler: handler, delivery: .once, lifetime: .anyProcess, scope: "account-1")
        try app.signals.consume(signalID: scoped, handler: handler, delivery: .once, lifetime: .thisRun, scope: "account-2")
        XCTAssertEqual(try worker.signals.removeConsumers(scope: "account-1"), 2)
        XCTAssertEqual(try worker.signals.removeConsumers(scope: "nobody"), 0)
        XCTAssertEqual(try worker.signals.signal(kept).consumerCount, 1)
        XCTAssertEqual(try worker.signals.consumers(of: scoped).map(\.scope), ["account-2"])
        try worker.signals.removeConsumer(single.uppercased())
        XCTAssertThrowsError(try worker.signals.removeConsumer(single)) { XCTAssertEqual(($0 as? OutliveError)?.code, .notFound) }
        XCTAssertEqual(try worker.signals.signals().map(\.signalID), [scoped])
        XCTAssertNil(try worker.signals.post(signalID: kept, terminates: true))
        try settle([app, worker])
        XCTAssertEqual(got.calls.count, 0)
    }

    func testInspectionShowsVersionsAndConsumers() throws {
        let app = try open("app"), worker = try open("worker")
        let (handler, _) = try recordingHandler("inspected")
        let unresolved = try Handler(name: "signals_test_nowhere")
        let signal = Identifier.make()
        let id = try app.signals.consume(signalID: signal.uppercased(), handler: unresolved, delivery: .untilTerminated,
                                         lifetime: .anyProcess, scope: "s")
        try worker.signals.post(signalID: signal, terminates: false)
        try worker.signals.post(signalID: signal, terminates: false)
        try settle([app, worker])
        XCTAssertEqual(try worker.signals.signal(signal), SignalSummary(signalID: signal, version: 2, terminated: false, consumerCount: 1))
        XCTAssertEqual(try worker.signals.consumers(of: signal), [
            ConsumerSummary(consumerID: id, signalID: signal, handlerName: "signals_test_nowhere", delivery: .untilTerminated,
                            lifetime: .anyProcess, scope: "s", processName: "app", runID: app.store.runID,
                            lastDeliveredVersion: 0, deliveringRunID: nil),
        ])
        _ = handler
    }

    func testBadInputIsRejectedAndNothingIsStored() throws {
        let app = try open("app")
        let (handler, _) = try recordingHandler("bad")
        func code(_ body: () throws -> Void) -> OutliveError.Code? {
            do { try body(); return nil } catch { return (error as? OutliveError)?.code }
        }
        XCTAssertEqual(code { try app.signals.consume(signalID: "not-a-uuid", handler: handler, delivery: .once, lifetime: .thisRun) }, .invalidArgument)
        XCTAssertEqual(code { try app.signals.consume(signalID: Identifier.make(), handler: handler, delivery: .once, lifetime: .thisRun, scope: "") }, .invalidArgument)
        XCTAssertEqual(code { try app.signals.consume(signalID: Identifier.make(), handler: handler, delivery: .once, lifetime: .thisRun,
                                                      scope: String(repeating: "x", count: Signals.maxScopeSize + 1)) }, .invalidArgument)
        var invalidated = handler
        try HandlerRegistry.shared.invalidate(&invalidated)
        XCTAssertEqual(code { try app.signals.consume(signalID: Identifier.make(), handler: invalidated, delivery: .once, lifetime: .thisRun) }, .invalidated)
        let signal = Identifier.make()
        try app.signals.consume(signalID: signal, handler: handler, delivery: .once, lifetime: .thisRun)
        XCTAssertEqual(code { try app.signals.post(signalID: signal, payload: Arguments([("version", .uinteger(9))]), terminates: true) }, .invalidArgument)
        XCTAssertEqual(code { try app.signals.post(signalID: "", terminates: true) }, .invalidArgument)
        XCTAssertEqual(code { try app.signals.removeConsumer("zz") }, .invalidArgument)
        XCTAssertEqual(try app.signals.signal(signal), SignalSummary(signalID: signal, version: 0, terminated: false, consumerCount: 1))
        XCTAssertEqual(try app.signals.consumers().count, 1)
    }
}
