/// How long a dead or cut-off run's liveness lock may stay held: the bound on
/// "a death is seen", about `seconds`. A process killed on a live host is seen
/// at once (its socket closes, the server ends the session: measured 4–5 ms);
/// the bound is for a host that vanished without closing anything, where only
/// TCP keepalives (idle link) and tcp_user_timeout (unacknowledged data, e.g. a
/// pending NOTIFY) end the session — by default only after the kernel's 2 h
/// (measured: still held after 12 s; ~4.3 s with idle 2, interval 1, count 3,
/// user timeout 4 s).
///
/// Set on both ends of the liveness connection: the server's side (the
/// session's tcp_keepalives_* and tcp_user_timeout, through the connection's
/// `options`) releases the lock; the client's side (libpq's keepalives_* and
/// tcp_user_timeout) lets the handle know its own run ended.
public struct PostgreSQLLivenessBound: Equatable {
    public static let defaultSeconds: Int32 = 10
    public static let range: ClosedRange<Int32> = 2...3600

    public let seconds: Int32

    public init(seconds: Int32 = PostgreSQLLivenessBound.defaultSeconds) throws {
        guard PostgreSQLLivenessBound.range.contains(seconds) else {
            throw OutliveError.invalidArgument("the PostgreSQL liveness bound must be \(PostgreSQLLivenessBound.range.lowerBound) to \(PostgreSQLLivenessBound.range.upperBound) seconds, not \(seconds)")
        }
        self.seconds = seconds
    }

    /// Probes after the link went quiet: idle + count × interval = seconds.
    var keepaliveCount: Int32 { min(3, max(1, seconds - 1)) }
    var keepaliveInterval: Int32 { max(1, seconds / 5) }
    var keepaliveIdle: Int32 { max(1, seconds - keepaliveCount * keepaliveInterval) }
    var userTimeoutMilliseconds: Int32 { seconds * 1000 }

    /// libpq's parameters (the client's socket).
    var clientParameters: [(String, String)] {
        [("keepalives", "1"), ("keepalives_idle", "\(keepaliveIdle)"), ("keepalives_interval", "\(keepaliveInterval)"),
         ("keepalives_count", "\(keepaliveCount)"), ("tcp_user_timeout", "\(userTimeoutMilliseconds)")]
    }

    /// The session's settings (the server's socket), as the `options` parameter.
    var serverOptions: String {
        "-c tcp_keepalives_idle=\(keepaliveIdle) -c tcp_keepalives_interval=\(keepaliveInterval) " +
            "-c tcp_keepalives_count=\(keepaliveCount) -c tcp_user_timeout=\(userTimeoutMilliseconds)"
    }
}
