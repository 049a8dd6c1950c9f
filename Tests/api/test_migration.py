"""scripts/migrate-0.1-to-0.2.sed rewrites every plain rename of 0.1 into a
name that 0.2's header declares, and touches nothing else."""
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "migrate-0.1-to-0.2.sed")
HEADER = os.path.join(ROOT, "include", "outlive.h")

# Every name of 0.1's header that 0.2 no longer declares, except the two types that
# are gone without a successor (CHANGELOG.md: outlive_task_info, outlive_durable_interaction_visitor).
GONE_IN_0_2 = [
    "outlive_auto_resolver_add_with_release", "outlive_call", "outlive_durable_interactions_list",
    "outlive_handler_new_with_invalidation", "outlive_interactions_add_with_release", "outlive_invalidate",
    "outlive_kv_next_key", "outlive_kv_observe_with_release", "outlive_load_handlers", "outlive_messages_list",
    "outlive_operation_new_with_release", "outlive_presenter_add_with_release", "outlive_register",
    "outlive_resolve", "outlive_response_handler_add_with_release", "outlive_set_log_handler",
    "outlive_signal_consume_with_id", "outlive_store_open_with_options", "outlive_task_info_free",
    "outlive_tasks_list", "outlive_unregister", "OUTLIVE_DELIVER_ONCE", "OUTLIVE_DELIVER_UNTIL_TERMINATED",
    "OUTLIVE_PRESENTED", "OUTLIVE_NOT_PRESENTED",
]


def migrate(text):
    return subprocess.run(["sed", "-f", SCRIPT], input=text, capture_output=True, text=True, check=True).stdout


def header_identifiers():
    with open(HEADER) as f:
        return set(re.findall(r"\b(?:outlive|OUTLIVE)_\w+\b", f.read()))


def test_every_name_0_2_dropped_is_rewritten_to_a_declared_name():
    declared = header_identifiers()
    for name in GONE_IN_0_2:
        assert name not in declared, f"{name} is still in outlive.h"
        rewritten = migrate(f"{name}(x);\n").split("(")[0]
        assert rewritten != name, f"the script leaves {name}"
        assert rewritten in declared, f"{name} becomes {rewritten}, which outlive.h does not declare"


def test_every_rule_of_the_script_maps_an_undeclared_name_to_a_declared_one():
    declared = header_identifiers()
    with open(SCRIPT) as f:
        rules = re.findall(r"^s/\\b(\w+)\\b/(\w+)/g$", f.read(), flags=re.M)
    assert len(rules) >= len(GONE_IN_0_2)
    for old, new in rules:
        assert old not in declared and new in declared, (old, new)


def test_names_that_only_begin_like_a_renamed_one_are_left_alone():
    text = "outlive_callback(); outlive_registered; my_outlive_call(); outlive_call_count; OUTLIVE_PRESENTED_X\n"
    assert migrate(text) == text


def test_a_0_1_program_is_rewritten_in_place():
    program = ('outlive_register("a", "", f); outlive_call(h, NULL);\n'
               'outlive_kv_observe_with_release(s, "", obs, ctx, rel, &t);\n'
               'outlive_presentation_finish(p, OUTLIVE_PRESENTED, false, NULL);\n'
               'char out_id[37];\n')
    assert migrate(program) == ('outlive_handler_register("a", "", f); outlive_handler_call(h, NULL);\n'
                                'outlive_kv_observe(s, "", obs, ctx, rel, &t);\n'
                                'outlive_presentation_finish(p, OUTLIVE_PRESENTATION_PRESENTED, false, NULL);\n'
                                'char out_id[OUTLIVE_ID_SIZE];\n')
