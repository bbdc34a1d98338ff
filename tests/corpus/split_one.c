/* split_main.c and split_lib.c as one translation unit: one .dwo, one split unit whose
 * line table names both files. */
#include "split_main.c"
#include "split_lib.c"
