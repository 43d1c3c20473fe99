/* out.h: an applet's output on stdout, and whether it all got there.
 * The units that print what they find or do (report.c, dryrun.c, the CDI
 * refresh's lines) write through out() too, so one failed write anywhere
 * is the run's (out_flush says it at the exit). */
#ifndef OCIDEC_OUT_H
#define OCIDEC_OUT_H

/* printf to stdout, keeping the errno of the first failed write (the
 * failure can come long before the exit, when stdio flushes a full
 * buffer); nothing more is written after one. */
int out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Flush stdout: the errno of the first failed write, or 0. */
int out_flush(void);

#endif
