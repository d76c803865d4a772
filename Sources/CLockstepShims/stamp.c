#include "CLockstepShims.h"

#include <pthread.h>

/*
 * lockstep presentation stamp: one sink pad, one src pad, buffers pass through unchanged.
 *
 * It sits directly in front of the video sink, in the render thread. gst_pad_push() into a sink returns
 * only after the sink has prerolled, waited on the clock and rendered the buffer, so reading the
 * pipeline clock when the push returns gives the time the frame was actually presented, measured
 * where it renders, for any sink.
 */

typedef struct {
    GstElement parent;
    GstPad *sinkpad;
    GstPad *srcpad;
    /* A pthread mutex rather than a GMutex: the same on Linux, and one ThreadSanitizer can see (GLib's
     * waits on futexes in uninstrumented code). The render thread and snapshot readers share it. */
    pthread_mutex_t lock;
    GstSegment segment;
    GstCaps *caps;
    GstSample *last_sample;
    LockstepPresentedFunc func;
    gpointer user_data;
    GDestroyNotify destroy;
} LockstepStamp;

typedef struct {
    GstElementClass parent_class;
} LockstepStampClass;

G_DEFINE_TYPE(LockstepStamp, lockstep_stamp, GST_TYPE_ELEMENT)

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static GstFlowReturn lockstep_stamp_chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    LockstepStamp *self = (LockstepStamp *)parent;
    GstClockTime pts = GST_BUFFER_PTS(buffer);
    GstClockTime duration = GST_BUFFER_DURATION(buffer);

    pthread_mutex_lock(&self->lock);
    GstClockTime running_time = gst_segment_to_running_time(&self->segment, GST_FORMAT_TIME, pts);
    /* The item time of the frame: its stream time. The buffer's own timestamp is not, for media whose
     * first frame is not at zero (an MP4 edit list shifting B-frame reordering delay, an MPEG-TS
     * stream's start): the segment maps one to the other. */
    GstClockTime stream_time = gst_segment_to_stream_time(&self->segment, GST_FORMAT_TIME, pts);
    GstClockTime item_time = GST_CLOCK_TIME_IS_VALID(stream_time) ? stream_time : pts;
    GstSample *sample = gst_sample_new(buffer, self->caps, &self->segment, NULL);
    GstSample *old = self->last_sample;
    self->last_sample = sample;
    pthread_mutex_unlock(&self->lock);
    if (old != NULL) gst_sample_unref(old);

    GstFlowReturn result = gst_pad_push(self->srcpad, buffer);
    if (result == GST_FLOW_OK && self->func != NULL) {
        GstClock *clock = gst_element_get_clock(GST_ELEMENT_CAST(self));
        if (clock != NULL) {
            GstClockTime now = gst_clock_get_time(clock);
            gst_object_unref(clock);
            self->func(self->user_data, item_time, duration, running_time, now,
                       gst_element_get_base_time(GST_ELEMENT_CAST(self)));
        }
    }
    return result;
}

static gboolean lockstep_stamp_sink_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    LockstepStamp *self = (LockstepStamp *)parent;
    switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_CAPS: {
        GstCaps *caps = NULL;
        gst_event_parse_caps(event, &caps);
        pthread_mutex_lock(&self->lock);
        gst_caps_replace(&self->caps, caps);
        pthread_mutex_unlock(&self->lock);
        break;
    }
    case GST_EVENT_SEGMENT:
        pthread_mutex_lock(&self->lock);
        gst_event_copy_segment(event, &self->segment);
        pthread_mutex_unlock(&self->lock);
        break;
    case GST_EVENT_FLUSH_STOP:
        pthread_mutex_lock(&self->lock);
        gst_segment_init(&self->segment, GST_FORMAT_TIME);
        pthread_mutex_unlock(&self->lock);
        break;
    default:
        break;
    }
    return gst_pad_event_default(pad, parent, event);
}

static void lockstep_stamp_finalize(GObject *object) {
    LockstepStamp *self = (LockstepStamp *)object;
    if (self->last_sample != NULL) gst_sample_unref(self->last_sample);
    gst_caps_replace(&self->caps, NULL);
    if (self->destroy != NULL) self->destroy(self->user_data);
    pthread_mutex_destroy(&self->lock);
    G_OBJECT_CLASS(lockstep_stamp_parent_class)->finalize(object);
}

static void lockstep_stamp_class_init(LockstepStampClass *klass) {
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
    object_class->finalize = lockstep_stamp_finalize;
    gst_element_class_add_static_pad_template(element_class, &sink_template);
    gst_element_class_add_static_pad_template(element_class, &src_template);
    gst_element_class_set_static_metadata(element_class, "Lockstep presentation stamp", "Generic",
                                          "Reports when the downstream sink presented each buffer",
                                          "Lockstep");
}

static void lockstep_stamp_init(LockstepStamp *self) {
    pthread_mutex_init(&self->lock, NULL);
    gst_segment_init(&self->segment, GST_FORMAT_TIME);
    self->sinkpad = gst_pad_new_from_static_template(&sink_template, "sink");
    gst_pad_set_chain_function(self->sinkpad, lockstep_stamp_chain);
    gst_pad_set_event_function(self->sinkpad, lockstep_stamp_sink_event);
    GST_PAD_SET_PROXY_CAPS(self->sinkpad);
    GST_PAD_SET_PROXY_ALLOCATION(self->sinkpad);
    GST_PAD_SET_PROXY_SCHEDULING(self->sinkpad);
    gst_element_add_pad(GST_ELEMENT_CAST(self), self->sinkpad);

    self->srcpad = gst_pad_new_from_static_template(&src_template, "src");
    GST_PAD_SET_PROXY_CAPS(self->srcpad);
    GST_PAD_SET_PROXY_ALLOCATION(self->srcpad);
    GST_PAD_SET_PROXY_SCHEDULING(self->srcpad);
    gst_element_add_pad(GST_ELEMENT_CAST(self), self->srcpad);
}

GstElement *lockstep_presentation_stamp_new(const char *name, LockstepPresentedFunc func, gpointer user_data,
                                            GDestroyNotify destroy) {
    LockstepStamp *self = g_object_new(lockstep_stamp_get_type(), "name", name, NULL);
    self->func = func;
    self->user_data = user_data;
    self->destroy = destroy;
    return GST_ELEMENT_CAST(self);
}

GstSample *lockstep_presentation_stamp_last_sample(GstElement *stamp) {
    LockstepStamp *self = (LockstepStamp *)stamp;
    pthread_mutex_lock(&self->lock);
    GstSample *sample = self->last_sample != NULL ? gst_sample_ref(self->last_sample) : NULL;
    pthread_mutex_unlock(&self->lock);
    return sample;
}
