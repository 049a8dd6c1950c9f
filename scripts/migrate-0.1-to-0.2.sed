# Rewrites the plain renames of Outlive 0.1 → 0.2 in C, Python, Rust or Markdown sources:
#     sed -i -f scripts/migrate-0.1-to-0.2.sed FILE...
# Only names change here. Calls whose arguments changed (CHANGELOG.md, "Changed signatures")
# still need a hand: the compiler points at each one.
# GNU sed: \b is a word boundary, so outlive_call does not touch outlive_callback.

# Functions named outlive_<noun>_<verb>.
s/\boutlive_set_log_handler\b/outlive_log_set_handler/g
s/\boutlive_register\b/outlive_handler_register/g
s/\boutlive_unregister\b/outlive_handler_unregister/g
s/\boutlive_call\b/outlive_handler_call/g
s/\boutlive_invalidate\b/outlive_handler_invalidate/g
s/\boutlive_resolve\b/outlive_handler_resolve/g
s/\boutlive_load_handlers\b/outlive_handler_library_load/g

# `_with_…` twins: the one function left takes every parameter the twin had, in the same order.
s/\boutlive_kv_observe_with_release\b/outlive_kv_observe/g
s/\boutlive_presenter_add_with_release\b/outlive_presenter_add/g
s/\boutlive_response_handler_add_with_release\b/outlive_response_handler_add/g
s/\boutlive_auto_resolver_add_with_release\b/outlive_auto_resolver_add/g
s/\boutlive_interactions_add_with_release\b/outlive_interactions_add/g
s/\boutlive_operation_new_with_release\b/outlive_operation_new/g
s/\boutlive_store_open_with_options\b/outlive_store_open/g
s/\boutlive_signal_consume_with_id\b/outlive_signal_consume/g
s/\boutlive_handler_new_with_invalidation\b/outlive_handler_new/g

# Listing: one snapshot-list model (outlive_<noun>_list_new/_count/accessors/_free).
s/\boutlive_tasks_list\b/outlive_task_list_new/g
s/\boutlive_task_info_free\b/outlive_task_list_free/g
s/\boutlive_messages_list\b/outlive_message_list_new/g
s/\boutlive_durable_interactions_list\b/outlive_durable_interaction_list_new/g
s/\boutlive_kv_next_key\b/outlive_kv_key_list_new/g

# Enumeration values begin with their type's first word.
s/\bOUTLIVE_DELIVER_ONCE\b/OUTLIVE_DELIVERY_ONCE/g
s/\bOUTLIVE_DELIVER_UNTIL_TERMINATED\b/OUTLIVE_DELIVERY_UNTIL_TERMINATED/g
s/\bOUTLIVE_PRESENTED\b/OUTLIVE_PRESENTATION_PRESENTED/g
s/\bOUTLIVE_NOT_PRESENTED\b/OUTLIVE_PRESENTATION_NOT_PRESENTED/g

# Sizes are macros, not numbers.
s/\bchar out_id\[37\]/char out_id[OUTLIVE_ID_SIZE]/g
