/* Hopper's own matrix and copy instructions, as the tensor-core kernels use them (sm_90a only: wgmma
 * exists on no other target; build the files that include this with -gencode arch=compute_90a,
 * code=sm_90a, gpu/CMakeLists.txt). CUDA C++ only.
 *  - wgmma.mma_async TF32, A from registers, B from shared memory through a matrix descriptor: the B
 *    tile is [row][32] floats (K-major, 128-byte rows) in the 128-byte swizzle that the
 *    bulk tensor copy writes with CU_TENSOR_MAP_SWIZZLE_128B (16-byte chunk c of row r at chunk
 *    c ^ (r % 8)), 1024-byte aligned; a k-step of 8 advances the descriptor's
 *    start address by 32 bytes inside the swizzle row (as CUTLASS's GMMA descriptors do).
 *  - A fragment (PTX ISA, wgmma .m64nNk8 .tf32): warp w of the warpgroup owns rows 16w..16w+15; lane l
 *    (g = l/4, q = l%4) holds a0 = A[g][q], a1 = A[g+8][q], a2 = A[g][q+4], a3 = A[g+8][q+4].
 *  - accumulator: d[4j+e] = D[16w + g + 8*(e/2)][8j + 2q + e%2].
 *  - the bulk tensor copy (cp.async.bulk.tensor) completing on an mbarrier (expect_tx / try_wait.parity). */
#ifndef C1D_GPU_WGMMA_H
#define C1D_GPU_WGMMA_H

#include <stdint.h>

// --- matrix descriptors and the wgmma fences ----------------------------------------------------

/* The descriptor of a K-major, 128-byte-swizzled tile at smem (1024-byte aligned; plus 32 bytes per
 * k-step): start address >> 4 in bits 0-13, leading offset 16 bytes (unused by this layout), stride
 * offset 1024 bytes (8 rows of 128 bytes) in bits 32-45, layout type 1 (128-byte swizzle) in bits 62-63. */
static __device__ __forceinline__ uint64_t wg_desc_sw128(const void *smem) {
  const uint32_t a = (uint32_t)__cvta_generic_to_shared(smem);
  return (uint64_t)((a & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
         ((uint64_t)1 << 62);
}

/* A descriptor computed here, before the wgmma batch: ptxas serialises wgmmas whose inputs are defined
 * by other instructions between them (warning C7513). */
static __device__ __forceinline__ uint64_t wg_desc_pin(uint64_t d) {
  asm volatile("" : "+l"(d)::"memory");
  return d;
}

/* Before the first wgmma that reads registers other instructions wrote (accumulators, A fragments). */
static __device__ __forceinline__ void wg_fence(void) { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
static __device__ __forceinline__ void wg_commit(void) {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
/* Waits until at most N committed wgmma groups of this warpgroup are pending. */
template <int N>
static __device__ __forceinline__ void wg_wait(void) {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/* The accumulator registers are read or written by ordinary instructions only after wg_wait; this
 * keeps the compiler from moving those accesses across it. */
template <int R>
static __device__ __forceinline__ void wg_hold(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; i++) asm volatile("" : "+f"(d[i])::"memory");
}

// --- mbarrier and the bulk tensor copy ------------------------------------------------------------

static __device__ __forceinline__ void wg_bar_init(uint64_t *bar, int count) {
  const uint32_t a = (uint32_t)__cvta_generic_to_shared(bar);
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(a), "r"(count) : "memory");
}
/* Makes initialised mbarriers visible to the copy engine (the async proxy). */
static __device__ __forceinline__ void wg_bar_fence_init(void) {
  asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;\n" ::: "memory");
}
static __device__ __forceinline__ void wg_bar_expect(uint64_t *bar, uint32_t bytes) {
  const uint32_t a = (uint32_t)__cvta_generic_to_shared(bar);
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(a), "r"(bytes) : "memory");
}
/* One arrival (this thread's) on the barrier's current phase. */
static __device__ __forceinline__ void wg_bar_arrive(uint64_t *bar) {
  const uint32_t a = (uint32_t)__cvta_generic_to_shared(bar);
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(a) : "memory");
}
/* A barrier among the 128 threads of one warpgroup (named barrier id, 1..15). */
static __device__ __forceinline__ void wg_sync(int id) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory");
}
/* Spins until the barrier's phase of that parity has completed. */
static __device__ __forceinline__ void wg_bar_wait(uint64_t *bar, uint32_t parity) {
  const uint32_t a = (uint32_t)__cvta_generic_to_shared(bar);
  asm volatile(
      "{\n.reg .pred done;\nWG_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WG_WAIT;\n}\n" ::"r"(a),
      "r"(parity)
      : "memory");
}
/* One 3-D box of the tensor map into smem; completes on bar (which expects its bytes). */
static __device__ __forceinline__ void wg_tma_load_3d(void *smem, const void *tmap, uint64_t *bar, int c0,
                                                      int c1, int c2) {
  const uint32_t d = (uint32_t)__cvta_generic_to_shared(smem), b = (uint32_t)__cvta_generic_to_shared(bar);
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, "
      "%5}], [%2];\n" ::"r"(d),
      "l"(tmap), "r"(b), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// --- wgmma, TF32 (written out for the two widths the kernels use) --------------------------------------

/* The accumulator operands of one thread: 64 or 128 floats, tied in and out ("+f"), numbered from %0. */
#define WG_F8(d, i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
                    "+f"(d[i + 6]), "+f"(d[i + 7])
#define WG_F64(d, i) WG_F8(d, i), WG_F8(d, i + 8), WG_F8(d, i + 16), WG_F8(d, i + 24), WG_F8(d, i + 32), \
                     WG_F8(d, i + 40), WG_F8(d, i + 48), WG_F8(d, i + 56)
#define WG_REGS_0_63 \
  "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
  "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
  "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
  "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define WG_REGS_64_127 \
  "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79," \
  "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95," \
  "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111," \
  "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
/* "setp p from the scale-d operand, then the instruction": accumulate = 0 ignores d's input (d = A*B). */
#define WG_SCALE_D(n) "{\n.reg .pred p;\nsetp.ne.b32 p, %" #n ", 0;\n"

/* d (+)= a * B on a 64 x 128 x 8 TF32 tile: a from registers (this thread's fragment), B through its
 * shared-memory descriptor. */
static __device__ __forceinline__ void wg_mma_64x128x8(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b,
                                                       int accumulate) {
  asm volatile(WG_SCALE_D(69) "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {" WG_REGS_0_63
               "}, {%64,%65,%66,%67}, %68, p, 1, 1;\n}\n"
               : WG_F64(d, 0)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
}

/* The same on a 64 x 256 x 8 tile. */
static __device__ __forceinline__ void wg_mma_64x256x8(float (&d)[128], const uint32_t (&a)[4], uint64_t desc_b,
                                                       int accumulate) {
  asm volatile(WG_SCALE_D(133) "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" WG_REGS_0_63
               "," WG_REGS_64_127 "}, {%128,%129,%130,%131}, %132, p, 1, 1;\n}\n"
               : WG_F64(d, 0), WG_F64(d, 64)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
}

#endif
