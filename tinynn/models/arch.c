/* The architectures tinynn builds, as a table: tnn_realize looks one up by
 * name and calls only its entry (struct tnn_arch in models/models.h). Adding an
 * architecture is a file defining its entry and a line here. */
#include "models/models.h"

#include <stdio.h>
#include <string.h>

/* each defined in the architecture's own file */
extern const struct tnn_arch tnn_arch_gpt2, tnn_arch_vit, tnn_arch_llama_postnorm;

static const struct tnn_arch * const ARCHITECTURES[] = {
    &tnn_arch_llama,
    &tnn_arch_gpt2,
    &tnn_arch_vit,
    &tnn_arch_llama_postnorm,
};

#define N_ARCHITECTURES (sizeof(ARCHITECTURES) / sizeof(ARCHITECTURES[0]))

const struct tnn_arch * tnn_arch_find(const char * name) {
    for (size_t i = 0; i < N_ARCHITECTURES; ++i) {
        if (strcmp(ARCHITECTURES[i]->name, name) == 0) {
            return ARCHITECTURES[i];
        }
    }
    return NULL;
}

const char * tnn_arch_names(void) {
    static char names[256];
    if (names[0] == '\0') {
        size_t used = 0;
        for (size_t i = 0; i < N_ARCHITECTURES && used < sizeof(names); ++i) {
            int n = snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "", ARCHITECTURES[i]->name);
            used += n > 0 ? (size_t) n : 0;
        }
    }
    return names;
}
