import Glibc
import COutliveSystem

/// One inotify fd per open store: the doorbell (a commit by any process) and
/// the runs directory (the last close of a lock file, which is how a death,
/// `kill -9` included, becomes visible without polling).
final class ChangeWatch {
    struct Events {
        var doorbellRang = false
        var closedRuns: [String] = []
    }

    let fd: Int32
    private let directory: StoreDirectory
    private var doorbellWatch: Int32 = -1

    init(directory: StoreDirectory) throws {
        self.directory = directory
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw OutliveError.system("inotify_init1") }
        do {
            try watchDoorbell()
            guard inotify_add_watch(fd, directory.runsPath, UInt32(IN_CLOSE_WRITE)) >= 0 else {
                throw OutliveError.system("cannot watch \(directory.runsPath)")
            }
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    private func watchDoorbell() throws {
        let bell = try directory.openFile(directory.doorbellPath, what: "doorbell", flags: O_WRONLY)
        close(bell)
        let watch = inotify_add_watch(fd, directory.doorbellPath, UInt32(IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW))
        guard watch >= 0 else { throw OutliveError.system("cannot watch \(directory.doorbellPath)") }
        doorbellWatch = watch
    }

    /// Reads every pending event. A doorbell that was deleted or moved is
    /// created and watched anew, and counts as rung (changes may have been missed).
    func read() -> Events {
        var events = Events()
        let capacity = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        var rewatch = false
        while true {
            let count = Glibc.read(fd, buffer, capacity)
            guard count > 0 else { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameStart = offset + MemoryLayout<inotify_event>.size
                if event.wd == doorbellWatch {
                    if event.mask & UInt32(IN_MODIFY) != 0 { events.doorbellRang = true }
                    if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 { rewatch = true }
                } else if event.len > 0 {
                    let name = String(cString: (buffer + nameStart).assumingMemoryBound(to: CChar.self))
                    if name.hasSuffix(".lock") { events.closedRuns.append(String(name.dropLast(5))) }
                }
                offset = nameStart + Int(event.len)
            }
            // Room was left for the largest event: none was pending. One that
            // comes later keeps the fd readable (the loop's epoll is
            // level-triggered), so the next dispatch reads it; a second
            // read here would only return EAGAIN, on every wake-up.
            if count + MemoryLayout<inotify_event>.size + Int(NAME_MAX) + 1 <= capacity { break }
        }
        if rewatch {
            if doorbellWatch >= 0 { inotify_rm_watch(fd, doorbellWatch) }
            doorbellWatch = -1
            try? watchDoorbell()
            events.doorbellRang = true
        }
        return events
    }
}
