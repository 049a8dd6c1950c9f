/* A second process for the message-queue tests. It opens the store as
 * PROCESS, registers what its options say, reports what happens on stdout (one
 * line per event, unbuffered) and obeys commands read from stdin:
 *
 *   messages_worker DIR PROCESS [options]
 *     --presenter ID:PRIORITY:MODE[:K:R]  (with K: declines titles "m<n>" unless n % K == R)
 *                                   MODE: finish (presented, end wanted, choice
 *                                   "ok"), show (presented, end wanted, no choice),
 *                                   decline (not presented), hold (finish later:
 *                                   command "finish"), thread (finish "ok" from a
 *                                   new thread)
 *     --responder                   a response handler that takes every message
 *     --resolver CHOICE             an auto-resolver answering with CHOICE
 *                                   ("-": resolves without an answer)
 *   stdin: "finish" (finish held presentations as "finish" would),
 *          "remove ID" (remove presenter ID), "reoffer ID", "quit" (or EOF)
 *   stdout: "ready", "present ID MSG", "payload MSG NOTE" (a payload's "note"),
 *           "end ID MSG", "respond MSG CHOICE", "resolve MSG",
 *           "answered MSG CHOICE SCOPE TAG" (the durable response handler
 *           messages_answered ran), "done" (after a command was carried out)
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "outlive.h"

struct presenter {
    char id[64];
    int priority;
    char mode[16];
    int share_of, share; /* when share_of > 0: declines titles "m<n>" with n % share_of != share */
};

static struct presenter presenters[8];
static int presenter_count;
static outlive_presentation *held[1024];
static int held_count;
static char resolver_choice[64];

/* The durable response handler the tests store with messages; it resolves in
 * this program (linked -rdynamic), not in the test process. */
OUTLIVE_HANDLER(messages_answered, OUTLIVE_ID(message_id), OUTLIVE_ID(choice), OUTLIVE_OPT_ID(scope), OUTLIVE_ID(tag)) {
    printf("answered %s %s %s %s\n", outlive_object_string(message_id), outlive_object_string(choice),
           scope ? outlive_object_string(scope) : "-", outlive_object_string(tag));
}

static int32_t priority_of(const outlive_message *message, void *context) {
    struct presenter *presenter = context;
    const char *title = outlive_message_title(message);
    if (presenter->share_of > 0 && title[0] == 'm' && atoi(title + 1) % presenter->share_of != presenter->share) return 0;
    return presenter->priority;
}

static void *finish_later(void *token) {
    outlive_presentation_finish(token, OUTLIVE_PRESENTATION_PRESENTED, true, "ok");
    return NULL;
}

static void present(const outlive_message *message, outlive_presentation *presentation, void *context) {
    struct presenter *presenter = context;
    printf("present %s %s\n", presenter->id, outlive_message_id(message));
    const char *note = NULL;
    const outlive_args *payload = outlive_message_payload(message);
    if (payload && outlive_args_get_string(payload, "note", &note) == OUTLIVE_OK) printf("payload %s %s\n", outlive_message_id(message), note);
    outlive_status status = OUTLIVE_OK;
    if (!strcmp(presenter->mode, "finish")) {
        status = outlive_presentation_finish(presentation, OUTLIVE_PRESENTATION_PRESENTED, true,
                                             outlive_message_choice_count(message) ? "ok" : NULL);
    } else if (!strcmp(presenter->mode, "show")) {
        status = outlive_presentation_finish(presentation, OUTLIVE_PRESENTATION_PRESENTED, true, NULL);
    } else if (!strcmp(presenter->mode, "decline")) {
        status = outlive_presentation_finish(presentation, OUTLIVE_PRESENTATION_NOT_PRESENTED, false, NULL);
    } else if (!strcmp(presenter->mode, "thread")) {
        pthread_t thread;
        pthread_create(&thread, NULL, finish_later, presentation);
        pthread_detach(thread);
    } else if (held_count < 1024) {
        held[held_count++] = presentation;
    }
    if (status != OUTLIVE_OK) printf("error finish %s\n", outlive_last_error());
}

static void end(const outlive_message *message, void *context) {
    printf("end %s %s\n", ((struct presenter *)context)->id, outlive_message_id(message));
}

static bool respond(const outlive_message *message, void *context) {
    (void)context;
    printf("respond %s %s\n", outlive_message_id(message), outlive_message_choice(message));
    return true;
}

static bool resolve(const outlive_message *message, char choice_out[64], void *context) {
    (void)context;
    printf("resolve %s\n", outlive_message_id(message));
    snprintf(choice_out, 64, "%s", strcmp(resolver_choice, "-") ? resolver_choice : "");
    return true;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    outlive_loop *loop = NULL;
    outlive_store *store = NULL;
    if (outlive_loop_new(&loop) != OUTLIVE_OK || outlive_store_open(argv[1], argv[2], loop, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open: %s\n", outlive_last_error());
        return 1;
    }
    for (int i = 3; i < argc; i++) {
        outlive_status status = OUTLIVE_OK;
        if (!strcmp(argv[i], "--presenter") && i + 1 < argc && presenter_count < 8) {
            struct presenter *p = &presenters[presenter_count++];
            if (sscanf(argv[++i], "%63[^:]:%d:%15[^:]:%d:%d", p->id, &p->priority, p->mode, &p->share_of, &p->share) < 3) return 2;
            outlive_presenter callbacks = {OUTLIVE_PRESENTER_VERSION, priority_of, present, end};
            status = outlive_presenter_add(store, p->id, &callbacks, p, NULL);
        } else if (!strcmp(argv[i], "--responder")) {
            status = outlive_response_handler_add(store, "responder", respond, NULL, NULL);
        } else if (!strcmp(argv[i], "--resolver") && i + 1 < argc) {
            snprintf(resolver_choice, sizeof resolver_choice, "%s", argv[++i]);
            status = outlive_auto_resolver_add(store, "resolver", resolve, NULL, NULL);
        } else {
            return 2;
        }
        if (status != OUTLIVE_OK) {
            fprintf(stderr, "%s: %s\n", argv[i], outlive_last_error());
            return 1;
        }
    }
    printf("ready\n");
    char line[256];
    size_t used = 0;
    int running = 1;
    while (running) {
        struct pollfd fds[2] = {{.fd = outlive_loop_fd(loop), .events = POLLIN}, {.fd = 0, .events = POLLIN}};
        if (poll(fds, 2, -1) < 0) continue;
        if (fds[0].revents & POLLIN) outlive_loop_dispatch(loop, 0);
        if (fds[1].revents & (POLLIN | POLLHUP)) {
            ssize_t got = read(0, line + used, sizeof line - 1 - used);
            if (got <= 0) break;
            used += (size_t)got;
            line[used] = 0;
            char *newline;
            while ((newline = strchr(line, '\n'))) {
                *newline = 0;
                if (!strcmp(line, "quit")) {
                    running = 0;
                } else if (!strcmp(line, "finish")) {
                    for (int k = 0; k < held_count; k++) outlive_presentation_finish(held[k], OUTLIVE_PRESENTATION_PRESENTED, true, "ok");
                    held_count = 0;
                } else if (!strncmp(line, "remove ", 7)) {
                    if (outlive_presenter_remove(store, line + 7) != OUTLIVE_OK) printf("error %s\n", outlive_last_error());
                } else if (!strncmp(line, "reoffer ", 8)) {
                    if (outlive_presenter_reoffer(store, line + 8) != OUTLIVE_OK) printf("error %s\n", outlive_last_error());
                }
                printf("done\n");
                size_t rest = used - (size_t)(newline + 1 - line);
                memmove(line, newline + 1, rest + 1);
                used = rest;
            }
        }
    }
    outlive_store_close(store);
    outlive_loop_free(loop);
    return 0;
}
