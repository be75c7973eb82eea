/* The option parser and strict number parsing. strtoll/strtod alone accept leading spaces, a '+', a
 * trailing remainder and silently saturate; each of those is refused here with a message naming the
 * option and the text, so that a typo never becomes a different experiment. */
#include "harness/cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/suggest.h"

// --- numbers -----------------------------------------------------------------------------------

c1d_status c1d_parse_int(const char *what, const char *text, int64_t min, int64_t max, int64_t *out) {
  const char *digits = text[0] == '-' ? text + 1 : text;
  if (!isdigit((unsigned char)digits[0]))
    return c1d_fail(C1D_ERR_USAGE, "%s expects an integer (got '%s')", what, text);
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (*end != '\0') return c1d_fail(C1D_ERR_USAGE, "%s expects an integer (got '%s')", what, text);
  if (errno == ERANGE) return c1d_fail(C1D_ERR_USAGE, "%s is out of range (got '%s')", what, text);
  if (v < min && min == 1)
    return c1d_fail(C1D_ERR_USAGE, "%s must be positive (got %lld)", what, v);
  if (v < min) return c1d_fail(C1D_ERR_USAGE, "%s must be at least %lld (got %lld)", what, (long long)min, v);
  if (v > max) return c1d_fail(C1D_ERR_USAGE, "%s must be at most %lld (got %lld)", what, (long long)max, v);
  *out = v;
  return C1D_OK;
}

c1d_status c1d_parse_u64(const char *what, const char *text, uint64_t *out) {
  if (text[0] == '-' && isdigit((unsigned char)text[1]))
    return c1d_fail(C1D_ERR_USAGE, "%s must be non-negative (got %s)", what, text);
  if (!isdigit((unsigned char)text[0]))
    return c1d_fail(C1D_ERR_USAGE, "%s expects a non-negative integer (got '%s')", what, text);
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (*end != '\0')
    return c1d_fail(C1D_ERR_USAGE, "%s expects a non-negative integer (got '%s')", what, text);
  if (errno == ERANGE) return c1d_fail(C1D_ERR_USAGE, "%s is out of range (got '%s')", what, text);
  *out = v;
  return C1D_OK;
}

c1d_status c1d_parse_double(const char *what, const char *text, double min, double *out) {
  const char *p = text[0] == '-' ? text + 1 : text;
  /* A number starts with a digit or a '.': this refuses "nan", "inf", "0x..." spelled words, and " 1". */
  if (!isdigit((unsigned char)p[0]) && !(p[0] == '.' && isdigit((unsigned char)p[1])))
    return c1d_fail(C1D_ERR_USAGE, "%s expects a number (got '%s')", what, text);
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (*end != '\0') return c1d_fail(C1D_ERR_USAGE, "%s expects a number (got '%s')", what, text);
  if (errno == ERANGE || !isfinite(v))
    return c1d_fail(C1D_ERR_USAGE, "%s is out of range (got '%s')", what, text);
  if (v < min) return c1d_fail(C1D_ERR_USAGE, "%s must be at least %g (got %s)", what, min, text);
  *out = v;
  return C1D_OK;
}

// --- options -----------------------------------------------------------------------------------

const c1d_option *c1d_cli_find(const c1d_option *opts, int n_opts, const char *name) {
  for (int i = 0; i < n_opts; i++)
    if (strcmp(opts[i].name, name) == 0) return &opts[i];
  return NULL;
}

static c1d_status set_value(c1d_option *o, const char *value) {
  switch (o->kind) {
    case C1D_OPT_FLAG: *(int *)o->dest = 1; return C1D_OK;
    case C1D_OPT_INT: return c1d_parse_int(o->name, value, o->min, o->max, (int64_t *)o->dest);
    case C1D_OPT_U64: return c1d_parse_u64(o->name, value, (uint64_t *)o->dest);
    case C1D_OPT_DOUBLE: return c1d_parse_double(o->name, value, (double)o->min, (double *)o->dest);
    case C1D_OPT_OPTIONAL:
      if (!value) value = ""; /* given alone */
      else if (value[0] == '\0') return c1d_fail(C1D_ERR_USAGE, "%s needs a non-empty value", o->name);
      *(const char **)o->dest = value;
      return C1D_OK;
    case C1D_OPT_STRING:
      if (value[0] == '\0') return c1d_fail(C1D_ERR_USAGE, "%s needs a non-empty value", o->name);
      *(const char **)o->dest = value;
      return C1D_OK;
    case C1D_OPT_LIST: {
      c1d_string_list *list = o->dest;
      if (value[0] == '\0') return c1d_fail(C1D_ERR_USAGE, "%s needs a non-empty value", o->name);
      if (list->n == C1D_OPT_LIST_MAX)
        return c1d_fail(C1D_ERR_USAGE, "%s is given more than %d times", o->name, C1D_OPT_LIST_MAX);
      list->items[list->n++] = value;
      return C1D_OK;
    }
  }
  return c1d_fail(C1D_ERR_INTERNAL, "option %s has no kind", o->name);
}

/* "unknown option '--cni' (did you mean --cin?)": names are compared without their dashes, so that
 * "-x" finds --x and "--len" finds --length. */
static c1d_status unknown_option(const c1d_option *opts, int n_opts, const char *arg, size_t len) {
  const char *bare[128];
  const char *word = arg, *near = NULL;
  int n = 0;
  while ((size_t)(word - arg) < len && *word == '-') word++;
  const int word_len = (int)(len - (size_t)(word - arg));
  for (int i = 0; i < n_opts && n < 127; i++) bare[n++] = opts[i].name + 2;
  bare[n++] = "help";
  char stripped[128];
  snprintf(stripped, sizeof stripped, "%.*s", word_len, word);
  for (int i = 0; i < n && !near; i++)
    if (strcmp(bare[i], stripped) == 0) near = bare[i]; /* the right name with the wrong dashes */
  if (!near) near = c1d_suggest(stripped, bare, n);
  if (near) return c1d_fail(C1D_ERR_USAGE, "unknown option '%.*s' (did you mean --%s?)", (int)len, arg, near);
  return c1d_fail(C1D_ERR_USAGE, "unknown option '%.*s'", (int)len, arg);
}

c1d_status c1d_cli_parse(c1d_option *opts, int n_opts, int argc, char **argv, int *help) {
  *help = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      *help = 1;
      return C1D_OK;
    }
    if (arg[0] == '-' && (arg[1] != '-' || arg[2] == '\0'))
      return unknown_option(opts, n_opts, arg, strlen(arg));
    if (arg[0] != '-') return c1d_fail(C1D_ERR_USAGE, "unexpected argument '%s'", arg);
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    c1d_option *o = NULL;
    for (int k = 0; k < n_opts && !o; k++)
      if (strlen(opts[k].name) == len && strncmp(opts[k].name, arg, len) == 0) o = &opts[k];
    if (!o) return unknown_option(opts, n_opts, arg, len);
    if (o->seen && o->kind != C1D_OPT_LIST) return c1d_fail(C1D_ERR_USAGE, "%s is given twice", o->name);
    o->seen = 1;
    const char *value = NULL;
    if (o->kind == C1D_OPT_FLAG) {
      if (eq) return c1d_fail(C1D_ERR_USAGE, "%s takes no value", o->name);
    } else if (eq) {
      value = eq + 1;
    } else if (o->kind == C1D_OPT_OPTIONAL) {
      if (i + 1 < argc && argv[i + 1][0] != '-') value = argv[++i]; /* else: given alone */
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return c1d_fail(C1D_ERR_USAGE, "%s needs a value", o->name);
    }
    c1d_status st = set_value(o, value);
    if (st != C1D_OK) return st;
  }
  return C1D_OK;
}

void c1d_cli_help(FILE *f, const char *usage, const char *description, const c1d_option *opts,
                  int n_opts) {
  fprintf(f, "usage: %s\n\n%s\n", usage, description);
  if (n_opts > 0) fprintf(f, "\noptions:\n");
  for (int i = 0; i < n_opts; i++) {
    char left[64];
    const int optional = opts[i].kind == C1D_OPT_OPTIONAL && opts[i].metavar;
    snprintf(left, sizeof left, "%s%s%s%s%s", opts[i].name, opts[i].metavar ? " " : "", optional ? "[" : "",
             opts[i].metavar ? opts[i].metavar : "", optional ? "]" : "");
    fprintf(f, "  %-22s %s\n", left, opts[i].help);
  }
  fprintf(f, "  %-22s %s\n", "--help", "this text");
}

// --- the command line, for the record ----------------------------------------------------------

static int needs_quotes(const char *s) {
  if (!*s) return 1;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr("-_./=,:+@%", *s)) return 1;
  return 0;
}

char *c1d_cli_command_line(int argc, char **argv) {
  size_t size = 1;
  for (int i = 0; i < argc; i++) size += 4 * strlen(argv[i]) + 3; /* worst case: every char quoted */
  char *out = malloc(size), *p = out;
  if (!out) return NULL;
  for (int i = 0; i < argc; i++) {
    if (i) *p++ = ' ';
    if (!needs_quotes(argv[i])) {
      p = stpcpy(p, argv[i]);
      continue;
    }
    *p++ = '\'';
    for (const char *s = argv[i]; *s; s++) {
      if (*s == '\'') {
        p = stpcpy(p, "'\\''");
      } else {
        *p++ = *s;
      }
    }
    *p++ = '\'';
  }
  *p = '\0';
  return out;
}
