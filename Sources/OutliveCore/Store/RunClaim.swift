/// A claim bound to a run: "this row is being worked on by run R" — the task
/// queue's runner slot and each task attempt, a signal consumer being
/// delivered, a message being presented or answered, a durable interaction
/// queue being presented. Every system that lets one run at a time act on a
/// row across processes uses this one primitive:
///
/// - `take`: atomically, and only when the claim is free, held by a run that is
///   no longer alive (that run is ended first, inside the same transaction, so
///   every end-of-run hook sees it), or held already by this very claimant;
/// - `holds` / `fence`: a later write of the claimant names its run (and token)
///   in its WHERE, so a run that lost the claim — ended by another process —
///   cannot overwrite what another run took over;
/// - `release`: frees it, only if this claimant holds it;
/// - the end-of-run hook (registered by `init`): inside the transaction that
///   removes a run, every claim of the run is handed to the system's `freed`
///   callback and then freed.
///
/// The claim lives on the claimed row — the claiming run's id on the row and
/// in every later write's WHERE, which is also how a PostgreSQL backend fences
/// with row locks — in one of two forms: columns of a row that exists anyway (freeing sets them to NULL),
/// or a row of its own (freeing deletes it). The SQL is portable (upsert with
/// ON CONFLICT, no `IS` between values); liveness is `Store.isAlive`, the one
/// place a backend implements it.
///
/// The tables' triggers (`SchemaComponent.requiringRegisteredRun`) refuse a
/// claim by a run the store no longer registers, in the same transaction.
public struct RunClaim {
    public enum Form {
        /// Columns of a row that exists anyway; freeing sets them to NULL.
        case columns
        /// A row of its own, keyed by `key`; freeing deletes it.
        case row
    }

    /// How the key column is read back for the end-of-run hook.
    public enum KeyType {
        case text, integer
    }

    /// Who holds a claim, as seen inside a transaction.
    public enum Holder: Equatable {
        case free
        /// This run under this token.
        case ours
        /// Another live run, or this run under another token.
        case live(run: String)
        /// A run that is no longer alive: `take` ends it and takes over.
        case dead(run: String)
    }

    /// Called inside the transaction that removes a run, before its claims of
    /// this kind are freed, with their keys (never empty).
    public typealias Freed = (StoreTransaction, EndedRun, [SQLValue]) throws -> Void

    /// The condition (unqualified) selecting the row of a key, and what it
    /// binds: for a table whose key is found by more than `key = ?` (a
    /// message's id, which carries its seq: `SeqID.row`). Columns form only.
    public typealias Locate = (SQLValue, StoreEngine) -> (condition: String, arguments: [SQLValue])

    public let table: String
    public let keyColumn: String
    public let keyType: KeyType
    public let runColumn: String
    public let tokenColumn: String?
    public let form: Form
    /// Columns that describe the holder (which process locked it), cleared with it.
    public let describing: [String]
    unowned let store: Store
    private let freed: Freed?
    private let locate: Locate?

    /// Describes a claim and registers its end-of-run hook with `store`
    /// (before the store reaps ended runs, like any system's hook).
    public init(store: Store, table: String, key: String, keyType: KeyType = .text, run: String, token: String? = nil,
                form: Form, describing: [String] = [], freed: Freed? = nil, locate: Locate? = nil) {
        self.store = store
        self.table = table
        keyColumn = key
        self.keyType = keyType
        runColumn = run
        tokenColumn = token
        self.form = form
        self.describing = describing
        self.freed = freed
        self.locate = locate
        let claim = self
        store.onRunEnded { transaction, ended in try claim.free(heldBy: ended, in: transaction) }
    }

    // MARK: - Check

    /// The fence for a later write of this run under `token`: a condition for
    /// its WHERE and the values it binds, in that order. `qualifier` prefixes
    /// the columns with a table name (an upsert's WHERE needs it).
    public func fence(token: SQLValue? = nil, qualifier: String? = nil) -> (sql: String, arguments: [SQLValue]) {
        let prefix = qualifier.map { $0 + "." } ?? ""
        guard let tokenColumn else { return ("\(prefix)\(runColumn) = ?", [.text(store.runID)]) }
        return ("\(prefix)\(runColumn) = ? AND \(prefix)\(tokenColumn) = ?", [.text(store.runID), token ?? .null])
    }

    /// The condition selecting the row of `key`, and what it binds.
    private func row(_ key: SQLValue, _ engine: StoreEngine) -> (condition: String, arguments: [SQLValue]) {
        locate?(key, engine) ?? ("\(keyColumn) = ?", [key])
    }

    /// Who holds the claim on `key` now (`token`: the caller's own).
    public func holder(of key: SQLValue, token: SQLValue? = nil, in transaction: StoreTransaction) throws -> Holder {
        let sameToken = tokenColumn.map { "CASE WHEN \($0) = ? THEN 1 ELSE 0 END" } ?? "1"
        var found: (run: String?, sameToken: Bool)?
        let keyed = row(key, transaction.engine)
        try transaction.query("SELECT \(runColumn), \(sameToken) FROM \(table) WHERE \(keyed.condition)",
                              (tokenColumn == nil ? [] : [token ?? .null]) + keyed.arguments) { row in
            found = (row.isNull(0) ? nil : row.text(0), !row.isNull(1) && row.integer(1) == 1)
        }
        guard let found, let run = found.run else { return .free }
        if run == store.runID { return found.sameToken ? .ours : .live(run: run) }
        return store.isAlive(run: run) ? .live(run: run) : .dead(run: run)
    }

    /// Whether this run holds the claim on `key` under `token`.
    public func holds(_ key: SQLValue, token: SQLValue? = nil, in transaction: StoreTransaction) throws -> Bool {
        let (condition, arguments) = fence(token: token)
        let keyed = row(key, transaction.engine)
        return try transaction.integer("SELECT 1 FROM \(table) WHERE \(keyed.condition) AND \(condition)",
                                       keyed.arguments + arguments) != nil
    }

    /// Whether a holder read with its row is another run that is alive.
    public func isHeldByAnotherLiveRun(_ run: String?) -> Bool {
        guard let run, run != store.runID else { return false }
        return store.isAlive(run: run)
    }

    // MARK: - Take and release

    /// Takes the claim on `key` for this run under `token`, setting `values`
    /// (more columns of the row) with it: when it is free, held by a run that
    /// is no longer alive (ended first, in this transaction), or held by this
    /// claimant already. Columns form: only on a row that exists and meets
    /// `condition` (SQL over the row, binding `conditionArguments`). True when
    /// this claimant holds it afterwards.
    public func take(_ key: SQLValue, token: SQLValue? = nil, setting values: [(column: String, value: SQLValue)] = [],
                     where condition: String? = nil, _ conditionArguments: [SQLValue] = [],
                     in transaction: StoreTransaction) throws -> Bool {
        if try attempt(key, token, values, condition, conditionArguments, in: transaction) { return true }
        guard case .dead(let run) = try holder(of: key, token: token, in: transaction) else { return false }
        try store.endDeadRun(run, in: transaction)
        // A holder the store never registered has no end-of-run: free this claim alone.
        if case .dead = try holder(of: key, token: token, in: transaction) {
            try free(heldBy: EndedRun(runID: run, processName: "(unregistered)", died: true), in: transaction)
        }
        return try attempt(key, token, values, condition, conditionArguments, in: transaction)
    }

    /// Takes the claim on `key` only when it is free or this claimant's
    /// already (see `take`), never ending a run that holds it: for a
    /// transaction that may write nothing but its claims (PostgreSQL's task
    /// claims without the store's lock). False when another run holds it.
    public func takeIfFree(_ key: SQLValue, token: SQLValue? = nil, setting values: [(column: String, value: SQLValue)] = [],
                           where condition: String? = nil, _ conditionArguments: [SQLValue] = [],
                           in transaction: StoreTransaction) throws -> Bool {
        try attempt(key, token, values, condition, conditionArguments, in: transaction)
    }

    private func attempt(_ key: SQLValue, _ token: SQLValue?, _ values: [(column: String, value: SQLValue)],
                         _ condition: String?, _ conditionArguments: [SQLValue], in transaction: StoreTransaction) throws -> Bool {
        var columns = [runColumn], bound: [SQLValue] = [.text(store.runID)]
        if let tokenColumn {
            columns.append(tokenColumn)
            bound.append(token ?? .null)
        }
        columns += values.map(\.column)
        bound += values.map(\.value)
        switch form {
        case .columns:
            let (ours, oursArguments) = fence(token: token)
            let assignments = columns.map { "\($0) = ?" }.joined(separator: ", ")
            let keyed = row(key, transaction.engine)
            var sql = "UPDATE \(table) SET \(assignments) WHERE \(keyed.condition) AND (\(runColumn) IS NULL OR (\(ours)))"
            if let condition { sql += " AND (\(condition))" }
            try transaction.execute(sql, bound + keyed.arguments + oursArguments + conditionArguments)
        case .row:
            let (ours, oursArguments) = fence(token: token, qualifier: table)
            let placeholders = Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")
            let updates = (values.isEmpty ? [runColumn] : values.map(\.column)).map { "\($0) = excluded.\($0)" }
            try transaction.execute("""
                INSERT INTO \(table)(\(keyColumn), \(columns.joined(separator: ", "))) VALUES (\(placeholders))
                ON CONFLICT(\(keyColumn)) DO UPDATE SET \(updates.joined(separator: ", ")) WHERE \(ours)
                """, [key] + bound + oursArguments)
        }
        return transaction.changedRows == 1
    }

    /// Frees this claimant's claim on `key`, setting `values` with it (columns
    /// form). False when it did not hold it: freed by the end of its run,
    /// taken over, or never taken.
    @discardableResult
    public func release(_ key: SQLValue, token: SQLValue? = nil, setting values: [(column: String, value: SQLValue)] = [],
                        in transaction: StoreTransaction) throws -> Bool {
        let (ours, oursArguments) = fence(token: token)
        switch form {
        case .row:
            try transaction.execute("DELETE FROM \(table) WHERE \(keyColumn) = ? AND \(ours)", [key] + oursArguments)
        case .columns:
            let assignments = (clearedColumns.map { "\($0) = NULL" } + values.map { "\($0.column) = ?" }).joined(separator: ", ")
            let keyed = row(key, transaction.engine)
            try transaction.execute("UPDATE \(table) SET \(assignments) WHERE \(keyed.condition) AND \(ours)",
                                    values.map(\.value) + keyed.arguments + oursArguments)
        }
        return transaction.changedRows == 1
    }

    private var clearedColumns: [String] { [runColumn] + (tokenColumn.map { [$0] } ?? []) + describing }

    // MARK: - End of a run

    /// Inside the transaction that removes `ended`: hands its claims of this
    /// kind to `freed`, then frees them.
    func free(heldBy ended: EndedRun, in transaction: StoreTransaction) throws {
        var keys: [SQLValue] = []
        try transaction.query("SELECT \(keyColumn) FROM \(table) WHERE \(runColumn) = ?", [.text(ended.runID)]) { row in
            switch keyType {
            case .integer: keys.append(.integer(row.integer(0)))
            case .text: keys.append(row.text(0).map { .text($0) } ?? .null)
            }
        }
        guard !keys.isEmpty else { return }
        try freed?(transaction, ended, keys)
        switch form {
        case .row:
            try transaction.execute("DELETE FROM \(table) WHERE \(runColumn) = ?", [.text(ended.runID)])
        case .columns:
            let assignments = clearedColumns.map { "\($0) = NULL" }.joined(separator: ", ")
            try transaction.execute("UPDATE \(table) SET \(assignments) WHERE \(runColumn) = ?", [.text(ended.runID)])
        }
    }
}
