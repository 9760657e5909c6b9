/*
 * fsx_backend.c - the seam's backend pointer (see fsx_backend.h).
 */
#include "fsx_backend.h"

const struct fsx_backend *fsx_backend;
