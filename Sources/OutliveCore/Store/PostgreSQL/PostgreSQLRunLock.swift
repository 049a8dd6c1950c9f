import COutliveSystem

/// A run's liveness on PostgreSQL: a dedicated connection, idle but for this,
/// holding a session advisory lock (store key, run key) for the run's whole
/// life. The run is alive exactly while the lock is held (PostgreSQLBackend.
/// heldRunKeys); the server frees it when the session ends — at once when the
/// process dies on a live host, within the liveness bound when the host is cut
/// off (keepalives and tcp_user_timeout are set on this connection only).
///
/// The same connection LISTENs on the store's channel: its socket is the one
/// fd a handle watches, readable on a doorbell (a NOTIFY) and when the
/// connection drops — which means this run ended, as a deleted lock file does
/// on SQLite: the server has freed the lock, others may already have reaped the
/// run, and the handle must stop acting as it.
///
/// The socket is closed in forked children (PostgreSQLConnection's
/// closeInForkedChildren, COutlive_register_lock_fd): a forked child
/// closes its copy, so that a dead parent is not kept alive by its children.
final class PostgreSQLRunLock {
    enum Event: Equatable {
        /// Nothing arrived.
        case quiet
        /// One or more NOTIFYs arrived: read the feed.
        case woken
        /// The connection is gone: this run's lock is released.
        case lost
    }

    let lockKey: Int32
    let bound: PostgreSQLLivenessBound
    private var connection: PostgreSQLConnection?
    private(set) var fd: Int32
    private let forkGeneration = COutlive_fork_generation()

    init(conninfo: String, backend: PostgreSQLBackend, bound: PostgreSQLLivenessBound) throws {
        self.bound = bound
        // The bound's settings override any in conninfo: this connection exists for them.
        let connection = try PostgreSQLConnection(conninfo: conninfo, defaults: [("application_name", "outlive liveness")],
                                                   overrides: bound.clientParameters + [("options", bound.serverOptions)],
                                                   closeInForkedChildren: true)
        self.connection = connection
        let schema = try connection.quoteIdentifier(backend.schema)
        try connection.exec("SET search_path = \(schema)")
        // A server-wide idle_session_timeout (PostgreSQL 14 and newer) would end
        // this always-idle session, and with it a live run: not for this one.
        if try connection.integer("SELECT current_setting('server_version_num')::integer") ?? 0 >= 140_000 {
            try connection.exec("SET idle_session_timeout = 0")
        }
        var key: Int32?
        // The key sequence cycles after 2^31 runs: a key still held by a
        // long-lived run is skipped.
        for _ in 0..<1_000 {
            guard let next = try connection.integer("SELECT nextval('outlive_run_keys')") else { break }
            if try connection.integer("SELECT pg_try_advisory_lock(?::integer, ?::integer)::integer",
                                      [.integer(Int64(backend.storeKey)), .integer(next)]) == 1 {
                key = Int32(truncatingIfNeeded: next)
                break
            }
        }
        guard let key else { throw OutliveError(.busy, "no free liveness lock key in store \(backend.schema)") }
        lockKey = key
        try connection.exec("LISTEN \(backend.channel)")
        fd = connection.socket
    }

    deinit { release() }

    /// Reads what arrived, without blocking.
    func poll() -> Event {
        guard let connection, fd >= 0 else { return .lost }
        var woken = false
        // The server's last words (an error) and the end of the stream may come
        // in separate reads: read while there is something to read.
        for _ in 0..<8 {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = COutliveSystem.poll(&descriptor, 1, 0)
            if ready < 0 && COutlive_errno() == EINTR { continue }
            guard ready > 0 else { break }
            guard let notifications = connection.drainNotifications() else { return .lost }
            if !notifications.isEmpty { woken = true }
            if descriptor.revents & Int16(POLLHUP | POLLERR) != 0 && connection.isBroken { return .lost }
        }
        if connection.isBroken { return .lost }
        return woken ? .woken : .quiet
    }

    /// The backend process holding the lock on the server (tests end it to
    /// prove that a dropped connection is noticed).
    var serverProcessID: Int32 { connection?.backendPID ?? 0 }

    /// Ends the session, which frees the lock. Not in a forked child: there the
    /// fd was closed after fork, and the session is the parent's.
    func release() {
        guard let connection else { return }
        self.connection = nil
        if COutlive_fork_generation() == forkGeneration {
            _ = connection  // the last reference: PQfinish ends the session (and unregisters the socket)
        } else {
            // The fd number may name another file in this child by now: libpq
            // must not write its goodbye there. The connection's memory is left.
            _ = Unmanaged.passRetained(connection)
        }
        fd = -1
    }
}
