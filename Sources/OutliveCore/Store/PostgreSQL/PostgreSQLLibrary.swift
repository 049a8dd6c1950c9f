import COutliveSystem

/// libpq, loaded on first use (see COutliveLibpq.h): liboutlive.so does not link
/// it, so SQLite users need nothing more, and a process without libpq gets a
/// status and a message naming the package instead of a loader error at start.
enum PostgreSQLLibrary {
    /// Loads libpq.so.5 (or the file named by the test-only OUTLIVE_TEST_LIBPQ),
    /// once per process. `path`: try that file instead (tests).
    /// Throws `.io` with a message naming Debian's libpq5 when it cannot be loaded.
    static func load(path: String? = nil) throws {
        if path == nil && COutlive_pq_loaded() != 0 { return }
        var message = [CChar](repeating: 0, count: 1024)
        let result = message.withUnsafeMutableBufferPointer { buffer in
            if let path { return COutlive_pq_load(path, buffer.baseAddress, buffer.count) }
            return COutlive_pq_load(nil, buffer.baseAddress, buffer.count)
        }
        guard result == 0 else {
            throw OutliveError(.io, String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }
}
