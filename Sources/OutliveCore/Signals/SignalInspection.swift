/// Read-only views of the stored signals and consumers, for tools and tests.
/// Each call is one consistent read: a snapshot, not a live view.
extension Signals {
    /// Stored signals in id order, starting after `after`, at most `limit`.
    public func signals(after: String? = nil, limit: Int = 1_000) throws -> [SignalSummary] {
        let start = try after.map { try Signals.validate(signalID: $0, "after") } ?? ""
        guard limit >= 0 else { throw OutliveError.invalidArgument("limit is negative") }
        try store.checkUsable()
        var found: [SignalSummary] = []
        try store.database.read { transaction in
            try transaction.query("""
                SELECT s.signal_id, s.version, s.terminated,
                       (SELECT count(*) FROM outlive_signal_consumers c WHERE c.signal_id = s.signal_id)
                FROM outlive_signals s WHERE s.signal_id > ? ORDER BY s.signal_id LIMIT ?
                """, [.text(start), .integer(Int64(limit))]) { row in
                found.append(SignalSummary(signalID: row.text(0) ?? "", version: UInt64(clamping: row.integer(1)),
                                           terminated: row.integer(2) != 0, consumerCount: Int(clamping: row.integer(3))))
            }
        }
        return found
    }

    /// The stored signal `signalID`; `.notFound` when it is not stored (no
    /// consumer, or never had one).
    public func signal(_ signalID: String) throws -> SignalSummary {
        let signal = try Signals.validate(signalID: signalID)
        try store.checkUsable()
        var found: SignalSummary?
        try store.database.read { transaction in
            try transaction.query("""
                SELECT s.signal_id, s.version, s.terminated,
                       (SELECT count(*) FROM outlive_signal_consumers c WHERE c.signal_id = s.signal_id)
                FROM outlive_signals s WHERE s.signal_id = ?
                """, [.text(signal)]) { row in
                found = SignalSummary(signalID: row.text(0) ?? "", version: UInt64(clamping: row.integer(1)),
                                      terminated: row.integer(2) != 0, consumerCount: Int(clamping: row.integer(3)))
            }
        }
        guard let found else { throw OutliveError.notFound("signal \(signal) is not stored (it has no consumer)") }
        return found
    }

    /// Consumers of `signalID` (nil: of every signal) in registration order.
    public func consumers(of signalID: String? = nil) throws -> [ConsumerSummary] {
        let signal = try signalID.map { try Signals.validate(signalID: $0) }
        try store.checkUsable()
        var found: [ConsumerSummary] = []
        try store.database.read { transaction in
            let columns = "consumer_id, signal_id, handler_name, delivery, lifetime, scope, process, run_id, last_delivered, claim_run"
            let sql = signal == nil
                ? "SELECT \(columns) FROM outlive_signal_consumers ORDER BY created, consumer_id"
                : "SELECT \(columns) FROM outlive_signal_consumers WHERE signal_id = ? ORDER BY created, consumer_id"
            try transaction.query(sql, signal.map { [.text($0)] } ?? []) { row in
                guard let delivery = SignalDelivery(rawValue: Int32(truncatingIfNeeded: row.integer(3))),
                      let lifetime = SignalLifetime(rawValue: Int32(truncatingIfNeeded: row.integer(4))) else {
                    throw OutliveError.corrupt("signal consumer \(row.text(0) ?? "?") has an unknown delivery or lifetime")
                }
                let consumer = row.text(0) ?? "", run = row.text(7) ?? ""
                var last = row.integer(8)
                // This run's deliveries are recorded a moment later; its own listing shows them at once.
                if lifetime == .thisRun, run == store.runID, let remembered = unrecorded.version(of: consumer) { last = max(last, remembered) }
                found.append(ConsumerSummary(consumerID: consumer, signalID: row.text(1) ?? "",
                                             handlerName: row.text(2) ?? "", delivery: delivery, lifetime: lifetime,
                                             scope: row.text(5), processName: row.text(6) ?? "", runID: run,
                                             lastDeliveredVersion: UInt64(clamping: last),
                                             deliveringRunID: row.text(9)))
            }
        }
        return found
    }
}

extension Signals {
    /// Stored signals and consumers, for `outlive inspect`.
    public func inspectionCounts() throws -> [(String, Int)] {
        try store.checkUsable()
        return try store.database.read { transaction in
            [("signals", Int(clamping: try transaction.integer("SELECT count(*) FROM outlive_signals") ?? 0)),
             ("signal consumers", Int(clamping: try transaction.integer("SELECT count(*) FROM outlive_signal_consumers") ?? 0))]
        }
    }
}
