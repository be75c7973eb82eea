/* Escaping untrusted text for messages (escape.h). */
#include "harness/escape.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* c's escape into piece (size 8): "" when c prints as itself. */
static void escape_byte(unsigned char c, char *piece) {
  if (c == '\\')
    snprintf(piece, 8, "\\\\");
  else if (c == '\n')
    snprintf(piece, 8, "\\n");
  else if (c == '\t')
    snprintf(piece, 8, "\\t");
  else if (c == '\r')
    snprintf(piece, 8, "\\r");
  else if (c < 0x20 || c > 0x7e)
    snprintf(piece, 8, "\\x%02x", c);
  else
    piece[0] = '\0';
}

/* Appends len bytes of text to buf at *at; 0 (and "..." in place) when they and the ending do not fit. */
static int append(char *buf, size_t size, size_t *at, const char *text, size_t len) {
  if (*at + len + 4 > size) { /* room for "..." and the terminator */
    memcpy(buf + *at, "...", 4);
    return 0;
  }
  memcpy(buf + *at, text, len);
  *at += len;
  return 1;
}

const char *c1d_escape(const char *s, size_t n, char *buf, size_t size) {
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    char piece[8];
    escape_byte((unsigned char)s[i], piece);
    if (!piece[0]) piece[0] = s[i], piece[1] = '\0';
    if (!append(buf, size, &at, piece, strlen(piece))) return buf;
  }
  buf[at] = '\0';
  return buf;
}

/* The length of the well-formed UTF-8 sequence of two or more bytes at s (RFC 3629: no overlong forms,
 * no surrogates, nothing beyond U+10FFFF), or 0. */
static int utf8_length(const unsigned char *s) {
  int len;
  unsigned lo = 0x80, hi = 0xbf; /* the second byte's range */
  if (s[0] >= 0xc2 && s[0] <= 0xdf) {
    len = 2;
  } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
    len = 3;
    if (s[0] == 0xe0) lo = 0xa0; /* overlong */
    if (s[0] == 0xed) hi = 0x9f; /* surrogates */
  } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
    len = 4;
    if (s[0] == 0xf0) lo = 0x90; /* overlong */
    if (s[0] == 0xf4) hi = 0x8f; /* beyond U+10FFFF */
  } else {
    return 0;
  }
  if (s[1] < lo || s[1] > hi) return 0;
  for (int i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xbf) return 0;
  return len;
}

const char *c1d_escape_text(const char *s, char *buf, size_t size) {
  size_t at = 0;
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; u[i];) {
    const int len = u[i] >= 0x80 ? utf8_length(u + i) : 0;
    const int c1 = len == 2 && u[i] == 0xc2 && u[i + 1] <= 0x9f; /* U+0080..U+009F: controls */
    char piece[16];
    if (len > 0 && !c1) {
      if (!append(buf, size, &at, s + i, (size_t)len)) return buf;
      i += (size_t)len;
      continue;
    }
    if (c1) { /* both bytes, so the text says which control it was */
      snprintf(piece, sizeof piece, "\\x%02x\\x%02x", u[i], u[i + 1]);
      i += 2;
    } else {
      escape_byte(u[i], piece);
      if (!piece[0] || u[i] == '\\') piece[0] = s[i], piece[1] = '\0'; /* a backslash stays (below) */
      i++;
    }
    if (!append(buf, size, &at, piece, strlen(piece))) return buf;
  }
  buf[at] = '\0';
  return buf;
}

void c1d_print_line(FILE *f, const char *fmt, ...) {
  char text[1024], shown[4096];
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (n < 0) text[0] = '\0';
  char *whole = NULL, *out = NULL;
  if (n >= (int)sizeof text && (whole = malloc((size_t)n + 1))) { /* a long message: whole, not cut */
    va_start(ap, fmt);
    vsnprintf(whole, (size_t)n + 1, fmt, ap);
    va_end(ap);
    out = malloc(4 * (size_t)n + 4); /* at most 4 characters a byte */
  }
  if (whole && out)
    fprintf(f, "%s\n", c1d_escape_text(whole, out, 4 * (size_t)n + 4));
  else
    fprintf(f, "%s\n", c1d_escape_text(text, shown, sizeof shown));
  free(whole);
  free(out);
}
