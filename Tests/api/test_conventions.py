"""The conventions at the top of include/outlive.h hold for every declaration,
checked mechanically so that they keep holding as the API grows. Each rule is
also shown to catch a header that breaks it."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import header_conventions  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(ROOT, "include", "outlive.h")

# A small header that keeps every convention; each bad header below changes one thing.
GOOD = """
typedef enum outlive_status { OUTLIVE_OK = 0, OUTLIVE_E_INVALID_ARGUMENT } outlive_status;
typedef struct outlive_store outlive_store;
typedef struct outlive_widget outlive_widget;
typedef struct outlive_widget_list outlive_widget_list;
#define OUTLIVE_ID_SIZE 37
#define OUTLIVE_WIDGET_OPTIONS_VERSION 1
typedef struct outlive_widget_options {
    uint32_t version;  /* OUTLIVE_WIDGET_OPTIONS_VERSION */
    int32_t  size;
} outlive_widget_options;
#define OUTLIVE_WIDGET_OPTIONS_INIT { OUTLIVE_WIDGET_OPTIONS_VERSION, 1 }
typedef enum outlive_widget_shape { OUTLIVE_WIDGET_ROUND = 1, OUTLIVE_WIDGET_SQUARE } outlive_widget_shape;
typedef void (*outlive_widget_fn)(outlive_widget *widget, void *context);

/* Makes a widget. */
OUTLIVE_API outlive_status outlive_widget_new(outlive_store *store, const outlive_widget_options *options,
                                              outlive_widget **out);
/* Watches widgets. */
OUTLIVE_API outlive_status outlive_widget_watch(outlive_store *store, outlive_widget_fn watcher, void *context,
                                                void (*release)(void *context), uint64_t *out_token);
/* Adds one; out_id is nullable. */
OUTLIVE_API outlive_status outlive_widget_add(outlive_store *store, char out_id[OUTLIVE_ID_SIZE] /* nullable */);
/* Lists widgets. */
OUTLIVE_API outlive_status outlive_widget_list_new(outlive_store *store, const char *after, size_t limit,
                                                   outlive_widget_list **out);
/* Reading a list. */
OUTLIVE_API size_t outlive_widget_list_count(const outlive_widget_list *list);
OUTLIVE_API void   outlive_widget_list_free(outlive_widget_list *list);
"""

BAD = {
    "a function that is not outlive_<noun>_<verb>":
        ("/* Adds one; out_id is nullable. */", "/* Calls. */\nOUTLIVE_API outlive_status outlive_call(outlive_widget *w);\n"
         "/* Adds one; out_id is nullable. */"),
    "a _with_release twin":
        ("/* Lists widgets. */", "/* Watches. */\nOUTLIVE_API outlive_status outlive_widget_watch_with_release("
         "outlive_store *store, outlive_widget_fn watcher, void *context, void (*release)(void *context));\n/* Lists widgets. */"),
    "a registration keeping a context without release":
        ("void *context,\n                                                void (*release)(void *context), uint64_t *out_token",
         "void *context, uint64_t *out_token"),
    "an output not named out":
        ("uint64_t *out_token", "uint64_t *token"),
    "an output before an input":
        ("OUTLIVE_API outlive_status outlive_widget_add(outlive_store *store, char out_id[OUTLIVE_ID_SIZE] /* nullable */);",
         "OUTLIVE_API outlive_status outlive_widget_add(char out_id[OUTLIVE_ID_SIZE], outlive_store *store);"),
    "an id buffer of 37 bytes":
        ("char out_id[OUTLIVE_ID_SIZE] /* nullable */", "char out_id[37]"),
    "a constructor returning a pointer":
        ("OUTLIVE_API outlive_status outlive_widget_new(outlive_store *store, const outlive_widget_options *options,\n"
         "                                              outlive_widget **out);",
         "OUTLIVE_API outlive_widget *outlive_widget_new(outlive_store *store);"),
    "a struct without a version":
        ("    uint32_t version;  /* OUTLIVE_WIDGET_OPTIONS_VERSION */\n", ""),
    "an anonymous enum":
        ("typedef enum outlive_widget_shape { OUTLIVE_WIDGET_ROUND = 1, OUTLIVE_WIDGET_SQUARE } outlive_widget_shape;",
         "typedef enum { OUTLIVE_WIDGET_ROUND = 1, OUTLIVE_WIDGET_SQUARE } outlive_widget_shape;"),
    "an enum value without its type's prefix":
        ("OUTLIVE_WIDGET_SQUARE }", "OUTLIVE_SQUARE }"),
    "a function without a comment":
        ("/* Adds one; out_id is nullable. */\n", ""),
    "a list without _free":
        ("OUTLIVE_API void   outlive_widget_list_free(outlive_widget_list *list);", ""),
    "a list without paging":
        ("const char *after, size_t limit,\n                                                   outlive_widget_list **out",
         "outlive_widget_list **out"),
    "one call per item":
        ("/* Lists widgets. */", "/* The next. */\nOUTLIVE_API outlive_status outlive_widget_next(outlive_store *store, "
         "const char *after, char **out_key);\n/* Lists widgets. */"),
}


def test_the_header_keeps_every_convention():
    with open(HEADER) as f:
        problems = header_conventions.violations(f.read())
    assert not problems, "outlive.h breaks its conventions:\n" + "\n".join(problems)


def test_the_checker_reads_every_declaration_of_the_header():
    with open(HEADER) as f:
        text = f.read()
    declared = {f.name for f in header_conventions.functions(text) if not f.is_callback}
    assert len(declared) == text.count("OUTLIVE_API outlive_") + text.count("OUTLIVE_API const ") \
        + text.count("OUTLIVE_API void ") + text.count("OUTLIVE_API size_t ") + text.count("OUTLIVE_API bool ") \
        + text.count("OUTLIVE_API uint32_t ") + text.count("OUTLIVE_API uint64_t ") + text.count("OUTLIVE_API double ") \
        + text.count("OUTLIVE_API int ") + text.count("OUTLIVE_API int32_t ")
    assert {"outlive_kv_observe", "outlive_task_list_new", "outlive_handler_call"} <= declared


def test_the_good_sample_keeps_every_convention():
    assert header_conventions.violations(GOOD) == []


@pytest.mark.parametrize("rule", sorted(BAD))
def test_a_header_breaking_a_convention_is_caught(rule):
    old, new = BAD[rule]
    assert old in GOOD, f"the sample lacks the text the bad variant of '{rule}' replaces"
    problems = header_conventions.violations(GOOD.replace(old, new, 1))
    assert problems, f"{rule}: not caught"
