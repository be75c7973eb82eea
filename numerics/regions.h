/* Where offending elements are: a mark per element, and the description of the marked set as one region
 * class (left edge, right edge, last partial tile, channels, batches, positions, tile-aligned blocks, tile
 * seams, scattered, everywhere) with compact ranges of n, o and t. The classifier marks; this names. */
#ifndef C1D_REGIONS_H
#define C1D_REGIONS_H

#include <stdint.h>

#include "numerics/classifier.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tiled kernels' block: 8 output channels x 32 positions. */
enum { C1D_TILE_O = 8, C1D_TILE_T = 32 };

/* How many of the M flags are set. */
int64_t c1d_count_marks(const unsigned char *mark, int64_t M);

/* Describes the elements with mark[i] != 0 (N*O*L flags) into r; total: elements compared. Returns 0,
 * or -1 without memory. */
int c1d_describe_marks(const unsigned char *mark, const c1d_layout *lay, int64_t total, c1d_region *r);

/* Whether the marked elements crowd into one batch, output channel, row (n, o), position t, 32-position
 * block or tile seam class (t mod 32) beyond chance: the fullest category of some dimension holds at
 * least `ratio` times its share of the marks, and at least that many marks are unlikely under marks
 * spread uniformly (binomial, Bonferroni over the categories and dimensions, at probability alpha). The
 * effect size keeps the test from firing on the mild unevenness of rounding tails at tens of millions of
 * elements. */
int c1d_marks_concentrated(const unsigned char *mark, const c1d_layout *lay, double ratio, double alpha);

#ifdef __cplusplus
}
#endif
#endif
