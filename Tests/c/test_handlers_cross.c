/* Handlers made and serialized in this process, deserialized and called in
 * another executable (build/tests/handler_caller) that loaded the handler
 * library build/tests/libhandlers_fixture.so. This process never loads the
 * library: the serialized form names handlers, it carries no addresses. */
#include "harness.h"
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

static char output[65536];

/* Writes the handler's serialization into DIR/name; the path in static storage. */
static const char *save(const char *dir, const char *name, const outlive_handler *handler) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    void *bytes = NULL;
    size_t size = 0;
    if (outlive_handler_serialize(handler, &bytes, &size) != OUTLIVE_OK) return NULL;
    FILE *file = fopen(path, "wb");
    if (!file) return NULL;
    fwrite(bytes, 1, size, file);
    fclose(file);
    outlive_free(bytes);
    return path;
}

/* Runs handler_caller on file with the actions (NULL-terminated); its stdout
 * into `output`. Returns the exit status (-1 on failure to run). */
static int run_caller_with(const char *library, const char *file, const char *const *actions) {
    char program[4096], lib[4096];
    snprintf(program, sizeof program, "%s/handler_caller", harness_bin_dir());
    snprintf(lib, sizeof lib, "%s/libhandlers_fixture.so", harness_bin_dir());
    const char *argv[64];
    int argc = 0;
    argv[argc++] = program;
    argv[argc++] = library ? library : lib;
    argv[argc++] = file;
    for (int i = 0; actions[i] && argc < 63; i++) argv[argc++] = actions[i];
    argv[argc] = NULL;
    int fds[2];
    if (pipe(fds) != 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execv(program, (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    size_t used = 0;
    for (;;) {
        ssize_t n = read(fds[0], output + used, sizeof output - 1 - used);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        used += (size_t)n;
    }
    output[used] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_caller(const char *file, const char *const *actions) {
    return run_caller_with(NULL, file, actions);
}

#define EXPECT_OUTPUT(text) CHECK_MSG(strstr(output, (text)) != NULL, "expected \"%.200s\" in:\n%.600s", (text), output)
#define EXPECT_NO_OUTPUT(text) CHECK_MSG(strstr(output, (text)) == NULL, "did not expect \"%.200s\" in:\n%.600s", (text), output)

static outlive_args *all_types_bound(void) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_string(args, "text", "h\xc3\xa9llo");
    outlive_args_set_id(args, "account", "fixture.account", "dana@example", 12);
    outlive_args_set_bool(args, "flag", true);
    outlive_args_set_int(args, "small", INT32_MIN);
    outlive_args_set_double(args, "real", 1e300);
    outlive_args_set_integer(args, "big", INT64_MIN);
    outlive_args_set_uinteger(args, "huge", UINT64_MAX);
    return args;
}

static void test_all_seven_types_with_extremes_arrive_in_another_process(void) {
    const char *dir = harness_temp_dir();
    outlive_args *bound = all_types_bound();
    outlive_handler *handler = NULL;
    outlive_handler_new("fixture_all_types", NULL, bound, &handler);
    CHECK(handler);
    const char *file = save(dir, "h", handler);
    CHECK(file);
    const char *actions[] = { "call", "call real=D:nan maybe=S:present next=H:fixture_ping small=i:2147483647", NULL };
    CHECK(run_caller(file, actions) == 0);
    EXPECT_OUTPUT("deserialize -> OUTLIVE_OK");
    EXPECT_OUTPUT("fixture_all_types: text=\"h\xc3\xa9llo\" maybe=NULL account=fixture.account\"dana@example\" flag=1 "
                  "small=-2147483648 real=1.0000000000000001e+300 big=-9223372036854775808 huge=18446744073709551615 next=NULL\n");
    EXPECT_OUTPUT("fixture_all_types: text=\"h\xc3\xa9llo\" maybe=\"present\" account=fixture.account\"dana@example\" flag=1 "
                  "small=2147483647 real=nan big=-9223372036854775808 huge=18446744073709551615 next=fixture_ping\n");
    CHECK(strstr(output, "call -> OUTLIVE_OK") != NULL);
    outlive_handler_free(handler);
    outlive_args_free(bound);
    harness_remove_tree(dir);
}

static void test_binary_id_and_bound_nan_and_nested_handler_survive_serialization(void) {
    const char *dir = harness_temp_dir();
    outlive_args *bound = all_types_bound();
    const unsigned char binary[] = { 0x00, 0xff, 0x61 };
    CHECK_OK(outlive_args_set_id(bound, "text", NULL, binary, sizeof binary));
    CHECK_OK(outlive_args_set_double(bound, "real", NAN));
    CHECK_OK(outlive_args_set_double(bound, "real", -0.0));
    outlive_handler *next = NULL;
    outlive_handler_new("fixture_completion", NULL, NULL, &next);
    CHECK_OK(outlive_args_set_handler(bound, "next", next));
    outlive_handler *handler = NULL;
    outlive_handler_new("fixture_all_types", NULL, bound, &handler);
    const char *file = save(dir, "h", handler);
    const char *actions[] = { "call", NULL };
    CHECK(run_caller(file, actions) == 0);
    EXPECT_OUTPUT("fixture_all_types: text=<00ff61> maybe=NULL");
    EXPECT_OUTPUT("real=-0 big=");
    EXPECT_OUTPUT("next=fixture_completion\n");
    outlive_handler_free(next);
    outlive_handler_free(handler);
    outlive_args_free(bound);
    harness_remove_tree(dir);
}

static void test_call_time_arguments_override_bound_ones(void) {
    const char *dir = harness_temp_dir();
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_integer(bound, "result", 1);
    outlive_args_set_string(bound, "label", "bound");
    outlive_handler *handler = NULL;
    outlive_handler_new("fixture_completion", NULL, bound, &handler);
    const char *file = save(dir, "h", handler);
    const char *actions[] = { "call", "call result=I:99", "call label=S:call-time extra=B:1", "call", NULL };
    CHECK(run_caller(file, actions) == 0);
    EXPECT_OUTPUT("fixture_completion: result=1 label=\"bound\"\ncall -> OUTLIVE_OK\nfixture_completion: result=99 label=\"bound\"\n"
                  "call -> OUTLIVE_OK\nfixture_completion: result=1 label=\"call-time\"\ncall -> OUTLIVE_OK\n"
                  "fixture_completion: result=1 label=\"bound\"\n");
    outlive_handler_free(handler);
    outlive_args_free(bound);
    harness_remove_tree(dir);
}

static void test_twelve_parameters_and_zero_parameters(void) {
    const char *dir = harness_temp_dir();
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_int(bound, "a1", -1);
    outlive_args_set_integer(bound, "a2", -2);
    outlive_args_set_double(bound, "a3", 3.5);
    outlive_args_set_bool(bound, "a4", true);
    outlive_args_set_uinteger(bound, "a5", 5);
    outlive_args_set_string(bound, "a6", "six");
    outlive_args_set_int(bound, "a7", 7);
    outlive_args_set_integer(bound, "a8", 8);
    outlive_args_set_double(bound, "a9", 9.25);
    outlive_args_set_bool(bound, "a10", false);
    outlive_handler *handler = NULL;
    outlive_handler_new("fixture_twelve", NULL, bound, &handler);
    const char *file = save(dir, "h", handler);
    const char *actions[] = { "call a11=U:11", "call a11=U:11 a12=S:twelve", NULL };
    CHECK(run_caller(file, actions) == 0);
    EXPECT_OUTPUT("fixture_twelve: -1 -2 3.5 1 5 six 7 8 9.25 0 11 NULL\n");
    EXPECT_OUTPUT("fixture_twelve: -1 -2 3.5 1 5 six 7 8 9.25 0 11 twelve\n");
    outlive_handler *ping = NULL;
    outlive_handler_new("fixture_ping", NULL, NULL, &ping);
    file = save(dir, "ping", ping);
    const char *ping_actions[] = { "call", "call ignored=i:1", NULL };
    CHECK(run_caller(file, ping_actions) == 0);
    EXPECT_OUTPUT("fixture_ping\ncall -> OUTLIVE_OK\nfixture_ping\ncall -> OUTLIVE_OK\n");
    outlive_handler_free(ping);
    outlive_handler_free(handler);
    outlive_args_free(bound);
    harness_remove_tree(dir);
}

static void test_nested_handler_is_called_and_copied_by_the_callee(void) {
    const char *dir = harness_temp_dir();
    outlive_args *completion_bound = NULL;
    outlive_args_new(&completion_bound);
    outlive_args_set_string(completion_bound, "label", "inner");
    outlive_handler *completion = NULL;
    outlive_handler_new("fixture_completion", NULL, completion_bound, &completion);
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    CHECK_OK(outlive_args_set_handler(bound, "completion", completion));
    CHECK_OK(outlive_args_set_integer(bound, "n", 21));
    outlive_handler *handler = NULL;
    outlive_handler_new("fixture_run_nested", NULL, bound, &handler);
    const char *file = save(dir, "h", handler);
    const char *actions[] = { "call", NULL };
    CHECK(run_caller(file, actions) == 0);
    EXPECT_OUTPUT("fixture_completion: result=42 label=\"inner\"\n"
                  "fixture_run_nested: n=21 completion=fixture_completion status=OUTLIVE_OK\n"
                  "fixture_completion: result=-1 label=\"inner\"\n"
                  "fixture_run_nested: copy status=OUTLIVE_OK\n");
    outlive_handler_free(handler);
    outlive_handler_free(completion);
    outlive_args_free(bound);
    outlive_args_free(completion_bound);
    harness_remove_tree(dir);
}

static void test_instance_handler_gets_self_from_its_resolver_and_null_calls_nothing(void) {
    const char *dir = harness_temp_dir();
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_string(bound, "key", "alpha");
    outlive_args_set_int(bound, "delta", 3);
    outlive_handler *handler = NULL;
    outlive_handler_new("fixture_on_key", NULL, bound, &handler);
    const char *file = save(dir, "h", handler);
    const char *actions[] = { "call", "call", "call key=S:beta delta=i:10", "call key=S:gamma", NULL };
    CHECK(run_caller(file, actions) == 0);
    EXPECT_OUTPUT("fixture_on_key: session=alpha key=alpha calls=3\ncall -> OUTLIVE_OK\n"
                  "fixture_on_key: session=alpha key=alpha calls=6\ncall -> OUTLIVE_OK\n"
                  "fixture_on_key: session=beta key=beta calls=10\ncall -> OUTLIVE_OK\n"
                  "call -> OUTLIVE_E_NOT_FOUND\n");
    EXPECT_NO_OUTPUT("key=gamma");
    outlive_handler *ping = NULL;
    outlive_handler_new("fixture_instance_ping", NULL, bound, &ping);
    file = save(dir, "ping", ping);
    const char *ping_actions[] = { "call", "call key=S:nobody", NULL };
    CHECK(run_caller(file, ping_actions) == 0);
    EXPECT_OUTPUT("fixture_instance_ping: session=alpha\ncall -> OUTLIVE_OK\ncall -> OUTLIVE_E_NOT_FOUND\n");
    outlive_handler_free(ping);
    outlive_handler_free(handler);
    outlive_args_free(bound);
    harness_remove_tree(dir);
}

static void test_invalidation_runs_once_and_its_state_survives_serialization(void) {
    const char *dir = harness_temp_dir();
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_string(bound, "text", "bound text");
    outlive_handler *handler = NULL;
    outlive_handler_new("fixture_ping", "fixture_cancelled", bound, &handler);
    const char *file = save(dir, "h", handler);
    char saved[4096], save_action[4200];
    snprintf(saved, sizeof saved, "%s/after", dir);
    snprintf(save_action, sizeof save_action, "save:%s", saved);
    /* The invalidation handler needs `reason`: without it nothing runs and the
     * handler stays valid; with it the handler runs once and is invalidated. */
    const char *actions[] = { "invalidate", "call", "invalidate reason=S:user", "call", "invalidate reason=S:again", save_action, NULL };
    CHECK(run_caller(file, actions) == 0);
    EXPECT_OUTPUT("invalidate -> OUTLIVE_E_MISSING_ARGUMENT\n");
    EXPECT_OUTPUT("fixture_ping\ncall -> OUTLIVE_OK\n"
                  "fixture_cancelled: reason=user text=bound text\ninvalidate -> OUTLIVE_OK\n"
                  "call -> OUTLIVE_E_INVALIDATED\n");
    EXPECT_OUTPUT("invalidate -> OUTLIVE_E_INVALIDATED\n");
    EXPECT_NO_OUTPUT("reason=again");
    EXPECT_OUTPUT("save -> OUTLIVE_OK\n");
    /* A third process reads what the second saved: still invalidated. */
    const char *later[] = { "call", "invalidate reason=S:x", "describe", NULL };
    CHECK(run_caller(saved, later) == 0);
    EXPECT_OUTPUT("call -> OUTLIVE_E_INVALIDATED\nerror: handler fixture_ping was invalidated\n"
                  "invalidate -> OUTLIVE_E_INVALIDATED\n");
    EXPECT_OUTPUT("[invalidated]");
    EXPECT_NO_OUTPUT("fixture_ping\n");
    EXPECT_NO_OUTPUT("fixture_cancelled:");

    /* Invalidated here (no invalidation handler): the other process refuses it. */
    outlive_handler *plain = NULL;
    outlive_handler_new("fixture_ping", NULL, NULL, &plain);
    CHECK_OK(outlive_handler_invalidate(plain, NULL));
    CHECK(outlive_handler_is_invalidated(plain));
    file = save(dir, "plain", plain);
    const char *calls[] = { "call", NULL };
    CHECK(run_caller(file, calls) == 0);
    EXPECT_OUTPUT("call -> OUTLIVE_E_INVALIDATED\n");
    EXPECT_NO_OUTPUT("fixture_ping\n");

    /* An unresolvable invalidation handler: the invalidation fails, the handler stays valid. */
    outlive_handler *orphan = NULL;
    outlive_handler_new("fixture_ping", "fixture_nowhere", NULL, &orphan);
    file = save(dir, "orphan", orphan);
    const char *orphan_actions[] = { "invalidate", "call", NULL };
    CHECK(run_caller(file, orphan_actions) == 0);
    EXPECT_OUTPUT("invalidate -> OUTLIVE_E_UNRESOLVED\n");
    EXPECT_OUTPUT("fixture_ping\ncall -> OUTLIVE_OK\n");
    outlive_handler_free(orphan);
    outlive_handler_free(plain);
    outlive_handler_free(handler);
    outlive_args_free(bound);
    harness_remove_tree(dir);
}

static void test_runtime_registered_and_main_program_handlers_resolve_in_that_process(void) {
    const char *dir = harness_temp_dir();
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_integer(bound, "n", 5);
    outlive_handler *echo = NULL;
    outlive_handler_new("rt.echo", NULL, bound, &echo);
    const char *file = save(dir, "echo", echo);
    const char *actions[] = { "call", "call text=S:hi n=I:-7", NULL };
    CHECK(run_caller(file, actions) == 0);
    EXPECT_OUTPUT("rt.echo: n=5 text=NULL\ncall -> OUTLIVE_OK\nrt.echo: n=-7 text=hi\ncall -> OUTLIVE_OK\n");
    /* Not registered here: this process cannot resolve it. */
    CHECK_STATUS(outlive_handler_call(echo, NULL), OUTLIVE_E_UNRESOLVED);

    outlive_handler *local = NULL;
    outlive_handler_new("caller_local", NULL, NULL, &local);
    file = save(dir, "local", local);
    const char *local_actions[] = { "call value=U:18446744073709551615", NULL };
    CHECK(run_caller_with("-", file, local_actions) == 0);
    EXPECT_OUTPUT("caller_local: value=18446744073709551615\ncall -> OUTLIVE_OK\n");
    outlive_handler_free(local);
    outlive_handler_free(echo);
    outlive_args_free(bound);
    harness_remove_tree(dir);
}

static void test_missing_and_mistyped_arguments_call_nothing_in_the_other_process(void) {
    const char *dir = harness_temp_dir();
    outlive_args *bound = all_types_bound();
    outlive_args_remove(bound, "huge");
    outlive_handler *handler = NULL;
    outlive_handler_new("fixture_all_types", NULL, bound, &handler);
    const char *file = save(dir, "h", handler);
    const char *actions[] = {
        "call",                                        /* huge missing */
        "call huge=I:1",                               /* INTEGER for UINTEGER */
        "call huge=U:1 account=T:other.tag:dana",      /* wrong tag */
        "call huge=U:1 account=S:dana",                /* untagged for ID<fixture.account> */
        "call huge=U:1 next=S:not-a-handler",          /* ID for HANDLER */
        "call huge=U:1 flag=i:1",                      /* INT for BOOL */
        NULL };
    CHECK(run_caller(file, actions) == 0);
    EXPECT_OUTPUT("call -> OUTLIVE_E_MISSING_ARGUMENT\nerror: handler fixture_all_types: mandatory parameter huge (UINTEGER) has no value\n"
                  "call -> OUTLIVE_E_TYPE_MISMATCH\nerror: handler fixture_all_types: parameter huge is declared UINTEGER, the argument is INTEGER\n"
                  "call -> OUTLIVE_E_TYPE_MISMATCH\nerror: handler fixture_all_types: parameter account is declared ID<fixture.account>, the argument is ID<other.tag>\n"
                  "call -> OUTLIVE_E_TYPE_MISMATCH\nerror: handler fixture_all_types: parameter account is declared ID<fixture.account>, the argument is an untagged ID\n"
                  "call -> OUTLIVE_E_TYPE_MISMATCH\n");
    EXPECT_OUTPUT("call -> OUTLIVE_E_TYPE_MISMATCH\nerror: handler fixture_all_types: parameter flag is declared BOOL, the argument is INT\n");
    EXPECT_NO_OUTPUT("\nfixture_all_types:");
    outlive_handler_free(handler);
    outlive_args_free(bound);
    harness_remove_tree(dir);
}

static void test_undeclared_symbols_are_unresolved_and_never_called(void) {
    const char *dir = harness_temp_dir();
    const char *names[] = { "system", "getpid", "fixture_not_a_handler", "fixture_not_a_handler_calls", "main",
                            "outlive_handler_call", "rt_echo", "fixture_find_session" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        outlive_args *bound = NULL;
        outlive_args_new(&bound);
        outlive_args_set_string(bound, "command", "echo SYSTEM-RAN");
        outlive_handler *handler = NULL;
        outlive_handler_new(names[i], NULL, bound, &handler);
        CHECK(handler);
        const char *file = save(dir, "h", handler);
        const char *actions[] = { "call", "invalidate", NULL };
        CHECK(run_caller(file, actions) == 0);
        CHECK_MSG(strstr(output, "call -> OUTLIVE_E_UNRESOLVED\n") != NULL, "%.50s: %.600s", names[i], output);
        EXPECT_NO_OUTPUT("SYSTEM-RAN");
        EXPECT_NO_OUTPUT("CALLED");
        outlive_handler_free(handler);
        outlive_args_free(bound);
    }
    /* The library is not loaded in a process that did not ask for it. */
    outlive_handler *ping = NULL;
    outlive_handler_new("fixture_ping", NULL, NULL, &ping);
    const char *file = save(dir, "ping", ping);
    const char *actions[] = { "call", NULL };
    CHECK(run_caller_with("-", file, actions) == 0);
    EXPECT_OUTPUT("call -> OUTLIVE_E_UNRESOLVED\n");
    outlive_handler_free(ping);
    harness_remove_tree(dir);
}

HARNESS_MAIN(
    T(test_all_seven_types_with_extremes_arrive_in_another_process),
    T(test_binary_id_and_bound_nan_and_nested_handler_survive_serialization),
    T(test_call_time_arguments_override_bound_ones),
    T(test_twelve_parameters_and_zero_parameters),
    T(test_nested_handler_is_called_and_copied_by_the_callee),
    T(test_instance_handler_gets_self_from_its_resolver_and_null_calls_nothing),
    T(test_invalidation_runs_once_and_its_state_survives_serialization),
    T(test_runtime_registered_and_main_program_handlers_resolve_in_that_process),
    T(test_missing_and_mistyped_arguments_call_nothing_in_the_other_process),
    T(test_undeclared_symbols_are_unresolved_and_never_called)
)
