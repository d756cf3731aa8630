/* test_events.c — synthetic input (see test_events.h). */
#include "tools/view/test_events.h"

#include <SDL.h>

static void push_key(SDL_Keycode k)
{
    SDL_Event e = {.key = {.type = SDL_KEYDOWN, .state = SDL_PRESSED, .keysym = {.sym = k}}};
    SDL_PushEvent(&e);
}

void vw_test_events_start(void)
{
    push_key(SDLK_c);
    push_key(SDLK_LEFT);
    SDL_Event drag = {.motion = {.type = SDL_MOUSEMOTION, .state = SDL_BUTTON_LMASK, .xrel = 20, .yrel = 10}};
    SDL_PushEvent(&drag);
    SDL_Event wheel = {.wheel = {.type = SDL_MOUSEWHEEL, .y = 1}};
    SDL_PushEvent(&wheel);
    push_key(SDLK_c);
}

void vw_test_events_frame(uint64_t n)
{
    static const SDL_Keycode cycle[] = {SDLK_p, SDLK_a, SDLK_p, SDLK_s,
                                        SDLK_p, SDLK_PLUS, SDLK_p, SDLK_MINUS};
    push_key(cycle[n % (sizeof cycle / sizeof *cycle)]);
}
