/* The handler descriptor of include/outlive.h, for the core: its magic and
 * version (macros Swift cannot import), and the build-time proof that its
 * layout is the 64-bit one the header documents, the ABI that descriptors in
 * every compiled handler library already have. */
#include "COutliveSystem.h"
#include <stddef.h>
#include "../../include/outlive.h"

_Static_assert(offsetof(outlive_handler_descriptor, magic) == 0, "outlive_handler_descriptor.magic moved");
_Static_assert(offsetof(outlive_handler_descriptor, version) == 8, "outlive_handler_descriptor.version moved");
_Static_assert(offsetof(outlive_handler_descriptor, name) == 16, "outlive_handler_descriptor.name moved");
_Static_assert(offsetof(outlive_handler_descriptor, signature) == 24, "outlive_handler_descriptor.signature moved");
_Static_assert(offsetof(outlive_handler_descriptor, function) == 32, "outlive_handler_descriptor.function moved");
_Static_assert(offsetof(outlive_handler_descriptor, resolver) == 40, "outlive_handler_descriptor.resolver moved");
_Static_assert(sizeof(outlive_handler_descriptor) == 48, "outlive_handler_descriptor changed size");

uint64_t COutlive_handler_magic(void) { return OUTLIVE_HANDLER_MAGIC; }
uint32_t COutlive_handler_descriptor_version(void) { return OUTLIVE_HANDLER_DESCRIPTOR_VERSION; }
