/* What a report records about the machine it ran on: the CPU, the OpenMP thread count, and the GPU with
 * its driver and library versions when one is usable. */
#ifndef C1D_MACHINE_H
#define C1D_MACHINE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c1d_machine {
  char cpu[128];        /* /proc/cpuinfo's model name, or "unknown" */
  int threads;          /* omp_get_max_threads() */
  double memory_bytes;  /* physical memory, 0 if unknown */
  int has_gpu;          /* 0: the fields below are empty and gpu_reason says why */
  char gpu_reason[256];
  char gpu_name[128];
  int sm_count, cc_major, cc_minor;
  int driver_version, runtime_version; /* e.g. 13000 */
  long cudnn_version;                  /* 0 when not linked */
  int cublas_version;                  /* 0 when not linked */
} c1d_machine;

/* Fills m. Never fails: what cannot be found is left empty. Touches the CUDA runtime only when this
 * build has CUDA. */
void c1d_machine_describe(c1d_machine *m);

/* "13.0" from 13000 (CUDA's encoding), into buf. */
void c1d_cuda_version_text(int v, char *buf, int size);

#ifdef __cplusplus
}
#endif
#endif
