// libmpg123 (bookworm: 1.31), headers only: the talk bundle opens libmpg123 with dlopen the first
// time talk.speak returns MP3 (Talk/Speech/MPG123Library.swift), so this module has no `link` line
// and nothing may call libmpg123 directly. Swift takes the constants and enums from here; every
// function it uses has plain C types and no macro or variadic form, so no wrappers are needed.
#include <mpg123.h>
