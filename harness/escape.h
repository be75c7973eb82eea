/* Untrusted text (from a file, or a path the user gave), made safe to print in a one-line message:
 * control bytes are shown as escapes (\n, \t, \r, \xNN) and a backslash as \\, so a header or a path
 * holding a newline or a terminal escape sequence cannot break a message into two lines or reach the
 * terminal. */
#ifndef C1D_ESCAPE_H
#define C1D_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The first n bytes of s, escaped, into buf (size >= 8, always terminated; "..." ends a text that
 * did not fit). Returns buf. */
const char *c1d_escape(const char *s, size_t n, char *buf, size_t size);

/* As c1d_escape, for text a person wrote (a path) or a message: valid UTF-8 is kept as it is, so a
 * name in any script stays readable; control characters (C0, DEL and C1: U+0080..U+009F, which some
 * terminals obey too) and bytes that are not UTF-8 are escaped. A backslash stays as it is: messages
 * carry text from files that c1d_escape has already escaped ('F\n32'), which must not read '\\n'. */
const char *c1d_escape_text(const char *s, char *buf, size_t size);

/* Prints fmt's text as one line on f: escaped as c1d_escape_text (a path holding a newline or an ESC
 * cannot split a message or drive the terminal), then '\n'. Every message that may carry a user's text
 * goes through here. */
void c1d_print_line(FILE *f, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
