#!/bin/bash
# Device check, 16-core machine: scaling of both renderers and both peers, footprint at 1-16
# workers, stats and traces at 1 and 16 workers, runtime constants, GPU/OpenCL presence.
set -u
R=$(pwd); O=${OUT:-/tmp/out}; mkdir -p $O/r
exec > >(tee $O/log.txt) 2>&1
echo "== machine"; nproc; lscpu | grep -E "Model name|Socket|Core|Thread|NUMA node|MHz" ; free -g | head -2
nvidia-smi -L 2>&1 | head -3; echo "OpenCL ICDs:"; ls /etc/OpenCL/vendors 2>&1; ldconfig -p | grep -i -E "opencl|nvidia-opencl" | head
find / -xdev -name 'libnvidia-opencl*' 2>/dev/null | head -3; find / -xdev -name 'nvidia*.icd' 2>/dev/null | head
mkdir -p ../shared && tar xJf .devcarry/scenes.tar.xz -C ../shared
tar xJf .devcarry/device-bundle.tar.xz
B=$R/build/device-bundle; X="$B/run.sh"
mkdir -p /tmp/b/bench
for p in bench_rs_llvmpipe bench_rt_embree; do printf '#!/bin/sh\nexec %s %s "$@"\n' "$X" "$p" > /tmp/b/bench/$p; chmod +x /tmp/b/bench/$p; done
T=1,2,4,8,12,16
echo "== scaling"; time timeout 200 sh bench/scaling.sh /tmp/b $T; cp /tmp/b/scaling.log $O/r/
echo "== footprint 1024"; time timeout 150 $X gramps-footprint --workers $T --size 1024x1024 --scenes fairy,../shared/scenes/bunny.obj --repeats 3 --out $O/r/fp1024 -q
echo "== renders"
for p in raster raytrace hybrid; do for w in 1 16; do for s in gramps task-stealing; do
  timeout 30 $X gramps-render -p $p -t $w --scheduler $s ../shared/scenes/bunny.obj --frames 3 -o /tmp/$p-$w.png --stats $O/r/stats-bunny-$p-$s-$w.json $( [ $w = 16 ] && [ $s = gramps ] && echo --trace $O/r/trace-bunny-$p-16.json ) >/dev/null || echo "render $p $w $s failed"
done; done; done
echo "== runtime"; time timeout 60 $X bench_runtime > $O/r/bench_runtime.txt 2>&1; tail -20 $O/r/bench_runtime.txt
echo "== footprint 512"; time timeout 150 $X gramps-footprint --workers 1,2,4,8,16 --repeats 3 --out $O/r/fp512 -q
cd $O && tar cJf results.tar.xz r && rm -rf r; ls -la $O
