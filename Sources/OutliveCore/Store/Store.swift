import COutliveSystem

/// Options of an open store handle.
public struct StoreOptions {
    public var durability: Durability = .full
    /// How long a writer waits for another process's transaction before `.busy`.
    public var busyTimeoutMilliseconds: Int32 = 10_000
    /// PostgreSQL stores: the liveness bound in seconds (nil: the URI's
    /// `outlive_liveness`, else 10). Ignored by SQLite stores, whose deaths are
    /// seen at once.
    public var livenessBoundSeconds: Int32?
    /// PostgreSQL stores: false opens only a store that exists (`.notFound`
    /// otherwise), as a task's completion does. (SQLite: the caller checks
    /// the directory first, `StoreDirectory.holdsStore`.)
    var createsStore = true
    public init() {}
}

/// A run that ended: closed, or died (any signal, `kill -9` included).
public struct EndedRun {
    public let runID: String
    public let processName: String
    public let died: Bool
}

/// Feed entries of one topic handed to its subscribers. `resync` means that
/// entries were pruned before this process read them: state must be reread.
public struct ChangeBatch {
    public let keys: [String]
    public let resync: Bool
}

/// What a subscriber reads for a batch inside the read transaction that read
/// the feed, and returns the work to run once that transaction has ended (its
/// callbacks; nil: nothing to do). One snapshot for the feed and what it
/// names: a wake-up costs one transaction, not one per system woken (between
/// a signal post and its handler in another process, the second transaction
/// cost about 10 µs of 60-100). It must not use the store otherwise (a
/// transaction of its own fails with `.state`); when it throws, the
/// subscriber's handler gets the batch after the transaction, to read it
/// alone as it would without a reader.
public typealias FeedReader = (ChangeBatch, StoreTransaction) throws -> (() -> Void)?

/// One open handle on a store — a directory (SQLite) or a `postgresql://` URI:
/// the database, this run's identity and liveness (`RunLiveness`), and the
/// change feed delivered on the loop. The systems above (key-value, signals,
/// tasks, messages) hold a Store and subscribe to topics.
public final class Store {
    /// The location as given: a directory, or a URI (which may hold a password:
    /// messages use `label`).
    public let path: String
    /// The store as messages name it: the directory, or the PostgreSQL store's
    /// name, host and database (never a password).
    public let label: String
    public let processName: String
    public let runID: String
    public let loop: Loop
    public var database: StoreBackend { backend }

    private let backend: StoreBackend
    private let liveness: RunLiveness
    private let forkGeneration: UInt64
    private let ownerPID = COutlive_process_id()
    /// Made before fork() in the parent of this process (a raw clone(2) runs no
    /// atfork handler, hence the pid as well).
    /// True in a forked child: the handle belongs to the parent.
    public var isInheritedFromParent: Bool { COutlive_fork_generation() != forkGeneration || COutlive_process_id() != ownerPID }

    private let lock = Lock()
    // Guarded by `lock`.
    private var closed = false
    private var feedCursor: Int64?
    /// A reading of the feed's entries failed (its transaction or its
    /// query): they are still after the cursor, and the next wake-up of any
    /// kind reads them, one woken by this handle's own changes included.
    private var feedUnread = false
    private var subscribers: [String: [UInt64: Subscriber]] = [:]
    private var nextSubscription: UInt64 = 1
    private var endHooks: [(StoreTransaction, EndedRun) throws -> Void] = []
    /// Why this run ended while the handle was open (PostgreSQL: its lock
    /// connection dropped); every later use fails with it.
    private var lostRun: String?
    private var livenessTimer: UInt64?
    private var lastLivenessCheck = Clock.monotonic()

    public static let maxProcessNameLength = 255

    public init(path: String, processName: String, loop: Loop, options: StoreOptions = StoreOptions(),
                components: [SchemaComponent]) throws {
        try Store.validate(processName: processName)
        forkGeneration = COutlive_fork_generation()
        self.path = path
        self.processName = processName
        self.loop = loop
        let run = Identifier.make()
        runID = run
        if PostgreSQLLocation.isURI(path) {
            let location = try PostgreSQLLocation(uri: path)
            let bound = try options.livenessBoundSeconds.map { try PostgreSQLLivenessBound(seconds: $0) } ?? location.bound
            label = location.label
            let postgres = try PostgreSQLBackend(conninfo: location.conninfo, store: location.store, components: components,
                                                 creating: options.createsStore)
            backend = postgres
            liveness = try PostgreSQLRunLiveness(backend: postgres, conninfo: location.conninfo, bound: bound, run: run, processName: processName)
        } else {
            label = path
            (backend, liveness) = try SQLiteRunLiveness.open(path: path, options: options, components: components, run: run, processName: processName)
        }
        try loop.addSource(liveness.fd) { [weak self] in self?.wake() }
        if let own = liveness.ownChangesFD {
            // Changes only this handle watches ring no doorbell. A source, not
            // posted work: a dispatch reads the feed before it runs what was posted.
            try loop.addSource(own) { [weak self] in
                guard let self else { return }
                self.liveness.drainOwnChanges()
                self.readFeed(entries: false)
            }
        }
        scheduleLivenessCheck()
    }

    deinit {
        if !closed { close() }
    }

    public static func validate(processName: String) throws {
        guard !processName.isEmpty else { throw OutliveError.invalidArgument("the process name is empty") }
        guard processName.utf8.count <= maxProcessNameLength else {
            throw OutliveError.invalidArgument("the process name is longer than \(maxProcessNameLength) bytes")
        }
        guard !processName.contains(":"), !processName.contains("/"), !processName.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw OutliveError.invalidArgument("the process name \"\(processName)\" contains ':', '/' or a control character")
        }
    }

    /// Throws `.state` when the handle was closed, is used in a forked child,
    /// or its run ended while it was open.
    public func checkUsable() throws {
        if isInheritedFromParent {
            throw OutliveError.state("this store handle was opened before fork(); a child process must open the store itself")
        }
        let (isClosed, lost) = lock.withLock { (closed, lostRun) }
        if isClosed { throw OutliveError.state("the store handle is closed") }
        if let lost { throw OutliveError.state(lost) }
    }

    /// Which engine the store is on (`database.engine`).
    public var engine: StoreEngine { backend.engine }

    /// Throws `.state` when `component`'s system is not available on this
    /// store's engine yet (a system without PostgreSQL migrations, on a
    /// PostgreSQL store): checked where the system is attached, before any of
    /// its tables is touched.
    public func requireAvailable(_ component: SchemaComponent, system: String) throws {
        guard component.migrations(for: backend.engine) == nil else { return }
        throw OutliveError.state("\(system) are not yet available on PostgreSQL stores (see docs/postgresql.md, \"Status\")")
    }

    /// Whether the handle is open and used in the process that opened it: a
    /// system delivering several callbacks checks it before each, so that a
    /// close from inside one of them stops the rest of that dispatch.
    public var isOpen: Bool {
        !isInheritedFromParent && !lock.withLock({ closed })
    }

    /// Registers what a system must do when a run ends (closed or dead), inside
    /// the transaction that removes the run. Register before `reapEndedRuns()`.
    public func onRunEnded(_ hook: @escaping (StoreTransaction, EndedRun) throws -> Void) {
        lock.withLock { endHooks.append(hook) }
    }

    private struct Subscriber {
        let reader: FeedReader?
        let handler: (ChangeBatch) -> Void
    }

    /// Called for feed entries of `topic` committed by any process after the
    /// subscription, on the loop thread. Returns a token for `unsubscribe`.
    /// With a `reader`, the reader gets the batch first, inside the feed's read
    /// transaction, and `handler` only when the reader threw (see FeedReader).
    public func subscribe(topic: String, reading reader: FeedReader? = nil,
                          _ handler: @escaping (ChangeBatch) -> Void) throws -> UInt64 {
        // Writers record this topic from now on (see recordChange); the cursor is
        // taken after, so no change committed after this call is missed.
        let run = runID
        backend.noteOwnWatch(topic: topic)
        try backend.write {
            try $0.execute("INSERT INTO outlive_watchers(topic, run_id) VALUES (?, ?) ON CONFLICT DO NOTHING", [.text(topic), .text(run)])
        }
        let latest = try lock.withLock({ feedCursor }) == nil ? backend.latestSequence() : nil
        return lock.withLock {
            if feedCursor == nil, let latest { feedCursor = latest }
            let token = nextSubscription
            nextSubscription += 1
            subscribers[topic, default: [:]][token] = Subscriber(reader: reader, handler: handler)
            return token
        }
    }

    public func unsubscribe(_ token: UInt64) {
        lock.withLock {
            for topic in subscribers.keys { subscribers[topic]?.removeValue(forKey: token) }
        }
    }

    /// Whether a run still holds its liveness lock. A run id that is not of
    /// the one shape Outlive writes never names a file: it is not alive.
    public func isAlive(run: String) -> Bool {
        if run == runID { return true }
        return liveness.alive([run]).contains(run)
    }

    /// Whether `text` has the exact shape of the run ids Outlive writes (a
    /// lowercase UUID, see `Identifier.make`): the only stored text that may
    /// become part of a path (runs/<run id>.lock). The database is untrusted
    /// input: anything else (`../`, NUL, uppercase, any length) is never used
    /// to name a file.
    public static func isRunID(_ text: String) -> Bool {
        Identifier.isValid(text) && !text.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") })
    }

    /// Removes every registered run that is no longer alive, running the end
    /// hooks for each in the same transaction. Called at open and whenever a
    /// lock file is closed for the last time. A row whose run id is not one
    /// Outlive writes was never a live run: it is ended in the database only
    /// (no file is named after it), and one that is not even text is deleted.
    public func reapEndedRuns(candidates: [String]? = nil) throws {
        var runs: [(String, String)] = []
        var unreadable: [Int64] = []
        // PostgreSQL types its columns: no row there can hold an id that is not text.
        let rowid = backend.engine == .sqlite ? "rowid" : "0"
        try backend.read { transaction in
            try transaction.query("SELECT \(rowid), run_id, process FROM outlive_runs") { row in
                guard let run = row.textIfValid(1) else {
                    unreadable.append(row.integer(0))
                    return
                }
                runs.append((run, row.textIfValid(2) ?? "(unknown)"))
            }
        }
        if candidates == nil, !unreadable.isEmpty {
            Log.emit(.warning, "store \(label): \(unreadable.count) registered run(s) have an id that is not text; removing them")
            try backend.write { transaction in
                for rowid in unreadable { try transaction.execute("DELETE FROM outlive_runs WHERE rowid = ?", [.integer(rowid)]) }
            }
        }
        if let candidates { runs = runs.filter { candidates.contains($0.0) } }
        runs.removeAll { $0.0 == runID }
        guard !runs.isEmpty else { return }
        let alive = liveness.alive(runs.map(\.0))
        for (run, name) in runs where !alive.contains(run) {
            Log.emit(.info, "store \(label): run \(run) of \(name) is no longer alive; cleaning up after it")
            try end(EndedRun(runID: run, processName: name, died: true))
            liveness.forget(run: run)
        }
    }

    private func end(_ run: EndedRun) throws {
        try backend.write { _ = try end(run, in: $0) }
    }

    /// Removes `run` and runs the end hooks, inside `transaction`. False when
    /// the run was not registered (another process ended it first).
    @discardableResult
    private func end(_ run: EndedRun, in transaction: StoreTransaction) throws -> Bool {
        let hooks = lock.withLock { endHooks }
        try transaction.execute("DELETE FROM outlive_runs WHERE run_id = ?", [.text(run.runID)])
        guard transaction.changedRows == 1 else { return false }
        try transaction.execute("DELETE FROM outlive_watchers WHERE run_id = ?", [.text(run.runID)])
        for hook in hooks { try hook(transaction, run) }
        return true
    }

    /// Ends a run that is no longer alive inside `transaction` (its claims
    /// are freed by the end hooks): how `RunClaim.take` breaks a dead run's
    /// claim. Its lock file goes once the transaction committed.
    func endDeadRun(_ runID: String, in transaction: StoreTransaction) throws {
        guard runID != self.runID, !isAlive(run: runID) else { return }
        // Its end changes what others read (tasks returned or dead-lettered,
        // consumers removed): never left unsynced with a claim.
        try transaction.requireSync()
        var name: String?
        try transaction.query("SELECT process FROM outlive_runs WHERE run_id = ?", [.text(runID)]) { name = $0.text(0) }
        guard let name else { return }
        Log.emit(.info, "store \(label): run \(runID) of \(name) is no longer alive; cleaning up after it")
        try end(EndedRun(runID: runID, processName: name, died: true), in: transaction)
        transaction.afterCommit { [liveness] in liveness.forget(run: runID) }
    }

    /// Live runs (run id, process name) as registered now.
    public func liveRuns() throws -> [(runID: String, processName: String)] {
        var runs: [(String, String)] = []
        try backend.read { transaction in
            try transaction.query("SELECT run_id, process FROM outlive_runs ORDER BY started") { row in
                if let run = row.textIfValid(0) { runs.append((run, row.textIfValid(1) ?? "(unknown)")) }
            }
        }
        let alive = liveness.alive(runs.map(\.0).filter { $0 != runID })
        return runs.filter { $0.0 == runID || alive.contains($0.0) }
    }

    /// Ends this run (its end hooks run) and releases everything. In a forked
    /// child it only lets go of memory: the parent's files are not touched.
    public func close() {
        let already = lock.withLock { () -> Bool in
            defer { closed = true }
            return closed
        }
        guard !already else { return }
        loop.removeSource(liveness.fd)
        if let own = liveness.ownChangesFD { loop.removeSource(own) }
        if let timer = lock.withLock({ livenessTimer }) { loop.cancelTimer(timer) }
        guard !isInheritedFromParent else { return }
        try? end(EndedRun(runID: runID, processName: processName, died: false))
        liveness.release()
    }

    // MARK: - Wake-ups

    private func wake() {
        let events = liveness.readEvents()
        if events.ownRunLost {
            runLost()
            return
        }
        switch events.endedCandidates {
        case .some(let candidates) where !candidates.isEmpty:
            try? reapEndedRuns(candidates: candidates)
        case .none:
            // A wake-up without news of deaths (PostgreSQL): check now and then.
            if Clock.monotonic() - lock.withLock({ lastLivenessCheck }) >= 1 { checkLiveness() }
        default:
            break
        }
        readFeed()
    }

    /// PostgreSQL: no event announces another host's death. A live handle
    /// checks on a timer of its own — the only thing an idle handle does — and
    /// reads the feed after it, since a NOTIFY is only a hint.
    private func scheduleLivenessCheck() {
        guard let interval = liveness.checkInterval else { return }
        let timer = loop.schedule(after: interval) { [weak self] in
            guard let self, self.isOpen, self.lock.withLock({ self.lostRun == nil }) else { return }
            self.checkLiveness()
            self.readFeed()
            self.scheduleLivenessCheck()
        }
        lock.withLock { livenessTimer = timer }
    }

    private func checkLiveness() {
        lock.withLock { lastLivenessCheck = Clock.monotonic() }
        do { try reapEndedRuns() } catch {
            Log.emit(.warning, "store \(label): cannot check for ended runs: \((error as? OutliveError)?.message ?? "\(error)")")
        }
    }

    /// This run's liveness is gone (its lock connection dropped: the server
    /// freed its lock, and others may already have ended it and freed what it
    /// held). The handle stops acting as the run, as it says from then on.
    private func runLost() {
        let message = "this run ended while the store was open: its liveness connection to the PostgreSQL server was lost, so other processes may already have cleaned up after it; close the store and open it again"
        loop.removeSource(liveness.fd)
        if let own = liveness.ownChangesFD { loop.removeSource(own) }
        let timer = lock.withLock { () -> UInt64? in
            lostRun = message
            return livenessTimer
        }
        if let timer { loop.cancelTimer(timer) }
        Log.emit(.error, "store \(label): run \(runID) of \(processName): \(message)")
    }

    /// Reads the feed from this process's cursor and hands each topic's entries
    /// to its subscribers. Costs in proportion to what changed: one read
    /// transaction for the feed and what the subscribers' readers read, then
    /// their callbacks, outside it.
    /// `entries`: false when only this handle's own changes woke it (their
    /// eventfd). Another run's change rings the doorbell (SQLite) or sends
    /// a NOTIFY (PostgreSQL) when it commits, and that wake-up reads the
    /// feed, so this one leaves the feed's query out (on PostgreSQL a round
    /// trip of a dispatch that delivers this handle's own post) — unless
    /// the last reading of the entries failed (`feedUnread`).
    public func readFeed(entries: Bool = true) {
        guard let (start, unread) = lock.withLock({ feedCursor.map { ($0, feedUnread) } }) else { return }
        let readsEntries = entries || unread
        var entriesRead = true
        var cursor = start
        // Taken before the read begins: its snapshot holds each of them.
        let own = backend.ownChanges.take()
        var resync = own.overflowed
        var work: [() -> Void] = []
        let read: Void? = try? backend.read { transaction in
            var byTopic: [String: [String]] = [:]
            for change in own.changes { byTopic[change.topic, default: []].append(change.key) }
            while readsEntries {
                guard let (changes, oldest) = try? backend.changes(after: cursor, limit: 1_000, in: transaction) else {
                    entriesRead = false
                    break
                }
                if let oldest, cursor < Int64.max, oldest > cursor + 1 {
                    if !resync { Log.emit(.warning, "store \(label): change feed entries after \(cursor) were pruned before this process read them; rereading state") }
                    resync = true
                }
                for change in changes { byTopic[change.topic, default: []].append(change.key) }
                guard let last = changes.last else { break }
                cursor = last.sequence
                if changes.count < 1_000 { break }
            }
            guard resync || !byTopic.isEmpty else { return }
            let subscribers = lock.withLock { self.subscribers }
            // After a resync every subscriber is told, whether its topic has entries or not.
            // Topics in name order and subscribers in subscription order: what a
            // dispatch calls first does not change from run to run.
            for topic in subscribers.keys.sorted() {
                let keys = byTopic[topic] ?? []
                guard resync || !keys.isEmpty, let list = subscribers[topic] else { continue }
                let batch = ChangeBatch(keys: keys, resync: resync)
                for token in list.keys.sorted() {
                    guard let subscriber = list[token] else { continue }
                    guard let reader = subscriber.reader else {
                        work.append { subscriber.handler(batch) }
                        continue
                    }
                    do {
                        if let next = try reader(batch, transaction) { work.append(next) }
                    } catch {
                        work.append { subscriber.handler(batch) }
                    }
                }
            }
        }
        // Not read (the transaction failed to begin or end): the cursor stays,
        // and the next wake-up reads the same entries again.
        guard read != nil else {
            backend.ownChanges.putBack(own)
            if readsEntries { lock.withLock { feedUnread = true } }
            return
        }
        lock.withLock {
            feedCursor = max(feedCursor ?? cursor, cursor)
            if readsEntries { feedUnread = !entriesRead }
        }
        for item in work {
            guard isOpen else { return }  // closed by an earlier callback of this dispatch
            item()
        }
    }
}
