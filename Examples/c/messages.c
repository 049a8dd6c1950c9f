/* The message queue: a durable message (here a sync issue with choices) is
 * presented once by the best presenter of any process, answered, and its
 * durable response handler runs where it resolves; then it is removed.
 *
 *   cc -std=c99 -Wall -Wextra -Werror -Iinclude -o messages Examples/c/messages.c \
 *      -Lbuild -loutlive -Wl,-rpath,build -rdynamic
 *   ./messages /tmp/messages-example
 */
#include <outlive.h>
#include <stdio.h>
#include <string.h>

/* The message's durable response handler: stored with the message, called in
 * a process that declares it once the message is answered, with message_id,
 * choice and scope (absent without a scope). */
OUTLIVE_HANDLER(on_conflict_answered, OUTLIVE_ID(choice), OUTLIVE_OPT_ID(scope), OUTLIVE_ID(path)) {
    printf("response handler: %s -> %s (scope %s)\n", outlive_object_string(path), outlive_object_string(choice),
           scope ? outlive_object_string(scope) : "none");
}

/* A presenter: priority() says how much it wants a message (0 declines);
 * present() shows it and finishes the presentation token exactly once — now,
 * or later from any thread (when the user clicks). */
static int32_t dialog_priority(const outlive_message *message, void *context) {
    (void)context;
    return strcmp(outlive_message_category(message), "sync-issue") == 0 ? OUTLIVE_PRIORITY_HIGH
                                                                        : OUTLIVE_PRIORITY_WONT_PRESENT;
}

static void dialog_present(const outlive_message *message, outlive_presentation *presentation, void *context) {
    (void)context;
    printf("presenting \"%s\": %s\n", outlive_message_title(message), outlive_message_text(message));
    for (size_t i = 0; i < outlive_message_choice_count(message); i++) {
        const char *id, *label;
        outlive_choice_kind kind;
        outlive_message_choice_at(message, i, &id, &label, &kind);
        printf("  [%s] %s\n", id, label);
    }
    /* The user picks "keep-both"; we want to hear when the message goes. */
    outlive_presentation_finish(presentation, OUTLIVE_PRESENTATION_PRESENTED, true, "keep-both");
}

static void dialog_end(const outlive_message *message, void *context) {
    int *ended = context;
    *ended = 1;
    printf("end notification: \"%s\" is gone, close the dialog\n", outlive_message_title(message));
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s STORE_DIR\n", argv[0]); return 2; }
    outlive_store *store;
    if (outlive_store_open(argv[1], "messages-example", NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open: %s\n", outlive_last_error());
        return 1;
    }

    /* A draft: category, title, text, scope, choices, payload, response handler. */
    outlive_message_draft *draft = NULL;
    outlive_message_draft_new("sync-issue", "Conflict in notes.txt", &draft);
    outlive_message_draft_set_text(draft, "notes.txt changed here and on the server.");
    outlive_message_draft_set_scope(draft, "account-1");
    outlive_message_draft_add_choice(draft, "keep-both", "Keep both", OUTLIVE_CHOICE_DEFAULT);
    outlive_message_draft_add_choice(draft, "use-server", "Use the server's", OUTLIVE_CHOICE_DESTRUCTIVE);
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_string(bound, "path", "notes.txt");
    outlive_handler *answered = NULL;
    outlive_handler_new("on_conflict_answered", NULL, bound, &answered);
    outlive_args_free(bound);
    outlive_message_draft_set_response_handler(draft, answered);
    outlive_handler_free(answered);

    char id[OUTLIVE_ID_SIZE];
    if (outlive_message_post(store, draft, id) != OUTLIVE_OK) {
        fprintf(stderr, "post: %s\n", outlive_last_error());
        return 1;
    }
    outlive_message_draft_free(draft);
    size_t count;
    outlive_messages_count(store, NULL, &count);
    printf("posted %s; messages stored: %zu\n", id, count);

    /* The presenter can be added before or after the post: waiting messages
     * are offered to it. Callbacks run inside outlive_loop_dispatch(). */
    int ended = 0;
    outlive_presenter dialog = {OUTLIVE_PRESENTER_VERSION, dialog_priority, dialog_present, dialog_end};
    outlive_presenter_add(store, "dialog", &dialog, &ended, NULL);
    count = 1;
    for (int round = 0; round < 100 && (!ended || count > 0); round++) {
        outlive_loop_dispatch(outlive_store_loop(store), 100);
        outlive_messages_count(store, NULL, &count);
    }
    printf("messages stored: %zu\n", count);

    /* Answering a message that is gone is a status, with a message saying why. */
    outlive_status status = outlive_message_respond(store, id, "keep-both");
    printf("respond again -> %s\n", outlive_status_name(status));
    outlive_store_close(store);
    return 0;
}
