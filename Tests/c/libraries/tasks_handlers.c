/* Task handlers for the cross-process task tests, loaded with
 * outlive_handler_library_load by tasks_worker. Each call appends one line
 * "handler label attempt task_id" to the file named by $TASKS_LOG (O_APPEND:
 * lines of several processes never interleave). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "outlive.h"

static void note(const char *handler, const outlive_object *label, int64_t attempt, const outlive_object *task_id) {
    const char *path = getenv("TASKS_LOG");
    if (!path) return;
    char line[512];
    int length = snprintf(line, sizeof line, "%s %s %lld %s\n", handler,
                          label ? outlive_object_string(label) : "-", (long long)attempt,
                          task_id ? outlive_object_string(task_id) : "-");
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    if (write(fd, line, (size_t)length) != length) { /* the test sees the line missing */ }
    close(fd);
}

static void complete(const outlive_handler *completion, bool success, const char *error) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_bool(args, "success", success);
    if (error) outlive_args_set_string(args, "error", error);
    outlive_handler_call(completion, args);
    outlive_args_free(args);
}

/* Succeeds when it returns. */
OUTLIVE_HANDLER(tasks_record, OUTLIVE_ID(label), OUTLIVE_INTEGER(attempt), OUTLIVE_ID(task_id)) {
    note("tasks_record", label, attempt, task_id);
}

/* Completes at once: fails when its label starts with "fail". */
OUTLIVE_HANDLER(tasks_judge, OUTLIVE_ID(label), OUTLIVE_INTEGER(attempt), OUTLIVE_ID(task_id), OUTLIVE_HANDLER_ARG(completion)) {
    note("tasks_judge", label, attempt, task_id);
    const char *text = outlive_object_string(label);
    bool fail = text && strncmp(text, "fail", 4) == 0;
    complete(completion, !fail, fail ? "judged a failure" : NULL);
}

/* On its first attempt it notes the start and never returns (the test kills
 * the process); later attempts succeed. */
OUTLIVE_HANDLER(tasks_stall, OUTLIVE_ID(label), OUTLIVE_INTEGER(attempt), OUTLIVE_ID(task_id)) {
    note("tasks_stall", label, attempt, task_id);
    if (attempt == 1) for (;;) pause();
}

/* Hands its completion to another process: writes it serialized to
 * $TASKS_DEFER_FILE and returns without completing. */
OUTLIVE_HANDLER(tasks_defer, OUTLIVE_ID(label), OUTLIVE_INTEGER(attempt), OUTLIVE_ID(task_id), OUTLIVE_HANDLER_ARG(completion)) {
    note("tasks_defer", label, attempt, task_id);
    void *bytes = NULL;
    size_t size = 0;
    const char *path = getenv("TASKS_DEFER_FILE");
    if (!path || outlive_handler_serialize(completion, &bytes, &size) != OUTLIVE_OK) return;
    char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.tmp", path);
    FILE *file = fopen(temporary, "wb");
    if (file) {
        fwrite(bytes, 1, size, file);
        fclose(file);
        rename(temporary, path);
    }
    outlive_free(bytes);
}
