import COutliveSystem

/// The store's directory and the rules for what may be in it: owned by this
/// user, not writable by group or others (0700 when created), files created
/// 0600 without following links, so nobody else can plant or read state.
///
/// Only the store directory itself must not be a link: its parents may be
/// (`/var/run` is one on Debian), so the path is resolved once at open and
/// every file of the store, the database included, is named from there.
/// SQLite is told never to follow a link, and refuses a path with one in any
/// component; the resolved path has none.
struct StoreDirectory {
    /// The resolved path: no symbolic link in any component.
    let path: String
    /// What did not exist before this open (see `removeWhatOpenCreated`).
    let created: Set<String>

    var databasePath: String { path + "/outlive.db" }
    var doorbellPath: String { path + "/doorbell" }
    var runsPath: String { path + "/runs" }
    func lockPath(run: String) -> String { runsPath + "/" + run + ".lock" }

    /// Opens (creating if needed) and validates the directory.
    static func open(_ path: String) throws -> StoreDirectory {
        guard !path.isEmpty else { throw OutliveError.invalidArgument("the store directory is an empty path") }
        guard path.utf8.count < 3_900 else { throw OutliveError.invalidArgument("the store directory path is longer than 3900 bytes") }
        let createdDirectory = try ensureDirectory(path, what: "store directory")
        // The last component is a directory and no link (checked above): what
        // realpath resolves are the parents.
        guard let resolvedPointer = realpath(path, nil) else {
            let error = OutliveError.system("cannot resolve the store directory \(path)")
            if createdDirectory { rmdir(path) }
            throw error
        }
        let resolved = String(cString: resolvedPointer)
        free(resolvedPointer)
        var created: Set<String> = createdDirectory ? [resolved] : []
        let runs = resolved + "/runs"
        do {
            if try ensureDirectory(runs, what: "store runs directory") { created.insert(runs) }
        } catch {
            if createdDirectory { rmdir(resolved) }
            throw error
        }
        for file in ["/outlive.db", "/outlive.db-wal", "/outlive.db-shm", "/doorbell"] {
            var info = stat()
            if lstat(resolved + file, &info) != 0 && COutlive_errno() == ENOENT { created.insert(resolved + file) }
        }
        return StoreDirectory(path: resolved, created: created)
    }

    /// Whether `path` is a directory holding a store's database: what a
    /// caller that must never create a store checks before opening one.
    static func holdsStore(_ path: String) -> Bool {
        var directory = stat(), database = stat()
        return stat(path, &directory) == 0 && directory.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR)
            && lstat(path + "/outlive.db", &database) == 0 && database.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG)
    }

    /// After a failing open: removes what it created — the database and its
    /// -wal and -shm files, the doorbell, runs/, the directory — so that a
    /// failing call leaves nothing behind. Not while any run's lock file is
    /// in runs/ (another process opened the same new store meanwhile).
    func removeWhatOpenCreated() {
        guard !created.isEmpty else { return }
        if let entries = opendir(runsPath) {
            defer { closedir(entries) }
            while let entry = readdir(entries) {
                // d_name is read in place up to its NUL: a dirent is only as long
                // as its name, so copying the whole 256-byte field reads past it.
                let isDotOrDotDot = withUnsafePointer(to: &entry.pointee.d_name) { field in
                    field.withMemoryRebound(to: UInt8.self, capacity: 3) { name in
                        name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
                    }
                }
                if !isDotOrDotDot { return }
            }
        }
        if created.contains(doorbellPath) { unlink(doorbellPath) }
        // The -wal and -shm files of a database that was there are SQLite's to manage.
        if created.contains(databasePath) {
            for file in [databasePath + "-wal", databasePath + "-shm", databasePath] where created.contains(file) { unlink(file) }
        }
        for directory in [runsPath, path] where created.contains(directory) { rmdir(directory) }
    }

    /// Makes sure `path` is a safe directory; whether this call created it.
    @discardableResult
    private static func ensureDirectory(_ path: String, what: String) throws -> Bool {
        var info = stat()
        var made = false
        if lstat(path, &info) != 0 {
            let code = COutlive_errno()
            guard code == ENOENT else { throw OutliveError.system("cannot read \(what) \(path)", errno: code) }
            if mkdir(path, 0o700) != 0 {
                let failure = COutlive_errno()
                if failure == EEXIST { return try ensureDirectory(path, what: what) }
                if failure == EACCES || failure == EROFS { throw OutliveError(.io, "cannot create \(what) \(path): its parent is read-only") }
                throw OutliveError.system("cannot create \(what) \(path)", errno: failure)
            }
            made = true
            guard lstat(path, &info) == 0 else { throw OutliveError.system("cannot read \(what) \(path)") }
        }
        do {
            try StoreDirectory.checkSafe(info, path: path, what: what, directory: true)
            if info.st_mode & mode_t(S_IWUSR) == 0 { throw OutliveError(.io, "\(what) \(path) is read-only") }
        } catch {
            if made { rmdir(path) }
            throw error
        }
        return made
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

    /// Opens a file of the store, creating it 0600; never through a link, and
    /// never blocking: a FIFO or a device in its place would block open(2)
    /// for ever; it is refused as not a regular file.
    func openFile(_ path: String, what: String, flags: Int32) throws -> Int32 {
        let fd = COutlive_open(path, flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard fd >= 0 else {
            let code = COutlive_errno()
            if code == ELOOP { throw OutliveError(.permission, "\(what) \(path) is a symbolic link; Outlive does not follow links in a store") }
            if code == ENXIO || code == ENODEV || code == ETXTBSY { throw OutliveError(.permission, "\(what) \(path) is not a regular file") }
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
