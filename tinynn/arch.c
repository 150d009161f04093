/* The architectures tinynn builds, as a table: tnn_realize looks one up by
 * name and calls only its entry (struct tnn_arch in internal.h). Adding an
 * architecture is a file defining its entry and a line here. */
#include "internal.h"

#include <string.h>

static const struct tnn_arch * const ARCHITECTURES[] = {
    &tnn_arch_llama,
    &tnn_arch_gpt2,
    &tnn_arch_vit,
};

const struct tnn_arch * tnn_arch_find(const char * name) {
    for (size_t i = 0; i < sizeof(ARCHITECTURES) / sizeof(ARCHITECTURES[0]); ++i) {
        if (strcmp(ARCHITECTURES[i]->name, name) == 0) {
            return ARCHITECTURES[i];
        }
    }
    return NULL;
}
