/* transmittance.c — shadow rays through blended surfaces (see the header). */
#include "pipelines/raytrace/transmittance.h"

#include "pipelines/raytrace/packets.h"
#include "raytracer/bvh_traverse.h"

float plrt_transmittance(const rt_bvh *bvh, const sh_ray_env *env, rt_ray r)
{
    float through = 1.0f;
    for (int layer = 1; through > 0.0f; layer++) {
        rt_hit hit;
        rt_intersect1(bvh, &r, &hit);
        if (hit.prim == RT_NO_HIT || hit.prim >= env->geo->ntriangles) return through;
        through *= layer < PLRT_MAX_LAYERS ? sh_ray_transmittance(env, &r, &hit) : 0.0f;
        r.tmin = hit.t + 1e-4f;
        if (!(r.tmin <= r.tmax)) return through;
    }
    return 0.0f;
}
