/* Escaping untrusted text for messages (escape.h). */
#include "harness/escape.h"

#include <stdio.h>
#include <string.h>

const char *c1d_escape(const char *s, size_t n, char *buf, size_t size) {
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    const unsigned char c = (unsigned char)s[i];
    char piece[8];
    if (c == '\\')
      snprintf(piece, sizeof piece, "\\\\");
    else if (c == '\n')
      snprintf(piece, sizeof piece, "\\n");
    else if (c == '\t')
      snprintf(piece, sizeof piece, "\\t");
    else if (c == '\r')
      snprintf(piece, sizeof piece, "\\r");
    else if (c < 0x20 || c > 0x7e)
      snprintf(piece, sizeof piece, "\\x%02x", c);
    else
      snprintf(piece, sizeof piece, "%c", c);
    const size_t len = strlen(piece);
    if (at + len + 4 > size) { /* room for "..." and the terminator */
      memcpy(buf + at, "...", 4);
      return buf;
    }
    memcpy(buf + at, piece, len);
    at += len;
  }
  buf[at] = '\0';
  return buf;
}
