/* orbit.h — moving the viewer's camera: orbit about its target, pan, zoom, all in the
 * camera's own frame (its up vector is the orbit axis), and printing it as a --camera
 * argument. Every move keeps the camera valid for sc_camera_problem: eye apart from the
 * target, forward never parallel to up. */
#ifndef TOOLS_VIEW_ORBIT_H
#define TOOLS_VIEW_ORBIT_H

#include "scenes/scene.h"

#include <stddef.h>

/* Turns the eye about the target: yaw about up, pitch about the right axis (radians);
 * a pitch that would bring forward within 5 degrees of up is not taken. */
void vw_orbit(sc_camera *c, float yaw, float pitch);
/* Moves eye and target together by dx, dy view heights (right, up on screen). */
void vw_pan(sc_camera *c, float dx, float dy);
/* Scales the eye's distance to the target by factor (> 0). */
void vw_zoom(sc_camera *c, float factor);
/* "--camera ex,ey,ez,tx,ty,tz,ux,uy,uz,fovy" with every digit a float needs, so the
 * printed argument gives back this camera exactly. */
void vw_camera_arg(const sc_camera *c, char *buf, size_t n);

#endif
