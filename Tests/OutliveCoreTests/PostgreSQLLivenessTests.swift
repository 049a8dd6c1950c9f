import COutliveSystem
import XCTest
@testable import OutliveCore

/// A run's liveness on PostgreSQL is its session advisory lock (PostgreSQLRunLock),
/// proven with real processes and a real server.
final class PostgreSQLLivenessTests: XCTestCase {
    var uri = ""
    var store = ""
    var backend: PostgreSQLBackend!

    override func setUpWithError() throws {
        uri = try TestServer.uri()
        store = TestServer.storeName("liveness")
        backend = try PostgreSQLBackend(conninfo: uri, store: store)
    }

    override func tearDown() {
        try? backend?.dropStore()
    }

    /// A child process that holds a run lock and writes its key to the pipe,
    /// then waits to be killed.
    func holder(bound: PostgreSQLLivenessBound) throws -> (pid: pid_t, key: Int32) {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let child = fork()
        if child == 0 {
            close(fds[0])
            var key: Int32 = -1
            var lock: PostgreSQLRunLock?
            do {
                let mine = try PostgreSQLBackend(conninfo: uri, store: store)
                lock = try PostgreSQLRunLock(conninfo: uri, backend: mine, bound: bound)
                key = lock!.lockKey
            } catch {
                fputs("holder: \(error)\n", stderr)
            }
            _ = write(fds[1], &key, 4)
            while lock != nil { pause() }
            _exit(1)
        }
        close(fds[1])
        var key: Int32 = -1
        XCTAssertEqual(read(fds[0], &key, 4), 4)
        close(fds[0])
        XCTAssertGreaterThan(key, 0, "the holder could not take its lock")
        return (child, key)
    }

    func reap(_ pid: pid_t) {
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    func testKilledHoldersRunIsSeenDeadWithinTheBound() throws {
        let bound = try PostgreSQLLivenessBound()
        let (pid, key) = try holder(bound: bound)
        XCTAssertTrue(try backend.isAlive(lockKey: key))
        kill(pid, SIGKILL)
        reap(pid)
        // The bound is the promise (a killed process on a live host is seen
        // in milliseconds); the test waits no longer than the promise.
        let deadline = Clock.monotonic() + Double(bound.seconds)
        var alive = true
        while alive && Clock.monotonic() < deadline {
            alive = try backend.isAlive(lockKey: key)
            if alive { usleep(10_000) }
        }
        XCTAssertFalse(alive, "a killed holder's lock was still held after the \(bound.seconds) s bound")
    }

    func testLiveHoldersRunIsNeverSeenDead() throws {
        // The shortest bound: a live holder must outlast it several times over.
        let bound = try PostgreSQLLivenessBound(seconds: 2)
        let (pid, key) = try holder(bound: bound)
        defer {
            kill(pid, SIGKILL)
            reap(pid)
        }
        let until = Clock.monotonic() + 3 * Double(bound.seconds)
        var checks = 0
        while Clock.monotonic() < until {
            XCTAssertTrue(try backend.isAlive(lockKey: key))
            XCTAssertEqual(try backend.endedRuns().count, 0)
            checks += 1
            usleep(100_000)
        }
        XCTAssertGreaterThan(checks, 10)
    }

    func testEndedRunsAreTheRegisteredRunsWhoseLockIsFree() throws {
        let bound = try PostgreSQLLivenessBound()
        let (dead, deadKey) = try holder(bound: bound)
        let (live, liveKey) = try holder(bound: bound)
        defer {
            kill(live, SIGKILL)
            reap(live)
        }
        try backend.registerRun("dead-run", process: "worker", pid: Int64(dead), host: "here", lockKey: deadKey)
        try backend.registerRun("live-run", process: "worker", pid: Int64(live), host: "here", lockKey: liveKey)
        XCTAssertEqual(try backend.endedRuns().map(\.runID), [])
        kill(dead, SIGKILL)
        reap(dead)
        let deadline = Clock.monotonic() + Double(bound.seconds)
        var ended: [String] = []
        while ended.isEmpty && Clock.monotonic() < deadline {
            ended = try backend.endedRuns().map(\.runID)
            if ended.isEmpty { usleep(10_000) }
        }
        XCTAssertEqual(ended, ["dead-run"])
    }

    func testHandleWhoseLockConnectionDropsKnowsItsRunEnded() throws {
        let lock = try PostgreSQLRunLock(conninfo: uri, backend: backend, bound: PostgreSQLLivenessBound())
        XCTAssertEqual(lock.poll(), .quiet)
        XCTAssertTrue(try backend.isAlive(lockKey: lock.lockKey))
        // The server ends the session, as it does when it restarts or an
        // administrator ends it.
        try backend.write { try $0.execute("SELECT pg_terminate_backend(?::integer)", [.integer(Int64(lock.serverProcessID))]) }
        var event = PostgreSQLRunLock.Event.quiet
        for _ in 0..<100 where event != .lost {
            var descriptor = pollfd(fd: lock.fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 100)
            event = lock.poll()
        }
        XCTAssertEqual(event, .lost)
        XCTAssertFalse(try backend.isAlive(lockKey: lock.lockKey))
    }

    func testReleasedLockIsFreeAtOnce() throws {
        let lock = try PostgreSQLRunLock(conninfo: uri, backend: backend, bound: PostgreSQLLivenessBound())
        let key = lock.lockKey
        XCTAssertTrue(try backend.isAlive(lockKey: key))
        lock.release()
        XCTAssertEqual(lock.poll(), .lost)
        // The server ends the session after the client's goodbye: wait for it.
        var alive = true
        for _ in 0..<500 where alive {
            alive = try backend.isAlive(lockKey: key)
            if alive { usleep(10_000) }
        }
        XCTAssertFalse(alive)
    }

    func testLocksOfOneStoreAreNotAnotherStoresRuns() throws {
        let lock = try PostgreSQLRunLock(conninfo: uri, backend: backend, bound: PostgreSQLLivenessBound())
        let other = try PostgreSQLBackend(conninfo: uri, store: TestServer.storeName("neighbour"))
        defer { try? other.dropStore() }
        XCTAssertTrue(try backend.isAlive(lockKey: lock.lockKey))
        XCTAssertFalse(try other.isAlive(lockKey: lock.lockKey))
    }

    func testBoundSetsKeepalivesThatAddUpToIt() throws {
        for seconds: Int32 in [2, 3, 5, 10, 60, 3600] {
            let bound = try PostgreSQLLivenessBound(seconds: seconds)
            XCTAssertEqual(bound.keepaliveIdle + bound.keepaliveCount * bound.keepaliveInterval, seconds, "bound \(seconds)")
            XCTAssertEqual(bound.userTimeoutMilliseconds, seconds * 1000)
        }
        XCTAssertThrowsError(try PostgreSQLLivenessBound(seconds: 1)) { XCTAssertEqual(($0 as? OutliveError)?.code, .invalidArgument) }
        XCTAssertThrowsError(try PostgreSQLLivenessBound(seconds: 3601))
    }

    func testSessionCarriesTheBoundsSettings() throws {
        // What the server applies to the lock session: read back from it.
        let bound = try PostgreSQLLivenessBound(seconds: 5)
        let lock = try PostgreSQLRunLock(conninfo: uri, backend: backend, bound: bound)
        _ = lock
        let probe = try PostgreSQLConnection(conninfo: uri, overrides: bound.clientParameters + [("options", bound.serverOptions)])
        var settings: [String: String] = [:]
        try probe.run("SELECT name, setting FROM pg_settings WHERE name IN ('tcp_keepalives_idle', 'tcp_keepalives_interval', 'tcp_keepalives_count', 'tcp_user_timeout')", []) {
            settings[$0.text(0) ?? ""] = $0.text(1)
        }
        XCTAssertEqual(settings, ["tcp_keepalives_idle": "\(bound.keepaliveIdle)", "tcp_keepalives_interval": "\(bound.keepaliveInterval)",
                                  "tcp_keepalives_count": "\(bound.keepaliveCount)", "tcp_user_timeout": "\(bound.userTimeoutMilliseconds)"])
    }
}

extension PostgreSQLLivenessTests {
    func testServersIdleSessionTimeoutDoesNotEndALiveRun() throws {
        // A role whose sessions end after 1 s idle, as a DBA may configure.
        let admin = try PostgreSQLConnection(conninfo: uri)
        let role = "outlive_idle_" + store.suffix(12)
        try admin.exec("CREATE ROLE \(role) LOGIN SUPERUSER; ALTER ROLE \(role) SET idle_session_timeout = '1s'")
        defer { try? admin.exec("DROP ROLE IF EXISTS \(role)") }
        let conninfo = uri.replacingOccurrences(of: "postgres@", with: "\(role)@")
        let lock = try PostgreSQLRunLock(conninfo: conninfo, backend: backend, bound: PostgreSQLLivenessBound())
        usleep(2_500_000)
        XCTAssertEqual(lock.poll(), .quiet)
        XCTAssertTrue(try backend.isAlive(lockKey: lock.lockKey))
        lock.release()
    }
}

extension PostgreSQLLivenessTests {
    func testWriteLockIsNotTakenForARun() throws {
        // A write transaction holds (store, 0): no run has that key.
        let writer = try PostgreSQLBackend(conninfo: uri, store: store)
        try writer.write { _ in
            XCTAssertFalse(try self.backend.heldRunKeys().contains(0))
        }
    }
}
