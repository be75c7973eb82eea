/* convlab_check (include/convlab/convlab.h): the verdict as a yes or no for any test framework, with the
 * lines a failing test shows. include/convlab/criterion.h wraps it in Criterion's assertions. */
#include <stdio.h>
#include <string.h>

#include "convlab/convlab.h"

int convlab_check(const convlab_problem *p, const void *x, const void *w, const void *b, const void *initial_states,
                  const void *y, unsigned allowed, char *message, size_t size) {
  convlab_result *r = NULL;
  const convlab_status st = convlab_explain(p, x, w, b, initial_states, y, &r);
  int ok = 0;
  if (st != CONVLAB_OK) {
    if (message && size > 0) snprintf(message, size, "convlab: %s: %s", convlab_status_name(st), convlab_last_error());
  } else {
    ok = (allowed & CONVLAB_ALLOW(convlab_result_verdict(r))) != 0;
    if (message && size > 0) snprintf(message, size, "convlab: %s", convlab_result_summary(r));
  }
  convlab_result_destroy(r);
  const size_t n = message && size > 0 ? strlen(message) : 0;
  if (n > 0 && message[n - 1] == '\n') message[n - 1] = '\0'; /* the summary's last line ends the message */
  return ok;
}
