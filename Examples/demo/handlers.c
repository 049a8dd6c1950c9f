/* The demo's handler library: the durable callbacks that outlive the app.
 * Built as libdemo_handlers.so and loaded by explicit path by every process
 * of the demo (the app, the worker, the presenter). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "outlive.h"

static const char *text(const outlive_object *object) {
    const char *string = object ? outlive_object_string(object) : NULL;
    return string ? string : "?";
}

/* A background task: "uploads" one file, then posts the app's signal with how
 * far the sync got (the last file terminates it), then completes. It runs in
 * whichever process runs the queue — here the worker — long after the app that
 * queued it was killed. */
OUTLIVE_HANDLER(demo_upload, OUTLIVE_ID(store), OUTLIVE_ID(file), OUTLIVE_ID(signal_id), OUTLIVE_INTEGER(number),
                OUTLIVE_INTEGER(total), OUTLIVE_INTEGER(attempt), OUTLIVE_HANDLER_ARG(completion)) {
    printf("  [worker] uploading %s (file %" PRId64 " of %" PRId64 ", attempt %" PRId64 ")\n", text(file), number, total, attempt);
    fflush(stdout);
    outlive_store *handle = NULL;
    outlive_status status = outlive_store_open(text(store), "demo-uploader", NULL, NULL, &handle);
    if (status == OUTLIVE_OK) {
        char result[128];
        snprintf(result, sizeof result, "%" PRId64 " of %" PRId64 " files uploaded, the last one %s", number, total, text(file));
        outlive_args *payload = NULL;
        outlive_args_new(&payload);
        outlive_args_set_string(payload, "result", result);
        status = outlive_signal_post(handle, text(signal_id), payload, number == total);
        outlive_args_free(payload);
        outlive_store_close(handle);
    }
    outlive_args *outcome = NULL;
    outlive_args_new(&outcome);
    outlive_args_set_bool(outcome, "success", status == OUTLIVE_OK);
    if (status != OUTLIVE_OK) outlive_args_set_string(outcome, "error", outlive_last_error());
    outlive_handler_call(completion, outcome);
    outlive_args_free(outcome);
}

/* The app's signal consumer (lifetime "process"): delivered to the next run of
 * the app, since the run that registered it was killed. */
OUTLIVE_HANDLER(demo_on_result, OUTLIVE_ID(signal_id), OUTLIVE_UINTEGER(version), OUTLIVE_BOOL(terminated),
                OUTLIVE_ID(result)) {
    (void)signal_id;
    printf("  [app] signal version %" PRIu64 "%s: %s\n", version, terminated ? " (final)" : "", text(result));
    fflush(stdout);
}

/* The sync-issue message's durable response handler: runs once, in a process
 * that resolves it, when the user's choice is known. */
OUTLIVE_HANDLER(demo_on_answer, OUTLIVE_ID(message_id), OUTLIVE_ID(choice), OUTLIVE_OPT_ID(scope)) {
    (void)message_id;
    printf("  [%s] the conflict in %s is resolved: \"%s\"\n", "response handler", scope ? text(scope) : "?", text(choice));
    fflush(stdout);
}
