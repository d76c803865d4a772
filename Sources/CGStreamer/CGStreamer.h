#ifndef LOCKSTEP_CGSTREAMER_H
#define LOCKSTEP_CGSTREAMER_H
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <gst/net/gstnet.h>
#include <gst/pbutils/pbutils.h>
#endif
