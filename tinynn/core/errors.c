/* Errors and logging: the one-line message of tnn_last_error, and the
 * ggml log filter every backend installs. Calls nothing of tinynn. */
#include "core/core.h"

#include <stdarg.h>
#include <stdio.h>

/* ---- errors ------------------------------------------------------------- */

static _Thread_local char g_last_error[512];

int tnn_fail(int status, const char * fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(g_last_error, sizeof(g_last_error), fmt, args);
    va_end(args);
    /* one line, whatever a file put in the names and strings it quotes */
    for (char * c = g_last_error; *c != '\0'; ++c) {
        if ((unsigned char) *c < 0x20 || *c == 0x7f) {
            *c = '?';
        }
    }
    return status;
}

void tnn_log_warnings_only(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    if (level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

void tnn_clear_last_error(void) { g_last_error[0] = '\0'; }

const char * tnn_last_error(void) { return g_last_error; }
