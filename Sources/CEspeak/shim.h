// espeak-ng (bookworm 1.51), the offline voice for spoken replies when the gateway's talk.speak is
// out of reach. Swift calls the speak_lib API directly; nothing here needs a wrapper but the include.
#include <espeak-ng/speak_lib.h>
