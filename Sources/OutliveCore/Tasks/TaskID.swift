/// Task ids (docs/tasks.md, "Task ids"). On SQLite since step 10 of the tasks
/// schema a new task's id carries its `seq` (`SeqID`); ids of other forms —
/// every id of a store before step 10, and PostgreSQL's, which are random
/// (version 4 before 0.3, then version 7) — are found through the partial
/// unique index `outlive_tasks_id`, which holds every row whose id is not of
/// the new form.
typealias TaskID = SeqID
