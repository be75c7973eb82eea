/* The CUDA device seen from C: availability, memory, copies, timing, L2 flushing and version
 * information. Every CUDA call is checked (gpu/check.h); failures come back as c1d_status with a
 * one-line detail naming the call. Nothing here runs a CUDA call before it is asked to, so Criterion
 * can fork test processes first. */
#ifndef C1D_DEVICE_H
#define C1D_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "reference/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NULL when a CUDA device is usable; else a one-line reason ("no CUDA device: ..."). Cached. */
const char *c1d_gpu_unavailable(void);

typedef struct c1d_gpu_info {
  char name[128];
  int sm_count, cc_major, cc_minor;
  int64_t global_mem, l2_bytes, smem_per_block_optin;
  int driver_version, runtime_version;  /* e.g. 13000 */
  long cudnn_version;                    /* cudnnGetVersion(), 0 if not linked */
  int cublas_version;                    /* cublasGetVersion, 0 if not linked */
} c1d_gpu_info;

/* Device 0's properties and the library versions. C1D_ERR_NO_DEVICE without a device. */
c1d_status c1d_gpu_get_info(c1d_gpu_info *info);

/* Device allocation; C1D_ERR_DEVICE_MEMORY names `what` and the size when it fails. */
c1d_status c1d_gpu_malloc(void **ptr, size_t bytes, const char *what);
void c1d_gpu_free(void *ptr); /* NULL does nothing */
c1d_status c1d_gpu_upload(void *dst, const void *src, size_t bytes);
c1d_status c1d_gpu_download(void *dst, const void *src, size_t bytes);
/* Fills count floats with a quiet NaN, so unwritten outputs cannot pass. */
c1d_status c1d_gpu_poison(float *ptr, int64_t count);
/* Fills bytes with 0xFF: a NaN in every float32, bf16 and fp16 element. */
c1d_status c1d_gpu_poison_bytes(void *ptr, size_t bytes);
c1d_status c1d_gpu_synchronize(void);

/* Writes a buffer larger than the L2 cache, so the next timed run starts cold. */
c1d_status c1d_gpu_flush_l2(void);

/* The device-to-device copy bandwidth in GB/s (bytes read plus bytes written over the time): the
 * median of `repeats` cudaMemcpy of `bytes` between two fresh buffers, each after an L2 flush, timed
 * by CUDA events; the ceiling of a memory-bound kernel. C1D_ERR_DEVICE_MEMORY without room for both. */
c1d_status c1d_gpu_copy_bandwidth(size_t bytes, int repeats, double *gbps);

/* A steady stream of launches, as decoders replay them in CUDA graphs (issue 24's decode shapes, whose
 * single launches are a few microseconds): enqueue(ctx, i, stream) for i = 0 .. launches-1, captured
 * once into a CUDA graph on a stream of its own, the graph replayed once to warm up and then `repeats`
 * times, each replay timed by CUDA events. *ms: the median replay's time over `launches`. Nothing is
 * flushed between launches: the caller rotates its buffers so that each launch's data comes from
 * device memory. enqueue's stream is a cudaStream_t; it must only enqueue work (no allocation, no sync). */
typedef c1d_status (*c1d_gpu_enqueue_fn)(void *ctx, int i, void *stream);
c1d_status c1d_gpu_graph_time(c1d_gpu_enqueue_fn enqueue, void *ctx, int launches, int repeats, double *ms);

/* A device copy as one kernel on `stream` (a cudaStream_t; NULL: the default stream): 16-byte vectors,
 * so dst, src and bytes must be multiples of 16 (C1D_ERR_USAGE otherwise). */
c1d_status c1d_gpu_copy_kernel_async(void *dst, const void *src, size_t bytes, void *stream);

/* The copy's bandwidth in such a stream (GB/s, bytes read plus bytes written): `launches` copy kernels
 * (c1d_gpu_copy_kernel_async: a graph's cudaMemcpyAsync runs on a copy engine, slower on large slices)
 * of `bytes` in one graph, the i-th between the (i mod sets)-th slices of two buffers (slices 256-byte
 * aligned), timed as c1d_gpu_graph_time does. */
c1d_status c1d_gpu_copy_bandwidth_stream(size_t bytes, int sets, int launches, int repeats, double *gbps);

/* CUDA-event timing of work enqueued between start and stop on the default stream. */
typedef struct c1d_gpu_timer c1d_gpu_timer;
c1d_status c1d_gpu_timer_create(c1d_gpu_timer **timer);
void c1d_gpu_timer_destroy(c1d_gpu_timer *timer); /* NULL does nothing */
c1d_status c1d_gpu_timer_start(c1d_gpu_timer *timer);
c1d_status c1d_gpu_timer_stop(c1d_gpu_timer *timer, double *ms); /* waits for the stop event */

#ifdef __cplusplus
}
#endif
#endif
