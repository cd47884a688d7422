"""python3 check_chromium.py [--keep DIR] [--measure SECONDS] NAME.html|NAME.glb ...

Opens each page render --html wrote in headless Chromium (WebGL in SwiftShader), from its
file:// URL, driven over the DevTools protocol on a pipe (--remote-debugging-pipe: no port, no
network), and checks what a user would see:
 - the page loads its motion with no console error or exception;
 - at two times (a third and two thirds in), the 3D view alone (#ui=0, no ground, black
   background, a fixed camera) shows the character where NAME_frames.h5 (render's export of the
   same frames, beside the page) puts it: the bounding box of the non-background pixels against
   the box of the surface vertices projected through the same camera, within 3 px per edge; no
   blank canvas;
 - it plays for SECONDS (3) at speed 1: the measured frame rate, the playback speed (animation
   time over wall time) and how many of the captured frames it showed.
A page with no NAME_frames.h5 beside it gets the load, console and frame-rate checks only.
Each NAME.glb (render --gltf) with NAME_frames.h5 beside it goes into a page made here (three.js
r111 and its GLTFLoader from Debian's libjs-three, the .glb as base64 in it: no file or network
access), loaded with GLTFLoader and played by an AnimationMixer: one morph target per frame and
the clip's length; at two times the morphed vertices (the mixer's weights applied to the morph
targets, as the shader does) and the bone nodes' world positions against the frames' surface and
joints; the silhouette of what WebGL draws there against the projected surface (as above); and
the frame rate it plays at (a .glb with no NAME_frames.h5 beside it: loaded and played only).
--keep DIR saves the screenshots (NAME_t<time>.png, and NAME_ui.png: the whole page at the
first time with the skeleton shown). Prints one line per page; exits 0 when all pass, 2 when
one fails, 5 when Chromium cannot start."""
import base64
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import time
import zlib

W, H = 800, 600
TOL_PX = 3.0


class Fail(Exception):
    pass


# ---- PNG (8-bit RGB or RGBA, what Chromium writes) ----
def png_rgb(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise Fail("screenshot is not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise Fail("screenshot PNG of depth %d colour type %d interlace %d" % (depth, ctype, interlace))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def silhouette(png):
    """Bounding box (x0, y0, x1, y1) of the pixels brighter than the black background, and their count."""
    w, h, bpp, rows = png_rgb(png)
    x0, y0, x1, y1, n = w, h, -1, -1, 0
    for y, row in enumerate(rows):
        xs = [x for x in range(w) if max(row[bpp * x:bpp * x + 3]) > 24]
        if xs:
            n += len(xs)
            x0, x1 = min(x0, xs[0]), max(x1, xs[-1] + 1)
            y0, y1 = min(y0, y), y + 1
    return (x0, y0, x1, y1), n


# ---- the camera the page is given (three.js PerspectiveCamera + lookAt, y up) ----
def project_box(points, eye, target, fov_deg):
    def sub(a, b):
        return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]

    def cross(a, b):
        return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]

    def unit(a):
        n = math.sqrt(sum(v * v for v in a))
        return [v / n for v in a]

    zc = unit(sub(eye, target))
    xc = unit(cross([0, 1, 0], zc))
    yc = cross(zc, xc)
    f = 1 / math.tan(math.radians(fov_deg) / 2)
    xs, ys = [], []
    for p in points:
        d = sub(p, eye)
        cx, cy, cz = (sum(d[i] * xc[i] for i in range(3)), sum(d[i] * yc[i] for i in range(3)), sum(d[i] * zc[i] for i in range(3)))
        xs.append((f * H / W * cx / -cz + 1) / 2 * W)
        ys.append((1 - f * cy / -cz) / 2 * H)
    return (min(xs), min(ys), max(xs), max(ys))


# ---- Chromium over the DevTools pipe ----
class Chromium:
    def __init__(self, exe):
        r_cmd, self.w_cmd = os.pipe()
        self.r_out, w_out = os.pipe()
        # WebGL through SwiftShader; the compositor in software (a fifth less CPU a frame than
        # compositing through SwiftShader too: 26 against 33 ms on the 20 s march)
        args = [exe, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                "--disable-gpu-compositing",
                "--no-first-run", "--disable-gpu-sandbox", "--window-size=%d,%d" % (W, H), "--user-data-dir=" + os.environ.get("TMPDIR", "/tmp") +
                "/softcon-chromium-%d" % os.getpid(), "about:blank"]
        self.profile = args[-2].split("=", 1)[1]

        def fds():
            os.dup2(r_cmd, 3)
            os.dup2(w_out, 4)

        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(3, 4),
                                     preexec_fn=fds)
        os.close(r_cmd)
        os.close(w_out)
        self.buf, self.next_id, self.events = b"", 0, []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = [t for t in targets if t["type"] == "page"]
        if not page:
            raise Fail("Chromium opened no page")
        self.session = self.call("Target.attachToTarget", {"targetId": page[0]["targetId"], "flatten": True})["sessionId"]
        for m in ("Page.enable", "Runtime.enable", "Log.enable"):
            self.call(m, session=True)
        self.call("Emulation.setDeviceMetricsOverride", {"width": W, "height": H, "deviceScaleFactor": 1, "mobile": False}, session=True)

    def _read(self, deadline):
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise Fail("Chromium did not answer in time")
            chunk = os.read(self.r_out, 1 << 20)
            if not chunk:
                raise Fail("Chromium exited")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=False, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self.w_cmd, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise Fail("%s: %s" % (method, m["error"].get("message")))
                return m.get("result", {})
            self.events.append(m)

    def eval(self, expr, timeout=60):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True}, session=True, timeout=timeout)
        if "exceptionDetails" in r:
            raise Fail("page script failed: %s" % r["exceptionDetails"].get("text"))
        return r["result"].get("value")

    def wait_state(self, want, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            s = self.eval("(document.body && document.body.dataset.state) || ''")
            if s in want or s == "error":
                return s
            time.sleep(0.1)
        return "timeout"

    def console_errors(self):
        out = []
        for e in self.events:
            p, m = e.get("params", {}), e.get("method")
            if m == "Runtime.exceptionThrown":
                out.append(p["exceptionDetails"].get("exception", {}).get("description") or p["exceptionDetails"].get("text"))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(p["entry"].get("text"))
        return out

    def open(self, url):
        """A fresh load (a new hash alone would not reload the page)."""
        self.call("Page.navigate", {"url": "about:blank"}, session=True)
        self.call("Page.navigate", {"url": url}, session=True)

    def shot(self):
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"])

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Fail:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def frames_h5(html):
    stem = html[:html.rindex(".")]
    p = stem + "_frames.h5"
    return p if os.path.exists(p) else None


def two_frames(h):
    """The frames file's frame count, the two frames checked (at a third and two thirds), the first
    frame's time, and their surfaces and times from it."""
    n = int(h.attrs["frames"])
    ks = sorted({n // 3, (2 * n) // 3})
    t0 = float(h["/frames/000000"].attrs["time"])
    surf = {k: h["/frames/%06d/surface" % k][()] for k in ks}
    times = {k: float(h["/frames/%06d" % k].attrs["time"]) - t0 for k in ks}
    return n, ks, t0, surf, times


def check(browser, html, keep, measure):
    url = "file://" + os.path.abspath(html)
    ref = frames_h5(html)
    notes, shots = [], []
    if ref:
        import h5py
        import numpy as np
        with h5py.File(ref, "r") as h:
            n, ks, t0, surf, times = two_frames(h)
        allp = np.concatenate([surf[k] for k in ks])
        lo, hi = allp.min(0), allp.max(0)
        target = (lo + hi) / 2
        size = float(max(hi - lo))
        eye = target + size * np.array([1.6, 0.5, 2.2])
        fov = 35.0
        hash_ = "ui=0&ground=0&contacts=0&skeleton=0&ghost=0&bg=000000&fov=%g&eye=%s&target=%s" % (
            fov, ",".join("%.6f" % v for v in eye), ",".join("%.6f" % v for v in target))
        browser.open(url + "#t=%.6f&%s" % (times[ks[0]], hash_))
        state = browser.wait_state(("ready",), 120)
        if state != "ready":
            raise Fail("the page did not get ready (%s): %s" % (state, browser.console_errors() or browser.eval("document.title")))
        for k in ks:
            browser.eval("softconViewer.seek(%.6f); new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))" % times[k])
            png = browser.shot()
            (x0, y0, x1, y1), npx = silhouette(png)
            if npx < 0.002 * W * H:
                raise Fail("t = %.3f s: a blank canvas (%d lit pixels)" % (times[k], npx))
            want = project_box(surf[k].tolist(), eye.tolist(), target.tolist(), fov)
            err = max(abs(a - b) for a, b in zip((x0, y0, x1, y1), want))
            if err > TOL_PX:
                raise Fail("t = %.3f s: silhouette box [%d %d %d %d] px, the surface of %s projects to [%.1f %.1f %.1f %.1f]: off by %.1f px (> %g)" % (
                    times[k], x0, y0, x1, y1, ref, *want, err, TOL_PX))
            notes.append("t=%.3f s silhouette [%d %d %d %d] vs projected [%.1f %.1f %.1f %.1f]: within %.1f px" % (times[k], x0, y0, x1, y1, *want, err))
            shots.append(("t%.3f" % times[k], png))
    else:
        notes.append("no %s beside it: positions not compared" % (os.path.basename(html[:-5]) + "_frames.h5"))
    if keep:  # the whole page, as a user first sees it, a third of the way in, with the skeleton
        browser.open(url + "#v=ui")
        if browser.wait_state(("ready",), 120) == "ready":
            browser.eval("softconViewer.pause(); softconViewer.seek(softconViewer.meta.duration / 3); document.getElementById('c_skeleton').checked = true;"
                         "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            shots.append(("ui", browser.shot()))
    browser.open(url + "#measure=%g&v=m" % measure)
    state = browser.wait_state(("measured",), 120 + measure)
    if state != "measured":
        raise Fail("playing did not finish (%s): %s" % (state, browser.console_errors() or browser.eval("document.title")))
    errs = browser.console_errors()
    if errs:
        raise Fail("console errors: %s" % "; ".join(errs[:3]))
    title = browser.eval("document.title")
    meta = browser.eval("[softconViewer.meta.frames, softconViewer.meta.vertices]")
    if keep:
        os.makedirs(keep, exist_ok=True)
        for name, png in shots:
            with open(os.path.join(keep, "%s_%s.png" % (os.path.basename(html[:-5]), name)), "wb") as f:
                f.write(png)
    return "%d frames of %d vertices, no console error; %s; %s" % (meta[0], meta[1], "; ".join(notes), title)


THREE_DIR = "/usr/share/javascript/three"
GLB_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>glb</title></head>
<body style="margin:0;background:#000;overflow:hidden"><script>%(three)s</script><script>%(loader)s</script>
<script id="glb" type="application/octet-stream">%(glb)s</script>
<script>
(async function () {
  try {
    var H = {};
    location.hash.slice(1).split('&').forEach(function (kv) { var i = kv.indexOf('='); if (i > 0) H[kv.slice(0, i)] = kv.slice(i + 1); });
    var b = atob(document.getElementById('glb').textContent.replace(/\\s+/g, '')), u = new Uint8Array(b.length);
    for (var i = 0; i < b.length; i++) u[i] = b.charCodeAt(i);
    var gltf = await new Promise(function (res, rej) { new THREE.GLTFLoader().parse(u.buffer, '', res, rej); });
    var scene = gltf.scene, mesh = null;
    scene.traverse(function (o) { if (o.isMesh) mesh = o; });
    if (!mesh || !mesh.morphTargetInfluences) throw new Error('no mesh with morph targets');
    mesh.frustumCulled = false;
    var mixer = new THREE.AnimationMixer(scene);
    gltf.animations.forEach(function (c) { mixer.clipAction(c).play(); });
    scene.background = new THREE.Color(0);
    scene.add(new THREE.HemisphereLight(0xffffff, 0x556677, 0.6));
    var sun = new THREE.DirectionalLight(0xffffff, 0.7);
    sun.position.set(0.4, 1, 0.6);
    scene.add(sun);
    var renderer = new THREE.WebGLRenderer({ preserveDrawingBuffer: true });
    renderer.setSize(window.innerWidth, window.innerHeight);
    document.body.appendChild(renderer.domElement);
    var camera = new THREE.PerspectiveCamera(Number(H.fov), window.innerWidth / window.innerHeight, 0.01, 500);
    if (H.eye) {
      camera.position.fromArray(H.eye.split(',').map(Number));
      camera.lookAt(new THREE.Vector3().fromArray(H.target.split(',').map(Number)));
    } else { /* no frames to compare with: frame the first pose */
      mesh.geometry.computeBoundingSphere();
      var c = mesh.geometry.boundingSphere.center, r = mesh.geometry.boundingSphere.radius;
      camera.position.set(c.x + 1.6 * r, c.y + 0.5 * r, c.z + 2.2 * r);
      camera.lookAt(c);
    }
    var pos = mesh.geometry.attributes.position, deltas = mesh.geometry.morphAttributes.position;
    window.glb = {
      targets: mesh.morphTargetInfluences.length,
      duration: gltf.animations.length ? gltf.animations[0].duration : 0,
      show: function (t, names) { /* the pose at t: morphed vertices (relative targets) and the named nodes */
        mixer.setTime(t);
        scene.updateMatrixWorld(true);
        renderer.render(scene, camera);
        var w = mesh.morphTargetInfluences, n = pos.count, out = new Array(3 * n), v = new THREE.Vector3();
        for (var i = 0; i < n; i++) {
          v.fromBufferAttribute(pos, i);
          for (var k = 0; k < w.length; k++) if (w[k]) { v.x += w[k] * deltas[k].getX(i); v.y += w[k] * deltas[k].getY(i); v.z += w[k] * deltas[k].getZ(i); }
          v.applyMatrix4(mesh.matrixWorld);
          out[3 * i] = v.x; out[3 * i + 1] = v.y; out[3 * i + 2] = v.z;
        }
        var joints = names.map(function (nm) { var o = scene.getObjectByName(nm); return o ? o.getWorldPosition(new THREE.Vector3()).toArray() : null; });
        return { surface: out, joints: joints };
      },
      play: function (seconds) { /* speed 1 from t = 0: frames drawn per second, animation time over wall time */
        return new Promise(function (done) {
          var t0 = null, last = null, n = 0;
          mixer.setTime(0);
          function tick(now) {
            if (t0 === null) t0 = now; else { mixer.update((now - last) / 1000); n++; }
            last = now;
            renderer.render(scene, camera);
            if (now - t0 >= 1000 * seconds) done([n / ((now - t0) / 1000), mixer.time / ((now - t0) / 1000)]);
            else requestAnimationFrame(tick);
          }
          requestAnimationFrame(tick);
        });
      }
    };
    document.body.dataset.state = 'ready';
  } catch (e) {
    document.body.dataset.state = 'error';
    document.title = 'error: ' + (e && e.message || e);
  }
})();
</script></body></html>
"""


def check_glb(browser, glb, keep, measure):
    """NAME.glb in three.js r111's GLTFLoader, against NAME_frames.h5 beside it."""
    import tempfile
    import h5py
    import numpy as np
    ref = frames_h5(glb)
    loader = os.path.join(THREE_DIR, "examples/js/loaders/GLTFLoader.js")
    if not os.path.exists(loader):
        raise Fail("%s is missing (Debian's libjs-three)" % loader)
    ks = []
    if ref:
        with h5py.File(ref, "r") as h:
            n, ks, t0, surf, times = two_frames(h)
            joints = {k: h["/frames/%06d/joints" % k][()] for k in ks}
            tlast = float(h["/frames/%06d" % (n - 1)].attrs["time"]) - t0
            names = [x.decode() if isinstance(x, bytes) else x for x in h["/mesh/bone_names"][()]]
    with open(os.path.join(THREE_DIR, "three.min.js")) as f:
        three = f.read()
    with open(loader) as f:
        gltf_loader = f.read()
    with open(glb, "rb") as f:
        data = base64.b64encode(f.read()).decode()
    fd, page = tempfile.mkstemp(suffix=".html", prefix="softcon-glb-")
    with os.fdopen(fd, "w") as f:
        f.write(GLB_PAGE % {"three": three, "loader": gltf_loader, "glb": data})
    try:
        fov, notes, shots = 35.0, [], []
        if ref:
            allp = np.concatenate([surf[k] for k in ks])
            lo, hi = allp.min(0), allp.max(0)
            target = (lo + hi) / 2
            eye = target + float(max(hi - lo)) * np.array([1.6, 0.5, 2.2])
            browser.open("file://%s#fov=%g&eye=%s&target=%s" % (page, fov, ",".join("%.6f" % v for v in eye), ",".join("%.6f" % v for v in target)))
        else:
            browser.open("file://%s#fov=%g" % (page, fov))
        state = browser.wait_state(("ready",), 180)
        if state != "ready":
            raise Fail("GLTFLoader did not load it (%s): %s" % (state, browser.console_errors() or browser.eval("document.title")))
        targets, duration = browser.eval("[glb.targets, glb.duration]")
        if not ref:
            notes.append("no %s_frames.h5 beside it: positions not compared" % os.path.basename(glb[:-4]))
            if not (targets > 0 and duration >= 0):
                raise Fail("three.js loaded %d morph targets and a %.4f s clip" % (targets, duration))
        elif targets != n or abs(duration - tlast) > 1e-4:
            raise Fail("three.js loaded %d morph targets and a %.4f s clip; %s has %d frames over %.4f s" % (targets, duration, ref, n, tlast))
        tol = 8 * 2.0 ** -24 * max(1.0, float(np.max(np.abs(allp)))) if ref else 0  # float32 base + float32 delta, blended in float32
        for k in ks:
            got = browser.eval("glb.show(%.9f, %s)" % (times[k], json.dumps(names)))
            dv = float(np.max(np.abs(np.array(got["surface"]).reshape(-1, 3) - surf[k])))
            if None in got["joints"]:
                raise Fail("three.js has no node named %s" % names[got["joints"].index(None)])
            dj = float(np.max(np.abs(np.array(got["joints"]) - joints[k])))
            if not (dv <= 4 * tol and dj <= 32 * tol):
                raise Fail("t = %.3f s: morphed vertices %.3g m and bone nodes %.3g m from %s frame %d (> %.3g, %.3g)" % (times[k], dv, dj, ref, k, 4 * tol, 32 * tol))
            png = browser.shot()
            (x0, y0, x1, y1), npx = silhouette(png)
            want = project_box(surf[k].tolist(), eye.tolist(), target.tolist(), fov)
            err = max(abs(a - b) for a, b in zip((x0, y0, x1, y1), want)) if npx >= 0.002 * W * H else float("inf")
            if err > TOL_PX:
                raise Fail("t = %.3f s: WebGL drew [%d %d %d %d] px (%d lit), the surface projects to [%.1f %.1f %.1f %.1f] (> %g px)" % (
                    times[k], x0, y0, x1, y1, npx, *want, TOL_PX))
            notes.append("t=%.3f s vertices within %.2g m, bone nodes within %.2g m, silhouette within %.1f px" % (times[k], dv, dj, err))
            shots.append(("t%.3f" % times[k], png))
        rate, speed = browser.eval("glb.play(%g)" % measure, timeout=60 + measure)
        errs = browser.console_errors()
        if errs:
            raise Fail("console errors: %s" % "; ".join(errs[:3]))
        if keep:
            os.makedirs(keep, exist_ok=True)
            for name, png in shots:
                with open(os.path.join(keep, "%s_glb_%s.png" % (os.path.basename(glb[:-4]), name)), "wb") as f:
                    f.write(png)
        return "three.js r111 GLTFLoader: %d morph targets, a %.3f s clip; %s; played at %.1f fps, speed %.3f" % (targets, duration, "; ".join(notes), rate, speed)
    finally:
        os.unlink(page)


def main():
    argv, keep, measure = sys.argv[1:], None, 3.0
    while argv and argv[0].startswith("--"):
        if argv[0] == "--keep":
            keep, argv = argv[1], argv[2:]
        elif argv[0] == "--measure":
            measure, argv = float(argv[1]), argv[2:]
        else:
            break
    if not argv:
        print(__doc__, file=sys.stderr)
        return 1
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    try:
        browser = Chromium(exe)
    except (Fail, OSError) as e:
        print("FAIL  chromium: cannot start %s: %s" % (exe, e))
        return 5
    failed = 0
    try:
        for html in argv:
            try:
                line = check_glb(browser, html, keep, measure) if html.endswith(".glb") else check(browser, html, keep, measure)
                print("ok    chromium %s: %s" % (os.path.abspath(html), line), flush=True)
            except (Fail, OSError, KeyError) as e:
                print("FAIL  chromium %s: %s" % (os.path.abspath(html), e), flush=True)
                failed += 1
            browser.events = []
    finally:
        browser.close()
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
