/* "Did you mean ...?": the nearest of a list of names to a mistyped one, by edit distance (insertions,
 * deletions, substitutions and swaps of neighbours each count 1), so that a typo in an option, an
 * implementation, a command or a distribution gets its likely fix in the same one-line error. */
#ifndef C1D_SUGGEST_H
#define C1D_SUGGEST_H

#include "reference/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The optimal-string-alignment distance between a and b (case-sensitive). */
int c1d_edit_distance(const char *a, const char *b);

/* The choice nearest to word, or NULL when none is near enough to be a likely typo: at most 1 edit for
 * words of up to 4 characters, 2 up to 8, 3 beyond. When word (3 characters or more) begins exactly
 * one choice, that choice, unless another is a single edit away. Ties go to the first in the list. */
const char *c1d_suggest(const char *word, const char *const *choices, int n);

/* C1D_ERR_USAGE with "<lead> '<word>' (did you mean <nearest>?)", e.g. lead "unknown option"; without
 * the question when nothing is near; `hint`, when not NULL, ends the parenthesis ("convlab list shows
 * the names"). */
c1d_status c1d_fail_unknown(const char *lead, const char *word, const char *const *choices, int n,
                            const char *hint);

/* c1d_fail_unknown over the registry's names (mutants included, as --impl accepts them), with the hint
 * that convlab list shows them. */
c1d_status c1d_fail_unknown_impl(const char *lead, const char *word);

#ifdef __cplusplus
}
#endif
#endif
