import COutliveSystem

/// Liveness on a PostgreSQL store: the run's session advisory lock
/// (PostgreSQLRunLock, whose connection also LISTENs on the store's channel)
/// and its key in `outlive_runs`. A run is alive exactly while its lock is held.
///
/// The lock connection's socket is the handle's fd: readable on a NOTIFY
/// (a hint: the store reads the feed from its cursor) and when the connection
/// drops, which means this run has ended. No event announces another host's
/// death, so a live handle checks for ended runs every `checkInterval` — the
/// only thing an idle PostgreSQL handle does. Half the liveness bound less
/// `takeoverMargin`: what docs/postgresql.md promises for a process killed on a
/// live host is that its work runs again within half the bound, and taking it
/// over (a few transactions, measured 5–25 ms) comes after the check, as does
/// the check's own time before the next timer is set.
final class PostgreSQLRunLiveness: RunLiveness {
    private let backend: PostgreSQLBackend
    private let runLock: PostgreSQLRunLock
    private let ownChanges: OwnChangeBell
    let fd: Int32

    static let takeoverMargin = 0.1
    var checkInterval: Double? { max(0.9, Double(runLock.bound.seconds) / 2 - Self.takeoverMargin) }
    /// A commit's NOTIFY reaches this handle's LISTEN too (`fd`); a commit
    /// whose entries only this run watches sends none and rings this instead.
    var ownChangesFD: Int32? { ownChanges.fd }
    func drainOwnChanges() { ownChanges.drain() }

    /// Takes this run's lock and registers `run` with its key.
    init(backend: PostgreSQLBackend, conninfo: String, bound: PostgreSQLLivenessBound, run: String, processName: String) throws {
        self.backend = backend
        runLock = try PostgreSQLRunLock(conninfo: conninfo, backend: backend, bound: bound)
        fd = runLock.fd
        do {
            ownChanges = try OwnChangeBell()
            try backend.registerRun(run, process: processName, pid: Int64(getpid()), host: PostgreSQLRunLiveness.hostName, lockKey: runLock.lockKey)
        } catch {
            runLock.release()
            throw error
        }
        backend.onOwnChangesCommitted = { [ownChanges] in ownChanges.ring() }
        backend.setOwnRun(run)
    }

    static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func readEvents() -> LivenessEvents {
        switch runLock.poll() {
        case .quiet: return LivenessEvents(endedCandidates: [])
        // A commit by another run: the store decides whether to check for ended runs too.
        case .woken: return LivenessEvents(endedCandidates: nil)
        case .lost: return LivenessEvents(endedCandidates: [], ownRunLost: true)
        }
    }

    /// A run whose liveness cannot be read (the server unreachable) counts as
    /// alive: ending a live run would free claims it still acts on.
    func alive(_ runs: [String]) -> Set<String> {
        guard !runs.isEmpty else { return [] }
        guard let live = try? backend.liveRunIDs() else { return Set(runs) }
        return Set(runs.filter { live.contains($0) })
    }

    func forget(run: String) {}

    func release() {
        runLock.release()
    }
}
