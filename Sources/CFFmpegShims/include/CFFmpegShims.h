#ifndef LOCKSTEP_FFMPEG_SHIMS_H
#define LOCKSTEP_FFMPEG_SHIMS_H

#include <libavformat/avformat.h>
#include <libavutil/error.h>

/*
 * FFmpeg macros as plain prefixed functions Swift can import. Apart from the GStreamer shims, so
 * that what reads media with libavformat alone (the calibration's camera video, and with it
 * wallctl) links no GStreamer.
 */

static inline int64_t lockstep_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int lockstep_av_time_base(void) { return AV_TIME_BASE; }
static inline int lockstep_avprobe_padding_size(void) { return AVPROBE_PADDING_SIZE; }
static inline int lockstep_avprobe_score_max(void) { return AVPROBE_SCORE_MAX; }
static inline int lockstep_averror_eof(void) { return AVERROR_EOF; }
static inline int lockstep_averror_eagain(void) { return AVERROR(EAGAIN); }

#endif
