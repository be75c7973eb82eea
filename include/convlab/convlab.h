/* libconvlab: is a causal conv1d output a bug, or rounding? The verdict of `convlab explain`, inside your
 * own C or CUDA test suite.
 *
 *   convlab_problem *p = NULL;
 *   convlab_result *r = NULL;
 *   if (convlab_problem_create(&p, N, C, O, L, K) == CONVLAB_OK && convlab_problem_set_bias(p, 1) == CONVLAB_OK &&
 *       convlab_explain(p, x, w, b, NULL, y, &r) == CONVLAB_OK)
 *     printf("%s\n", convlab_result_headline(r));   // "Not a bug: rounding, ... (fp32-rounding)."
 *   else
 *     printf("%s\n", convlab_last_error());         // "x is NULL"
 *   convlab_result_destroy(r);
 *   convlab_problem_destroy(p);
 *
 * The operator is PyTorch's causal Conv1d: y = act(conv1d(F.pad(x, ((K-1)*D, 0)), w, b, dilation=D,
 * groups=G)), act none or SiLU, with the initial states (N, C, (K-1)*D) in place of the zero padding when
 * the problem has them. The contract judged is the one low-precision kernels document: exact products of
 * the given values, a float32 (or better) sum, the activation in float32, one rounding to y's type. The
 * verdict is the one `convlab explain` gives on the same tensors (the same code: a float64 oracle, the
 * rounding models, the explainer), and so are its words and its JSON.
 *
 * Tensors, each in its own element type (convlab_problem_set_dtype: float32 is float, bf16 and fp16 are
 * their uint16_t bits), contiguous: x (N, C, L), or (N, L, C) with the nlc layout; w (O, C/G, K) (a
 * depthwise (C, K) or (C, 1, K) weight is the same memory); b (O); initial states (N, C, (K-1)*D); y
 * (N, O, L), or (N, L, O) with nlc. x, w, b and the states must be finite (NaN or Inf is an error, as for
 * convlab explain); y may hold anything (a NaN in y is the verdict non-finite).
 *
 * Host or device memory: in a library built with CUDA (convlab_has_cuda() == 1) each pointer is asked
 * about with cudaPointerGetAttributes, and CUDA device (or managed) memory is copied to the host first.
 * A library built without CUDA cannot tell a device pointer from a host one: it reads every pointer as
 * host memory, and a device pointer then crashes the process. Copy to the host first there.
 *
 * Ownership, once: the caller owns every tensor (read during the call, never kept); handles come in
 * _create/_destroy pairs and _destroy(NULL) does nothing; a string a result returns is the result's,
 * valid until its _destroy. Errors are values: each fallible function returns a convlab_status, and
 * convlab_last_error() is the one-line message of this thread's last failure. Nothing is printed, exit()
 * is never called, and calls may be repeated in one process as often as needed (one at a time: calls
 * from several threads at once are untested). A call computes the float64 oracle and the rounding
 * models on the given inputs: milliseconds for thousands of outputs, seconds for tens of millions.
 *
 * Versioned: the header's CONVLAB_VERSION_* against convlab_version() (the library's), SONAME
 * libconvlab.so.CONVLAB_VERSION_MAJOR. include/convlab/criterion.h has the Criterion assertions. */
#ifndef CONVLAB_H
#define CONVLAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CONVLAB_VERSION_MAJOR 1
#define CONVLAB_VERSION_MINOR 0
#define CONVLAB_VERSION_PATCH 0

typedef enum convlab_status {
  CONVLAB_OK = 0,
  CONVLAB_ERR_INVALID_ARGUMENT, /* a NULL pointer or handle, an unknown enum value */
  CONVLAB_ERR_INVALID_SHAPE,    /* a size that is not positive, groups that do not divide C and O, ... */
  CONVLAB_ERR_OVERFLOW,         /* an element count beyond convlab's limits */
  CONVLAB_ERR_NONFINITE,        /* NaN or Inf in x, w, b or the initial states */
  CONVLAB_ERR_NO_MEMORY,        /* the host memory the call needs is not there */
  CONVLAB_ERR_DEVICE,           /* a CUDA call failed (copying device memory, the GPU oracle) */
  CONVLAB_ERR_INTERNAL          /* a broken invariant of convlab's */
} convlab_status;

/* The verdicts, named as convlab explain names them (convlab_verdict_name). */
typedef enum convlab_verdict {
  CONVLAB_FP32_ROUNDING,     /* not a bug: float32 accumulation in some order */
  CONVLAB_TF32_INPUTS,       /* not a bug: inputs rounded to TF32, as tensor cores do */
  CONVLAB_REDUCED_PRECISION, /* rounding, but more than the contract allows (where: which stage) */
  CONVLAB_BUG_LOCALIZED,     /* a bug in a region (the region says where) */
  CONVLAB_BUG_GLOBAL,        /* a bug nearly everywhere */
  CONVLAB_NON_FINITE,        /* NaN or Inf where the exact result is finite */
  CONVLAB_INCONCLUSIVE,      /* the evidence does not decide */
  CONVLAB_VERDICT_COUNT
} convlab_verdict;

/* Sets of verdicts, for convlab_check: CONVLAB_ALLOW(CONVLAB_TF32_INPUTS) | CONVLAB_ROUNDING_ONLY. */
#define CONVLAB_ALLOW(verdict) (1u << (verdict))
#define CONVLAB_ROUNDING_ONLY CONVLAB_ALLOW(CONVLAB_FP32_ROUNDING)
#define CONVLAB_ANY_ROUNDING \
  (CONVLAB_ALLOW(CONVLAB_FP32_ROUNDING) | CONVLAB_ALLOW(CONVLAB_TF32_INPUTS) | CONVLAB_ALLOW(CONVLAB_REDUCED_PRECISION))

typedef enum convlab_dtype { CONVLAB_F32, CONVLAB_BF16, CONVLAB_F16 } convlab_dtype;
typedef enum convlab_tensor { CONVLAB_X, CONVLAB_W, CONVLAB_B, CONVLAB_INITIAL_STATES, CONVLAB_Y, CONVLAB_ALL } convlab_tensor;
typedef enum convlab_activation { CONVLAB_ACT_NONE, CONVLAB_ACT_SILU } convlab_activation;
typedef enum convlab_layout { CONVLAB_NCL, CONVLAB_NLC } convlab_layout;

typedef struct convlab_problem convlab_problem; /* the operator and the tensors' shapes and types */
typedef struct convlab_result convlab_result;   /* one output's verdict and its evidence */

// --- the library -----------------------------------------------------------------------------------

/* The library's version, "1.0.0"; never NULL. */
const char *convlab_version(void);

/* 1 when the library was built with CUDA (device pointers are recognized and copied), else 0. */
int convlab_has_cuda(void);

/* The one-line message of this thread's last failed call ("x is NULL", "groups G=4 must divide C=6 and
 * O=8"); "" before any failure. Valid until the next failing call on this thread. */
const char *convlab_last_error(void);

/* "ok", "invalid argument", "invalid shape", ...; never NULL. */
const char *convlab_status_name(convlab_status status);

/* "fp32-rounding", "tf32-inputs", "reduced-precision", "bug-localized", "bug-global", "non-finite",
 * "inconclusive"; "?" for a value that is none of them. */
const char *convlab_verdict_name(convlab_verdict verdict);

// --- the problem -----------------------------------------------------------------------------------

/* A dense problem of N batch rows, C input and O output channels, length L, K taps: dilation 1, no bias,
 * no states, no activation, every tensor float32, layout ncl (change each with its setter) into *out.
 * INVALID_ARGUMENT for out NULL, INVALID_SHAPE or OVERFLOW naming the size; *out is NULL on failure. */
convlab_status convlab_problem_create(convlab_problem **out, int64_t N, int64_t C, int64_t O, int64_t L, int64_t K);

/* The problem that tensors of these shapes make, derived and checked as convlab explain derives it from
 * its files (the same code and messages, which name its flags: "--groups 2"): x_shape (N, C, L), or
 * (N, L, C) with the nlc layout; w_shape of w_ndim 3, (O, C/G, K), or 2, a depthwise (C, K); b_shape
 * (O) and states_shape (N, C, (K-1)*D), each NULL when the problem has none; y_shape (N, O, L), or
 * (N, L, O) with nlc. groups 0 takes G from w; another value must agree with it. Every tensor float32
 * (convlab_problem_set_dtype changes them). INVALID_SHAPE naming the tensors and the mismatch ("w has
 * C=3 but x has C=4"), INVALID_ARGUMENT; *out is NULL on failure. */
convlab_status convlab_problem_create_from_shapes(convlab_problem **out, const int64_t x_shape[3],
                                                  const int64_t *w_shape, int w_ndim, const int64_t *b_shape,
                                                  const int64_t *states_shape, const int64_t y_shape[3], int64_t D,
                                                  int64_t groups, convlab_activation act, convlab_layout layout);

/* Frees p; NULL does nothing. */
void convlab_problem_destroy(convlab_problem *p);

/* Each setter checks the problem it makes (INVALID_ARGUMENT for p NULL or an unknown value,
 * INVALID_SHAPE / OVERFLOW naming the size) and leaves p unchanged on failure. */

/* Dilation D >= 1 (the taps read x at t - (K-1-k)*D). */
convlab_status convlab_problem_set_dilation(convlab_problem *p, int64_t D);
/* Groups G dividing C and O (1: dense; G = C = O: depthwise). */
convlab_status convlab_problem_set_groups(convlab_problem *p, int64_t G);
/* 1: y starts at b[o] (convlab_explain then needs b); 0: no bias. */
convlab_status convlab_problem_set_bias(convlab_problem *p, int has_bias);
/* 1: the initial states (N, C, (K-1)*D) replace the causal zeros (convlab_explain then needs them; K > 1). */
convlab_status convlab_problem_set_initial_states(convlab_problem *p, int has_states);
/* None or SiLU, after the bias. */
convlab_status convlab_problem_set_activation(convlab_problem *p, convlab_activation act);
/* ncl: x (N, C, L), y (N, O, L); nlc: x (N, L, C), y (N, L, O). */
convlab_status convlab_problem_set_layout(convlab_problem *p, convlab_layout layout);
/* The element type of one tensor, or of all (CONVLAB_ALL). */
convlab_status convlab_problem_set_dtype(convlab_problem *p, convlab_tensor tensor, convlab_dtype dtype);

// --- the verdict -----------------------------------------------------------------------------------

/* The verdict on y, the output of problem p on x, w, b (NULL without a bias) and the initial states
 * (NULL without), into *out (destroy it with convlab_result_destroy). INVALID_ARGUMENT naming a NULL
 * pointer that the problem needs or a pointer given that it does not, NONFINITE naming the tensor and the
 * element ("x: element 3 is nan; inputs must be finite"), NO_MEMORY, DEVICE; *out is NULL on failure. */
convlab_status convlab_explain(const convlab_problem *p, const void *x, const void *w, const void *b,
                               const void *initial_states, const void *y, convlab_result **out);

/* Frees r; NULL does nothing. */
void convlab_result_destroy(convlab_result *r);

/* The accessors below read a result of convlab_explain; given NULL they return "", CONVLAB_INCONCLUSIVE
 * or NaN. */

/* The verdict. */
convlab_verdict convlab_result_verdict(const convlab_result *r);

/* For reduced-precision, the stage that lost precision: "inputs", "products", "accumulation" or
 * "output"; "" otherwise. */
const char *convlab_result_where(const convlab_result *r);

/* The verdict in plain words, the first line convlab explain prints ("A bug in channel 5: n 0-1, o 5,
 * t 60-63,... (bug-localized)."). */
const char *convlab_result_headline(const convlab_result *r);

/* Why, in plain words: what fits, or which test fired (convlab explain's "why:" line, after "why: "). */
const char *convlab_result_reason(const convlab_result *r);

/* Where the offending (or non-finite) elements are, as convlab explain's "where:" line says it after
 * "where: " ("128 elements (0.781%), channel 5: n 0-1, o 5, t 60-63,..."); "" when there are none. */
const char *convlab_result_region(const convlab_result *r);

/* The detection limit: no error beyond rounding larger than this affects any region of 32 or more
 * elements (for a verdict that is not a bug; convlab explain's "detection limit" clause). */
double convlab_result_detection_limit(const convlab_result *r);

/* What convlab explain prints for this output, every line. */
const char *convlab_result_text(const convlab_result *r);

/* The lines of that text a failing test shows: the verdict, a flag suggestion, why, where. */
const char *convlab_result_summary(const convlab_result *r);

/* The JSON object convlab explain --json prints for this output (without "files": the tensors were in
 * memory), named "y". */
const char *convlab_result_json(const convlab_result *r);

// --- for a test suite --------------------------------------------------------------------------------

/* 1 when y's verdict (convlab_explain's arguments) is one of `allowed` (CONVLAB_ALLOW bits), else 0.
 * message (size bytes, always terminated when size > 0; NULL with size 0 for none) gets "convlab: " and
 * the summary, or "convlab: " and the error when the call fails (then 0 too). */
int convlab_check(const convlab_problem *p, const void *x, const void *w, const void *b, const void *initial_states,
                  const void *y, unsigned allowed, char *message, size_t size);

#ifdef __cplusplus
}
#endif
#endif
