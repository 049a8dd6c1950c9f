import COutliveSystem

/// PostgreSQL's SQLSTATE classes as Outlive statuses, the way SQLiteConnection.error
/// maps SQLite's codes, so that a system sees the same status on either engine.
enum PostgreSQLErrors {
    /// The SQLSTATE the store's functions raise when a limit of Outlive's
    /// refuses a write (a category that holds its limit of messages): class
    /// "OL" is none of PostgreSQL's.
    static let limitReached = "OL001"

    static func status(sqlState: String) -> OutliveError.Code {
        switch sqlState {
        case "40001", "40P01", "55P03", "57014": return .busy        // serialization, deadlock, lock not available, cancelled
        case "42501": return .permission                              // insufficient privilege
        case "53100", "53200": return .noMemory                      // disk full, out of memory
        case "22021", "22P02", "22003", "54000", "54001": return .invalidArgument  // bad encoding, bad value, out of range, too long
        default: break
        }
        switch sqlState.prefix(2) {
        case "23": return .state        // integrity constraint violation, as SQLITE_CONSTRAINT
        case "28": return .permission   // invalid authorization
        case "XX": return .corrupt      // internal error: data corrupted, index corrupted
        default: return .io             // connection lost, undefined table (a tampered schema), …
        }
    }

    /// The error of a failed result (the connection's message when there is no result).
    static func error(result: OpaquePointer?, connection: OpaquePointer, context: String) -> OutliveError {
        guard let result else {
            return OutliveError(.io, "\(context): \(message(COutlive_PQerrorMessage(connection)))")
        }
        let state = COutlive_PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
        // "ERROR:  duplicate key …": the status already says it is an error.
        var text = message(COutlive_PQresultErrorMessage(result))
        if text.hasPrefix("ERROR:") { text = String(text.dropFirst(6).drop { $0 == " " }) }
        if text.isEmpty { text = message(COutlive_PQerrorMessage(connection)) }
        // A row bound to a run the store no longer has, refused by a foreign
        // key to outlive_runs where SQLite has a trigger: its words, the same cause.
        if state == "23503" && text.contains("table \"outlive_runs\"") {
            return OutliveError(.state, "\(context): this run was ended by another process (its lock connection was lost): close the store and open it again (\(text))")
        }
        // A limit of ours refused what a statement wrote (`limitReached`,
        // raised by a function of the store's: a message post's admission).
        // Its primary message alone, the same words as on SQLite (the full
        // message adds the function's line that raised it).
        if state == limitReached {
            return OutliveError(.limit, message(COutlive_PQresultErrorField(result, Int32(UInt8(ascii: "M")))))
        }
        return OutliveError(state.isEmpty ? .io : status(sqlState: state), "\(context): \(text)")
    }

    /// libpq's messages end with a newline and may span lines ("DETAIL: …").
    static func message(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        return String(cString: pointer).split(separator: "\n").map { $0.trimmingSpaces }.joined(separator: "; ")
    }

    /// A failed connection's status: refused credentials are `.permission`; a
    /// server that was reached, or could not be (refused, unreachable, timed
    /// out, unknown host), `.io`; anything else libpq says before it tries —
    /// a URI or parameter it does not accept — `.invalidArgument`.
    static func connectionStatus(_ message: String) -> OutliveError.Code {
        if message.contains("authentication failed") || message.contains("permission denied")
            || message.contains("no pg_hba.conf entry") { return .permission }
        if message.hasPrefix("connection to server") || message.contains("could not") || message.contains("timeout")
            || message.contains("out of memory") || message.contains("server closed") { return .io }
        return .invalidArgument
    }

    /// libpq's parse errors quote the URI or the token they stumbled on, which
    /// may be or hold the password: every form of the password in the URI
    /// (as written, and percent-decoded) is replaced.
    static func redacted(_ message: String, conninfo: String) -> String {
        var secrets: [String] = []
        let base = conninfo.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        if let scheme = base[0].firstRange(of: "://") {
            let authority = base[0][scheme.upperBound...].prefix { $0 != "/" }
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                secrets.append(String(authority[authority.index(after: colon)..<at]))
            }
        }
        if base.count == 2 {
            for parameter in base[1].split(separator: "&") where parameter.lowercased().hasPrefix("password=") {
                secrets.append(String(parameter.dropFirst("password=".count)))
            }
        }
        // "password=..." in a key=value conninfo string.
        if let range = conninfo.firstRange(of: "password=") {
            secrets.append(String(conninfo[range.upperBound...].prefix { $0 != " " && $0 != "&" }))
        }
        var text = message
        for secret in secrets where !secret.isEmpty {
            for form in [secret, PostgreSQLLocation.percentDecoded(Substring(secret)) ?? secret] where !form.isEmpty {
                text = text.replacing(form, with: "***")
            }
        }
        return text
    }
}

private extension Substring {
    var trimmingSpaces: String {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return String(text)
    }
}
