/* test_events.h — synthetic input for the tests (the hidden --test-events option):
 * events pushed with SDL_PushEvent go through the same queue and handler as a user's,
 * so a test sees the keys and the mouse work without a person at the window. */
#ifndef TOOLS_VIEW_TEST_EVENTS_H
#define TOOLS_VIEW_TEST_EVENTS_H

#include <stdint.h>

/* At start: C (prints the camera), an arrow key (orbit), a left-button drag (orbit), a
 * wheel step (zoom), C again: the two printed cameras differ. */
void vw_test_events_start(void);
/* After the n-th frame the window takes (counted there: the renderer's own frame
 * numbers skip the frames it replaced before they were shown, so keys chosen by them
 * could repeat): P after every other frame, A, S, + and - in turn between, so a run of
 * a few frames switches pipeline, AOV, scheduler and workers while rendering. */
void vw_test_events_frame(uint64_t n);

#endif
