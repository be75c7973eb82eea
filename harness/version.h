/* convlab's version, recorded in every report. Bump the minor on a report-format change. */
#ifndef C1D_VERSION_H
#define C1D_VERSION_H
#define C1D_VERSION "0.1.0"
#endif
