/* Machine description for reports. */
#include "harness/machine.h"

#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "harness/execute.h"
#include "harness/runner.h"
#ifdef C1D_HAVE_CUDA
#include "gpu/device.h"
#endif

static void cpu_model(char *out, size_t size) {
  char line[512];
  snprintf(out, size, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    const char *v = strchr(line, ':');
    if (!v) break;
    v++;
    while (*v == ' ' || *v == '\t') v++;
    snprintf(out, size, "%s", v);
    out[strcspn(out, "\n")] = '\0';
    break;
  }
  fclose(f);
}

void c1d_machine_describe(c1d_machine *m) {
  memset(m, 0, sizeof *m);
  cpu_model(m->cpu, sizeof m->cpu);
  m->threads = omp_get_max_threads();
  m->memory_bytes = c1d_physical_memory();
  const char *why = c1d_gpu_why_unavailable();
  if (why) {
    snprintf(m->gpu_reason, sizeof m->gpu_reason, "%s", why);
    return;
  }
#ifdef C1D_HAVE_CUDA
  c1d_gpu_info info;
  if (c1d_gpu_get_info(&info) != C1D_OK) {
    snprintf(m->gpu_reason, sizeof m->gpu_reason, "%s", c1d_error_detail());
    return;
  }
  m->has_gpu = 1;
  snprintf(m->gpu_name, sizeof m->gpu_name, "%s", info.name);
  m->sm_count = info.sm_count;
  m->cc_major = info.cc_major;
  m->cc_minor = info.cc_minor;
  m->driver_version = info.driver_version;
  m->runtime_version = info.runtime_version;
  m->cudnn_version = info.cudnn_version;
  m->cublas_version = info.cublas_version;
#endif
}

void c1d_cuda_version_text(int v, char *buf, int size) {
  snprintf(buf, (size_t)size, "%d.%d", v / 1000, (v % 1000) / 10);
}
