/* font.c — finding a font and drawing text (see font.h). */
#include "tools/view/font.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* fonts-dejavu-core's files, for systems without fontconfig's fc-match. */
static const char *const fallbacks[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"};

/* fc-match's file for a monospaced font into path; false when fc-match is missing or
 * names no readable TrueType file. */
static bool fc_match(char *path, size_t n)
{
    FILE *p = popen("fc-match -f '%{file}' monospace:fontformat=TrueType 2>/dev/null", "r");
    if (!p) return false;
    size_t len = fread(path, 1, n - 1, p);
    path[len] = 0;
    bool exited_ok = pclose(p) == 0;
    return exited_ok && len > 0 && access(path, R_OK) == 0;
}

static bool find_font(char *path, size_t n)
{
    const char *env = getenv("GRAMPS_VIEW_FONT");
    if (env && *env) {
        snprintf(path, n, "%s", env);
        return true;                           /* opened (or refused) as given */
    }
    if (fc_match(path, n)) return true;
    for (size_t i = 0; i < sizeof fallbacks / sizeof *fallbacks; i++)
        if (access(fallbacks[i], R_OK) == 0) {
            snprintf(path, n, "%s", fallbacks[i]);
            return true;
        }
    return false;
}

TTF_Font *vw_font_open(int points)
{
    char path[4096];
    if (!find_font(path, sizeof path)) {
        fprintf(stderr, "gramps-view: no TrueType font found: install fonts-dejavu-core "
                "(Debian) or set GRAMPS_VIEW_FONT=FILE.ttf\n");
        return NULL;
    }
    TTF_Font *f = TTF_OpenFont(path, points);
    if (!f) fprintf(stderr, "gramps-view: font %s: %s\n", path, TTF_GetError());
    return f;
}

int vw_text(SDL_Renderer *r, TTF_Font *f, int x, int y, SDL_Color c, const char *text)
{
    if (!*text) return 0;
    SDL_Surface *s = TTF_RenderUTF8_Blended(f, text, c);
    if (!s) return 0;
    SDL_Texture *t = SDL_CreateTextureFromSurface(r, s);
    SDL_Rect dst = {x, y, s->w, s->h};
    if (t) SDL_RenderCopy(r, t, NULL, &dst);
    SDL_DestroyTexture(t);
    SDL_FreeSurface(s);
    return t ? dst.w : 0;
}
