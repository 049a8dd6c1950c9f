package outlive

// The header comes from the source tree's include/ and the library from its
// build/ (make lib), found at run time through the rpath; an installed library
// (make install) is found by the linker's default paths, or through CGO_CFLAGS
// and CGO_LDFLAGS set from `pkg-config --cflags --libs outlive`.

/*
#cgo CFLAGS: -I${SRCDIR}/../../include
#cgo LDFLAGS: -L${SRCDIR}/../../build -Wl,-rpath,${SRCDIR}/../../build -loutlive
#include "shim.h"
*/
import "C"
