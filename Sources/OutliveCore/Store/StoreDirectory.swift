import COutliveSystem

/// The store's directory and the rules for what may be in it: owned by this
/// user, not writable by group or others (0700 when created), files created
/// 0600 without following links, so nobody else can plant or read state.
struct StoreDirectory {
    let path: String

    var databasePath: String { path + "/outlive.db" }
    var doorbellPath: String { path + "/doorbell" }
    var runsPath: String { path + "/runs" }
    func lockPath(run: String) -> String { runsPath + "/" + run + ".lock" }

    /// Opens (creating if needed) and validates the directory.
    static func open(_ path: String) throws -> StoreDirectory {
        guard !path.isEmpty else { throw OutliveError.invalidArgument("the store directory is an empty path") }
        guard path.utf8.count < 3_900 else { throw OutliveError.invalidArgument("the store directory path is longer than 3900 bytes") }
        let directory = StoreDirectory(path: path)
        try directory.ensureDirectory(path, what: "store directory")
        try directory.ensureDirectory(directory.runsPath, what: "store runs directory")
        return directory
    }

    private func ensureDirectory(_ path: String, what: String) throws {
        var info = stat()
        if lstat(path, &info) != 0 {
            let code = COutlive_errno()
            guard code == ENOENT else { throw OutliveError.system("cannot read \(what) \(path)", errno: code) }
            if mkdir(path, 0o700) != 0 {
                let failure = COutlive_errno()
                if failure == EEXIST { return try ensureDirectory(path, what: what) }
                if failure == EACCES || failure == EROFS { throw OutliveError(.io, "cannot create \(what) \(path): its parent is read-only") }
                throw OutliveError.system("cannot create \(what) \(path)", errno: failure)
            }
            guard lstat(path, &info) == 0 else { throw OutliveError.system("cannot read \(what) \(path)") }
        }
        try StoreDirectory.checkSafe(info, path: path, what: what, directory: true)
        if info.st_mode & mode_t(S_IWUSR) == 0 { throw OutliveError(.io, "\(what) \(path) is read-only") }
    }

    /// Refuses links, wrong kinds, foreign owners and modes others can write.
    static func checkSafe(_ info: stat, path: String, what: String, directory: Bool) throws {
        let kind = info.st_mode & mode_t(S_IFMT)
        if kind == mode_t(S_IFLNK) { throw OutliveError(.permission, "\(what) \(path) is a symbolic link; Outlive does not follow links in a store") }
        if directory && kind != mode_t(S_IFDIR) { throw OutliveError.invalidArgument("\(what) \(path) exists and is not a directory") }
        if !directory && kind != mode_t(S_IFREG) { throw OutliveError(.permission, "\(what) \(path) is not a regular file") }
        if info.st_uid != geteuid() { throw OutliveError(.permission, "\(what) \(path) is owned by uid \(info.st_uid), not by this user (uid \(geteuid()))") }
        let forbidden: mode_t = directory ? 0o022 : 0o077
        if info.st_mode & forbidden != 0 {
            let mode = String(info.st_mode & 0o7777, radix: 8)
            throw OutliveError(.permission, "\(what) \(path) has mode 0\(mode); it must not be \(directory ? "writable by group or others" : "readable or writable by group or others")")
        }
    }

    /// Opens a file of the store, creating it 0600; never through a link.
    func openFile(_ path: String, what: String, flags: Int32) throws -> Int32 {
        let fd = COutlive_open(path, flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = COutlive_errno()
            if code == ELOOP { throw OutliveError(.permission, "\(what) \(path) is a symbolic link; Outlive does not follow links in a store") }
            if code == EACCES || code == EROFS { throw OutliveError(.io, "cannot open \(what) \(path): the store is read-only") }
            throw OutliveError.system("cannot open \(what) \(path)", errno: code)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = OutliveError.system("cannot read \(what) \(path)")
            close(fd)
            throw error
        }
        do { try StoreDirectory.checkSafe(info, path: path, what: what, directory: false) } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Creates the database file 0600 before SQLite does (SQLite would use
    /// 0644 less the umask; its -wal and -shm files copy the database's mode),
    /// and refuses planted links for the -wal and -shm files.
    func prepareDatabase() throws {
        let fd = try openFile(databasePath, what: "database", flags: O_RDWR)
        close(fd)
        for suffix in ["-wal", "-shm"] {
            var info = stat()
            let file = databasePath + suffix
            if lstat(file, &info) == 0 { try StoreDirectory.checkSafe(info, path: file, what: "database file", directory: false) }
        }
    }
}
