/* api.h — GR_API, the mark of what the libraries export.
 *
 * libgramps and librender are compiled with -fvisibility=hidden (Makefile OBJFLAGS): a
 * function or object is visible outside its library only when its declaration in an
 * installed header carries GR_API; everything else, internal headers' declarations and
 * the stb_image code compiled into the renderer, stays inside, as Lua's LUAI_FUNC and
 * OpenCilk's CHEETAH_INTERNAL keep theirs. tests/render/test_exports checks each shared
 * library's exports against its installed headers' declarations. */
#ifndef GRAMPS_API_H
#define GRAMPS_API_H

#define GR_API __attribute__((visibility("default")))

#endif
