#include "CLockstepShims.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

/*
 * lockstep presentation stamp: one sink pad, one src pad, buffers pass through unchanged.
 *
 * It sits directly in front of the video sink, in the render thread. gst_pad_push() into a sink returns
 * only after the sink has prerolled, waited on the clock and rendered the buffer, so reading the
 * pipeline clock when the push returns gives the time the frame was actually presented, measured
 * where it renders, for any sink.
 *
 * It also holds back, while the pipeline plays, every frame due at or after a pause's time (the
 * gate): the pause is a state change made by a thread that wakes for it, and one woken late would
 * otherwise let the sink present frames past the pause (at a cut, the old clip's next frame beside the
 * new clip's first). A held frame goes on when the element leaves PLAYING (the sink prerolls it, as it
 * would a frame it was waiting to present), on a flush, when the gate is opened, or after
 * GATE_LIMIT_NS, so a pause that never comes cannot wedge the render thread. For a held frame's start
 * (a paused frame presented at a host time: a one-frame start from PAUSED, then a pause) the gate
 * holds from before the element is PLAYING: the sink changes state first and may present the held
 * frame and take the next before this element's own change has come.
 *
 * A frame held past a pause is prerolled but not drawn: a video sink draws its preroll, and the glass
 * would show the frame after the pause's (the next item's first, at an item's end) until the exact
 * move that follows a pause. So as it goes on, the sinks downstream stop drawing prerolls
 * (show-preroll-frame), until the next flush (that move), PLAYING or READY; and it is not taken as
 * the last frame shown.
 *
 * The end of a stream waits at the gate as a frame would, at the running time it is due (its segment's
 * stop, else the last frame's end): an item's end past a pause's time does not reach the sink before
 * the pause, so a pause there (or a held frame presented just before its item's end, then paused)
 * meets no end of item.
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
    /* The gate: base time plus running time at or after which frames wait while playing; NONE: open. */
    GstClockTime gate;
    gboolean playing;
    /* The gate holds before this element is PLAYING too, until it leaves PLAYING (a held frame's:
     * the sink, which changes state first, may present the held frame and ask for the next before
     * this element's own change to PLAYING has come). */
    gboolean held;
    gboolean flushing;
    /* A frame waits at the gate while playing. */
    gboolean holding;
    /* The running time the last frame ends at; NONE before one. */
    GstClockTime last_end;
    /* The sinks whose preroll drawing is off for a frame held past a pause, each with a reference. */
    GSList *muted_sinks;
    pthread_cond_t changed;
} LockstepStamp;

#define GATE_LIMIT_NS (200 * GST_MSECOND)

typedef struct {
    GstElementClass parent_class;
} LockstepStampClass;

G_DEFINE_TYPE(LockstepStamp, lockstep_stamp, GST_TYPE_ELEMENT)

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

/* Whether `buffer` (at `running_time`) must wait at the gate now. Called with the lock held. */
static gboolean lockstep_stamp_gated(LockstepStamp *self, GstClockTime running_time) {
    if ((!self->playing && !self->held) || self->flushing || !GST_CLOCK_TIME_IS_VALID(self->gate)) return FALSE;
    if (!GST_CLOCK_TIME_IS_VALID(running_time)) return FALSE;
    GstClockTime base_time = gst_element_get_base_time(GST_ELEMENT_CAST(self));
    return base_time + running_time >= self->gate;
}

/* Waits while the gate holds the frame at `running_time`, at most GATE_LIMIT_NS, with `holding` set
 * meanwhile; whether it was held. Lock held. */
static gboolean lockstep_stamp_wait_at_gate(LockstepStamp *self, GstClockTime running_time) {
    if (!lockstep_stamp_gated(self, running_time)) return FALSE;
    self->holding = TRUE;
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_nsec += GATE_LIMIT_NS % GST_SECOND;
    deadline.tv_sec += GATE_LIMIT_NS / GST_SECOND + deadline.tv_nsec / GST_SECOND;
    deadline.tv_nsec %= GST_SECOND;
    while (lockstep_stamp_gated(self, running_time)) {
        if (pthread_cond_timedwait(&self->changed, &self->lock, &deadline) == ETIMEDOUT) break;
    }
    self->holding = FALSE;
    return TRUE;
}

static GstFlowReturn lockstep_stamp_chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    LockstepStamp *self = (LockstepStamp *)parent;
    GstClockTime pts = GST_BUFFER_PTS(buffer);
    GstClockTime duration = GST_BUFFER_DURATION(buffer);

    pthread_mutex_lock(&self->lock);
    GstClockTime running_time = gst_segment_to_running_time(&self->segment, GST_FORMAT_TIME, pts);
    if (GST_CLOCK_TIME_IS_VALID(pts) && GST_CLOCK_TIME_IS_VALID(duration)) {
        GstClockTime end = gst_segment_to_running_time(&self->segment, GST_FORMAT_TIME, pts + duration);
        if (GST_CLOCK_TIME_IS_VALID(end)) self->last_end = end;
    }
    gboolean held = lockstep_stamp_wait_at_gate(self, running_time);
    if (self->flushing) {
        pthread_mutex_unlock(&self->lock);
        gst_buffer_unref(buffer);
        return GST_FLOW_FLUSHING;
    }
    /* Held past a pause: the sink prerolls it undrawn; the frame shown is still the last one. */
    gboolean shown = !held || self->playing;
    /* The item time of the frame: its stream time. The buffer's own timestamp is not, for media whose
     * first frame is not at zero (an MP4 edit list shifting B-frame reordering delay, an MPEG-TS
     * stream's start): the segment maps one to the other. */
    GstClockTime stream_time = gst_segment_to_stream_time(&self->segment, GST_FORMAT_TIME, pts);
    GstClockTime item_time = GST_CLOCK_TIME_IS_VALID(stream_time) ? stream_time : pts;
    GstSample *old = NULL;
    if (shown) {
        old = self->last_sample;
        self->last_sample = gst_sample_new(buffer, self->caps, &self->segment, NULL);
    }
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

/* Turns off preroll drawing on `sink` if it draws prerolls, keeping it to turn back on. */
static void lockstep_stamp_mute_sink(GSList **muted, GstElement *sink) {
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(sink), "show-preroll-frame") == NULL) return;
    gboolean shows = FALSE;
    g_object_get(sink, "show-preroll-frame", &shows, NULL);
    if (!shows) return;
    g_object_set(sink, "show-preroll-frame", FALSE, NULL);
    *muted = g_slist_prepend(*muted, gst_object_ref(sink));
}

/* The element downstream of `pad`'s peer, with a reference; NULL at an unlinked pad. */
static GstElement *lockstep_stamp_next_element(GstPad *pad) {
    GstPad *peer = gst_pad_get_peer(pad);
    if (peer == NULL) return NULL;
    GstElement *element = gst_pad_get_parent_element(peer);
    gst_object_unref(peer);
    return element;
}

/* The sinks downstream that draw prerolls, with their drawing turned off: down the chain the stamp
 * feeds (a pass-through element such as the X pool barrier on the way), to the sink, or to every
 * sink inside a bin. */
static GSList *lockstep_stamp_mute_downstream(LockstepStamp *self) {
    GSList *muted = NULL;
    GstElement *element = lockstep_stamp_next_element(self->srcpad);
    for (int step = 0; element != NULL && step < 8; step++) {
        if (GST_IS_BIN(element)) {
            GstIterator *iterator = gst_bin_iterate_sinks(GST_BIN(element));
            GValue item = G_VALUE_INIT;
            while (gst_iterator_next(iterator, &item) == GST_ITERATOR_OK) {
                lockstep_stamp_mute_sink(&muted, GST_ELEMENT(g_value_get_object(&item)));
                g_value_reset(&item);
            }
            g_value_unset(&item);
            gst_iterator_free(iterator);
            break;
        }
        if (GST_OBJECT_FLAG_IS_SET(element, GST_ELEMENT_FLAG_SINK) || element->numsrcpads != 1) {
            lockstep_stamp_mute_sink(&muted, element);
            break;
        }
        GST_OBJECT_LOCK(element);
        GstPad *source = gst_object_ref(GST_PAD(element->srcpads->data));
        GST_OBJECT_UNLOCK(element);
        GstElement *next = lockstep_stamp_next_element(source);
        gst_object_unref(source);
        gst_object_unref(element);
        element = next;
    }
    if (element != NULL) gst_object_unref(element);
    return muted;
}

/* Turns preroll drawing back on where it was turned off. Called without the lock. */
static void lockstep_stamp_unmute(LockstepStamp *self) {
    pthread_mutex_lock(&self->lock);
    GSList *muted = self->muted_sinks;
    self->muted_sinks = NULL;
    pthread_mutex_unlock(&self->lock);
    for (GSList *sink = muted; sink != NULL; sink = sink->next) {
        g_object_set(sink->data, "show-preroll-frame", TRUE, NULL);
    }
    g_slist_free_full(muted, gst_object_unref);
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
    case GST_EVENT_EOS: {
        pthread_mutex_lock(&self->lock);
        GstClockTime end = GST_CLOCK_TIME_NONE;
        if (self->segment.format == GST_FORMAT_TIME && self->segment.rate > 0 &&
            GST_CLOCK_TIME_IS_VALID(self->segment.stop)) {
            end = gst_segment_to_running_time(&self->segment, GST_FORMAT_TIME, self->segment.stop);
        }
        if (!GST_CLOCK_TIME_IS_VALID(end)) end = self->last_end;
        lockstep_stamp_wait_at_gate(self, end);
        gboolean flushing = self->flushing;
        pthread_mutex_unlock(&self->lock);
        if (flushing) {
            gst_event_unref(event);
            return FALSE;
        }
        break;
    }
    case GST_EVENT_FLUSH_START:
        pthread_mutex_lock(&self->lock);
        self->flushing = TRUE;
        pthread_cond_broadcast(&self->changed);
        pthread_mutex_unlock(&self->lock);
        break;
    case GST_EVENT_FLUSH_STOP:
        /* A seek: what comes now is another position, which no pause scheduled before it holds. */
        pthread_mutex_lock(&self->lock);
        gst_segment_init(&self->segment, GST_FORMAT_TIME);
        self->last_end = GST_CLOCK_TIME_NONE;
        self->flushing = FALSE;
        self->gate = GST_CLOCK_TIME_NONE;
        self->held = FALSE;
        pthread_mutex_unlock(&self->lock);
        /* Before it reaches the sink: the frame the flush brings is drawn. */
        lockstep_stamp_unmute(self);
        break;
    default:
        break;
    }
    return gst_pad_event_default(pad, parent, event);
}

/* Leaving PLAYING lets a held frame go on (the sink prerolls it, undrawn); entering it arms the gate
 * and draws prerolls again. Going to or from READY starts over: the pads are deactivated there
 * without a FLUSH_STOP, so a flush begun before it (a seek cut short by a reload) must not leave the
 * element refusing every buffer after. */
static GstStateChangeReturn lockstep_stamp_change_state(GstElement *element, GstStateChange transition) {
    LockstepStamp *self = (LockstepStamp *)element;
    switch (transition) {
    case GST_STATE_CHANGE_PLAYING_TO_PAUSED: {
        pthread_mutex_lock(&self->lock);
        gboolean holding = self->holding;
        pthread_mutex_unlock(&self->lock);
        /* The sinks are paused already (a bin changes its sinks first), waiting for this frame. */
        GSList *muted = holding ? lockstep_stamp_mute_downstream(self) : NULL;
        pthread_mutex_lock(&self->lock);
        self->muted_sinks = g_slist_concat(muted, self->muted_sinks);
        self->playing = FALSE;
        self->held = FALSE;
        pthread_cond_broadcast(&self->changed);
        pthread_mutex_unlock(&self->lock);
        break;
    }
    case GST_STATE_CHANGE_PAUSED_TO_PLAYING:
        lockstep_stamp_unmute(self);
        break;
    case GST_STATE_CHANGE_READY_TO_PAUSED:
    case GST_STATE_CHANGE_PAUSED_TO_READY:
        lockstep_stamp_unmute(self);
        pthread_mutex_lock(&self->lock);
        self->playing = FALSE;
        self->held = FALSE;
        self->flushing = FALSE;
        self->gate = GST_CLOCK_TIME_NONE;
        self->last_end = GST_CLOCK_TIME_NONE;
        pthread_cond_broadcast(&self->changed);
        pthread_mutex_unlock(&self->lock);
        break;
    default:
        break;
    }
    GstStateChangeReturn result = GST_ELEMENT_CLASS(lockstep_stamp_parent_class)->change_state(element, transition);
    if (transition == GST_STATE_CHANGE_PAUSED_TO_PLAYING) {
        pthread_mutex_lock(&self->lock);
        self->playing = TRUE;
        pthread_mutex_unlock(&self->lock);
    }
    return result;
}

static void lockstep_stamp_finalize(GObject *object) {
    LockstepStamp *self = (LockstepStamp *)object;
    lockstep_stamp_unmute(self);
    if (self->last_sample != NULL) gst_sample_unref(self->last_sample);
    gst_caps_replace(&self->caps, NULL);
    if (self->destroy != NULL) self->destroy(self->user_data);
    pthread_mutex_destroy(&self->lock);
    pthread_cond_destroy(&self->changed);
    G_OBJECT_CLASS(lockstep_stamp_parent_class)->finalize(object);
}

static void lockstep_stamp_class_init(LockstepStampClass *klass) {
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
    object_class->finalize = lockstep_stamp_finalize;
    element_class->change_state = lockstep_stamp_change_state;
    gst_element_class_add_static_pad_template(element_class, &sink_template);
    gst_element_class_add_static_pad_template(element_class, &src_template);
    gst_element_class_set_static_metadata(element_class, "Lockstep presentation stamp", "Generic",
                                          "Reports when the downstream sink presented each buffer",
                                          "Lockstep");
}

static void lockstep_stamp_init(LockstepStamp *self) {
    pthread_mutex_init(&self->lock, NULL);
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&self->changed, &attributes);
    pthread_condattr_destroy(&attributes);
    self->gate = GST_CLOCK_TIME_NONE;
    self->last_end = GST_CLOCK_TIME_NONE;
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

void lockstep_presentation_stamp_set_gate(GstElement *stamp, GstClockTime gate, gboolean held) {
    LockstepStamp *self = (LockstepStamp *)stamp;
    pthread_mutex_lock(&self->lock);
    self->gate = gate;
    self->held = held && GST_CLOCK_TIME_IS_VALID(gate);
    pthread_cond_broadcast(&self->changed);
    pthread_mutex_unlock(&self->lock);
}
