/* How much host memory a run may still take: the kernel's MemAvailable (/proc/meminfo: free memory
 * plus what can be reclaimed without swapping), lowered to a cgroup's limit minus its usage when the
 * process runs under one (cgroup v2 memory.max/memory.current up the hierarchy, or v1
 * memory.limit_in_bytes/memory.usage_in_bytes), and to the address-space limit (RLIMIT_AS, ulimit -v)
 * minus the address space already mapped. Another process's 18 GiB are then not counted as free, and
 * neither is memory beyond a container's limit or a `prlimit --as` / `ulimit -v`. */
#ifndef C1D_MEMORY_H
#define C1D_MEMORY_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c1d_memory_room {
  double bytes;        /* what may still be allocated; 0 when unknown */
  const char *limit;   /* what sets it: "available memory", "the cgroup's limit" or "the address-space
                          limit (ulimit -v)" */
} c1d_memory_room;

/* This machine, this process's cgroup and its address-space limit, now. */
c1d_memory_room c1d_memory_available(void);

/* The same from texts: /proc/meminfo, and one cgroup's limit and usage files (NULL when absent; "max"
 * means no limit). For tests and for each level of the hierarchy. */
c1d_memory_room c1d_memory_available_from(const char *meminfo, const char *cg_limit, const char *cg_usage);

/* room lowered to what an address-space limit of `limit` bytes leaves when `mapped` bytes are mapped
 * already (limit < 0: none). For tests, and for c1d_memory_available with getrlimit and /proc/self/statm. */
c1d_memory_room c1d_memory_within_address_space(c1d_memory_room room, double limit, double mapped);

#ifdef __cplusplus
}
#endif
#endif
