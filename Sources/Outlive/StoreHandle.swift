import COutliveSystem
import OutliveCore

/// What an `outlive_store *` points to: the core's store and the C strings
/// handed out for it, which must stay valid while the handle lives.
final class StoreHandle {
    let core: OutliveStore
    let runID: UnsafeMutablePointer<CChar>
    let processName: UnsafeMutablePointer<CChar>

    init(_ core: OutliveStore) {
        self.core = core
        runID = strdup(core.store.runID)
        processName = strdup(core.store.processName)
    }

    deinit {
        core.close()
        free(runID)
        free(processName)
    }
}

/// A caller's context with its optional release callback, called once when
/// the library no longer needs the context — never when the registration that
/// took it failed (`disarm`): then the caller still owns it.
final class CallerContext {
    let pointer: UnsafeMutableRawPointer?
    private var release: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?

    init(_ pointer: UnsafeMutableRawPointer?, release: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) {
        self.pointer = pointer
        self.release = release
    }

    func disarm() { release = nil }

    deinit { release?(pointer) }
}
