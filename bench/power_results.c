/* The power benchmark's records: kept in memory, written as one tab-separated file per shard (names, not
 * indices, so that a file stays readable and survives a reordered table), read back and merged, and
 * summed into the tallies that the tables and the criteria are made of. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/power_internal.h"
#include "harness/atomic_file.h"

#define POWER_FILE_MAGIC "# convlab power benchmark records"
#define POWER_COLUMNS                                                                             \
  "problem\tdist\tfamily\tvariant\tterms\torder\tbug\tsize\tregion\tscale\tverdict\tclass\tcalled\tlocated\t" \
  "in_bound\tlost\twhere\treason"
#define POWER_FIELDS 18

c1d_status power_results_push(c1d_power_results *res, const c1d_power_record *r) {
  if (res->count == res->cap) {
    const int64_t cap = res->cap ? 2 * res->cap : 1024;
    c1d_power_record *grown = realloc(res->records, (size_t)cap * sizeof *grown);
    if (!grown) return c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot grow the records to %lld", (long long)cap);
    res->records = grown;
    res->cap = cap;
  }
  res->records[res->count++] = *r;
  return C1D_OK;
}

void c1d_power_results_free(c1d_power_results *res) {
  free(res->records);
  memset(res, 0, sizeof *res);
}

// --- files ------------------------------------------------------------------------------------------

c1d_status c1d_power_write(const char *path, const c1d_power_results *res) {
  c1d_atomic_file af;
  c1d_status st = c1d_atomic_open(&af, path);
  if (st != C1D_OK) return st;
  FILE *f = af.f;
  fprintf(f, "%s (bench/power.h); merge shards with bench_power --merge\n", POWER_FILE_MAGIC);
  fprintf(f, "campaign\t%s\nshard\t%d\t%d\ntorch\t%d\nproblems\t%d\nseconds\t%.3f\nrecords\t%lld\n",
          res->campaign, res->shard + 1, res->shards, res->torch, res->problems, res->seconds,
          (long long)res->count);
  fprintf(f, "columns\t%s\n", POWER_COLUMNS);
  for (int64_t i = 0; i < res->count; i++) {
    const c1d_power_record *r = &res->records[i];
    char size[16] = "-";
    if (r->size >= 0) snprintf(size, sizeof size, "%g", c1d_power_sizes[r->size]);
    fprintf(f, "%d\t%s\t%d\t%s\t%lld\t%s\t%s\t%s\t%lld\t%.17g\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n",
            r->problem, c1d_power_dist_name(r->dist), r->family, r->variant, (long long)r->terms,
            c1d_power_order_name(r->order), c1d_power_bug_name(r->bug), size, (long long)r->region_elems,
            r->scale, c1d_verdict_name(r->verdict), c1d_region_class_name(r->cls), r->called_bug, r->located,
            r->in_bound, r->lost, r->where[0] ? r->where : "-", r->reason[0] ? r->reason : "-");
  }
  return c1d_atomic_commit(&af);
}

static int find_dist(const char *name) {
  for (int d = 0; d < C1D_POWER_DIST_COUNT; d++)
    if (strcmp(c1d_power_dist_name(d), name) == 0) return d;
  return -1;
}

static int find_verdict(const char *name) {
  for (int v = 0; v < C1D_VERDICT_COUNT; v++)
    if (strcmp(c1d_verdict_name((c1d_verdict)v), name) == 0) return v;
  return -1;
}

static int find_class(const char *name) {
  for (int c = 0; c < C1D_REGION_CLASS_COUNT; c++)
    if (strcmp(c1d_region_class_name((c1d_region_class)c), name) == 0) return c;
  return -1;
}

static int find_size(const char *text) {
  if (strcmp(text, "-") == 0) return -1;
  char *end;
  const double v = strtod(text, &end);
  for (int s = 0; s < C1D_POWER_SIZE_COUNT && *end == '\0'; s++)
    if (v == c1d_power_sizes[s]) return s;
  return -2;
}

/* Splits line at tabs into at most max fields; returns the count. */
static int split_tabs(char *line, char **fields, int max) {
  int n = 0;
  for (char *p = line; n < max;) {
    fields[n++] = p;
    char *tab = strchr(p, '\t');
    if (!tab) break;
    *tab = '\0';
    p = tab + 1;
  }
  return n;
}

static c1d_status parse_record(char *line, c1d_power_record *r, const char *path, long lineno) {
  char *f[POWER_FIELDS + 1];
  if (split_tabs(line, f, POWER_FIELDS + 1) != POWER_FIELDS)
    return c1d_fail(C1D_ERR_FORMAT, "%s:%ld: a record needs %d tab-separated fields", path, lineno, POWER_FIELDS);
  memset(r, 0, sizeof *r);
  char *end, *fam_end;
  r->problem = (int)strtol(f[0], &end, 10);
  r->family = (int)strtol(f[2], &fam_end, 10);
  const int dist = find_dist(f[1]), order = c1d_power_order_find(f[5]);
  const int bug = strcmp(f[6], "-") == 0 ? -1 : c1d_power_bug_find(f[6]);
  const int size = find_size(f[7]), verdict = find_verdict(f[10]), cls = find_class(f[11]);
  if (*end || *fam_end || r->problem < 0 || r->family < 0 || r->family >= C1D_POWER_FAMILY_COUNT || dist < 0 ||
      order < 0 || (bug < 0 && strcmp(f[6], "-") != 0) || size == -2 || (bug < 0) != (size < 0) || verdict < 0 ||
      cls < 0 || strlen(f[3]) >= sizeof r->variant || strlen(f[16]) >= sizeof r->where)
    return c1d_fail(C1D_ERR_FORMAT, "%s:%ld: unknown problem, distribution, family, variant, order, bug, size, "
                    "verdict, region class or stage", path, lineno);
  r->dist = (c1d_power_dist)dist;
  snprintf(r->variant, sizeof r->variant, "%s", f[3]);
  r->terms = strtoll(f[4], NULL, 10);
  r->order = order;
  r->bug = bug;
  r->size = size;
  r->region_elems = strtoll(f[8], NULL, 10);
  r->scale = strtod(f[9], NULL);
  r->verdict = (c1d_verdict)verdict;
  r->cls = (c1d_region_class)cls;
  r->called_bug = atoi(f[12]);
  r->located = atoi(f[13]);
  r->in_bound = atoi(f[14]);
  r->lost = atoi(f[15]);
  if (strcmp(f[16], "-") != 0) snprintf(r->where, sizeof r->where, "%s", f[16]);
  if (strcmp(f[17], "-") != 0) snprintf(r->reason, sizeof r->reason, "%s", f[17]);
  return C1D_OK;
}

c1d_status c1d_power_read(const char *path, c1d_power_results *res, unsigned char **seen) {
  FILE *f = fopen(path, "r");
  if (!f) return c1d_fail(C1D_ERR_IO, "cannot read %s: %s", path, strerror(errno));
  char line[1024], campaign[32] = "";
  long lineno = 0;
  int shard = 0, shards = 0, torch = -1, problems = -1, columns = 0;
  long long records = -1, got = 0;
  double seconds = -1.0;
  c1d_status st = C1D_OK;
  while (st == C1D_OK && fgets(line, sizeof line, f)) {
    lineno++;
    if (!strchr(line, '\n') && !feof(f)) {
      st = c1d_fail(C1D_ERR_FORMAT, "%s:%ld: line too long", path, lineno);
      break;
    }
    line[strcspn(line, "\r\n")] = '\0';
    if (lineno == 1) {
      if (strncmp(line, POWER_FILE_MAGIC, strlen(POWER_FILE_MAGIC)) != 0)
        st = c1d_fail(C1D_ERR_FORMAT, "%s: not a power benchmark shard file", path);
      continue;
    }
    if (!columns) {
      char key[16];
      if (sscanf(line, "campaign\t%31s", campaign) == 1 || sscanf(line, "shard\t%d\t%d", &shard, &shards) == 2 ||
          sscanf(line, "torch\t%d", &torch) == 1 || sscanf(line, "problems\t%d", &problems) == 1 ||
          sscanf(line, "seconds\t%lf", &seconds) == 1 || sscanf(line, "records\t%lld", &records) == 1)
        continue;
      if (sscanf(line, "%15s", key) == 1 && strcmp(key, "columns") == 0 && strcmp(line + 8, POWER_COLUMNS) == 0) {
        columns = 1;
        if (!campaign[0] || shards < 1 || shard < 1 || shard > shards || torch < 0 || problems < 0 ||
            seconds < 0.0 || records < 0)
          st = c1d_fail(C1D_ERR_FORMAT, "%s: incomplete or invalid header", path);
        else if (res->shards && (strcmp(res->campaign, campaign) != 0 || res->shards != shards ||
                                 res->torch != torch))
          st = c1d_fail(C1D_ERR_FORMAT, "%s: shard of campaign '%s' in %d shards (torch %d), expected '%s' "
                        "in %d (torch %d)", path, campaign, shards, torch, res->campaign, res->shards,
                        res->torch);
        else if (*seen && (*seen)[shard - 1])
          st = c1d_fail(C1D_ERR_FORMAT, "%s: shard %d/%d was merged already", path, shard, shards);
        continue;
      }
      st = c1d_fail(C1D_ERR_FORMAT, "%s:%ld: unexpected header line", path, lineno);
      continue;
    }
    c1d_power_record r;
    if ((st = parse_record(line, &r, path, lineno)) == C1D_OK) st = power_results_push(res, &r);
    got++;
  }
  if (st == C1D_OK && ferror(f)) st = c1d_fail(C1D_ERR_IO, "cannot read %s", path);
  fclose(f);
  if (st == C1D_OK && !columns) st = c1d_fail(C1D_ERR_FORMAT, "%s: no records header", path);
  if (st == C1D_OK && got != records)
    st = c1d_fail(C1D_ERR_FORMAT, "%s: %lld records, the header says %lld (truncated?)", path, got, records);
  if (st != C1D_OK) return st;
  if (!*seen && !(*seen = calloc((size_t)shards, 1)))
    return c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate the shard list");
  (*seen)[shard - 1] = 1;
  snprintf(res->campaign, sizeof res->campaign, "%s", campaign);
  res->shards = shards;
  res->shard = shard - 1;
  res->torch = torch;
  res->problems += problems;
  res->seconds += seconds;
  return C1D_OK;
}

// --- tallies -----------------------------------------------------------------------------------------

static c1d_power_variant_row *variant_row(c1d_power_tally *t, const c1d_power_record *r) {
  for (int i = 0; i < t->variant_count; i++)
    if (t->variants[i].family == r->family && strcmp(t->variants[i].name, r->variant) == 0) return &t->variants[i];
  if (t->variant_count == C1D_POWER_MAX_VARIANTS) return NULL; /* more variants than rows: left out */
  c1d_power_variant_row *v = &t->variants[t->variant_count++];
  memset(v, 0, sizeof *v);
  snprintf(v->name, sizeof v->name, "%s", r->variant);
  v->family = r->family;
  return v;
}

enum { SIZE_10X = 1, SIZE_30X = 2 };

c1d_status c1d_power_tally_make(const c1d_power_results *res, c1d_power_tally *t) {
  memset(t, 0, sizeof *t);
  const int F = C1D_POWER_FAMILY_COUNT;
  t->orders = c1d_power_order_count();
  t->bugs = c1d_power_bug_count();
  t->cells = calloc((size_t)(F * t->bugs * C1D_POWER_SIZE_COUNT), sizeof *t->cells);
  t->correct = calloc((size_t)(F * t->orders * C1D_POWER_DIST_COUNT), sizeof *t->correct);
  t->alarms = calloc((size_t)(F * t->orders * C1D_POWER_DIST_COUNT), sizeof *t->alarms);
  t->verdict_by_order = calloc((size_t)(F * t->orders * C1D_VERDICT_COUNT), sizeof *t->verdict_by_order);
  t->verdict_by_dist = calloc((size_t)(F * C1D_POWER_DIST_COUNT * C1D_VERDICT_COUNT), sizeof *t->verdict_by_dist);
  t->stage_runs = calloc((size_t)t->orders, sizeof *t->stage_runs);
  t->stage_named = calloc((size_t)t->orders, sizeof *t->stage_named);
  t->stage_verdicts = calloc((size_t)(t->orders * C1D_VERDICT_COUNT), sizeof *t->stage_verdicts);
  if (!t->cells || !t->correct || !t->alarms || !t->verdict_by_order || !t->verdict_by_dist || !t->stage_runs ||
      !t->stage_named || !t->stage_verdicts) {
    c1d_power_tally_free(t);
    return c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate the tallies");
  }
  for (int64_t i = 0; i < res->count; i++) {
    const c1d_power_record *r = &res->records[i];
    const int fam = r->family;
    c1d_power_variant_row *v = variant_row(t, r);
    if (r->bug < 0) {
      if (!r->in_bound) t->out_of_bound++;
      if (c1d_power_order_stage(r->order) && r->lost) { /* precision lost at a known stage: named right? */
        t->stage_total++;
        t->stage_named_total += r->located;
        t->stage_runs[r->order]++;
        t->stage_named[r->order] += r->located;
        t->stage_verdicts[r->order * C1D_VERDICT_COUNT + r->verdict]++;
        continue;
      }
      t->verdict_by_order[C1D_POWER_OV(t, fam, r->order, r->verdict)]++;
      t->correct_runs++;
      t->family_correct[fam]++;
      t->correct[C1D_POWER_OD(t, fam, r->order, r->dist)]++;
      t->verdict_by_dist[C1D_POWER_DV(fam, r->dist, r->verdict)]++;
      if (v) {
        v->correct++;
        v->alarms += r->called_bug;
        v->verdicts[r->verdict]++;
      }
      if (r->called_bug) {
        t->false_alarms++;
        t->family_alarms[fam]++;
        t->alarms[C1D_POWER_OD(t, fam, r->order, r->dist)]++;
      }
      continue;
    }
    t->bug_runs++;
    t->family_bug_runs[fam]++;
    c1d_power_cell *c = C1D_POWER_CELL(t, fam, r->bug, r->size);
    if (c->runs == 0 || r->region_elems < c->min_region) c->min_region = r->region_elems;
    if (r->region_elems > c->max_region) c->max_region = r->region_elems;
    c->runs++;
    c->called += r->called_bug;
    c->located += r->located;
    if (c1d_power_bug_is_global(r->bug) || r->region_elems >= C1D_POWER_MIN_REGION) {
      c->big_runs++;
      c->big_called += r->called_bug;
      c->big_located += r->located;
      if (v && r->size == SIZE_10X) v->runs10++, v->called10 += r->called_bug;
      if (v && r->size == SIZE_30X) v->runs30++, v->located30 += r->located && r->called_bug;
    }
  }
  return C1D_OK;
}

void c1d_power_tally_free(c1d_power_tally *t) {
  free(t->cells);
  free(t->correct);
  free(t->alarms);
  free(t->verdict_by_order);
  free(t->verdict_by_dist);
  free(t->stage_runs);
  free(t->stage_named);
  free(t->stage_verdicts);
  memset(t, 0, sizeof *t);
}

/* One family's criteria; *ran = 0 when the family has no runs at all. */
static c1d_power_verdicts judge_family(const c1d_power_tally *t, int fam, int *ran) {
  c1d_power_verdicts v = {t->family_correct[fam] > 0 && t->family_alarms[fam] == 0, 1, 1, t->out_of_bound == 0,
                          t->stage_named_total == t->stage_total};
  *ran = t->family_correct[fam] > 0 || t->family_bug_runs[fam] > 0;
  int judged10 = 0, judged30 = 0;
  for (int bug = 0; bug < t->bugs; bug++) {
    const c1d_power_cell *c10 = C1D_POWER_CELL(t, fam, bug, SIZE_10X);
    const c1d_power_cell *c30 = C1D_POWER_CELL(t, fam, bug, SIZE_30X);
    if (c10->big_runs > 0) {
      judged10++;
      if ((double)c10->big_called < 0.95 * (double)c10->big_runs) v.detect_10x = 0;
    }
    if (c30->big_runs > 0) {
      judged30++;
      if (c30->big_located != c30->big_runs || c30->big_called != c30->big_runs) v.locate_30x = 0;
    }
  }
  if (!judged10) v.detect_10x = 0;
  if (!judged30) v.locate_30x = 0;
  return v;
}

c1d_power_verdicts c1d_power_judge(const c1d_power_tally *t, int family) {
  if (family >= 0) {
    int ran;
    return judge_family(t, family, &ran);
  }
  c1d_power_verdicts all = {1, 1, 1, t->out_of_bound == 0, t->stage_named_total == t->stage_total};
  int any = 0;
  for (int fam = 0; fam < C1D_POWER_FAMILY_COUNT; fam++) {
    int ran;
    const c1d_power_verdicts v = judge_family(t, fam, &ran);
    if (!ran) continue;
    any = 1;
    all.no_false_alarm &= v.no_false_alarm;
    all.detect_10x &= v.detect_10x;
    all.locate_30x &= v.locate_30x;
  }
  if (!any) all.no_false_alarm = all.detect_10x = all.locate_30x = 0;
  return all;
}
