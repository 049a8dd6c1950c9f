import COutliveSystem
import XCTest
@testable import OutliveCore

/// A host cut off from the server, for real: the lock holder runs in a network
/// namespace joined to the server's by a veth pair, and the namespace's end of
/// the link goes down mid-run. Nothing is closed, no packet says goodbye: only
/// the keepalive and tcp_user_timeout settings of the liveness bound end the
/// session. Needs root (ip netns); skipped, saying why, elsewhere.
final class PostgreSQLNetworkCutTests: XCTestCase {
    var uri = ""
    var store = ""
    var backend: PostgreSQLBackend!
    var namespace = ""
    var hostLink = ""
    var serverAddress = ""

    func sh(_ command: String) -> Int32 {
        let status = system(command + " >/dev/null 2>&1")
        return status
    }

    override func setUpWithError() throws {
        uri = try TestServer.uri()
        guard getuid() == 0, sh("command -v ip") == 0 else { throw XCTSkip("network namespaces need root and the ip command") }
        let id = Int(getpid()) % 250 + 1
        namespace = "outlive-pg-\(getpid())"
        hostLink = "olpg\(getpid() % 100_000)h"
        let serverLink = "olpg\(getpid() % 100_000)s"
        serverAddress = "10.231.\(id).1"
        let commands = [
            "ip netns add \(namespace)",
            "ip link add \(serverLink) type veth peer name \(hostLink)",
            "ip link set \(hostLink) netns \(namespace)",
            "ip addr add \(serverAddress)/24 dev \(serverLink)",
            "ip link set \(serverLink) up",
            "ip netns exec \(namespace) ip addr add 10.231.\(id).2/24 dev \(hostLink)",
            "ip netns exec \(namespace) ip link set \(hostLink) up",
            "ip netns exec \(namespace) ip link set lo up",
        ]
        for command in commands where sh(command) != 0 {
            tearDown()
            throw XCTSkip("cannot set up a network namespace (\(command) failed)")
        }
        store = TestServer.storeName("cut")
        backend = try PostgreSQLBackend(conninfo: uri, store: store)
    }

    override func tearDown() {
        try? backend?.dropStore()
        if !namespace.isEmpty { _ = sh("ip netns del \(namespace)") }  // takes the veth pair with it
    }

    /// setns(2), which Swift's Glibc module does not declare.
    func enterNamespace() -> Bool {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setns") else { return false }
        typealias SetNS = @convention(c) (Int32, Int32) -> Int32
        let fd = open("/var/run/netns/\(namespace)", O_RDONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return unsafeBitCast(symbol, to: SetNS.self)(fd, 0x4000_0000 /* CLONE_NEWNET */) == 0
    }

    func testCutOffHostsRunIsSeenDeadAboutTheBoundLater() throws {
        let bound = try PostgreSQLLivenessBound(seconds: 4)
        let remote = uri.replacingFirst("127.0.0.1", with: serverAddress)
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let child = fork()
        if child == 0 {
            close(fds[0])
            var key: Int32 = -1
            var lock: PostgreSQLRunLock?
            if enterNamespace() {
                do {
                    let mine = try PostgreSQLBackend(conninfo: remote, store: store)
                    lock = try PostgreSQLRunLock(conninfo: remote, backend: mine, bound: bound)
                    key = lock!.lockKey
                } catch {
                    fputs("cut-off holder: \(error)\n", stderr)
                }
            }
            _ = write(fds[1], &key, 4)
            while lock != nil { pause() }
            _exit(1)
        }
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        close(fds[1])
        var key: Int32 = -1
        XCTAssertEqual(read(fds[0], &key, 4), 4)
        close(fds[0])
        guard key > 0 else { return XCTFail("the holder in the namespace could not take its lock") }
        XCTAssertTrue(try backend.isAlive(lockKey: key))
        // Idle longer than the keepalive idle time first: a live host answers the probes.
        usleep(UInt32(bound.keepaliveIdle + 2) * 1_000_000)
        XCTAssertTrue(try backend.isAlive(lockKey: key), "a reachable idle host was declared dead")
        XCTAssertEqual(sh("ip netns exec \(namespace) ip link set \(hostLink) down"), 0)
        let cut = Clock.monotonic()
        var alive = true
        // The bound, plus one probe interval of slack for the server's timer granularity.
        let deadline = cut + Double(bound.seconds + bound.keepaliveInterval) + 1
        while alive && Clock.monotonic() < deadline {
            alive = try backend.isAlive(lockKey: key)
            if alive { usleep(50_000) }
        }
        let seen = Clock.monotonic() - cut
        XCTAssertFalse(alive, "a cut-off host's lock was still held \(seen) s after the cut (bound \(bound.seconds) s)")
        if !alive { print("cut-off host's run seen dead \(String(format: "%.2f", seen)) s after the cut (bound \(bound.seconds) s)") }
    }
}

private extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}
