#ifndef LOCKSTEP_SHIMS_H
#define LOCKSTEP_SHIMS_H

#include <gst/gst.h>
#include <gst/video/video.h>

/*
 * GStreamer and GLib macros and variadic functions, as plain prefixed functions Swift can import,
 * and the one element Lockstep adds to GStreamer: the presentation stamp.
 */

/* MARK: Constants and macros */

static inline GstClockTime lockstep_clock_time_none(void) { return GST_CLOCK_TIME_NONE; }

/* MARK: Pad probes (GST_PAD_PROBE_INFO_FLOW_RETURN is a macro over a union) */

/** Sets the flow a probe that returns GST_PAD_PROBE_HANDLED for a buffer answers upstream with. */
static inline void lockstep_pad_probe_info_set_flow_return(GstPadProbeInfo *info, GstFlowReturn flow) {
    GST_PAD_PROBE_INFO_FLOW_RETURN(info) = flow;
}

/* MARK: Pads (GST_PAD_IS_EOS and the stream lock are macros) */

static inline gboolean lockstep_pad_is_eos(GstPad *pad) { return GST_PAD_IS_EOS(pad); }
/** Takes the pad's stream lock if no streaming thread holds it; TRUE when taken. */
static inline gboolean lockstep_pad_stream_trylock(GstPad *pad) { return GST_PAD_STREAM_TRYLOCK(pad); }
static inline void lockstep_pad_stream_unlock(GstPad *pad) { GST_PAD_STREAM_UNLOCK(pad); }

/* MARK: Closed captions (gst_buffer_get_video_caption_meta is a macro) */

/**
 * The closed caption data a decoder attached to `buffer` (GstVideoCaptionMeta): its GstVideoCaptionType
 * and bytes, valid while the buffer is. FALSE when it has none.
 */
static inline gboolean lockstep_buffer_has_captions(GstBuffer *buffer) {
    return gst_buffer_get_video_caption_meta(buffer) != NULL;
}
static inline gboolean lockstep_buffer_captions(GstBuffer *buffer, int *type, const guint8 **data, gsize *size) {
    GstVideoCaptionMeta *meta = gst_buffer_get_video_caption_meta(buffer);
    if (meta == NULL) return FALSE;
    *type = (int)meta->caption_type;
    *data = meta->data;
    *size = meta->size;
    return TRUE;
}

/* MARK: Object properties (g_object_set is variadic) */

void lockstep_object_set_string(gpointer object, const char *name, const char *value);
void lockstep_object_set_int(gpointer object, const char *name, gint value);
void lockstep_object_set_uint(gpointer object, const char *name, guint value);
void lockstep_object_set_uint64(gpointer object, const char *name, guint64 value);
void lockstep_object_set_bool(gpointer object, const char *name, gboolean value);
/* Whether the object's class has a property `name` (G_OBJECT_GET_CLASS is a macro). */
gboolean lockstep_object_has_property(gpointer object, const char *name);
void lockstep_object_set_double(gpointer object, const char *name, gdouble value);
void lockstep_object_set_pointer(gpointer object, const char *name, gpointer value);
/** A string property's value, to be freed with g_free; NULL when unset. */
gchar *lockstep_object_get_string(gpointer object, const char *name);
/** An unsigned integer property's value. */
guint lockstep_object_get_uint(gpointer object, const char *name);
gint lockstep_object_get_int(gpointer object, const char *name);
gboolean lockstep_object_get_bool(gpointer object, const char *name);

/* MARK: Signals (g_signal_connect is a macro) */

gulong lockstep_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data,
                               GClosureNotify destroy);

/* MARK: Clocks */

/* A new GstSystemClock on CLOCK_MONOTONIC, owned by the caller: the base of every master clock. */
GstClock *lockstep_monotonic_clock_new(const char *name);

/* MARK: Presentation stamp element */

/*
 * Called after the downstream sink returned from rendering the frame at `pts`, the frame's item (stream)
 * time, not the buffer's timestamp: the sink has waited on the clock and
 * rendered, so `clock_time` is when the frame was presented on the pipeline clock. Runs on the render
 * thread: keep it short.
 */
typedef void (*LockstepPresentedFunc)(gpointer user_data, GstClockTime pts, GstClockTime duration,
                                      GstClockTime running_time, GstClockTime clock_time, GstClockTime base_time);

/*
 * A pass-through element for the render thread: it remembers the last frame it passed (for snapshots)
 * and reports each frame's presentation once the sink downstream of it returns.
 */
GstElement *lockstep_presentation_stamp_new(const char *name, LockstepPresentedFunc func, gpointer user_data,
                                            GDestroyNotify destroy);
/* The frame most recently passed downstream (prerolled or presented), with its caps; NULL before the first. */
GstSample *lockstep_presentation_stamp_last_sample(GstElement *stamp);
/*
 * While the pipeline plays, holds back every frame whose base time plus running time is at or after
 * `gate` (a pause's host time less the pipeline's latency), until the element leaves PLAYING, a flush
 * (which also opens the gate), another gate, or 200 ms. GST_CLOCK_TIME_NONE opens it. `held` (a held
 * frame's start, from PAUSED): it holds before the element is PLAYING too.
 */
void lockstep_presentation_stamp_set_gate(GstElement *stamp, GstClockTime gate, gboolean held);

/*
 * When `message` is a video sink asking for its window (prepare-window-handle), hands it `handle`
 * (an X window id) and returns TRUE.
 */
static inline gboolean lockstep_video_overlay_prepare(GstMessage *message, guintptr handle) {
    if (!gst_is_video_overlay_prepare_window_handle_message(message)) return FALSE;
    gst_video_overlay_set_window_handle(GST_VIDEO_OVERLAY(GST_MESSAGE_SRC(message)), handle);
    return TRUE;
}

/* MARK: Hand-offs ThreadSanitizer cannot see */

/*
 * GStreamer and GLib are not instrumented, and their locks wait on futexes: what one thread writes
 * before handing an object to them (a probe's context, a buffer pushed downstream) and another
 * thread reads in a callback looks like a race to ThreadSanitizer. The thread that hands over
 * calls release on the object's address; the callback calls acquire on it before reading. In a
 * ThreadSanitizer build these are __tsan_release and __tsan_acquire; in any other, nothing.
 */
void lockstep_handoff_release(const void *address);
void lockstep_handoff_acquire(const void *address);

#endif
