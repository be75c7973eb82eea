/* onednn_fp32: oneDNN's forward convolution on the CPU, the library baseline beside cuDNN (what PyTorch's
 * CPU conv runs through). The 1-D problem as oneDNN states it: src (N, C, L) in ncw, weights (O, C, K) in
 * oiw (or (G, O/G, C/G, K) in goiw), the causal pad as padding_l = (K-1)*D zeros and padding_r = 0,
 * dilation D-1 (oneDNN counts the gaps), stride 1, bias optional; the algorithm oneDNN picks
 * (dnnl_convolution_auto), fp32 math kept strict. Its order of summation is oneDNN's own (JIT kernels
 * blocked over channels, or GEMM): a correct output in an order convlab did not write.
 *
 * C1D_ONEDNN_IMPL=NAME forces one of oneDNN's implementations, as C1D_CUDNN_ALGO does for the cudnn rows
 * (every one in turn: scripts/onednn_impls.sh). NAME is an implementation's name as oneDNN gives it
 * (dnnl_query_impl_info_str: "brgconv:avx512_core", "jit:avx512_core", "jit:avx2", "x64:gemm:jit" or
 * "gemm:jit", "ref:any", ...), optionally with "@ncw" (convlab's plain tensors only) or "@any" (the layouts
 * the implementation picks, the tensors reordered into them and the output back); or an algorithm kind,
 * "auto", "direct" or "winograd": oneDNN's first implementation of that kind, in the layouts it picks. The
 * candidates are those oneDNN's primitive-descriptor iterator lists for the problem, on the plain tensors
 * first, then in its own layouts, under each algorithm kind. One oneDNN does not offer for the problem
 * leaves the row skipped, with what it does offer. The row's algo names the implementation and its layouts.
 * Reorders only move float32 values; the convolution keeps fpmath strict in every case.
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
#include <strings.h>

#define LIBRARY "libdnnl.so.2"

/* The functions convlab calls, looked up once. */
#define DNNL_FUNCTIONS(X)                                                                              \
  X(dnnl_engine_create) X(dnnl_engine_destroy) X(dnnl_stream_create) X(dnnl_stream_destroy)            \
  X(dnnl_stream_wait) X(dnnl_memory_desc_init_by_tag) X(dnnl_dilated_convolution_forward_desc_init)    \
  X(dnnl_primitive_attr_create) X(dnnl_primitive_attr_destroy) X(dnnl_primitive_attr_set_fpmath_mode) \
  X(dnnl_primitive_desc_create) X(dnnl_primitive_desc_destroy) X(dnnl_primitive_desc_query)            \
  X(dnnl_primitive_create) X(dnnl_primitive_destroy) X(dnnl_primitive_execute) X(dnnl_memory_create)  \
  X(dnnl_memory_destroy) X(dnnl_primitive_desc_iterator_create) X(dnnl_primitive_desc_iterator_next)   \
  X(dnnl_primitive_desc_iterator_fetch) X(dnnl_primitive_desc_iterator_destroy)                        \
  X(dnnl_primitive_desc_query_md) X(dnnl_memory_desc_equal) X(dnnl_reorder_primitive_desc_create)

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

/* The tensors in the implementation's layouts where they differ from convlab's plain ones: the buffers
 * (allocated by oneDNN) and the reorders into them (src, weights) and out of them (dst). */
enum { SRC, WEI, DST, BIA };
typedef struct onednn_state {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t prim;
  dnnl_memory_desc_t src, wei, bia, dst;  /* convlab's plain tensors */
  dnnl_memory_t inner[3];                 /* src, wei, dst in the implementation's layouts (NULL: plain) */
  dnnl_primitive_t reorder[3];            /* plain -> inner for src and wei, inner -> plain for dst */
} onednn_state;

static void destroy_state(onednn_state *st) {
  if (!st) return;
  for (int i = 0; i < 3; i++) {
    if (st->reorder[i]) dn.dnnl_primitive_destroy(st->reorder[i]);
    if (st->inner[i]) dn.dnnl_memory_destroy(st->inner[i]);
  }
  if (st->prim) dn.dnnl_primitive_destroy(st->prim);
  if (st->pd) dn.dnnl_primitive_desc_destroy(st->pd);
  if (st->stream) dn.dnnl_stream_destroy(st->stream);
  if (st->engine) dn.dnnl_engine_destroy(st->engine);
  free(st);
}

/* C1D_ONEDNN_IMPL's value, NULL when unset or empty (oneDNN's own pick on the plain tensors). */
static const char *forced_impl(void) {
  const char *v = getenv("C1D_ONEDNN_IMPL");
  return v && *v ? v : NULL;
}

/* The convolution's descriptor: plain tensors (ncw, oiw/goiw) or any layout the implementation picks. */
static dnnl_status_t describe(const c1d_shape *s, int any, dnnl_alg_kind_t alg, dnnl_memory_desc_t *src,
                              dnnl_memory_desc_t *wei, dnnl_memory_desc_t *bia, dnnl_memory_desc_t *dst,
                              dnnl_convolution_desc_t *cd) {
  const int64_t G = c1d_groups(s);
  const dnnl_dims_t src_dims = {s->N, s->C, s->L}, dst_dims = {s->N, s->O, s->L}, bia_dims = {s->O};
  const dnnl_dims_t wei_dims = {s->O, s->C, s->K}, gwei_dims = {G, s->O / G, s->C / G, s->K};
  const dnnl_dims_t strides = {1}, dilates = {s->D - 1}, pad_l = {c1d_pad(s)}, pad_r = {0};
  dnnl_status_t rc;
  if ((rc = dn.dnnl_memory_desc_init_by_tag(src, 3, src_dims, dnnl_f32, any ? dnnl_format_tag_any : dnnl_ncw)) ||
      (rc = dn.dnnl_memory_desc_init_by_tag(dst, 3, dst_dims, dnnl_f32, any ? dnnl_format_tag_any : dnnl_ncw)) ||
      (rc = dn.dnnl_memory_desc_init_by_tag(bia, 1, bia_dims, dnnl_f32, dnnl_x)))
    return rc;
  if (G > 1)
    rc = dn.dnnl_memory_desc_init_by_tag(wei, 4, gwei_dims, dnnl_f32, any ? dnnl_format_tag_any : dnnl_goiw);
  else
    rc = dn.dnnl_memory_desc_init_by_tag(wei, 3, wei_dims, dnnl_f32, any ? dnnl_format_tag_any : dnnl_oiw);
  if (rc) return rc;
  return dn.dnnl_dilated_convolution_forward_desc_init(cd, dnnl_forward_inference, alg, src, wei,
                                                       s->bias ? bia : NULL, dst, strides, dilates, pad_l, pad_r);
}

static const char *impl_name(const_dnnl_primitive_desc_t pd) {
  const char *impl = NULL;
  if (dn.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl) return "?";
  return impl;
}

/* NAME against oneDNN's name, case aside; "gemm:jit" also names "x64:gemm:jit". */
static int names(const char *want, size_t len, const char *impl) {
  if (strlen(impl) == len && strncasecmp(want, impl, len) == 0) return 1;
  return strncasecmp(impl, "x64:", 4) == 0 && strlen(impl + 4) == len && strncasecmp(want, impl + 4, len) == 0;
}

/* The primitive descriptor C1D_ONEDNN_IMPL=want names for the problem, or NULL with the reason in no[]: what
 * oneDNN offers for it instead (want "list": only that). */
static dnnl_primitive_desc_t find_forced(const c1d_shape *s, const char *want, dnnl_engine_t engine,
                                         const_dnnl_primitive_attr_t attr, char *no, size_t no_size) {
  static const dnnl_alg_kind_t kinds[3] = {dnnl_convolution_auto, dnnl_convolution_direct,
                                           dnnl_convolution_winograd};
  static const char *kind_names[3] = {"auto", "direct", "winograd"};
  const char *at = strchr(want, '@');
  const size_t len = at ? (size_t)(at - want) : strlen(want);
  int layouts = 3; /* bit 0: plain tensors, bit 1: the implementation's layouts */
  int kind = -1;
  if (at) {
    if (strcasecmp(at, "@ncw") == 0) layouts = 1;
    else if (strcasecmp(at, "@any") == 0) layouts = 2;
    else {
      snprintf(no, no_size, "C1D_ONEDNN_IMPL=%s: the layout after @ is ncw (the plain tensors) or any", want);
      return NULL;
    }
  }
  for (int k = 0; k < 3; k++)
    if (strlen(kind_names[k]) == len && strncasecmp(want, kind_names[k], len) == 0) kind = k;
  if (kind >= 0 && !at) layouts = 2; /* an algorithm kind: oneDNN's first, in the layouts it picks */
  /* Every kind is listed (the reason names what the other kinds offer), the layouts asked for only. */
  char offers[200] = ""; /* ", a, b, ...": each name once */
  size_t used = 0;
  unsigned kinds_offered = 0; /* bit k: kinds[k] has an implementation for the problem */
  dnnl_primitive_desc_t chosen = NULL;
  for (int lay = 0; lay < 2 && !chosen; lay++)
    for (int k = 0; k < 3 && !chosen && (layouts >> lay & 1); k++) {
      dnnl_memory_desc_t src, wei, bia, dst;
      dnnl_convolution_desc_t cd;
      dnnl_primitive_desc_iterator_t it = NULL;
      if (describe(s, lay, kinds[k], &src, &wei, &bia, &dst, &cd) != dnnl_success) continue;
      if (dn.dnnl_primitive_desc_iterator_create(&it, &cd, attr, engine, NULL) != dnnl_success) continue;
      do {
        dnnl_primitive_desc_t pd = dn.dnnl_primitive_desc_iterator_fetch(it);
        if (!pd) break;
        const char *name = impl_name(pd);
        kinds_offered |= 1u << k;
        if (kind >= 0 ? k == kind : names(want, len, name)) {
          chosen = pd;
          break;
        }
        const size_t n = strlen(name);
        int seen = 0;
        for (const char *p = strstr(offers, name); p && !seen; p = strstr(p + 1, name))
          seen = p - offers >= 2 && p[-2] == ',' && (p[n] == ',' || p[n] == '\0');
        if (!seen && used + n + 3 < sizeof offers)
          used += (size_t)snprintf(offers + used, sizeof offers - used, ", %s", name);
        dn.dnnl_primitive_desc_destroy(pd);
      } while (dn.dnnl_primitive_desc_iterator_next(it) == dnnl_success);
      dn.dnnl_primitive_desc_iterator_destroy(it);
    }
  if (!chosen && strcasecmp(want, "list") == 0)
    snprintf(no, no_size, "C1D_ONEDNN_IMPL=list (the row does not run): oneDNN offers for this problem: %.130s; "
             "algorithm kinds:%s%s%s", used ? offers + 2 : "nothing", kinds_offered & 1 ? " auto" : "",
             kinds_offered & 2 ? " direct" : "", kinds_offered & 4 ? " winograd" : "");
  else if (!chosen)
    snprintf(no, no_size, "oneDNN does not offer %.40s (C1D_ONEDNN_IMPL) for this problem; it offers: %.140s", want,
             used ? offers + 2 : "nothing");
  return chosen;
}

/* A layout in oneDNN's words: dimensions outermost first (a letter each, upper case where blocked), then
 * the inner blocks, e.g. ncw, nwc, nCw16c, OIw16i16o. */
static void layout_name(const dnnl_memory_desc_t *md, const char *letters, char *out, size_t size) {
  if (!md || md->format_kind != dnnl_blocked) {
    snprintf(out, size, "opaque");
    return;
  }
  const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
  int order[DNNL_MAX_NDIMS], n = md->ndims, k = 0;
  for (int i = 0; i < n; i++) { /* stable: ties keep the logical order */
    int j = i;
    while (j > 0 && b->strides[order[j - 1]] < b->strides[i]) order[j] = order[j - 1], j--;
    order[j] = i;
  }
  char buf[64];
  for (int i = 0; i < n && k < 8; i++) {
    int blocked = 0;
    for (int j = 0; j < b->inner_nblks; j++) blocked |= b->inner_idxs[j] == order[i];
    buf[k++] = (char)(blocked ? letters[order[i]] - 'a' + 'A' : letters[order[i]]);
  }
  buf[k] = '\0';
  for (int j = 0; j < b->inner_nblks && k < 48; j++)
    k += snprintf(buf + k, sizeof buf - (size_t)k, "%lld%c", (long long)b->inner_blks[j], letters[b->inner_idxs[j]]);
  snprintf(out, size, "%.*s", (int)size - 1, buf);
}

/* Unavailable without the library (skipped with the reason, as a GPU row without a GPU); oneDNN's kernels
 * want every dimension in int range; under C1D_ONEDNN_IMPL, unsupported where oneDNN does not offer it. */
static const char *onednn_supported(const c1d_shape *s) {
  static _Thread_local char no[256];
  pthread_once(&once, load);
  if (!loaded) return why;
  if (s->N > 0x7fffffff || s->C > 0x7fffffff || s->O > 0x7fffffff || s->L > 0x7fffffff || s->K > 0x7fffffff)
    return "a dimension beyond oneDNN's int range";
  const char *want = forced_impl();
  if (!want) return NULL;
  dnnl_engine_t engine = NULL;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  snprintf(no, sizeof no, "oneDNN: cannot create a CPU engine and attributes");
  if (dn.dnnl_engine_create(&engine, dnnl_cpu, 0) == dnnl_success &&
      dn.dnnl_primitive_attr_create(&attr) == dnnl_success &&
      dn.dnnl_primitive_attr_set_fpmath_mode(attr, dnnl_fpmath_mode_strict) == dnnl_success)
    pd = find_forced(s, want, engine, attr, no, sizeof no);
  if (pd) dn.dnnl_primitive_desc_destroy(pd);
  if (attr) dn.dnnl_primitive_attr_destroy(attr);
  if (engine) dn.dnnl_engine_destroy(engine);
  return pd ? NULL : no;
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

/* Where the implementation's layout for tensor t (a query) differs from the plain one: its buffer and the
 * reorder between them (into it for inputs, out of it for the output). */
static c1d_status inner_tensor(onednn_state *o, int t, dnnl_query_t query, const dnnl_memory_desc_t *plain) {
  c1d_status st = C1D_OK;
  dnnl_primitive_desc_t rpd = NULL;
  const dnnl_memory_desc_t *md = dn.dnnl_primitive_desc_query_md(o->pd, query, 0);
  if (!md) return c1d_fail(C1D_ERR_INTERNAL, "oneDNN: the implementation has no memory descriptor %d", t);
  if (dn.dnnl_memory_desc_equal(md, plain)) return C1D_OK;
  DN(dn.dnnl_memory_create(&o->inner[t], md, o->engine, DNNL_MEMORY_ALLOCATE));
  if (t == DST)
    DN(dn.dnnl_reorder_primitive_desc_create(&rpd, md, o->engine, plain, o->engine, NULL));
  else
    DN(dn.dnnl_reorder_primitive_desc_create(&rpd, plain, o->engine, md, o->engine, NULL));
  DN(dn.dnnl_primitive_create(&o->reorder[t], rpd));
done:
  if (rpd) dn.dnnl_primitive_desc_destroy(rpd);
  return st;
}

static c1d_status onednn_setup(const c1d_shape *s, c1d_exec *ex) {
  const char *no = onednn_supported(s);
  if (no) return c1d_fail(C1D_ERR_UNSUPPORTED, "%s", no);
  c1d_status st = C1D_OK;
  dnnl_primitive_attr_t attr = NULL;
  onednn_state *o = calloc(1, sizeof *o);
  if (!o) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the oneDNN state");
  const char *want = forced_impl();
  dnnl_convolution_desc_t cd;
  DN(dn.dnnl_engine_create(&o->engine, dnnl_cpu, 0));
  DN(dn.dnnl_stream_create(&o->stream, o->engine, dnnl_stream_default_flags));
  DN(describe(s, 0, dnnl_convolution_auto, &o->src, &o->wei, &o->bia, &o->dst, &cd));
  DN(dn.dnnl_primitive_attr_create(&attr));
  DN(dn.dnnl_primitive_attr_set_fpmath_mode(attr, dnnl_fpmath_mode_strict)); /* no implicit bf16/tf32 */
  if (!want) {
    DN(dn.dnnl_primitive_desc_create(&o->pd, &cd, attr, o->engine, NULL));
    snprintf(ex->algo, sizeof ex->algo, "%s", impl_name(o->pd));
  } else {
    char reason[256], lay[3][24];
    if (!(o->pd = find_forced(s, want, o->engine, attr, reason, sizeof reason))) {
      st = c1d_fail(C1D_ERR_UNSUPPORTED, "%s", reason);
      goto done;
    }
    if ((st = inner_tensor(o, SRC, dnnl_query_src_md, &o->src)) ||
        (st = inner_tensor(o, WEI, dnnl_query_weights_md, &o->wei)) ||
        (st = inner_tensor(o, DST, dnnl_query_dst_md, &o->dst)))
      goto done;
    layout_name(dn.dnnl_primitive_desc_query_md(o->pd, dnnl_query_src_md, 0), "ncw", lay[0], sizeof lay[0]);
    layout_name(dn.dnnl_primitive_desc_query_md(o->pd, dnnl_query_weights_md, 0), c1d_groups(s) > 1 ? "goiw" : "oiw",
                lay[1], sizeof lay[1]);
    layout_name(dn.dnnl_primitive_desc_query_md(o->pd, dnnl_query_dst_md, 0), "ncw", lay[2], sizeof lay[2]);
    const char *impl = impl_name(o->pd);
    if (strcasecmp(want, impl) == 0)
      snprintf(ex->algo, sizeof ex->algo, "%.30s (C1D_ONEDNN_IMPL; %.14s %.14s %.14s)", impl, lay[0], lay[1], lay[2]);
    else
      snprintf(ex->algo, sizeof ex->algo, "%.22s (C1D_ONEDNN_IMPL=%.20s; %.10s %.10s %.10s)", impl, want, lay[0], lay[1],
               lay[2]);
  }
  DN(dn.dnnl_primitive_create(&o->prim, o->pd));
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

static dnnl_status_t reorder(onednn_state *o, int t, dnnl_memory_t from, dnnl_memory_t to) {
  const dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  return dn.dnnl_primitive_execute(o->reorder[t], o->stream, 2, args);
}

static c1d_status onednn_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                             c1d_exec *ex) {
  onednn_state *o = (onednn_state *)ex->state;
  c1d_status st = C1D_OK;
  dnnl_memory_t m[4] = {NULL, NULL, NULL, NULL};
  /* oneDNN reads the inputs through non-const handles; it does not write them. */
  DN(dn.dnnl_memory_create(&m[SRC], &o->src, o->engine, (void *)x));
  DN(dn.dnnl_memory_create(&m[WEI], &o->wei, o->engine, (void *)w));
  DN(dn.dnnl_memory_create(&m[DST], &o->dst, o->engine, y));
  if (s->bias) DN(dn.dnnl_memory_create(&m[BIA], &o->bia, o->engine, (void *)b));
  if (o->reorder[SRC]) DN(reorder(o, SRC, m[SRC], o->inner[SRC]));
  if (o->reorder[WEI]) DN(reorder(o, WEI, m[WEI], o->inner[WEI]));
  {
    const dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, o->inner[SRC] ? o->inner[SRC] : m[SRC]},
                                     {DNNL_ARG_WEIGHTS, o->inner[WEI] ? o->inner[WEI] : m[WEI]},
                                     {DNNL_ARG_DST, o->inner[DST] ? o->inner[DST] : m[DST]},
                                     {DNNL_ARG_BIAS, m[BIA]}};
    DN(dn.dnnl_primitive_execute(o->prim, o->stream, s->bias ? 4 : 3, args));
  }
  if (o->reorder[DST]) DN(reorder(o, DST, o->inner[DST], m[DST]));
  DN(dn.dnnl_stream_wait(o->stream));
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
    .summary = "fp32; oneDNN's convolution (the algorithm it picks, or C1D_ONEDNN_IMPL's; fpmath strict): the "
               "CPU library baseline",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_FP32,
    .supported = onednn_supported,
    .setup = onednn_setup,
    .teardown = onednn_teardown,
    .run = onednn_run,
    .caps = C1D_CAP_GROUPS,
};
