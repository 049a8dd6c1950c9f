import COutliveSystem
import XCTest
@testable import OutliveCore

/// The core flow of the message queue in one process, with two store handles
/// (two runs) where the flow crosses runs.
final class MessageQueueTests: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/outlive-messages-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        _ = directory.withCString { path in system("rm -rf '\(String(cString: path))'") }
    }

    func open(_ name: String = "app", loop: Loop? = nil) throws -> OutliveStore {
        try OutliveStore(path: directory, processName: name, loop: loop)
    }

    func draft(_ category: String = "sync", choices: [String] = ["ok", "cancel"]) throws -> MessageDraft {
        var draft = try MessageDraft(category: category, title: "Conflict")
        for choice in choices { try draft.addChoice(Choice(id: choice, label: choice.uppercased(), kind: .regular)) }
        return draft
    }

    /// Dispatches the loop until `condition` holds (at most ~10 s).
    func pump(_ loop: Loop, until condition: () throws -> Bool) rethrows -> Bool {
        for _ in 0..<1_000 {
            if try condition() { return true }
            _ = try? loop.dispatch(timeoutMilliseconds: 10)
        }
        return try condition()
    }

    func testPresentedChoiceGoesToResponseHandlerThenEndThenDeletion() throws {
        let store = try open()
        defer { store.close() }
        var events: [String] = []
        var token: Presentation?
        try store.messages.addPresenter(id: "dialog", PresenterCallbacks(
            priority: { _ in 200 },
            present: { message, presentation in events.append("present \(message.title)"); token = presentation },
            end: { _ in events.append("end") }))
        try store.messages.addResponseHandler(id: "r") { message in events.append("respond \(message.choice ?? "-")"); return true }
        let id = try store.messages.post(try draft())
        XCTAssertTrue(pump(store.loop) { token != nil })
        try token?.finish(PresentationOutcome(presented: true, requiresEndNotification: true, choice: "ok"))
        XCTAssertThrowsError(try token?.finish(PresentationOutcome(presented: true))) { error in
            XCTAssertEqual((error as? OutliveError)?.code, .state)
        }
        XCTAssertTrue(try pump(store.loop) { try store.messages.count() == 0 })
        XCTAssertEqual(events, ["present Conflict", "respond ok", "end"])
        XCTAssertThrowsError(try store.messages.message(id))
    }

    func testAutoResolverAnswersBeforePresentersAndBadChoicesAreIgnored() throws {
        let store = try open()
        defer { store.close() }
        var presented = 0
        var answers: [String] = []
        try store.messages.addAutoResolver(id: "bad") { _ in .answered("no-such-choice") }
        try store.messages.addAutoResolver(id: "good") { _ in .answered("cancel") }
        try store.messages.addPresenter(id: "p", PresenterCallbacks(priority: { _ in 300 }, present: { _, _ in presented += 1 }))
        try store.messages.addResponseHandler(id: "r") { answers.append($0.choice ?? ""); return true }
        _ = try store.messages.post(try draft())
        XCTAssertTrue(try pump(store.loop) { try store.messages.count() == 0 })
        XCTAssertEqual(presented, 0)
        XCTAssertEqual(answers, ["cancel"])
    }

    func testLockOfAClosedRunIsBrokenAndTheMessageOfferedAgain() throws {
        let loop = try Loop()
        let first = try open(loop: loop)
        let second = try open(loop: loop)
        defer { second.close() }
        var firstToken: Presentation?
        var secondPresented = 0
        try first.messages.addPresenter(id: "p", PresenterCallbacks(priority: { _ in 200 }, present: { _, token in firstToken = token }))
        let id = try first.messages.post(try draft())
        XCTAssertTrue(pump(loop) { firstToken != nil })
        try second.messages.addPresenter(id: "p", PresenterCallbacks(priority: { _ in 200 }, present: { _, token in
            secondPresented += 1
            try? token.finish(PresentationOutcome(presented: true))
        }))
        for _ in 0..<5 { _ = try loop.dispatch(timeoutMilliseconds: 10) }
        XCTAssertEqual(secondPresented, 0)
        XCTAssertEqual(try second.messages.message(id).lockingRun, first.store.runID)
        first.close()
        XCTAssertTrue(try pump(loop) { try second.messages.message(id).presented })
        XCTAssertEqual(secondPresented, 1)
        // The first run's late finish changes nothing.
        try firstToken?.finish(PresentationOutcome(presented: true, choice: "ok"))
        for _ in 0..<5 { _ = try loop.dispatch(timeoutMilliseconds: 10) }
        XCTAssertFalse(try second.messages.message(id).handled)
    }

    func testProcessedByRecordsEveryAskedPresenterAndDeclinesAreNotAskedAgain() throws {
        let store = try open()
        defer { store.close() }
        var asked = 0
        try store.messages.addPresenter(id: "never", PresenterCallbacks(priority: { _ in asked += 1; return 0 }, present: { _, _ in }))
        let id = try store.messages.post(try draft())
        let entry = "app:\(store.store.runID):never"
        XCTAssertTrue(try pump(store.loop) { try store.messages.message(id).processedBy == [entry] })
        try store.messages.respond(id, choice: "ok")  // a change of the message: not asked again
        for _ in 0..<5 { _ = try store.loop.dispatch(timeoutMilliseconds: 10) }
        XCTAssertEqual(asked, 1)
        XCTAssertNil(try store.messages.message(id).lockingRun)
    }

    func testDurableResponseHandlerGetsMessageIDChoiceAndScope() throws {
        var calls: [Arguments] = []
        try HandlerRegistry.shared.registerBuiltin(name: "test.messages.answered", signature: "ID message_id, ID choice, ID? scope, ID tag") {
            calls.append($0)
        }
        let store = try open()
        defer { store.close() }
        var message = try draft()
        try message.setScope("account-9")
        try message.setResponseHandler(try Handler(name: "test.messages.answered", bound: Arguments([("tag", .id(IDValue(string: "t")))])))
        let id = try store.messages.post(message)
        try store.messages.respond(id, choice: "cancel")
        XCTAssertTrue(try pump(store.loop) { try store.messages.count() == 0 })
        XCTAssertEqual(calls.count, 1)
        XCTAssertEqual(calls.first?["message_id"], .id(IDValue(string: id)))
        XCTAssertEqual(calls.first?["choice"], .id(IDValue(string: "cancel")))
        XCTAssertEqual(calls.first?["scope"], .id(IDValue(string: "account-9")))
        XCTAssertEqual(calls.first?["tag"], .id(IDValue(string: "t")))
    }

    /// Only changed messages are looked at: an auto-resolver (asked about every
    /// unanswered message it sees) is asked once per post, not once per stored
    /// message, however many wait unanswered.
    func testAChangeLooksOnlyAtTheChangedMessage() throws {
        let store = try open()
        defer { store.close() }
        var asked: [String: Int] = [:]
        try store.messages.addAutoResolver(id: "count") { message in asked[message.id, default: 0] += 1; return .unresolved }
        for _ in 0..<3 { _ = try store.loop.dispatch(timeoutMilliseconds: 10) }  // its initial scan, of nothing
        var ids: [String] = []
        for _ in 0..<50 { ids.append(try store.messages.post(try draft())) }
        XCTAssertTrue(pump(store.loop) { asked.count == 50 })
        for _ in 0..<5 { _ = try store.loop.dispatch(timeoutMilliseconds: 10) }
        XCTAssertEqual(asked.values.reduce(0, +), 50)
        let last = try store.messages.post(try draft())
        XCTAssertTrue(pump(store.loop) { asked[last] == 1 })
        for _ in 0..<5 { _ = try store.loop.dispatch(timeoutMilliseconds: 10) }
        XCTAssertEqual(asked.values.reduce(0, +), 51)
        // Adding a resolver scans the unanswered ones through the index: once each.
        var scanned = 0
        try store.messages.addAutoResolver(id: "late") { _ in scanned += 1; return .unresolved }
        XCTAssertTrue(pump(store.loop) { scanned == 51 })
        for _ in 0..<5 { _ = try store.loop.dispatch(timeoutMilliseconds: 10) }
        XCTAssertEqual(scanned, 51)
        XCTAssertEqual(ids.count, 50)
    }

    func testCategoryLimitAndChoiceValidation() throws {
        let store = try open()
        defer { store.close() }
        try store.messages.setCategoryLimit(1)
        _ = try store.messages.post(try draft())
        XCTAssertThrowsError(try store.messages.post(try draft())) { XCTAssertEqual(($0 as? OutliveError)?.code, .limit) }
        _ = try store.messages.post(try draft("other"))
        var duplicate = try draft(choices: ["a"])
        XCTAssertThrowsError(try duplicate.addChoice(Choice(id: "a", label: "again", kind: .cancel)))
        XCTAssertEqual(try store.messages.count(), 2)
    }

    func testChoicesRoundTripThroughTheirStoredEncoding() throws {
        let choices = [Choice(id: "ok", label: "Keep both ✓", kind: .default), Choice(id: "x", label: "", kind: .destructive)]
        XCTAssertEqual(try ChoiceCoding.decode(ChoiceCoding.encode(choices), message: "m"), choices)
        XCTAssertThrowsError(try ChoiceCoding.decode([9, 0, 0], message: "m"))
        XCTAssertThrowsError(try ChoiceCoding.decode([1, 200, 0, 0, 0, 65], message: "m"))
    }
}
