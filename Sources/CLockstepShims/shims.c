#include "CLockstepShims.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LOCKSTEP_THREAD_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(LOCKSTEP_TSAN)
#define LOCKSTEP_THREAD_SANITIZER 1
#endif

#ifdef LOCKSTEP_THREAD_SANITIZER
void __tsan_acquire(void *address);
void __tsan_release(void *address);
void lockstep_handoff_release(const void *address) { __tsan_release((void *)address); }
void lockstep_handoff_acquire(const void *address) { __tsan_acquire((void *)address); }
#else
void lockstep_handoff_release(const void *address) { (void)address; }
void lockstep_handoff_acquire(const void *address) { (void)address; }
#endif

#define LOCKSTEP_SETTER(type, suffix)                                               \
    void lockstep_object_set_##suffix(gpointer object, const char *name, type value) { \
        g_object_set(object, name, value, NULL);                                    \
    }
LOCKSTEP_SETTER(const char *, string)
LOCKSTEP_SETTER(gint, int)
LOCKSTEP_SETTER(guint, uint)
LOCKSTEP_SETTER(guint64, uint64)
LOCKSTEP_SETTER(gboolean, bool)
LOCKSTEP_SETTER(gdouble, double)
LOCKSTEP_SETTER(gpointer, pointer)

gboolean lockstep_object_has_property(gpointer object, const char *name) {
    return g_object_class_find_property(G_OBJECT_GET_CLASS(object), name) != NULL;
}

gchar *lockstep_object_get_string(gpointer object, const char *name) {
    gchar *value = NULL;
    g_object_get(object, name, &value, NULL);
    return value;
}

gboolean lockstep_object_get_bool(gpointer object, const char *name) {
    gboolean value = FALSE;
    g_object_get(object, name, &value, NULL);
    return value;
}

gint lockstep_object_get_int(gpointer object, const char *name) {
    gint value = 0;
    g_object_get(object, name, &value, NULL);
    return value;
}

guint lockstep_object_get_uint(gpointer object, const char *name) {
    guint value = 0;
    g_object_get(object, name, &value, NULL);
    return value;
}

gulong lockstep_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data,
                               GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, handler, data, destroy, 0);
}

GstClock *lockstep_monotonic_clock_new(const char *name) {
    GstClock *clock = g_object_new(GST_TYPE_SYSTEM_CLOCK, "name", name, "clock-type", GST_CLOCK_TYPE_MONOTONIC, NULL);
    /* A new GstObject is floating: take ownership for the caller. */
    gst_object_ref_sink(clock);
    return clock;
}
