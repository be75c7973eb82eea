/* A user's tensors from files: x, w, optional b, optional initial states s, optional candidate output
 * y, either as .npy files (one tensor each) or as one safetensors file, a "case", holding tensors named
 * x, w, b, initial_states and y. The shape comes from the tensors' shapes, with what no tensor carries
 * from the caller (D, and the declarations the shapes are checked against: groups, activation, layout);
 * the tensors are checked against each other (and the declarations) before any data is read (of a case,
 * only its header is read first), so a mismatch or a too-large shape costs nothing.
 *
 * Shapes: x (N, C, L), or (N, L, C) with the channel-last layout; w (O, C/G, K), or for the depthwise
 * conv (C, K) or (C, 1, K); b (O); s (N, C, (K-1)*D) in either layout (causal-conv1d's initial_states);
 * y (N, O, L), or (N, L, O) channel-last. G follows from w (G = C / w's second dimension, or C for a
 * 2-D w); a declared G must agree. Host arrays are always (N, C, L): channel-last files are transposed
 * on loading.
 *
 * Element types become the problem's (c1d_shape.dt): .npy float32 and float16 are exact; float64 inputs
 * (x, w, b, s) are rounded to nearest float32 (what torch's .float() and NumPy's astype do), and the
 * conversion record says how many values changed so the caller can say so; a float64 y is refused (its
 * bits are what is judged). safetensors F32, BF16 and F16 are exact. Several outputs of one problem
 * share one type. Non-finite values in x, w, b, s are refused. */
#ifndef C1D_INPUT_FILES_H
#define C1D_INPUT_FILES_H

#include "harness/npy.h"
#include "harness/safetensors.h"
#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c1d_input_paths {
  const char *x, *w, *b, *y; /* b and y may be NULL */
  const char *s;             /* the initial states, or NULL */
} c1d_input_paths;

/* What the files cannot say, and what they are checked against. Zero: D = 1, G from w, no activation,
 * (N, C, L). */
typedef struct c1d_input_problem {
  int64_t D;
  int64_t G;                /* > 0: declared (--groups), checked against w; 0: from w's shape */
  c1d_activation act;
  c1d_layout_order layout;  /* of x and y in the files */
} c1d_input_problem;

typedef struct c1d_input_tensors {
  float *x, *w, *b, *y;                 /* owned, (N, C, L) order; b, y NULL when not given */
  c1d_npy_header hx, hw, hb, hy;        /* their headers (.npy only) */
  c1d_npy_conversion cx, cw, cb;        /* float64 -> float32 rounding of x, w, b */
  float *s;                             /* the initial states (owned), or NULL */
  c1d_npy_header hs;
  c1d_npy_conversion cs;
} c1d_input_tensors;

/* Reads the .npy headers and derives *s for problem pb. C1D_ERR_IO/C1D_ERR_FORMAT for a bad file,
 * C1D_ERR_INVALID_SHAPE for tensors that do not fit together or the declarations; the detail names the
 * file and the mismatch ("w.npy has C=128 but x.npy has C=256"). */
c1d_status c1d_input_files_shape_of(const c1d_input_paths *p, const c1d_input_problem *pb, c1d_shape *s);

/* The same with dilation D and nothing declared. */
c1d_status c1d_input_files_shape(const c1d_input_paths *p, int64_t D, c1d_shape *s);

/* Reads the data for shape s (from c1d_input_files_shape) into *t. Fails as above, also when a file
 * changed since its header was read, and with C1D_ERR_NONFINITE naming the file and the first bad
 * element of x, w, b or s. On failure *t holds nothing. */
c1d_status c1d_input_files_load(const c1d_input_paths *p, const c1d_shape *s, c1d_input_tensors *t);

/* One more output y of shape s from a .npy file (checked by c1d_input_files_shape), in (N, O, L) order
 * (*y owned by the caller). */
c1d_status c1d_input_files_load_output(const char *path, const c1d_shape *s, float **y);

/* Reads the header of the safetensors case at path (x, w, y required; b and initial_states optional; no
 * other tensor) and derives *s for pb (states when initial_states is there; each tensor's dtype the
 * problem's); *f keeps the file open for c1d_input_case_load. Nothing of the data is read. Fails as the
 * .npy functions do, the detail naming the file and the tensor ("case.safetensors: w has C=8 but x has
 * C=4"); then *f holds nothing. */
c1d_status c1d_input_case_shape(const char *path, const c1d_input_problem *pb, c1d_shape *s, c1d_st_file *f);

/* Reads the data of the case f (from c1d_input_case_shape with shape s) into *t (y into t->y) and frees
 * *f. Fails as c1d_st_load does, or with C1D_ERR_NONFINITE naming the tensor; then *t holds nothing. */
c1d_status c1d_input_case_load(const char *path, c1d_st_file *f, const c1d_shape *s, c1d_input_tensors *t);

/* c1d_input_case_shape and c1d_input_case_load. */
c1d_status c1d_input_case_read(const char *path, const c1d_input_problem *pb, c1d_shape *s,
                               c1d_input_tensors *t);

/* One tensor's shape and type as the checks see it; ndim 0 for a tensor not given. */
typedef struct c1d_tensor_shape {
  int ndim;
  int64_t shape[C1D_NPY_MAX_DIMS];
  c1d_dtype dtype;
} c1d_tensor_shape;

/* Derives *s from the shapes of x, w, b, s (the initial states) and y (t[0..4], b and s optional, y
 * optional) for problem pb, as from files (the same rules and messages, each tensor named by its role:
 * "w has C=3 but x has C=4"). Fails as c1d_input_files_shape_of does. */
c1d_status c1d_input_shapes_derive(const c1d_tensor_shape t[5], const c1d_input_problem *pb, c1d_shape *s);

/* A user's tensors in memory (libconvlab), each in its type of the shape's dt (f32: float; bf16, f16:
 * their uint16_t bits), x and y in the shape's layout, w (O, C/G, K), b (O), s (N, C, (K-1)*D); b NULL
 * iff the shape has no bias, s NULL iff no states. Borrowed. */
typedef struct c1d_input_memory {
  const void *x, *w, *b, *s, *y;
} c1d_input_memory;

/* Converts m for the validated shape s into float32 (N, C, L) host arrays in *t (y into t->y), checked as
 * files are: C1D_ERR_NONFINITE naming the tensor and its first bad element, in the order given, of x, w,
 * b or s ("x: element 3 is nan; inputs must be finite"), or C1D_ERR_NO_MEMORY; then *t holds nothing. */
c1d_status c1d_input_memory_load(const c1d_input_memory *m, const c1d_shape *s, c1d_input_tensors *t);

/* Frees what load allocated; NULL does nothing. */
void c1d_input_tensors_free(c1d_input_tensors *t);

#ifdef __cplusplus
}
#endif
#endif
