import COutliveSystem

/// Liveness on an SQLite store directory: the run's lock file in runs/
/// (LivenessLock), the inotify fd (ChangeWatch) that sees the doorbell ring and
/// lock files closed for the last time (a death, `kill -9` included), and the
/// doorbell this handle rings after its commits.
final class SQLiteRunLiveness: RunLiveness {
    let directory: StoreDirectory
    private let lock: LivenessLock
    private let watch: ChangeWatch
    private let doorbell: Doorbell
    private let ownChanges: OwnChangeBell

    var fd: Int32 { watch.fd }
    var checkInterval: Double? { nil }
    var ownChangesFD: Int32? { ownChanges.fd }
    func drainOwnChanges() { ownChanges.drain() }

    /// Opens (creating or migrating) the store in `path` and registers `run` in it.
    static func open(path: String, options: StoreOptions, components: [SchemaComponent], run: String,
                     processName: String) throws -> (SQLiteBackend, SQLiteRunLiveness) {
        let directory = try StoreDirectory.open(path)
        let backend: SQLiteBackend
        let lock: LivenessLock
        do {
            try directory.prepareDatabase()
            backend = try SQLiteBackend(path: directory.databasePath, durability: options.durability,
                                        busyTimeoutMilliseconds: options.busyTimeoutMilliseconds)
            try Schema.migrate(backend, components: [Schema.store] + components)
            backend.fillLog()
            lock = try LivenessLock(directory: directory, run: run)
        } catch {
            directory.removeWhatOpenCreated()
            throw error
        }
        do {
            let watch = try ChangeWatch(directory: directory)
            let doorbell = Doorbell(directory: directory)
            let ownChanges = try OwnChangeBell()
            let pid = Int64(getpid())
            try backend.write {
                try $0.execute("INSERT INTO outlive_runs(run_id, process, pid, started) VALUES (?, ?, ?, ?)",
                               [.text(run), .text(processName), .integer(pid), .double(Clock.wall())])
            }
            backend.onChangesCommitted = { [doorbell] sequence in doorbell.ring(sequence: sequence) }
            backend.onOwnChangesCommitted = { [ownChanges] in ownChanges.ring() }
            backend.setOwnRun(run)
            return (backend, SQLiteRunLiveness(directory: directory, lock: lock, watch: watch, doorbell: doorbell, ownChanges: ownChanges))
        } catch {
            lock.release()
            directory.removeWhatOpenCreated()
            throw error
        }
    }

    private init(directory: StoreDirectory, lock: LivenessLock, watch: ChangeWatch, doorbell: Doorbell, ownChanges: OwnChangeBell) {
        self.directory = directory
        self.lock = lock
        self.watch = watch
        self.doorbell = doorbell
        self.ownChanges = ownChanges
    }

    func readEvents() -> LivenessEvents {
        LivenessEvents(endedCandidates: watch.read().closedRuns)
    }

    /// A run id that is not of the one shape Outlive writes never names a file: it is not alive.
    func alive(_ runs: [String]) -> Set<String> {
        Set(runs.filter { Store.isRunID($0) && LivenessLock.isAlive(path: directory.lockPath(run: $0)) })
    }

    func forget(run: String) {
        // Never a path built from a stored id that is not one Outlive writes.
        guard Store.isRunID(run) else { return }
        unlink(directory.lockPath(run: run))
    }

    func release() {
        lock.release()
    }
}
