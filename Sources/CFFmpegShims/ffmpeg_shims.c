/* The FFmpeg shims are all inline, in include/CFFmpegShims.h; a C target needs one source. */
#include "CFFmpegShims.h"
