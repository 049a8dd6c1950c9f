/// The library's own handlers, in one list: a task's completion and a durable
/// interaction's finish. The registry registers them when it is made
/// (`HandlerRegistry.shared`), so they resolve in every process that calls a
/// handler value — one that never opened a store included — and nothing else
/// registers them.
///
/// They act on this process's state (its open stores, its presentations) with
/// the arguments the library bound, so stored data must never reach them with
/// arguments of its choosing: they cannot be the stored work of a task, a
/// signal consumer, a message's response handler or a durable interaction
/// (refused when stored, and when a crafted row names one: `call(storedWork:)`),
/// and no registration replaces or removes them.
enum LibraryHandlers {
    struct Entry {
        let name: String
        let signature: String
        let body: (Arguments) throws -> Void
    }

    static let all: [Entry] = [
        Entry(name: TaskCompletion.handlerName, signature: TaskCompletion.signature, body: TaskCompletion.complete),
        Entry(name: DurableInteractions.finishHandlerName, signature: DurablePresentations.finishSignature,
              body: { try DurablePresentations.shared.finish($0) }),
    ]

    static let names = Set(all.map(\.name))
}
