import OutliveCore

// The library's own handlers (a task's completion, ...) must resolve in any
// process that calls a handler value, also one that never opened a store: a
// completion sent to a helper process, say. Swift globals initialise once,
// thread-safely, on first use; the call path pays a load after that.
private let builtinsRegistered: Void = {
    TaskCompletion.register()
}()

@inline(__always)
func ensureBuiltins() {
    _ = builtinsRegistered
}
