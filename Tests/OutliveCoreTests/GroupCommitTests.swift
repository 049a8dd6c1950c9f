import COutliveSystem
import Foundation
import XCTest
@testable import OutliveCore

/// Group commit on SQLite: grouped writes of several threads lined up behind a
/// write under way form one group; a member that fails fails alone.
final class GroupCommitTests: XCTestCase {
    var directory = ""
    var backend: SQLiteBackend!
    var commits = 0
    let commitsLock = Lock()

    override func setUpWithError() throws {
        var template = Array("/tmp/outlive-group-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        backend = try SQLiteBackend(path: directory + "/store.db", durability: .normal, busyTimeoutMilliseconds: 30_000)
        let table = SchemaComponent(name: "grouped", migrations: ["CREATE TABLE grouped(k TEXT PRIMARY KEY, v INTEGER NOT NULL)"])
        try Schema.migrate(backend, components: [Schema.store, table])
        try backend.write {
            try $0.execute("INSERT INTO outlive_runs(run_id, process, pid, started) VALUES ('test', 'test', 0, 0)")
            try $0.execute("INSERT INTO outlive_watchers(topic, run_id) VALUES ('grouped', 'test')")
            try $0.execute("INSERT INTO grouped(k, v) VALUES ('taken', 0)")
        }
        backend.onChangesCommitted = { [unowned self] _ in commitsLock.withLock { commits += 1 } }
    }

    override func tearDown() {
        backend = nil
        _ = directory.withCString { path in system("rm -rf '\(String(cString: path))'") }
    }

    /// Runs `members` as grouped writes of their own threads, queued behind a
    /// write that holds the connection until all of them wait: they form one
    /// group. Returns each member's error (nil: committed).
    func group(_ members: [(StoreTransaction) throws -> Void]) -> [Error?] {
        let release = DispatchSemaphore(value: 0), entered = DispatchSemaphore(value: 0)
        let results = Results(count: members.count)
        let done = DispatchGroup()
        // Threads of their own: the global queue adds threads slowly while its own block.
        done.enter()
        Thread {
            defer { done.leave() }
            try? self.backend.groupedWrite { _ in
                entered.signal()
                release.wait()
            }
        }.start()
        entered.wait()
        for (index, member) in members.enumerated() {
            done.enter()
            Thread {
                defer { done.leave() }
                do { try self.backend.groupedWrite(member) } catch { results.set(index, error) }
            }.start()
        }
        while backend.queuedGroupedWrites < members.count { usleep(100) }
        commitsLock.withLock { commits = 0 }
        release.signal()
        done.wait()
        return results.errors
    }

    final class Results: @unchecked Sendable {
        private let lock = Lock()
        private var stored: [Error?]
        init(count: Int) { stored = Array(repeating: nil, count: count) }
        func set(_ index: Int, _ error: Error) { lock.withLock { stored[index] = error } }
        var errors: [Error?] { lock.withLock { stored } }
        private var calls = 0
        func count() { lock.withLock { calls += 1 } }
        var counted: Int { lock.withLock { calls } }
    }

    func insert(_ key: String) -> (StoreTransaction) throws -> Void {
        { transaction in
            try transaction.execute("INSERT INTO grouped(k, v) VALUES (?, 1)", [.text(key)])
            try transaction.recordChange(topic: "grouped", key: key)
        }
    }

    func stored() throws -> Set<String> {
        var keys = Set<String>()
        try backend.read { try $0.query("SELECT k FROM grouped") { keys.insert($0.text(0) ?? "") } }
        return keys
    }

    func testMembersOfOneGroupShareOneCommit() throws {
        let errors = group([insert("a"), insert("b"), insert("c"), insert("d")])
        XCTAssertTrue(errors.allSatisfy { $0 == nil }, "\(errors)")
        XCTAssertEqual(try stored(), ["taken", "a", "b", "c", "d"])
        XCTAssertEqual(commitsLock.withLock { commits }, 1, "the four members were committed together")
    }

    struct Refused: Error {}

    /// Groups `a`, a member that runs `statement` and then throws, and `b`;
    /// checks that only the failing member failed and only a and b are stored.
    /// Returns how many times the failing member ran.
    func groupWithAMemberThatThrows(after statement: String) throws -> Int {
        let runs = Results(count: 0)
        let failing: (StoreTransaction) throws -> Void = { transaction in
            runs.count()
            try transaction.execute(statement)
            throw Refused()
        }
        let errors = group([insert("a"), failing, insert("b")])
        XCTAssertNil(errors[0])
        XCTAssertTrue(errors[1] is Refused)
        XCTAssertNil(errors[2])
        XCTAssertEqual(try stored(), ["taken", "a", "b"])
        return runs.counted
    }

    func testAMemberThatThrowsHavingChangedNothingFailsAloneInItsGroup() throws {
        // As a delete of a missing key: a statement that changes no row, then the failure.
        XCTAssertEqual(try groupWithAMemberThatThrows(after: "DELETE FROM grouped WHERE k = 'missing'"), 1,
                       "it failed in its group, which was not run again")
        XCTAssertEqual(commitsLock.withLock { commits }, 1, "the others were committed together")
    }

    func testAMemberThatThrowsAfterAChangeFailsAloneAndTheOthersAreCommittedAlone() throws {
        // No savepoint per member: its row can only go with the whole
        // transaction, and every member runs again in a transaction of its own.
        XCTAssertEqual(try groupWithAMemberThatThrows(after: "INSERT INTO grouped(k, v) VALUES ('refused', 1)"), 2,
                       "in the group, then alone")
    }

    func testAMemberThatEndsTheWholeTransactionFailsAloneAndTheOthersAreCommitted() throws {
        // OR ROLLBACK: SQLite rolls back the whole transaction on the conflict,
        // the members before it included; they run again alone.
        let conflicting: (StoreTransaction) throws -> Void = { transaction in
            try transaction.execute("INSERT INTO grouped(k, v) VALUES ('partial', 1)")
            try transaction.execute("INSERT OR ROLLBACK INTO grouped(k, v) VALUES ('taken', 2)")
        }
        let errors = group([insert("a"), conflicting, insert("b")])
        XCTAssertNil(errors[0])
        XCTAssertEqual((errors[1] as? OutliveError)?.code, .state, "\(String(describing: errors[1]))")
        XCTAssertNil(errors[2])
        XCTAssertEqual(try stored(), ["taken", "a", "b"])
        var taken: Int64?
        try backend.read { taken = try $0.integer("SELECT v FROM grouped WHERE k = 'taken'") }
        XCTAssertEqual(taken, 0)
    }
}

/// Who leads the writes that queued during a commit: the leader itself after a
/// commit without an fsync (no thread woken between two commits), the first
/// of them after one with an fsync (the old leader's next write can join).
final class GroupCommitLeadTests: XCTestCase {
    /// Two writes queue while a first one commits in a COMMIT said to take
    /// `took`; returns, for each group, which caller's thread committed it and
    /// how many writes it held.
    func groups(afterCommitsTaking took: Int64) -> [(caller: Int, size: Int)] {
        let group = GroupCommit()
        let groups = Groups()
        let committing = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        func submit(_ caller: Int) {
            done.enter()
            Thread {
                defer { done.leave() }
                var first = true
                group.submit(GroupCommit.Member { _ in }) { members, _ in
                    groups.append(caller: caller, size: members.count)
                    if caller == 0 && first {
                        first = false
                        committing.signal()
                        while group.queuedCount < 2 { usleep(100) }
                    }
                    return took
                }
            }.start()
        }
        submit(0)
        committing.wait()
        submit(1)
        submit(2)
        done.wait()
        return groups.all
    }

    final class Groups: @unchecked Sendable {
        private let lock = Lock()
        private var stored: [(caller: Int, size: Int)] = []
        func append(caller: Int, size: Int) { lock.withLock { stored.append((caller, size)) } }
        var all: [(caller: Int, size: Int)] { lock.withLock { stored } }
    }

    func testAfterACommitWithoutAnFsyncTheLeaderCommitsTheQueuedWritesItself() {
        let groups = groups(afterCommitsTaking: 10_000)
        XCTAssertEqual(groups.map(\.caller), [0, 0])
        XCTAssertEqual(groups.map(\.size), [1, 2])
    }

    func testAfterACommitWithAnFsyncTheFirstQueuedWriteLeads() {
        let groups = groups(afterCommitsTaking: 2_000_000)
        XCTAssertEqual(groups.count, 2)
        XCTAssertEqual(groups.first?.caller, 0)
        XCTAssertNotEqual(groups.last?.caller, 0, "the lead was handed to a queued write")
        XCTAssertEqual(groups.map(\.size), [1, 2])
    }
}

/// A leader that gathers (its last group, committed with an fsync, held more
/// writes than are queued now) runs the writes that queue while it gathers in
/// its own transaction, and commits once its group is as large as the last.
final class GroupCommitGatherTests: XCTestCase {
    final class Log: @unchecked Sendable {
        private let lock = Lock()
        private var stored: [String] = []
        func append(_ entry: String) { lock.withLock { stored.append(entry) } }
        var all: [String] { lock.withLock { stored } }
    }

    func testWritesQueuedWhileTheLeaderGathersJoinItsTransaction() {
        let group = GroupCommit()
        let log = Log()
        let done = DispatchGroup()
        let committing = DispatchSemaphore(value: 0)
        func submit(_ caller: Int, _ commit: @escaping ([GroupCommit.Member], (() -> [GroupCommit.Member])?) -> Int64) {
            done.enter()
            Thread {
                defer { done.leave() }
                group.submit(GroupCommit.Member { _ in }, commit: commit)
            }.start()
        }
        // A first group with an fsync (2 ms), then a group of two behind it:
        // the last group held two writes and its COMMIT took 2 ms.
        submit(0) { members, _ in
            committing.signal()
            while group.queuedCount < 2 { usleep(100) }
            return 2_000_000
        }
        committing.wait()
        submit(1) { members, more in
            log.append("group of \(members.count), gathering: \(more != nil)")
            return 2_000_000
        }
        submit(2) { members, more in
            log.append("group of \(members.count), gathering: \(more != nil)")
            return 2_000_000
        }
        done.wait()
        // A write alone now gathers: one more write queues while it runs its
        // own, and joins its transaction.
        submit(3) { members, more in
            log.append("group of \(members.count), gathering: \(more != nil)")
            while group.queuedCount < 1 { usleep(100) }
            let arrived = more?() ?? []
            log.append("joined: \(arrived.count), then: \(more?().count ?? -1)")
            return 2_000_000
        }
        while log.all.count < 2 { usleep(100) }
        submit(4) { members, _ in
            log.append("caller 4 led a group of \(members.count)")
            return 2_000_000
        }
        done.wait()
        XCTAssertEqual(log.all, ["group of 2, gathering: false", "group of 1, gathering: true", "joined: 1, then: 0"])
    }
}

/// A member looks for its post before it sleeps only when the last COMMIT
/// was short (no slow fsync): after a long one it would wait past its budget
/// anyway, spending CPU for nothing.
final class GroupCommitLookingTests: XCTestCase {
    /// Looking members after a lone write whose COMMIT took `took`, then a
    /// write under way with one more queued behind it.
    func lookedCount(afterACommitTaking took: Int64) -> Int {
        let group = GroupCommit()
        group.submit(GroupCommit.Member { _ in }) { _, _ in took }
        let done = DispatchGroup()
        func submit(_ commit: @escaping ([GroupCommit.Member], (() -> [GroupCommit.Member])?) -> Int64) {
            done.enter()
            Thread {
                defer { done.leave() }
                group.submit(GroupCommit.Member { _ in }, commit: commit)
            }.start()
        }
        let committing = DispatchSemaphore(value: 0)
        submit { _, _ in
            committing.signal()
            while group.queuedCount < 1 { usleep(100) }
            return took
        }
        committing.wait()
        submit { _, _ in took }
        done.wait()
        return group.lookedCount
    }

    func testAfterAShortCommitAWaitingMemberLooksBeforeItSleeps() {
        XCTAssertEqual(lookedCount(afterACommitTaking: 100_000), 1)
    }

    func testAfterACommitLongerThanTheBudgetAWaitingMemberSleepsAtOnce() {
        XCTAssertEqual(lookedCount(afterACommitTaking: 2_000_000), 0)
    }
}
