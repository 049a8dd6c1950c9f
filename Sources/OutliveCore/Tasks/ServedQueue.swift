/// How this handle runs one queue: at most `limit` of its tasks at once
/// (0: not at all). A triggered queue (the default queue, until the handle
/// names it in `serve`) starts runs by its triggers; any other starts one as
/// soon as a task of it is due.
struct ServedQueue: Equatable {
    let kind: TaskSchema.QueueKind
    var limit: Int
    var triggered: Bool
}
