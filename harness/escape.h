/* Text from a file, made safe to print in a one-line message: bytes outside printable ASCII are shown
 * as escapes (\n, \t, \r, \xNN) and a backslash as \\, so a header holding a newline or a terminal
 * escape sequence cannot break a message into two lines or reach the terminal. */
#ifndef C1D_ESCAPE_H
#define C1D_ESCAPE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The first n bytes of s, escaped, into buf (size >= 8, always terminated; "..." ends a text that
 * did not fit). Returns buf. */
const char *c1d_escape(const char *s, size_t n, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
