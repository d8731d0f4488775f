/* forest3.c -- the 3D (p8est) build of forest.c, in p4est's own way of compiling 2D code as 3D. */
#include <p4est_to_p8est.h>
#include "forest.c"
