/// The task queue's tables.
///
/// `outlive_tasks` holds one row per stored task; `seq` is the queue order
/// (on SQLite a plain rowid since step 8: max + 1, see there). On SQLite
/// since step 10 a new task's id carries its seq (`TaskID`); the older ids
/// are in `outlive_tasks_id (id) WHERE substr(id, 15, 1) <> '8'`, unique.
/// `state`: 0 ready (pending, due now), 1 running, 2 dead, 3 waiting (pending,
/// in backoff until `waiting_until`). Partial indexes make each step of a run
/// an indexed lookup whatever the queue's length:
/// - `outlive_tasks_ready (queue, handler_name, priority DESC, seq) WHERE
///   state = 0 AND unindexed IS NULL`: the next ready task of a handler name
///   after the run's cursor, and the distinct names (on SQLite since step 11
///   a task newly added is indexed later, `TaskSchema.indexTail`);
/// - `outlive_tasks_waiting (queue, waiting_until) WHERE state = 3`: tasks coming due;
/// - `outlive_tasks_running (runner) WHERE runner IS NOT NULL`: what a dead run held;
/// - `outlive_tasks_group_start (group_start)`: whether a group's start is stored.
/// - `outlive_tasks_unique_key (queue, unique_key)`, unique, over the pending
///   and running tasks that are not cancelled: who holds a key.
/// `outlive_task_runner` is the claim of the one runner across processes;
/// `age_from` is when the task's max age started counting (created, or its
/// last retry). Each queue's row of `outlive_task_queues` keeps its counts (kept
/// by triggers), so that triggers and counts never count rows — but for the
/// few newest tasks, above `outlive_task_counted` (SQLite's step 9,
/// PostgreSQL's 12).
enum TaskSchema {
    static let component = SchemaComponent(name: "tasks", migrations: [
        """
        CREATE TABLE outlive_tasks(
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            handler_name TEXT NOT NULL,
            handler BLOB NOT NULL,
            group_start TEXT,
            group_members BLOB,
            created REAL NOT NULL,
            age_from REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            state INTEGER NOT NULL DEFAULT 0,
            waiting_until REAL,
            runner TEXT,
            claim TEXT,
            outcome INTEGER);
        CREATE INDEX outlive_tasks_ready ON outlive_tasks(handler_name, seq) WHERE state = 0;
        CREATE INDEX outlive_tasks_waiting ON outlive_tasks(waiting_until) WHERE state = 3;
        CREATE INDEX outlive_tasks_running ON outlive_tasks(runner) WHERE state = 1;
        CREATE INDEX outlive_tasks_group_start ON outlive_tasks(group_start) WHERE group_start IS NOT NULL;
        CREATE TABLE outlive_task_runner(slot INTEGER PRIMARY KEY, run_id TEXT NOT NULL, started REAL NOT NULL);
        CREATE TABLE outlive_task_counts(slot INTEGER PRIMARY KEY, pending INTEGER NOT NULL, dead INTEGER NOT NULL);
        INSERT INTO outlive_task_counts(slot, pending, dead) VALUES (0, 0, 0)
        """,
        SchemaComponent.requiringRegisteredRun("outlive_task_runner", "run_id")
            + SchemaComponent.requiringRegisteredRun("outlive_tasks", "runner", onInsert: false),
        // Queues for services (docs/tasks.md): a task's queue, priority, unique
        // key, cancellation and result signal; the declared queues and their kind.
        """
        ALTER TABLE outlive_tasks ADD COLUMN queue TEXT NOT NULL DEFAULT 'default';
        ALTER TABLE outlive_tasks ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE outlive_tasks ADD COLUMN unique_key TEXT;
        ALTER TABLE outlive_tasks ADD COLUMN cancelled INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE outlive_tasks ADD COLUMN result_signal TEXT;
        CREATE TABLE outlive_task_queues(name TEXT PRIMARY KEY, kind INTEGER NOT NULL, created REAL NOT NULL);
        INSERT INTO outlive_task_queues(name, kind, created) VALUES ('default', 1, 0)
        """,
        // The scheduler of named queues: the next ready task of a queue in
        // priority order (then seq), per handler name; the earliest waiting
        // task of a queue; one runner claim per ordered queue; each queue's
        // counts, kept by triggers so that every path that changes a task's
        // state (whichever system's code) keeps them right.
        """
        DROP INDEX outlive_tasks_ready;
        CREATE INDEX outlive_tasks_ready ON outlive_tasks(queue, handler_name, priority DESC, seq) WHERE state = 0;
        DROP INDEX outlive_tasks_waiting;
        CREATE INDEX outlive_tasks_waiting ON outlive_tasks(queue, waiting_until) WHERE state = 3;
        ALTER TABLE outlive_task_runner ADD COLUMN queue TEXT NOT NULL DEFAULT 'default';
        CREATE UNIQUE INDEX outlive_task_runner_queue ON outlive_task_runner(queue);
        ALTER TABLE outlive_task_queues ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE outlive_task_queues ADD COLUMN running INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE outlive_task_queues ADD COLUMN dead INTEGER NOT NULL DEFAULT 0;
        UPDATE outlive_task_queues SET
            pending = (SELECT count(*) FROM outlive_tasks t WHERE t.queue = outlive_task_queues.name AND t.state IN (0, 3)),
            running = (SELECT count(*) FROM outlive_tasks t WHERE t.queue = outlive_task_queues.name AND t.state = 1),
            dead = (SELECT count(*) FROM outlive_tasks t WHERE t.queue = outlive_task_queues.name AND t.state = 2);
        CREATE TRIGGER outlive_tasks_queue_count_insert AFTER INSERT ON outlive_tasks BEGIN
            UPDATE outlive_task_queues SET pending = pending + (NEW.state IN (0, 3)), running = running + (NEW.state = 1),
                dead = dead + (NEW.state = 2) WHERE name = NEW.queue;
        END;
        CREATE TRIGGER outlive_tasks_queue_count_delete AFTER DELETE ON outlive_tasks BEGIN
            UPDATE outlive_task_queues SET pending = pending - (OLD.state IN (0, 3)), running = running - (OLD.state = 1),
                dead = dead - (OLD.state = 2) WHERE name = OLD.queue;
        END;
        CREATE TRIGGER outlive_tasks_queue_count_update AFTER UPDATE OF state, queue ON outlive_tasks
            WHEN OLD.queue != NEW.queue OR (OLD.state = 1) != (NEW.state = 1) OR (OLD.state = 2) != (NEW.state = 2)
                OR (OLD.state IN (0, 3)) != (NEW.state IN (0, 3)) BEGIN
            UPDATE outlive_task_queues SET pending = pending - (OLD.state IN (0, 3)), running = running - (OLD.state = 1),
                dead = dead - (OLD.state = 2) WHERE name = OLD.queue;
            UPDATE outlive_task_queues SET pending = pending + (NEW.state IN (0, 3)), running = running + (NEW.state = 1),
                dead = dead + (NEW.state = 2) WHERE name = NEW.queue;
        END
        """,
        // What happens to one task (docs/tasks.md): a unique key is held by at
        // most one task of its queue that is pending (ready or waiting) or
        // running and not cancelled — the index is the enforcement, so that
        // adders in many processes cannot both add; `result` holds the extra
        // arguments of a successful completion until the runner posts them.
        """
        ALTER TABLE outlive_tasks ADD COLUMN result BLOB;
        CREATE UNIQUE INDEX outlive_tasks_unique_key ON outlive_tasks(queue, unique_key)
            WHERE unique_key IS NOT NULL AND cancelled = 0 AND state IN (0, 1, 3)
        """,
        // The store's counts are the sum of the queues' (a few rows): one
        // counter row less to write per add and per completion. The queues'
        // counters read a damaged NULL as 0: a NOT NULL counter set to NULL
        // would otherwise fail every change of a task's state (the end of a
        // dead run at open included) with a constraint error. A change of
        // state within a queue (every claim and every retry) is one update of
        // its row, not two. Adds count their tasks once per transaction and
        // queue (`addPending`) rather than a trigger once per row: a batch of
        // 100,000 adds made 100,000 updates of the same row.
        """
        DROP TABLE outlive_task_counts;
        DROP TRIGGER outlive_tasks_queue_count_insert;
        DROP TRIGGER outlive_tasks_queue_count_delete;
        DROP TRIGGER outlive_tasks_queue_count_update;
        CREATE TRIGGER outlive_tasks_queue_count_delete AFTER DELETE ON outlive_tasks BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)), running = ifnull(running, 0) - (OLD.state = 1),
                dead = ifnull(dead, 0) - (OLD.state = 2) WHERE name = OLD.queue;
        END;
        CREATE TRIGGER outlive_tasks_queue_count_update AFTER UPDATE OF state, queue ON outlive_tasks
            WHEN OLD.queue = NEW.queue AND ((OLD.state = 1) != (NEW.state = 1) OR (OLD.state = 2) != (NEW.state = 2)
                OR (OLD.state IN (0, 3)) != (NEW.state IN (0, 3))) BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)) + (NEW.state IN (0, 3)),
                running = ifnull(running, 0) - (OLD.state = 1) + (NEW.state = 1),
                dead = ifnull(dead, 0) - (OLD.state = 2) + (NEW.state = 2) WHERE name = NEW.queue;
        END;
        CREATE TRIGGER outlive_tasks_queue_count_move AFTER UPDATE OF state, queue ON outlive_tasks
            WHEN OLD.queue != NEW.queue BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)), running = ifnull(running, 0) - (OLD.state = 1),
                dead = ifnull(dead, 0) - (OLD.state = 2) WHERE name = OLD.queue;
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) + (NEW.state IN (0, 3)), running = ifnull(running, 0) + (NEW.state = 1),
                dead = ifnull(dead, 0) + (NEW.state = 2) WHERE name = NEW.queue;
        END
        """,
        // Step 7 is PostgreSQL's alone (claims without the store's lock, which
        // SQLite has no use for: it has one writer at a time).
        "",
        // Step 8: `seq` without AUTOINCREMENT. AUTOINCREMENT keeps the highest
        // seq ever used in `sqlite_sequence`, a page of its own written by
        // every add (one of five at synchronous=NORMAL, where an add's cost is
        // the pages its commit writes). A plain rowid is max(seq) + 1, so the
        // queue's order among stored tasks is the same; what it no longer
        // promises is that a seq is never used again once the newest tasks
        // are gone. Nothing remembers a seq across a deletion: a run's cursor
        // is followed by a rewind at every add (`tasksBecameReady`), an
        // attempt's claim is fenced by its token (a UUID), a list pages from a
        // task that still exists. SQLite cannot drop AUTOINCREMENT in place:
        // the table is rebuilt, rows copied as they are, its indexes and
        // triggers made again as steps 2 to 6 left them.
        """
        ALTER TABLE outlive_tasks RENAME TO outlive_tasks_autoincrement;
        CREATE TABLE outlive_tasks(
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            handler_name TEXT NOT NULL,
            handler BLOB NOT NULL,
            group_start TEXT,
            group_members BLOB,
            created REAL NOT NULL,
            age_from REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            state INTEGER NOT NULL DEFAULT 0,
            waiting_until REAL,
            runner TEXT,
            claim TEXT,
            outcome INTEGER,
            queue TEXT NOT NULL DEFAULT 'default',
            priority INTEGER NOT NULL DEFAULT 0,
            unique_key TEXT,
            cancelled INTEGER NOT NULL DEFAULT 0,
            result_signal TEXT,
            result BLOB);
        INSERT INTO outlive_tasks(seq, id, handler_name, handler, group_start, group_members, created, age_from, attempts,
                                  last_error, state, waiting_until, runner, claim, outcome, queue, priority, unique_key,
                                  cancelled, result_signal, result)
            SELECT seq, id, handler_name, handler, group_start, group_members, created, age_from, attempts,
                   last_error, state, waiting_until, runner, claim, outcome, queue, priority, unique_key,
                   cancelled, result_signal, result
            FROM outlive_tasks_autoincrement;
        DROP TABLE outlive_tasks_autoincrement;
        CREATE INDEX outlive_tasks_ready ON outlive_tasks(queue, handler_name, priority DESC, seq) WHERE state = 0;
        CREATE INDEX outlive_tasks_waiting ON outlive_tasks(queue, waiting_until) WHERE state = 3;
        CREATE INDEX outlive_tasks_running ON outlive_tasks(runner) WHERE state = 1;
        CREATE INDEX outlive_tasks_group_start ON outlive_tasks(group_start) WHERE group_start IS NOT NULL;
        CREATE UNIQUE INDEX outlive_tasks_unique_key ON outlive_tasks(queue, unique_key)
            WHERE unique_key IS NOT NULL AND cancelled = 0 AND state IN (0, 1, 3);

        """ + SchemaComponent.requiringRegisteredRun("outlive_tasks", "runner", onInsert: false) + """

        CREATE TRIGGER outlive_tasks_queue_count_delete AFTER DELETE ON outlive_tasks BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)), running = ifnull(running, 0) - (OLD.state = 1),
                dead = ifnull(dead, 0) - (OLD.state = 2) WHERE name = OLD.queue;
        END;
        CREATE TRIGGER outlive_tasks_queue_count_update AFTER UPDATE OF state, queue ON outlive_tasks
            WHEN OLD.queue = NEW.queue AND ((OLD.state = 1) != (NEW.state = 1) OR (OLD.state = 2) != (NEW.state = 2)
                OR (OLD.state IN (0, 3)) != (NEW.state IN (0, 3))) BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)) + (NEW.state IN (0, 3)),
                running = ifnull(running, 0) - (OLD.state = 1) + (NEW.state = 1),
                dead = ifnull(dead, 0) - (OLD.state = 2) + (NEW.state = 2) WHERE name = NEW.queue;
        END;
        CREATE TRIGGER outlive_tasks_queue_count_move AFTER UPDATE OF state, queue ON outlive_tasks
            WHEN OLD.queue != NEW.queue BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)), running = ifnull(running, 0) - (OLD.state = 1),
                dead = ifnull(dead, 0) - (OLD.state = 2) WHERE name = OLD.queue;
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) + (NEW.state IN (0, 3)), running = ifnull(running, 0) + (NEW.state = 1),
                dead = ifnull(dead, 0) + (NEW.state = 2) WHERE name = NEW.queue;
        END
        """,
        // Step 9: an add writes no counter. Its queue's row was a page of
        // the four an add writes. Tasks above the counted mark
        // (`outlive_task_counted.seq`) are not in the queues' counters: a
        // read of the counts adds them up from their rows (at most
        // `foldAfter` of them, and a batch), and an add that finds the tail
        // that long folds it into the counters (`addPending`). The count
        // triggers leave such tasks alone. A task's seq is above every seq
        // stored and above the mark (`TaskQueue.insert`): a task below the
        // mark is always a counted one.
        """
        CREATE TABLE outlive_task_counted(slot INTEGER PRIMARY KEY, seq INTEGER NOT NULL);
        INSERT INTO outlive_task_counted(slot, seq) VALUES (0, coalesce((SELECT max(seq) FROM outlive_tasks), 0));
        DROP TRIGGER outlive_tasks_queue_count_delete;
        DROP TRIGGER outlive_tasks_queue_count_update;
        DROP TRIGGER outlive_tasks_queue_count_move;
        CREATE TRIGGER outlive_tasks_queue_count_delete AFTER DELETE ON outlive_tasks
            WHEN OLD.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0) BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)), running = ifnull(running, 0) - (OLD.state = 1),
                dead = ifnull(dead, 0) - (OLD.state = 2) WHERE name = OLD.queue;
        END;
        CREATE TRIGGER outlive_tasks_queue_count_update AFTER UPDATE OF state, queue ON outlive_tasks
            WHEN OLD.queue = NEW.queue AND ((OLD.state = 1) != (NEW.state = 1) OR (OLD.state = 2) != (NEW.state = 2)
                OR (OLD.state IN (0, 3)) != (NEW.state IN (0, 3))) AND OLD.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0) BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)) + (NEW.state IN (0, 3)),
                running = ifnull(running, 0) - (OLD.state = 1) + (NEW.state = 1),
                dead = ifnull(dead, 0) - (OLD.state = 2) + (NEW.state = 2) WHERE name = NEW.queue;
        END;
        CREATE TRIGGER outlive_tasks_queue_count_move AFTER UPDATE OF state, queue ON outlive_tasks
            WHEN OLD.queue != NEW.queue AND OLD.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0) BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)), running = ifnull(running, 0) - (OLD.state = 1),
                dead = ifnull(dead, 0) - (OLD.state = 2) WHERE name = OLD.queue;
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) + (NEW.state IN (0, 3)), running = ifnull(running, 0) + (NEW.state = 1),
                dead = ifnull(dead, 0) + (NEW.state = 2) WHERE name = NEW.queue;
        END
        """,
        // Step 10: no index of new tasks' ids. A new task's id carries its
        // seq (`TaskID`): found by its rowid and a comparison of the text,
        // where the unique index of ids was a page of the three an add
        // wrote. Ids of the other form (every id stored before this step)
        // stay in a partial unique index, `outlive_tasks_id`; a new-form id
        // is unique by its seq, the table's key. The column's UNIQUE cannot
        // be dropped in place: the table is rebuilt, rows copied as they are,
        // its indexes and triggers made again as step 9 left them.
        """
        ALTER TABLE outlive_tasks RENAME TO outlive_tasks_unique_id;
        CREATE TABLE outlive_tasks(
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL,
            handler_name TEXT NOT NULL,
            handler BLOB NOT NULL,
            group_start TEXT,
            group_members BLOB,
            created REAL NOT NULL,
            age_from REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            state INTEGER NOT NULL DEFAULT 0,
            waiting_until REAL,
            runner TEXT,
            claim TEXT,
            outcome INTEGER,
            queue TEXT NOT NULL DEFAULT 'default',
            priority INTEGER NOT NULL DEFAULT 0,
            unique_key TEXT,
            cancelled INTEGER NOT NULL DEFAULT 0,
            result_signal TEXT,
            result BLOB);
        INSERT INTO outlive_tasks(seq, id, handler_name, handler, group_start, group_members, created, age_from, attempts,
                                  last_error, state, waiting_until, runner, claim, outcome, queue, priority, unique_key,
                                  cancelled, result_signal, result)
            SELECT seq, id, handler_name, handler, group_start, group_members, created, age_from, attempts,
                   last_error, state, waiting_until, runner, claim, outcome, queue, priority, unique_key,
                   cancelled, result_signal, result
            FROM outlive_tasks_unique_id;
        DROP TABLE outlive_tasks_unique_id;
        CREATE UNIQUE INDEX outlive_tasks_id ON outlive_tasks(id) WHERE substr(id, 15, 1) <> '8';
        CREATE INDEX outlive_tasks_ready ON outlive_tasks(queue, handler_name, priority DESC, seq) WHERE state = 0;
        CREATE INDEX outlive_tasks_waiting ON outlive_tasks(queue, waiting_until) WHERE state = 3;
        CREATE INDEX outlive_tasks_running ON outlive_tasks(runner) WHERE state = 1;
        CREATE INDEX outlive_tasks_group_start ON outlive_tasks(group_start) WHERE group_start IS NOT NULL;
        CREATE UNIQUE INDEX outlive_tasks_unique_key ON outlive_tasks(queue, unique_key)
            WHERE unique_key IS NOT NULL AND cancelled = 0 AND state IN (0, 1, 3);

        """ + SchemaComponent.requiringRegisteredRun("outlive_tasks", "runner", onInsert: false) + """

        CREATE TRIGGER outlive_tasks_queue_count_delete AFTER DELETE ON outlive_tasks
            WHEN OLD.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0) BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)), running = ifnull(running, 0) - (OLD.state = 1),
                dead = ifnull(dead, 0) - (OLD.state = 2) WHERE name = OLD.queue;
        END;
        CREATE TRIGGER outlive_tasks_queue_count_update AFTER UPDATE OF state, queue ON outlive_tasks
            WHEN OLD.queue = NEW.queue AND ((OLD.state = 1) != (NEW.state = 1) OR (OLD.state = 2) != (NEW.state = 2)
                OR (OLD.state IN (0, 3)) != (NEW.state IN (0, 3))) AND OLD.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0) BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)) + (NEW.state IN (0, 3)),
                running = ifnull(running, 0) - (OLD.state = 1) + (NEW.state = 1),
                dead = ifnull(dead, 0) - (OLD.state = 2) + (NEW.state = 2) WHERE name = NEW.queue;
        END;
        CREATE TRIGGER outlive_tasks_queue_count_move AFTER UPDATE OF state, queue ON outlive_tasks
            WHEN OLD.queue != NEW.queue AND OLD.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0) BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)), running = ifnull(running, 0) - (OLD.state = 1),
                dead = ifnull(dead, 0) - (OLD.state = 2) WHERE name = OLD.queue;
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) + (NEW.state IN (0, 3)), running = ifnull(running, 0) + (NEW.state = 1),
                dead = ifnull(dead, 0) + (NEW.state = 2) WHERE name = NEW.queue;
        END
        """,
        // Step 11: a new ready task enters the ready index later, with the
        // tasks after it. Its entry was the second of the two pages an add
        // wrote (at synchronous=NORMAL an add's cost is its pages: the WAL
        // frame, its checksum, its copy at the checkpoint). A task added
        // with `unindexed` = 1 is outside `outlive_tasks_ready`; every such
        // task lies above the counted mark (an add marks only a task whose
        // seq is above it), and whatever moves the mark indexes them first
        // (`TaskSchema.indexTail`), as does a run before it looks for its
        // next tasks: the lookups that use the index see every ready task.
        // `outlive_tasks_running` covers every claimed row, as PostgreSQL's
        // does: the end of a run looks its claims up by runner alone
        // (`RunClaim.free`), which read the whole table with the index
        // limited to `state = 1`.
        """
        ALTER TABLE outlive_tasks ADD COLUMN unindexed INTEGER;
        DROP INDEX outlive_tasks_ready;
        CREATE INDEX outlive_tasks_ready ON outlive_tasks(queue, handler_name, priority DESC, seq) WHERE state = 0 AND unindexed IS NULL;
        DROP INDEX outlive_tasks_running;
        CREATE INDEX outlive_tasks_running ON outlive_tasks(runner) WHERE runner IS NOT NULL
        """,
        // Step 12 is PostgreSQL's alone (SQLite's adds write no counter since step 9).
        "",
        // Step 13: a claim writes no counter, as PostgreSQL's since its step
        // 7. `pending` counts the tasks not yet ended (ready, waiting or
        // running), which a claim (ready to running), a return and a retry
        // leave as they are; the running ones are counted from their rows
        // when counts are read (`runningByQueue`: claimed rows, found through
        // `outlive_tasks_running`, no more than the runs' limits). The claim's
        // trigger updated the queue's row once per task claimed: a completed
        // task went from 113,000 to 108,000 instructions (callgrind). `running`
        // stays a column, added to `pending` wherever the tasks not yet ended
        // are read: a process of the older library still open beside this
        // one (its fold puts tasks running at the fold in `running`) leaves
        // the sum right. The triggers spell `IN (0, 1, 3)` as equalities:
        // SQLite codes an IN list of three or more values as a temporary
        // b-tree, made again at every row a trigger's program runs for (the
        // claims and deletes of a batch cost twice as much with it).
        """
        UPDATE outlive_task_queues SET pending = ifnull(pending, 0) + ifnull(running, 0), running = 0;
        DROP TRIGGER outlive_tasks_queue_count_delete;
        DROP TRIGGER outlive_tasks_queue_count_update;
        DROP TRIGGER outlive_tasks_queue_count_move;
        CREATE TRIGGER outlive_tasks_queue_count_delete AFTER DELETE ON outlive_tasks
            WHEN OLD.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0) BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state = 0 OR OLD.state = 1 OR OLD.state = 3),
                dead = ifnull(dead, 0) - (OLD.state = 2) WHERE name = OLD.queue;
        END;
        CREATE TRIGGER outlive_tasks_queue_count_update AFTER UPDATE OF state, queue ON outlive_tasks
            WHEN OLD.queue = NEW.queue AND ((OLD.state = 0 OR OLD.state = 1 OR OLD.state = 3) != (NEW.state = 0 OR NEW.state = 1 OR NEW.state = 3)
                OR (OLD.state = 2) != (NEW.state = 2)) AND OLD.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0) BEGIN
            UPDATE outlive_task_queues SET
                pending = ifnull(pending, 0) - (OLD.state = 0 OR OLD.state = 1 OR OLD.state = 3) + (NEW.state = 0 OR NEW.state = 1 OR NEW.state = 3),
                dead = ifnull(dead, 0) - (OLD.state = 2) + (NEW.state = 2) WHERE name = NEW.queue;
        END;
        CREATE TRIGGER outlive_tasks_queue_count_move AFTER UPDATE OF state, queue ON outlive_tasks
            WHEN OLD.queue != NEW.queue AND OLD.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0) BEGIN
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state = 0 OR OLD.state = 1 OR OLD.state = 3),
                dead = ifnull(dead, 0) - (OLD.state = 2) WHERE name = OLD.queue;
            UPDATE outlive_task_queues SET pending = ifnull(pending, 0) + (NEW.state = 0 OR NEW.state = 1 OR NEW.state = 3),
                dead = ifnull(dead, 0) + (NEW.state = 2) WHERE name = NEW.queue;
        END
        """,
        // Step 14: the unique keys' index tests a state as equalities, as
        // step 13's triggers do. SQLite evaluates a partial index's WHERE
        // for each row it inserts, updates or deletes, and codes `IN (0, 1,
        // 3)` as a temporary b-tree made again each time: at the add, the
        // claim and the end of every task that has a unique key. Measured
        // (a table of the index's columns, 20,000 keyed rows each added in its
        // own commit, then claimed and deleted 16 at a time, at `NORMAL`):
        // 27.5 against 21 µs a row, 114k against 58k instructions. The
        // index enforces the same rule; `TaskUniqueKey.holder` names the
        // same condition, so that its lookup uses the index.
        """
        DROP INDEX outlive_tasks_unique_key;
        CREATE UNIQUE INDEX outlive_tasks_unique_key ON outlive_tasks(queue, unique_key)
            WHERE unique_key IS NOT NULL AND cancelled = 0 AND (state = 0 OR state = 1 OR state = 3)
        """,
        // Step 15 is PostgreSQL's alone: SQLite's claims are checked by step 2's trigger.
        "",
    ], postgresql: [
        // Tasks came to PostgreSQL at version 6: the first step makes the
        // tables as SQLite's six steps leave them, the others have nothing
        // left to do. Text keys compare and sort by their bytes (COLLATE "C"),
        // as in SQLite. `seq` is an identity: it is taken under the store's
        // write lock, which every write transaction holds, so tasks commit in
        // `seq` order and a reader paging by it misses none. The foreign keys
        // on the runs stand for SQLite's step 2 triggers: a claim by a run the
        // store no longer has is refused (at commit: removing a run deletes
        // its row before the end-of-run hooks free its claims, in the same
        // transaction; the runner's key is step 15's constraint triggers
        // since). `outlive_tasks_running` covers every claimed row, so that
        // those checks on a run's removal are index lookups.
        // The counts' triggers are SQLite's, as PL/pgSQL (`queueCounts`).
        #"""
        CREATE TABLE outlive_tasks(
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text COLLATE "C" NOT NULL UNIQUE,
            handler_name text COLLATE "C" NOT NULL,
            handler bytea NOT NULL,
            group_start text COLLATE "C",
            group_members bytea,
            created double precision NOT NULL,
            age_from double precision NOT NULL,
            attempts bigint NOT NULL DEFAULT 0,
            last_error text,
            state bigint NOT NULL DEFAULT 0,
            waiting_until double precision,
            runner text COLLATE "C" REFERENCES outlive_runs(run_id) DEFERRABLE INITIALLY DEFERRED,
            claim text COLLATE "C",
            outcome bigint,
            queue text COLLATE "C" NOT NULL DEFAULT 'default',
            priority bigint NOT NULL DEFAULT 0,
            unique_key text COLLATE "C",
            cancelled bigint NOT NULL DEFAULT 0,
            result_signal text COLLATE "C",
            result bytea);
        CREATE INDEX outlive_tasks_ready ON outlive_tasks(queue, handler_name, priority DESC, seq) WHERE state = 0;
        CREATE INDEX outlive_tasks_waiting ON outlive_tasks(queue, waiting_until) WHERE state = 3;
        CREATE INDEX outlive_tasks_running ON outlive_tasks(runner) WHERE runner IS NOT NULL;
        CREATE INDEX outlive_tasks_group_start ON outlive_tasks(group_start) WHERE group_start IS NOT NULL;
        CREATE UNIQUE INDEX outlive_tasks_unique_key ON outlive_tasks(queue, unique_key)
            WHERE unique_key IS NOT NULL AND cancelled = 0 AND state IN (0, 1, 3);
        CREATE TABLE outlive_task_runner(
            queue text COLLATE "C" PRIMARY KEY,
            run_id text COLLATE "C" NOT NULL REFERENCES outlive_runs(run_id) DEFERRABLE INITIALLY DEFERRED,
            started double precision NOT NULL);
        CREATE INDEX outlive_task_runner_run ON outlive_task_runner(run_id);
        CREATE TABLE outlive_task_queues(name text COLLATE "C" PRIMARY KEY, kind bigint NOT NULL, created double precision NOT NULL,
            pending bigint NOT NULL DEFAULT 0, running bigint NOT NULL DEFAULT 0, dead bigint NOT NULL DEFAULT 0);
        INSERT INTO outlive_task_queues(name, kind, created) VALUES ('default', 1, 0);
        """# + queueCounts.ddl,
        "", "", "", "", "",
        // Claims without the store's lock (a parallel queue's, FOR UPDATE SKIP
        // LOCKED): a claim (ready to running) and a return (running to
        // ready) must not write the queue's row, which every claimer of the
        // queue would wait on in turn. So `pending` counts the tasks not yet
        // ended (pending or running), which a claim leaves as it is, and
        // `running` is no longer kept: read, it is counted among the running
        // tasks (no more than the runners' limits), by an index of their own.
        """
        DROP TRIGGER outlive_tasks_queue_count_delete ON outlive_tasks;
        DROP TRIGGER outlive_tasks_queue_count_update ON outlive_tasks;
        DROP FUNCTION outlive_tasks_queue_count();
        UPDATE outlive_task_queues SET pending = coalesce(pending, 0) + coalesce(running, 0), running = 0;
        CREATE INDEX outlive_tasks_running_queue ON outlive_tasks(queue) WHERE state = 1;
        """ + queueCountsUnended.ddl,
        // Step 8 is SQLite's alone: an identity never takes a value twice and
        // costs no page of its own.
        "",
        // Step 9 is SQLite's alone: PostgreSQL's adds count their tasks in the
        // same statement round trip (`addPending`, sent with the commit).
        "",
        // Step 10 is SQLite's alone: PostgreSQL takes a task's seq as it
        // inserts the row, after its id is sent; its ids stay random, found
        // through their unique index.
        "",
        // Step 11 is SQLite's alone: PostgreSQL's pages are not its cost
        // (a round trip is), and its runners claim without the store's lock.
        "",
        // Step 12: an add writes no counter, as SQLite's since its step 9.
        // The queue count's UPDATE was a statement of the six an add sends
        // in its round trip, and 16 µs of the add's ~53 over a raw INSERT
        // (wall time, measured: docs/postgresql.md). Tasks above the
        // counted mark are not in the counters: a read adds them up from
        // their rows, and every `foldAfter` adds of a handle (or a batch, or
        // a schedules' firing) fold them in. Every write that moves a task
        // across the counts (ends it, deletes it, moves it to another queue)
        // holds the store's lock, as the fold does: the trigger reads the
        // mark the last fold committed.
        """
        CREATE TABLE outlive_task_counted(slot bigint PRIMARY KEY, seq bigint NOT NULL);
        INSERT INTO outlive_task_counted(slot, seq) VALUES (0, coalesce((SELECT max(seq) FROM outlive_tasks), 0));
        DROP TRIGGER outlive_tasks_unended_count_delete ON outlive_tasks;
        DROP TRIGGER outlive_tasks_unended_count_update ON outlive_tasks;
        DROP FUNCTION outlive_tasks_unended_count();
        """ + queueCountsCounted.ddl + ";\n" + olderAddsUncounted.ddl,
        // Step 13 is SQLite's alone: PostgreSQL's claims write no counter since its step 7.
        "",
        // Step 14 is SQLite's alone: PostgreSQL tests `state IN (0, 1, 3)` as one array, once.
        "",
        // Step 15: the runner's foreign key as constraint triggers, as
        // SQLite's step 2 checks only an update of the runner. A foreign key
        // queued its check (deferred, a no-op for a NULL runner) at every
        // insert: a task add, measured through the library on the durable
        // bench cluster, cost 4–7 µs more with it (docs/postgresql.md, "A
        // statement's CPU, and the implicit transaction"). The triggers keep
        // what the key did: a claim by a run the store no longer has is
        // refused at commit, a run's row goes only once no task names it as
        // its runner, and each side locks the other's row as the key's checks do.
        "ALTER TABLE outlive_tasks DROP CONSTRAINT outlive_tasks_runner_fkey;\n" + runnerRegistered.ddl + ";\n" + runnerReleased.ddl,
    ], postgresqlFunctions: [queueCountsCounted, olderAddsUncounted, runnerRegistered, runnerReleased])

    /// A claim names a registered run (step 15): checked at commit, as the
    /// foreign key's check was, the run's row locked against its removal
    /// until then. An update that sets no new runner queues nothing (the
    /// trigger's WHEN), nor does an insert. The run's row is read through
    /// the `search_path` (claims run in the store's sessions): a check that
    /// runs on every claimed row cannot afford dynamic SQL.
    static let runnerRegistered = PostgreSQLFunction(name: "outlive_tasks_runner_registered", body: """

        BEGIN
            PERFORM 1 FROM outlive_runs WHERE run_id = NEW.runner FOR KEY SHARE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'a claim in table "outlive_tasks" names run %, which is not in table "outlive_runs"', NEW.runner
                    USING ERRCODE = 'foreign_key_violation';
            END IF;
            RETURN NULL;
        END

        """, triggers: [
        .init(name: "outlive_tasks_runner_registered", table: "outlive_tasks", definition: """
            AFTER UPDATE OF runner ON outlive_tasks DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
                WHEN (NEW.runner IS NOT NULL AND NEW.runner IS DISTINCT FROM OLD.runner)
            """, constraint: true),
    ])

    /// A run's row goes only once no task names it as its runner (step 15),
    /// checked at commit: a run's removal deletes its row before the
    /// end-of-run hooks return its claims, in the same transaction. The
    /// tasks are named with the run's schema: an operator may remove a run
    /// from psql with another `search_path`, and runs go seldom.
    static let runnerReleased = PostgreSQLFunction(name: "outlive_runs_tasks_released", body: """

        DECLARE
            held bigint;
        BEGIN
            IF TG_OP = 'UPDATE' AND NEW.run_id = OLD.run_id THEN
                RETURN NULL;
            END IF;
            EXECUTE format('SELECT count(*) FROM (SELECT 1 FROM %I.outlive_tasks WHERE runner = $1 LIMIT 1 FOR KEY SHARE) claimed', TG_TABLE_SCHEMA)
                INTO held USING OLD.run_id;
            IF held > 0 THEN
                RAISE EXCEPTION 'run % of table "outlive_runs" still runs tasks of table "outlive_tasks"', OLD.run_id
                    USING ERRCODE = 'foreign_key_violation';
            END IF;
            RETURN NULL;
        END

        """, triggers: [
        .init(name: "outlive_runs_tasks_released", table: "outlive_runs", definition: """
            AFTER DELETE OR UPDATE OF run_id ON outlive_runs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
            """, constraint: true),
    ])

    /// SQLite's count triggers of step 6 in PL/pgSQL: a task deleted, or
    /// moved between pending (ready or waiting), running and dead or between
    /// queues, updates its queue's counts in the same transaction, whichever
    /// code changed it.
    static let queueCounts = PostgreSQLFunction(name: "outlive_tasks_queue_count", body: """

        BEGIN
            IF TG_OP = 'UPDATE' AND OLD.queue = NEW.queue THEN
                UPDATE outlive_task_queues SET pending = coalesce(pending, 0) - (OLD.state IN (0, 3))::int + (NEW.state IN (0, 3))::int,
                    running = coalesce(running, 0) - (OLD.state = 1)::int + (NEW.state = 1)::int,
                    dead = coalesce(dead, 0) - (OLD.state = 2)::int + (NEW.state = 2)::int WHERE name = NEW.queue;
                RETURN NULL;
            END IF;
            UPDATE outlive_task_queues SET pending = coalesce(pending, 0) - (OLD.state IN (0, 3))::int,
                running = coalesce(running, 0) - (OLD.state = 1)::int, dead = coalesce(dead, 0) - (OLD.state = 2)::int
                WHERE name = OLD.queue;
            IF TG_OP = 'UPDATE' THEN
                UPDATE outlive_task_queues SET pending = coalesce(pending, 0) + (NEW.state IN (0, 3))::int,
                    running = coalesce(running, 0) + (NEW.state = 1)::int, dead = coalesce(dead, 0) + (NEW.state = 2)::int
                    WHERE name = NEW.queue;
            END IF;
            RETURN NULL;
        END

        """, triggers: [
        .init(name: "outlive_tasks_queue_count_delete", table: "outlive_tasks", definition: "AFTER DELETE ON outlive_tasks FOR EACH ROW"),
        .init(name: "outlive_tasks_queue_count_update", table: "outlive_tasks", definition: """
            AFTER UPDATE OF state, queue ON outlive_tasks FOR EACH ROW
                WHEN (OLD.queue <> NEW.queue OR (OLD.state = 1) <> (NEW.state = 1) OR (OLD.state = 2) <> (NEW.state = 2)
                      OR (OLD.state IN (0, 3)) <> (NEW.state IN (0, 3)))
            """),
    ])

    /// PostgreSQL's counts since step 7: a task deleted, ended dead, or moved
    /// between queues or back from dead updates `pending` (here: not ended,
    /// running included) and `dead`; a claim or a return updates nothing.
    static let queueCountsUnended = PostgreSQLFunction(name: "outlive_tasks_unended_count", body: """

        BEGIN
            IF TG_OP = 'UPDATE' AND OLD.queue = NEW.queue THEN
                UPDATE outlive_task_queues SET pending = coalesce(pending, 0) - (OLD.state IN (0, 1, 3))::int + (NEW.state IN (0, 1, 3))::int,
                    dead = coalesce(dead, 0) - (OLD.state = 2)::int + (NEW.state = 2)::int WHERE name = NEW.queue;
                RETURN NULL;
            END IF;
            UPDATE outlive_task_queues SET pending = coalesce(pending, 0) - (OLD.state IN (0, 1, 3))::int,
                dead = coalesce(dead, 0) - (OLD.state = 2)::int WHERE name = OLD.queue;
            IF TG_OP = 'UPDATE' THEN
                UPDATE outlive_task_queues SET pending = coalesce(pending, 0) + (NEW.state IN (0, 1, 3))::int,
                    dead = coalesce(dead, 0) + (NEW.state = 2)::int WHERE name = NEW.queue;
            END IF;
            RETURN NULL;
        END

        """, triggers: [
        .init(name: "outlive_tasks_unended_count_delete", table: "outlive_tasks", definition: "AFTER DELETE ON outlive_tasks FOR EACH ROW"),
        .init(name: "outlive_tasks_unended_count_update", table: "outlive_tasks", definition: """
            AFTER UPDATE OF state, queue ON outlive_tasks FOR EACH ROW
                WHEN (OLD.queue <> NEW.queue OR (OLD.state IN (0, 1, 3)) <> (NEW.state IN (0, 1, 3)) OR (OLD.state = 2) <> (NEW.state = 2))
            """),
    ])

    /// `queueCountsUnended` for the tasks below the counted mark (step 12):
    /// a task above it is counted from its row when counts are read, in
    /// whichever state and queue it is then.
    static let queueCountsCounted = PostgreSQLFunction(name: "outlive_tasks_counted_count", body: """

        BEGIN
            IF OLD.seq > (SELECT seq FROM outlive_task_counted WHERE slot = 0) THEN
                RETURN NULL;
            END IF;
            IF TG_OP = 'UPDATE' AND OLD.queue = NEW.queue THEN
                UPDATE outlive_task_queues SET pending = coalesce(pending, 0) - (OLD.state IN (0, 1, 3))::int + (NEW.state IN (0, 1, 3))::int,
                    dead = coalesce(dead, 0) - (OLD.state = 2)::int + (NEW.state = 2)::int WHERE name = NEW.queue;
                RETURN NULL;
            END IF;
            UPDATE outlive_task_queues SET pending = coalesce(pending, 0) - (OLD.state IN (0, 1, 3))::int,
                dead = coalesce(dead, 0) - (OLD.state = 2)::int WHERE name = OLD.queue;
            IF TG_OP = 'UPDATE' THEN
                UPDATE outlive_task_queues SET pending = coalesce(pending, 0) + (NEW.state IN (0, 1, 3))::int,
                    dead = coalesce(dead, 0) + (NEW.state = 2)::int WHERE name = NEW.queue;
            END IF;
            RETURN NULL;
        END

        """, triggers: [
        .init(name: "outlive_tasks_counted_count_delete", table: "outlive_tasks", definition: "AFTER DELETE ON outlive_tasks FOR EACH ROW"),
        .init(name: "outlive_tasks_counted_count_update", table: "outlive_tasks", definition: """
            AFTER UPDATE OF state, queue ON outlive_tasks FOR EACH ROW
                WHEN (OLD.queue <> NEW.queue OR (OLD.state IN (0, 1, 3)) <> (NEW.state IN (0, 1, 3)) OR (OLD.state = 2) <> (NEW.state = 2))
            """),
    ])

    /// A process of a library before step 12 that still runs beside this
    /// one (a rolling upgrade of a service's hosts) sends, with each add, a
    /// statement of its own that raises its queue's `pending` by the tasks
    /// added: those tasks lie above the counted mark, so a fold would count
    /// them a second time, and for good. Such a raise is undone as it is
    /// made: it is the only statement that raises `pending` from the client
    /// (depth 0) but the fold, which says so first (`foldingSetting`); the
    /// count triggers' updates run at depth 1. A process of the older
    /// library reads counts without the tasks above the mark until it is
    /// upgraded; nothing it writes is miscounted.
    static let olderAddsUncounted = PostgreSQLFunction(name: "outlive_task_queues_older_adds", body: """

        BEGIN
            NEW.pending := OLD.pending;
            RETURN NEW;
        END

        """, triggers: [
        .init(name: "outlive_task_queues_older_adds", table: "outlive_task_queues", definition: """
            BEFORE UPDATE OF pending ON outlive_task_queues FOR EACH ROW
                WHEN (pg_trigger_depth() = 0 AND coalesce(NEW.pending, 0) > coalesce(OLD.pending, 0) \
            AND current_setting('\(foldingSetting)', true) IS DISTINCT FROM 'on')
            """),
    ])

    /// The transaction's setting with which the fold tells
    /// `olderAddsUncounted` that its raise of `pending` is meant.
    static let foldingSetting = "outlive.folding"

    /// What ends a read of a task's state that a write of the same
    /// transaction then relies on (cancel, retry, delete). On PostgreSQL a
    /// parallel queue's claims take no store lock (TaskRun): a task read as
    /// ready may be claimed by the time it is written. Locked as it is read,
    /// the row is read as committed after any claim under way (which waits
    /// for nothing this transaction holds), and no claim takes it after.
    static func lockingRead(_ engine: StoreEngine) -> String {
        engine == .postgresql ? " FOR UPDATE" : ""
    }

    /// Counts the tasks `TaskQueue.insert` stored in this transaction. They
    /// are above the counted mark (SQLite's step 9, PostgreSQL's 12),
    /// counted from their rows when counts are read, until a fold moves them
    /// into the counters.
    /// On SQLite the fold comes once `foldAfter` tasks lie above the mark;
    /// `seqs`: the transaction's, if the caller has them: how many do is
    /// known without a read, and a fold moves their mark.
    /// On PostgreSQL the caller decides (`foldDue`: its own tally of adds,
    /// no read): the fold is a statement sent with the commit.
    static func addPending(seqs: inout TaskSeqs?, foldDue: Bool, in transaction: StoreTransaction) throws {
        if transaction.engine == .sqlite {
            guard let uncounted = try seqs.map(\.uncounted) ?? transaction.integer(
                "SELECT (SELECT max(seq) FROM outlive_tasks) - seq FROM outlive_task_counted WHERE slot = 0") else {
                // No mark (or no task at all): a missing mark would leave every
                // new task out of every count without a word.
                return try verifyCountedMark(in: transaction)
            }
            guard uncounted >= foldAfter else { return }
            try foldCounts(in: transaction)
            seqs?.folded()
            return
        }
        if foldDue {
            try transaction.executeLater("SELECT set_config('\(foldingSetting)', 'on', true)", [])
            try transaction.executeLater(foldPostgreSQL, [])
        }
    }

    /// PostgreSQL's fold in one statement: the tail's counts by queue (its
    /// `pending` counts running tasks too, step 7), then the mark. Claims,
    /// which hold no store lock, move tasks only between ready and running,
    /// both counted as `pending`: a claim under way changes nothing here.
    private static let foldPostgreSQL = """
        WITH tail AS (
            SELECT queue, count(*) FILTER (WHERE state <> 2) AS unended, count(*) FILTER (WHERE state = 2) AS dead
            FROM outlive_tasks WHERE seq > \(countedMark) GROUP BY queue),
        folded AS (
            UPDATE outlive_task_queues q SET pending = coalesce(q.pending, 0) + tail.unended, dead = coalesce(q.dead, 0) + tail.dead
            FROM tail WHERE q.name = tail.queue)
        UPDATE outlive_task_counted SET seq = (SELECT max(seq) FROM outlive_tasks)
        WHERE slot = 0 AND (SELECT max(seq) FROM outlive_tasks) > seq
        """

    /// How many tasks at most lie above the counted mark after an add (but
    /// those of one batch): what a read of the counts adds up from rows.
    static let foldAfter: Int64 = 64

    /// The mark above which tasks are not in the queues' counters.
    static let countedMark = "(SELECT seq FROM outlive_task_counted WHERE slot = 0)"

    /// The counted mark as Outlive writes it: one row holding an integer from
    /// 0 up, with room above it for the seqs to come. The store is untrusted:
    /// a mark damaged there (missing, text, near the largest integer) made an
    /// add fail as a datatype mismatch or a seq conflict, or counted nothing
    /// new; it is refused as corrupt instead. Checked where an add fails or
    /// finds no mark, so that a sound store pays nothing for it.
    static func verifyCountedMark(in transaction: StoreTransaction) throws {
        var mark: Int64?
        try transaction.query("SELECT seq FROM outlive_task_counted WHERE slot = 0") { mark = $0.integer(0) }
        guard let mark else {
            throw OutliveError.corrupt("the store is damaged: outlive_task_counted holds no counted mark")
        }
        guard mark >= 0, mark < Int64.max / 2 else {
            throw OutliveError.corrupt("the store is damaged: the tasks' counted mark \(mark) is out of range")
        }
    }

    /// The tasks above the counted mark that `condition` selects, as a term
    /// to add to a count read from the counters (both engines: SQLite's
    /// step 9, PostgreSQL's 12).
    static func uncounted(_ condition: String) -> String {
        " + (SELECT count(*) FROM outlive_tasks WHERE seq > \(countedMark) AND \(condition))"
    }

    /// Moves the tasks above the counted mark into their queues' counters,
    /// each by its state now, and the mark to the newest task.
    static func foldCounts(in transaction: StoreTransaction) throws {
        try indexTail(in: transaction)
        try transaction.execute(foldSQL)
        try transaction.execute("""
            UPDATE outlive_task_counted SET seq = (SELECT max(seq) FROM outlive_tasks)
            WHERE slot = 0 AND (SELECT max(seq) FROM outlive_tasks) > seq
            """)
    }

    /// Puts the ready tasks an add left out of `outlive_tasks_ready` (step
    /// 11: all above the counted mark) into it (SQLite): before the mark
    /// moves, and before a run looks for its next tasks through the index.
    /// With none left out it is one seek past the mark.
    static func indexTail(in transaction: StoreTransaction) throws {
        try transaction.execute(indexTailSQL)
    }

    private static let indexTailSQL = """
        UPDATE outlive_tasks SET unindexed = NULL WHERE seq > \(countedMark) AND unindexed IS NOT NULL
        """

    /// Whether an add leaves a ready task of seq `seq` out of the ready
    /// index (step 11): only a task that the fold at the end of its own
    /// transaction will not reach (a batch of 100,000 indexes the rest as it
    /// inserts them, rather than writing each row twice).
    static func leavesUnindexed(seq: Int64, mark: Int64) -> Bool {
        seq - mark < foldAfter
    }

    /// A queue's two counters from one walk over the tasks above the mark
    /// (a count per state walked them once for each state: a fold, every `foldAfter`
    /// adds, cost some 4,000 instructions an add). `pending` counts the
    /// tasks not yet ended, running ones too (step 13), tested as
    /// equalities: an IN list of three values is a temporary b-tree (a fold
    /// of 55 tasks: 205k instructions with it, 172k without). A constant, so
    /// that its statement is found in the cache without building its text.
    private static let foldSQL = """
        UPDATE outlive_task_queues SET (pending, dead) = (
            SELECT ifnull(outlive_task_queues.pending, 0) + ifnull(sum(t.state = 0 OR t.state = 1 OR t.state = 3), 0),
                   ifnull(outlive_task_queues.dead, 0) + ifnull(sum(t.state = 2), 0)
            FROM outlive_tasks t WHERE t.seq > \(countedMark) AND t.queue = outlive_task_queues.name)
        """

    /// The running tasks of each queue on SQLite, counted from their rows
    /// (step 13) in one walk: `(queue, running)` for the claimed rows, which
    /// `outlive_tasks_running` holds, no more than the runs' limits.
    static let runningByQueue = """
        SELECT queue, count(*) AS running FROM outlive_tasks INDEXED BY outlive_tasks_running
        WHERE runner IS NOT NULL AND state = \(State.running.rawValue) GROUP BY queue
        """

    enum QueueKind: Int64 {
        case ordered = 1, parallel = 2
    }

    static let topic = "tasks"

    /// The rows a runner may start: every column it reads has the type Outlive
    /// writes. The database is untrusted input: a row damaged otherwise (a
    /// handler name stored as a blob sorts after every text, so the walk over
    /// the names would find it again for ever) is skipped by the runner and
    /// stays pending, visible to `outlive tasks` as a damaged store.
    /// PostgreSQL's columns are typed by the schema: only the values are checked.
    /// `idCharacters` false: the caller checks that the id holds only `0-9a-f-`
    /// (`isRunnableID`) as it reads the row, and passes over a row whose id
    /// does not — SQLite's GLOB cost some 10,000 instructions a row, a
    /// fifth of a runner's read of its next tasks.
    static func runnable(_ engine: StoreEngine, idCharacters: Bool = true) -> String {
        switch engine {
        case .sqlite: """
            typeof(handler_name) = 'text' AND typeof(id) = 'text' AND length(CAST(id AS BLOB)) = 36 \
            \(idCharacters ? "AND id NOT GLOB '*[^0-9a-f-]*' " : "")\
            AND typeof(handler) = 'blob' AND typeof(group_members) IN ('blob', 'null') \
            AND typeof(age_from) IN ('real', 'integer') AND typeof(attempts) = 'integer' AND attempts >= 0
            """
        case .postgresql: "octet_length(id) = 36 AND id !~ '[^0-9a-f-]' AND attempts >= 0"
        }
    }

    /// An id as `runnable` admits it: 36 bytes of `0-9a-f-` (nil: not one).
    static func runnableID(_ row: SQLRow, _ column: Int32) -> String? {
        guard let id = row.textIfValid(column), id.utf8.count == Identifier.textLength,
              id.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) || $0 == 45 }) else { return nil }
        return id
    }

    enum State: Int64 {
        case ready = 0, running = 1, dead = 2, waiting = 3
    }

    enum Outcome: Int64 {
        case success = 1, failure = 2
    }

    /// Group member ids stored as one blob: UTF-8 ids separated by NUL bytes.
    static func encode(members: [String]) -> [UInt8]? {
        guard !members.isEmpty else { return nil }
        var bytes: [UInt8] = []
        for (index, member) in members.enumerated() {
            if index > 0 { bytes.append(0) }
            bytes.append(contentsOf: member.utf8)
        }
        return bytes
    }

    static func decode(members bytes: [UInt8]?) -> [String] {
        guard let bytes, !bytes.isEmpty else { return [] }
        return bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    }

}
