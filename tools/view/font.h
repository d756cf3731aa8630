/* font.h — the overlay's text, drawn with SDL2_ttf from a TrueType font found at run
 * time: $GRAMPS_VIEW_FONT, else fontconfig's answer (fc-match) for a monospaced font,
 * else Debian's fonts-dejavu-core files. */
#ifndef TOOLS_VIEW_FONT_H
#define TOOLS_VIEW_FONT_H

#include <SDL.h>
#include <SDL_ttf.h>

/* The font at `points`, or NULL with the reason printed (no font found, or unreadable). */
TTF_Font *vw_font_open(int points);

/* Draws UTF-8 text with its top-left corner at (x, y); returns its width in pixels (0
 * when it could not be drawn). */
int vw_text(SDL_Renderer *r, TTF_Font *f, int x, int y, SDL_Color c, const char *text);

#endif
