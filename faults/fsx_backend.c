/*
 * fsx_backend.c - the seam's backend pointer (see fsx_backend.h).
 */
#include "fsx_backend.h"
#include "../core/hot.h"

LS_HOT_DATA const struct fsx_backend *fsx_backend;
