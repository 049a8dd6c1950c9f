/* A handler library: built as a shared object and loaded by explicit path
 * (outlive_handler_library_load). Its OUTLIVE_HANDLER declarations export descriptors
 * with default visibility, so it needs no special flags:
 *
 *   cc -std=c99 -Wall -Wextra -Werror -Iinclude -fPIC -shared -o libplugin.so Examples/plugin/plugin.c
 *
 * It does not link liboutlive: it uses only the header's macros and types, and
 * the functions it calls are resolved in the process that loads it. */
#include <outlive.h>
#include <stdio.h>

OUTLIVE_HANDLER(plugin_resize, OUTLIVE_ID(image), OUTLIVE_INT(width), OUTLIVE_ID(task_id)) {
    printf("plugin_resize: %s to %d px (from the plugin library; %.13s)\n", outlive_object_string(image), width,
           outlive_object_string(task_id));
}
