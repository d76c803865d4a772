#ifndef LOCKSTEP_CFFMPEG_H
#define LOCKSTEP_CFFMPEG_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/display.h>
#include <libavutil/pixdesc.h>
#endif
