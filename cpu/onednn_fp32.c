/* onednn_fp32: oneDNN's forward convolution on the CPU, the library baseline beside cuDNN (what PyTorch's
 * CPU conv runs through). The 1-D problem as oneDNN states it: src (N, C, L) in ncw, weights (O, C, K) in
 * oiw (or (G, O/G, C/G, K) in goiw), the causal pad as padding_l = (K-1)*D zeros and padding_r = 0,
 * dilation D-1 (oneDNN counts the gaps), stride 1, bias optional; the algorithm oneDNN picks
 * (dnnl_convolution_auto), fp32 math kept strict. Its order of summation is oneDNN's own (JIT kernels
 * blocked over channels, or GEMM): a correct output in an order convlab did not write.
 *
 * libdnnl is opened at setup (dlopen of libdnnl.so.2), so that convlab runs where it is absent (the row
 * is then unavailable, with the reason); the header comes from Debian's libdnnl-dev at build time. */
#include "reference/impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef C1D_HAVE_DNNL
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>

#define LIBRARY "libdnnl.so.2"

/* The functions convlab calls, looked up once. */
#define DNNL_FUNCTIONS(X)                                                                              \
  X(dnnl_engine_create) X(dnnl_engine_destroy) X(dnnl_stream_create) X(dnnl_stream_destroy)            \
  X(dnnl_stream_wait) X(dnnl_memory_desc_init_by_tag) X(dnnl_dilated_convolution_forward_desc_init)    \
  X(dnnl_primitive_attr_create) X(dnnl_primitive_attr_destroy) X(dnnl_primitive_attr_set_fpmath_mode) \
  X(dnnl_primitive_desc_create) X(dnnl_primitive_desc_destroy) X(dnnl_primitive_desc_query)            \
  X(dnnl_primitive_create) X(dnnl_primitive_destroy) X(dnnl_primitive_execute) X(dnnl_memory_create)  \
  X(dnnl_memory_destroy)

static struct {
#define FIELD(name) __typeof__(name) *name;
  DNNL_FUNCTIONS(FIELD)
#undef FIELD
} dn;
static int loaded;
static char why[320];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  void *lib = dlopen(LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, sizeof why, "oneDNN (%s) could not be loaded: %s (Debian: apt-get install libdnnl2)", LIBRARY,
             e ? e : "unknown reason");
    return;
  }
#define LOOKUP(name)                                                  \
  if (!(dn.name = (__typeof__(name) *)dlsym(lib, #name))) {           \
    snprintf(why, sizeof why, "%s has no %s", LIBRARY, #name);         \
    return;                                                           \
  }
  DNNL_FUNCTIONS(LOOKUP)
#undef LOOKUP
  loaded = 1;
}

typedef struct onednn_state {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t prim;
  dnnl_memory_desc_t src, wei, bia, dst;
} onednn_state;

static void destroy_state(onednn_state *st) {
  if (!st) return;
  if (st->prim) dn.dnnl_primitive_destroy(st->prim);
  if (st->pd) dn.dnnl_primitive_desc_destroy(st->pd);
  if (st->stream) dn.dnnl_stream_destroy(st->stream);
  if (st->engine) dn.dnnl_engine_destroy(st->engine);
  free(st);
}

/* Unavailable without the library (skipped with the reason, as a GPU row without a GPU); oneDNN's kernels
 * want every dimension in int range. */
static const char *onednn_supported(const c1d_shape *s) {
  pthread_once(&once, load);
  if (!loaded) return why;
  if (s->N > 0x7fffffff || s->C > 0x7fffffff || s->O > 0x7fffffff || s->L > 0x7fffffff || s->K > 0x7fffffff)
    return "a dimension beyond oneDNN's int range";
  return NULL;
}

#define DN(call)                                                                                   \
  do {                                                                                             \
    const dnnl_status_t rc_ = (call);                                                              \
    if (rc_ != dnnl_success) {                                                                     \
      st = c1d_fail(rc_ == dnnl_out_of_memory ? C1D_ERR_NO_MEMORY : C1D_ERR_UNSUPPORTED,            \
                    "oneDNN: %s failed (status %d)", #call, (int)rc_);                             \
      goto done;                                                                                   \
    }                                                                                              \
  } while (0)

static c1d_status onednn_setup(const c1d_shape *s, c1d_exec *ex) {
  const char *no = onednn_supported(s);
  if (no) return c1d_fail(C1D_ERR_UNSUPPORTED, "%s", no);
  c1d_status st = C1D_OK;
  dnnl_primitive_attr_t attr = NULL;
  onednn_state *o = calloc(1, sizeof *o);
  if (!o) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the oneDNN state");
  const int64_t G = c1d_groups(s);
  const dnnl_dims_t src_dims = {s->N, s->C, s->L}, dst_dims = {s->N, s->O, s->L}, bia_dims = {s->O};
  const dnnl_dims_t wei_dims = {s->O, s->C, s->K}, gwei_dims = {G, s->O / G, s->C / G, s->K};
  const dnnl_dims_t strides = {1}, dilates = {s->D - 1}, pad_l = {c1d_pad(s)}, pad_r = {0};
  dnnl_convolution_desc_t cd;
  DN(dn.dnnl_engine_create(&o->engine, dnnl_cpu, 0));
  DN(dn.dnnl_stream_create(&o->stream, o->engine, dnnl_stream_default_flags));
  DN(dn.dnnl_memory_desc_init_by_tag(&o->src, 3, src_dims, dnnl_f32, dnnl_ncw));
  DN(dn.dnnl_memory_desc_init_by_tag(&o->dst, 3, dst_dims, dnnl_f32, dnnl_ncw));
  DN(dn.dnnl_memory_desc_init_by_tag(&o->bia, 1, bia_dims, dnnl_f32, dnnl_x));
  if (G > 1)
    DN(dn.dnnl_memory_desc_init_by_tag(&o->wei, 4, gwei_dims, dnnl_f32, dnnl_goiw));
  else
    DN(dn.dnnl_memory_desc_init_by_tag(&o->wei, 3, wei_dims, dnnl_f32, dnnl_oiw));
  DN(dn.dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_auto, &o->src,
                                                    &o->wei, s->bias ? &o->bia : NULL, &o->dst, strides,
                                                    dilates, pad_l, pad_r));
  DN(dn.dnnl_primitive_attr_create(&attr));
  DN(dn.dnnl_primitive_attr_set_fpmath_mode(attr, dnnl_fpmath_mode_strict)); /* no implicit bf16/tf32 */
  DN(dn.dnnl_primitive_desc_create(&o->pd, &cd, attr, o->engine, NULL));
  DN(dn.dnnl_primitive_create(&o->prim, o->pd));
  {
    const char *impl = NULL;
    if (dn.dnnl_primitive_desc_query(o->pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
      snprintf(ex->algo, sizeof ex->algo, "%s", impl);
  }
  snprintf(ex->math, sizeof ex->math, "fp32 (oneDNN fpmath strict)");
  ex->used_tf32 = 0;
  ex->state = o;
  o = NULL;
done:
  if (attr) dn.dnnl_primitive_attr_destroy(attr);
  destroy_state(o);
  return st;
}

static void onednn_teardown(c1d_exec *ex) {
  destroy_state((onednn_state *)ex->state);
  ex->state = NULL;
}

static c1d_status onednn_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                             c1d_exec *ex) {
  onednn_state *o = (onednn_state *)ex->state;
  c1d_status st = C1D_OK;
  dnnl_memory_t m[4] = {NULL, NULL, NULL, NULL};
  /* oneDNN reads the inputs through non-const handles; it does not write them. */
  DN(dn.dnnl_memory_create(&m[0], &o->src, o->engine, (void *)x));
  DN(dn.dnnl_memory_create(&m[1], &o->wei, o->engine, (void *)w));
  DN(dn.dnnl_memory_create(&m[2], &o->dst, o->engine, y));
  if (s->bias) DN(dn.dnnl_memory_create(&m[3], &o->bia, o->engine, (void *)b));
  {
    const dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, m[0]}, {DNNL_ARG_WEIGHTS, m[1]}, {DNNL_ARG_DST, m[2]},
                                     {DNNL_ARG_BIAS, m[3]}};
    DN(dn.dnnl_primitive_execute(o->prim, o->stream, s->bias ? 4 : 3, args));
    DN(dn.dnnl_stream_wait(o->stream));
  }
done:
  for (int i = 0; i < 4; i++)
    if (m[i]) dn.dnnl_memory_destroy(m[i]);
  return st;
}
#else
static const char *onednn_supported(const c1d_shape *s) {
  (void)s;
  return "built without oneDNN (Debian's libdnnl-dev, then rebuild; sanitizer builds leave it out)";
}
static c1d_status onednn_setup(const c1d_shape *s, c1d_exec *ex) {
  (void)ex;
  return c1d_fail(C1D_ERR_UNSUPPORTED, "%s", onednn_supported(s));
}
static void onednn_teardown(c1d_exec *ex) { (void)ex; }
static c1d_status onednn_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                             c1d_exec *ex) {
  (void)x, (void)w, (void)b, (void)y, (void)ex;
  return c1d_fail(C1D_ERR_UNSUPPORTED, "%s", onednn_supported(s));
}
#endif

const c1d_impl c1d_cpu_onednn_fp32 = {
    .name = "onednn_fp32",
    .summary = "fp32; oneDNN's convolution (the algorithm it picks, fpmath strict): the CPU library baseline",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_FP32,
    .supported = onednn_supported,
    .setup = onednn_setup,
    .teardown = onednn_teardown,
    .run = onednn_run,
    .caps = C1D_CAP_GROUPS,
};
