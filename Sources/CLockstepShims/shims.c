#include "CLockstepShims.h"

#define LOCKSTEP_SETTER(type, suffix)                                               \
    void lockstep_object_set_##suffix(gpointer object, const char *name, type value) { \
        g_object_set(object, name, value, NULL);                                    \
    }
LOCKSTEP_SETTER(const char *, string)
LOCKSTEP_SETTER(gint, int)
LOCKSTEP_SETTER(guint, uint)
LOCKSTEP_SETTER(gint64, int64)
LOCKSTEP_SETTER(guint64, uint64)
LOCKSTEP_SETTER(gboolean, bool)
LOCKSTEP_SETTER(gdouble, double)
LOCKSTEP_SETTER(gpointer, pointer)

gboolean lockstep_object_set_from_string(gpointer object, const char *name, const char *value) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(object), name);
    if (spec == NULL) return FALSE;
    GValue gvalue = G_VALUE_INIT;
    g_value_init(&gvalue, spec->value_type);
    gboolean ok = gst_value_deserialize(&gvalue, value);
    if (ok) g_object_set_property(G_OBJECT(object), name, &gvalue);
    g_value_unset(&gvalue);
    return ok;
}

#define LOCKSTEP_GETTER(type, suffix)                                   \
    type lockstep_object_get_##suffix(gpointer object, const char *name) { \
        type value = 0;                                                 \
        g_object_get(object, name, &value, NULL);                       \
        return value;                                                   \
    }
LOCKSTEP_GETTER(gint, int)
LOCKSTEP_GETTER(guint, uint)
LOCKSTEP_GETTER(gint64, int64)
LOCKSTEP_GETTER(guint64, uint64)
LOCKSTEP_GETTER(gboolean, bool)
LOCKSTEP_GETTER(gdouble, double)

gpointer lockstep_object_get_object(gpointer object, const char *name) {
    gpointer value = NULL;
    g_object_get(object, name, &value, NULL);
    return value;
}

gchar *lockstep_object_get_string(gpointer object, const char *name) {
    gchar *value = NULL;
    g_object_get(object, name, &value, NULL);
    return value;
}

gboolean lockstep_object_has_property(gpointer object, const char *name) {
    return g_object_class_find_property(G_OBJECT_GET_CLASS(object), name) != NULL;
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
