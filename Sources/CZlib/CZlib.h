#ifndef LOCKSTEP_CZLIB_H
#define LOCKSTEP_CZLIB_H
#include <zlib.h>
#endif
