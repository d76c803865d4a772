#ifndef LOCKSTEP_SHIMS_H
#define LOCKSTEP_SHIMS_H
#include <gst/gst.h>

/// GStreamer macros and variadic calls, as plain prefixed functions Swift can import.
static inline GstClockTime lockstep_clock_time_none(void) { return GST_CLOCK_TIME_NONE; }
#endif
