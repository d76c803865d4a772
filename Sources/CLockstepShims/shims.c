#include "CLockstepShims.h"
