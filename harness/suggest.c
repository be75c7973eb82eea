/* Nearest names by edit distance (suggest.h). The lists are short (tens of names), so the plain
 * dynamic programme over two rows is fast enough for any error path. */
#include "harness/suggest.h"

#include <stdlib.h>
#include <string.h>

#include "harness/registry.h"

enum { MAX_WORD = 128 };

int c1d_edit_distance(const char *a, const char *b) {
  const int la = (int)strnlen(a, MAX_WORD), lb = (int)strnlen(b, MAX_WORD);
  int rows[3][MAX_WORD + 1]; /* rows i-2, i-1 and i of the table, by i mod 3 */
  for (int j = 0; j <= lb; j++) rows[0][j] = j;
  for (int i = 1; i <= la; i++) {
    int *cur = rows[i % 3], *prev = rows[(i + 2) % 3], *prev2 = rows[(i + 1) % 3];
    cur[0] = i;
    for (int j = 1; j <= lb; j++) {
      const int cost = a[i - 1] != b[j - 1];
      int d = prev[j - 1] + cost;
      if (prev[j] + 1 < d) d = prev[j] + 1;
      if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < d)
        d = prev2[j - 2] + 1; /* two neighbours swapped: "--cni" for "--cin" */
      cur[j] = d;
    }
  }
  return rows[la % 3][lb];
}

/* Edits a typo of this length may plausibly contain. */
static int allowed_edits(size_t len) { return len <= 4 ? 1 : len <= 8 ? 2 : 3; }

const char *c1d_suggest(const char *word, const char *const *choices, int n) {
  const size_t len = strlen(word);
  const char *best = NULL, *prefix_of = NULL;
  int best_d = allowed_edits(len) + 1, prefixes = 0;
  if (len == 0 || len > MAX_WORD) return NULL;
  for (int i = 0; i < n; i++) {
    if (!choices[i] || strcmp(choices[i], word) == 0) continue;
    if (len >= 3 && strncmp(choices[i], word, len) == 0) {
      prefixes++;
      prefix_of = choices[i];
    }
    const int d = c1d_edit_distance(word, choices[i]);
    if (d < best_d) {
      best_d = d;
      best = choices[i];
    }
  }
  /* A unique completion ("--len" for --length) says more than a near miss of the same length. */
  if (prefixes == 1 && best_d > 1) return prefix_of;
  return best;
}

c1d_status c1d_fail_unknown(const char *lead, const char *word, const char *const *choices, int n,
                            const char *hint) {
  const char *near = c1d_suggest(word, choices, n);
  if (near && hint)
    return c1d_fail(C1D_ERR_USAGE, "%s '%s' (did you mean %s? %s)", lead, word, near, hint);
  if (near) return c1d_fail(C1D_ERR_USAGE, "%s '%s' (did you mean %s?)", lead, word, near);
  if (hint) return c1d_fail(C1D_ERR_USAGE, "%s '%s' (%s)", lead, word, hint);
  return c1d_fail(C1D_ERR_USAGE, "%s '%s'", lead, word);
}

c1d_status c1d_fail_unknown_impl(const char *lead, const char *word) {
  int n = 0;
  const c1d_impl *const *table = c1d_registry(&n);
  const char **names = malloc((size_t)(n > 0 ? n : 1) * sizeof *names);
  if (!names) return c1d_fail(C1D_ERR_USAGE, "%s '%s'", lead, word);
  for (int i = 0; i < n; i++) names[i] = table[i]->name;
  c1d_status st = c1d_fail_unknown(lead, word, names, n, "convlab list shows the names");
  free(names);
  return st;
}
