// A C target only so that its include/ directory is on the importer's header path: `pipewire` and
// `spa` there are links to Debian's /usr/include/pipewire-0.3/pipewire and
// /usr/include/spa-0.2/spa. A systemLibrary would need PipeWire's pkg-config files, whose
// -D_REENTRANT SwiftPM refuses with a warning on every build. Compiling the header here also
// checks the wrappers against the installed PipeWire.
#include "cpipewire.h"
