/* Available host memory: MemAvailable, the cgroup limits and the address-space limit (memory.h). */
#include "harness/memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char available_memory[] = "available memory", cgroup_limit[] = "the cgroup's limit",
                  address_space_limit[] = "the address-space limit (ulimit -v)";

/* A small file read whole into buf (terminated), or NULL. */
static const char *read_small(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  size_t n = fread(buf, 1, size - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

/* A byte count ("123\n"), or -1 for "max", absent or unreadable text. */
static double parse_bytes(const char *text) {
  if (!text || strncmp(text, "max", 3) == 0) return -1.0;
  char *end = NULL;
  double v = strtod(text, &end);
  return end != text && v >= 0.0 ? v : -1.0;
}

c1d_memory_room c1d_memory_available_from(const char *meminfo, const char *cg_limit, const char *cg_usage) {
  c1d_memory_room room = {0.0, available_memory};
  const char *line = meminfo ? strstr(meminfo, "MemAvailable:") : NULL;
  double kb = 0.0;
  if (line && sscanf(line, "MemAvailable: %lf kB", &kb) == 1) room.bytes = kb * 1024.0;
  const double limit = parse_bytes(cg_limit), usage = parse_bytes(cg_usage);
  /* v1 writes "no limit" as a huge number (2^63 rounded to pages): anything above 2^60 is none. */
  if (limit >= 0.0 && limit < 0x1p60 && usage >= 0.0) {
    const double left = limit > usage ? limit - usage : 0.0;
    if (room.bytes == 0.0 || left < room.bytes) room = (c1d_memory_room){left, cgroup_limit};
  }
  return room;
}

c1d_memory_room c1d_memory_within_address_space(c1d_memory_room room, double limit, double mapped) {
  if (limit < 0.0) return room;
  const double left = limit > mapped ? limit - mapped : 0.0;
  if (room.bytes == 0.0 || left < room.bytes) room = (c1d_memory_room){left, address_space_limit};
  return room;
}

static void lower_to(c1d_memory_room *room, const char *meminfo, const char *limit_path,
                     const char *usage_path) {
  char limit[64], usage[64];
  c1d_memory_room here =
      c1d_memory_available_from(meminfo, read_small(limit_path, limit, sizeof limit),
                                read_small(usage_path, usage, sizeof usage));
  if (here.bytes < room->bytes || room->bytes == 0.0) *room = here;
}

c1d_memory_room c1d_memory_available(void) {
  static char meminfo[16384];
  const char *mi = read_small("/proc/meminfo", meminfo, sizeof meminfo);
  c1d_memory_room room = c1d_memory_available_from(mi, NULL, NULL);
  char cgroups[4096], dir[4096], a[4200], b[4200];
  const char *cg = read_small("/proc/self/cgroup", cgroups, sizeof cgroups);
  const char *v2 = cg ? strstr(cg, "0::") : NULL;
  if (v2 && (v2 == cg || v2[-1] == '\n')) { /* v2: every level from this cgroup up to the root */
    snprintf(dir, sizeof dir, "/sys/fs/cgroup%.*s", (int)strcspn(v2 + 3, "\n"), v2 + 3);
    for (;;) {
      snprintf(a, sizeof a, "%s/memory.max", dir);
      snprintf(b, sizeof b, "%s/memory.current", dir);
      lower_to(&room, mi, a, b);
      char *slash = strrchr(dir, '/');
      if (!slash || slash - dir < (long)strlen("/sys/fs/cgroup")) break;
      *slash = '\0';
    }
  }
  /* v1: the memory controller's own mount, as this process sees it (a container sees its cgroup). */
  lower_to(&room, mi, "/sys/fs/cgroup/memory/memory.limit_in_bytes",
           "/sys/fs/cgroup/memory/memory.usage_in_bytes");
  /* ulimit -v counts address space, not memory: what is mapped already (statm's first field, in pages,
   * libraries and reserved arenas included) is gone from it. */
  struct rlimit as;
  char statm[256];
  unsigned long long pages = 0;
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    if (!read_small("/proc/self/statm", statm, sizeof statm) || sscanf(statm, "%llu", &pages) != 1) pages = 0;
    const double mapped = (double)pages * (double)sysconf(_SC_PAGESIZE);
    room = c1d_memory_within_address_space(room, (double)as.rlim_cur, mapped);
  }
  return room;
}
