/// A PL/pgSQL function a component's PostgreSQL steps create: a trigger
/// function, with the triggers that call it (what SQLite does with a
/// trigger whose body is SQL: the task queue's per-queue counts), or a
/// function the component's statements call (`arguments` and `returns`
/// given: a message post's admission). The store's schema is untrusted
/// input: `PostgreSQLSchema` accepts a function in it only when its name,
/// source, arguments and result are one a component declares here, and a
/// trigger only when its name, its table and its function are — anything
/// else is refused as foreign.
public struct PostgreSQLFunction {
    public struct Trigger {
        public let name: String
        public let table: String
        /// The rest of `CREATE TRIGGER name`: when it fires, on what.
        public let definition: String
        /// A constraint trigger (`CREATE CONSTRAINT TRIGGER`), which can be
        /// deferred to the commit as a foreign key's check is.
        public let constraint: Bool

        public init(name: String, table: String, definition: String, constraint: Bool = false) {
            self.name = name
            self.table = table
            self.definition = definition
            self.constraint = constraint
        }
    }

    public let name: String
    /// The function's body, exactly as PostgreSQL keeps it (`pg_proc.prosrc`).
    public let body: String
    public let triggers: [Trigger]
    /// Its parameters as PostgreSQL prints them (`pg_get_function_arguments`):
    /// "" for a trigger function.
    public let arguments: String
    /// Its result type as PostgreSQL names it (`prorettype::regtype`).
    public let returns: String

    public init(name: String, body: String, triggers: [Trigger], arguments: String = "", returns: String = "trigger") {
        self.name = name
        self.body = body
        self.triggers = triggers
        self.arguments = arguments
        self.returns = returns
    }

    /// The DDL of a migration step that creates the function and its triggers.
    public var ddl: String {
        (["CREATE FUNCTION \(name)(\(arguments)) RETURNS \(returns) LANGUAGE plpgsql AS $outlive$\(body)$outlive$"]
            + triggers.map { "CREATE \($0.constraint ? "CONSTRAINT " : "")TRIGGER \($0.name) \($0.definition) EXECUTE FUNCTION \(name)()" })
            .joined(separator: ";\n")
    }
}
