/// A store location given as a `postgresql://` (or `postgres://`) URI: the
/// part libpq reads, and Outlive's own query parameters taken out of it, since
/// libpq refuses parameters it does not know:
///
/// - `outlive_store=NAME`: which store of the database (default `main`); see
///   PostgreSQLSchema for the names allowed.
/// - `outlive_liveness=SECONDS`: the liveness bound (PostgreSQLLivenessBound,
///   default 10).
///
/// Any other `outlive_` parameter is refused (a misspelt one would otherwise be
/// ignored silently); every other parameter goes to libpq unchanged. Messages
/// never repeat the URI, which may hold a password.
public struct PostgreSQLLocation: Equatable {
    public static let defaultStore = "main"

    /// What libpq connects with.
    public let conninfo: String
    public let store: String
    public let bound: PostgreSQLLivenessBound

    /// Whether `location` names a PostgreSQL store rather than a directory.
    public static func isURI(_ location: String) -> Bool {
        let lowered = location.prefix(14).lowercased()
        return lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://")
    }

    public init(uri: String) throws {
        guard PostgreSQLLocation.isURI(uri) else {
            throw OutliveError.invalidArgument("a PostgreSQL store location starts with postgresql:// or postgres://")
        }
        guard !uri.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw OutliveError.invalidArgument("the PostgreSQL URI contains a control character")
        }
        guard !uri.contains("#") else {
            throw OutliveError.invalidArgument("the PostgreSQL URI has a fragment ('#'), which libpq does not accept")
        }
        var store = PostgreSQLLocation.defaultStore
        var seconds = PostgreSQLLivenessBound.defaultSeconds
        var base = uri
        var kept: [Substring] = []
        if let question = uri.firstIndex(of: "?") {
            base = String(uri[..<question])
            for parameter in uri[uri.index(after: question)...].split(separator: "&", omittingEmptySubsequences: true) {
                let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = parts[0]
                guard key.lowercased().hasPrefix("outlive_") else {
                    kept.append(parameter)
                    continue
                }
                guard parts.count == 2, let value = PostgreSQLLocation.percentDecoded(parts[1]) else {
                    throw OutliveError.invalidArgument("the URI parameter \(key) needs a value")
                }
                switch key {
                case "outlive_store":
                    _ = try PostgreSQLSchema.schemaName(store: value)
                    store = value
                case "outlive_liveness":
                    guard let number = Int32(value) else {
                        throw OutliveError.invalidArgument("outlive_liveness must be a whole number of seconds, not \"\(value)\"")
                    }
                    seconds = number
                default:
                    throw OutliveError.invalidArgument("unknown URI parameter \(key) (Outlive knows outlive_store and outlive_liveness)")
                }
            }
        }
        self.store = store
        bound = try PostgreSQLLivenessBound(seconds: seconds)
        conninfo = kept.isEmpty ? base : base + "?" + kept.joined(separator: "&")
    }

    /// How messages name this store: scheme, user, host and database of the
    /// URI — never its password, nor its parameters (one may be `password=`) —
    /// and the store's name.
    public var label: String {
        let base = conninfo.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let scheme = base.lowercased().hasPrefix("postgres://") ? "postgres://" : "postgresql://"
        guard base.count >= scheme.count else { return "PostgreSQL store \(store)" }
        let rest = base.dropFirst(scheme.count)
        var authority = String(rest.prefix { $0 != "/" })
        let path = rest.dropFirst(authority.count)
        if let at = authority.lastIndex(of: "@") {
            let user = authority[..<at].prefix { $0 != ":" }
            authority = String(user) + "@" + String(authority[authority.index(after: at)...])
        }
        return "\(scheme)\(authority)\(path) (store \(store))"
    }

    /// %XX escapes decoded; nil for a malformed escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
        }
        let decoded = String(decoding: bytes, as: UTF8.self)
        return Array(decoded.utf8) == bytes ? decoded : nil
    }
}
