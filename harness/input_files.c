/* Loading a user's tensors: header checks first, data second (see input_files.h). */
#include "harness/input_files.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Refuses a header that is not ndim-dimensional. */
static c1d_status want_ndim(const char *path, const char *role, const char *layout,
                            const c1d_npy_header *h, int ndim) {
  if (h->ndim == ndim) return C1D_OK;
  char shape[128];
  c1d_npy_format_shape(h, shape, sizeof shape);
  return c1d_fail(C1D_ERR_INVALID_SHAPE, "%s: %s must have %d dimensions %s, got shape %s", path, role,
                  ndim, layout, shape);
}

/* Refuses dimension `dim` of `a` that differs from `expect` (taken from another file). */
static c1d_status same(const char *path, const char *letter, int64_t got, const char *other_path,
                       int64_t expect) {
  if (got == expect) return C1D_OK;
  return c1d_fail(C1D_ERR_INVALID_SHAPE, "%s has %s=%lld but %s has %s=%lld", path, letter,
                  (long long)got, other_path, letter, (long long)expect);
}

c1d_status c1d_input_files_shape(const c1d_input_paths *p, int64_t D, c1d_shape *s) {
  c1d_status st;
  c1d_npy_header hx, hw, hb, hy;
  if ((st = c1d_npy_probe(p->x, &hx)) != C1D_OK) return st;
  if ((st = want_ndim(p->x, "x", "(N, C, L)", &hx, 3)) != C1D_OK) return st;
  if ((st = c1d_npy_probe(p->w, &hw)) != C1D_OK) return st;
  if ((st = want_ndim(p->w, "w", "(O, C, K)", &hw, 3)) != C1D_OK) return st;
  if ((st = same(p->w, "C", hw.shape[1], p->x, hx.shape[1])) != C1D_OK) return st;
  memset(s, 0, sizeof *s);
  s->N = hx.shape[0];
  s->C = hx.shape[1];
  s->L = hx.shape[2];
  s->O = hw.shape[0];
  s->K = hw.shape[2];
  s->D = D;
  if (p->b) {
    if ((st = c1d_npy_probe(p->b, &hb)) != C1D_OK) return st;
    if ((st = want_ndim(p->b, "b", "(O,)", &hb, 1)) != C1D_OK) return st;
    if ((st = same(p->b, "O", hb.shape[0], p->w, s->O)) != C1D_OK) return st;
    s->bias = 1;
  }
  if (p->y) {
    if ((st = c1d_npy_probe(p->y, &hy)) != C1D_OK) return st;
    if (hy.dtype != C1D_NPY_F4)
      return c1d_fail(C1D_ERR_FORMAT, "%s: a candidate output must be float32 ('<f4'), got '%s' "
                      "(its float32 bits are what is judged; save y.astype(np.float32) if that is the "
                      "output)", p->y, c1d_npy_dtype_name(hy.dtype));
    if ((st = want_ndim(p->y, "y", "(N, O, L)", &hy, 3)) != C1D_OK) return st;
    if ((st = same(p->y, "N", hy.shape[0], p->x, s->N)) != C1D_OK) return st;
    if ((st = same(p->y, "O", hy.shape[1], p->w, s->O)) != C1D_OK) return st;
    if ((st = same(p->y, "L", hy.shape[2], p->x, s->L)) != C1D_OK) return st;
  }
  st = c1d_shape_validate(s);
  if (st != C1D_OK) {
    char why[400]; /* a copy: c1d_fail must not format the detail buffer into itself */
    snprintf(why, sizeof why, "%s", c1d_error_detail());
    return c1d_fail(st, "%s, %s: %s", p->x, p->w, why);
  }
  return C1D_OK;
}

/* One tensor: read, check that its header still gives `count` elements, and (for inputs) finiteness. */
static c1d_status load_one(const char *path, int is_input, int64_t count, float **data,
                           c1d_npy_header *h, c1d_npy_conversion *conv) {
  c1d_status st = c1d_npy_read_f32(path, is_input, data, h, conv);
  if (st != C1D_OK) return st;
  if (h->count != count)
    return c1d_fail(C1D_ERR_FORMAT, "%s changed while being read (%lld elements, expected %lld)", path,
                    (long long)h->count, (long long)count);
  for (int64_t i = 0; is_input && i < count; i++)
    if (!isfinite((*data)[i]))
      return c1d_fail(C1D_ERR_NONFINITE, "%s: element %lld is %g; inputs must be finite", path,
                      (long long)i, (double)(*data)[i]);
  return C1D_OK;
}

c1d_status c1d_input_files_load(const c1d_input_paths *p, const c1d_shape *s, c1d_input_tensors *t) {
  c1d_status st;
  memset(t, 0, sizeof *t);
  if ((st = load_one(p->x, 1, c1d_x_count(s), &t->x, &t->hx, &t->cx)) != C1D_OK) goto done;
  if ((st = load_one(p->w, 1, c1d_w_count(s), &t->w, &t->hw, &t->cw)) != C1D_OK) goto done;
  if (p->b && (st = load_one(p->b, 1, c1d_b_count(s), &t->b, &t->hb, &t->cb)) != C1D_OK) goto done;
  if (p->y) st = load_one(p->y, 0, c1d_y_count(s), &t->y, &t->hy, NULL);
done:
  if (st != C1D_OK) c1d_input_tensors_free(t);
  return st;
}

void c1d_input_tensors_free(c1d_input_tensors *t) {
  if (!t) return;
  free(t->x);
  free(t->w);
  free(t->b);
  free(t->y);
  memset(t, 0, sizeof *t);
}
