"""blender -b --factory-startup --python scripts/viewers/check_blender.py -- NAME_surface.obj ...

For each render export NAME_surface.obj (+ NAME_surface.pc2, NAME_frames.h5 and, when present,
NAME_skeleton.bvh beside it) does what the README tells a Blender user to do, in a fresh empty
scene: File > Import > Wavefront (.obj) with the defaults (Forward -Z, Up Y), a Mesh Cache
modifier on the .pc2 (Time Mode Frame, Frame Start 1), File > Import > Motion Capture (.bvh)
at scale 1. It then checks, at the first, middle and last frame, the evaluated vertex
positions (world space, Blender's Z-up: (x, y, z) y-up is (x, -z, y)) against the frames'
surface positions in NAME_frames.h5 within float32 rounding, and the armature's joint (bone
head) positions against the joints the BVH file itself puts there (its forward kinematics in
double precision) within float32 rounding, and against the frames' joints within SIM_JOINT_GAP:
a BVH holds fixed bone lengths (OFFSETs) and rotations, while the simulated skeleton's joints
come apart a little under load (ODE's joint constraint error: up to 0.3 mm of bone-length
change on the quickstart's march), which no BVH can carry.
Blender 3.4's BVH importer cannot open files under Python 3.11 (it opens them with mode 'rU',
which Python 3.11 removed); the check then applies the README's workaround and says so.
Each NAME.glb (render --gltf) with NAME_frames.h5 beside it (render -o DIR --gltf DIR/NAME.glb
writes both from the same frames) goes through File > Import > glTF 2.0 with Shading *Smooth*
(Debian's Blender 3.4.1 fails with the default *Use Normal Data*: its importer calls np.bool,
which NumPy 1.24 removed) after setting the scene frame rate to the export's: the evaluated
mesh (its shape keys animated by the importer) and the bone empties' world positions at the
first, middle and last frame against NAME_frames.h5. A .glb with no NAME_frames.h5 beside it
(render --gltf without -o) is imported and counted only.
Prints one line per export; exits 0 when all match, 2 when one does not."""
import builtins
import os
import struct
import sys

import bpy
import h5py
import numpy as np

FLOAT32_REL = 2.0 ** -24  # float32 rounding (PC2 stores float32; Blender's meshes are float32)
SIM_JOINT_GAP = 2e-3  # m: how far a simulated joint may sit from where fixed bone lengths put it


class Mismatch(Exception):
    pass


def z_up(a):
    a = np.asarray(a, dtype=float)
    return np.stack([a[:, 0], -a[:, 2], a[:, 1]], axis=1)


def tolerance(ref):
    # rounding of the stored float32, of the float32 mesh and of the 4x4 object transform
    return 8 * FLOAT32_REL * max(1.0, float(np.max(np.abs(ref))))


def pc2_header(path):
    with open(path, "rb") as f:
        head = f.read(32)
    if len(head) != 32 or head[:12] != b"POINTCACHE2\0":
        raise Mismatch("%s: not a PC2 file" % path)
    _version, points = struct.unpack("<ii", head[12:20])
    _start, _rate = struct.unpack("<ff", head[20:28])
    (samples,) = struct.unpack("<i", head[28:32])
    return points, samples


def fix_bvh_importer():
    """The workaround: Blender 3.4's io_anim_bvh opens files with mode 'rU' (gone in Python 3.11)."""
    import io_anim_bvh.import_bvh as importer
    importer.open = lambda name, mode="r", *a, **k: builtins.open(name, mode.replace("U", ""), *a, **k)


def import_bvh(path):
    try:
        bpy.ops.import_anim.bvh(filepath=path)
        return ""
    except RuntimeError as e:
        if "invalid mode: 'rU'" not in str(e):
            raise
        fix_bvh_importer()
        bpy.ops.import_anim.bvh(filepath=path)
        return " (Blender's BVH importer failed on mode 'rU'; imported with the README's workaround)"


def bvh_forward_kinematics(path):
    """The joint positions (frames x joints x 3, y up) the BVH file puts there, in double precision:
    each joint at its parent's position + the parent's rotation times its OFFSET (the root at its
    position channels), rotations composed in the file's channel order."""
    toks = open(path).read().split()
    joints, stack, i = [], [], toks.index("HIERARCHY") + 1
    while toks[i] != "MOTION":
        t = toks[i]
        if t in ("ROOT", "JOINT", "End"):
            joints.append({"name": toks[i + 1], "parent": stack[-1] if stack else -1, "end": t == "End", "channels": []})
            i += 2
        elif t == "{":
            stack.append(len(joints) - 1)
            i += 1
        elif t == "}":
            stack.pop()
            i += 1
        elif t == "OFFSET":
            joints[-1]["offset"] = np.array([float(v) for v in toks[i + 1:i + 4]])
            i += 4
        elif t == "CHANNELS":
            n = int(toks[i + 1])
            joints[-1]["channels"] = toks[i + 2:i + 2 + n]
            i += 2 + n
        else:
            raise Mismatch("%s: unexpected '%s' in the HIERARCHY" % (path, t))
    nframes = int(toks[i + 2])  # MOTION Frames: N Frame Time: T
    values = np.array([float(v) for v in toks[i + 6:]])
    nch = sum(len(j["channels"]) for j in joints)
    if values.size != nframes * nch:
        raise Mismatch("%s: %d values for %d frames of %d channels" % (path, values.size, nframes, nch))
    values = values.reshape(nframes, nch)

    def rot(axis, deg):
        c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
        return {"X": np.array([[1, 0, 0], [0, c, -s], [0, s, c]]), "Y": np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
                "Z": np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])}[axis]

    names = [j["name"] for j in joints if not j["end"]]
    out = np.zeros((nframes, len(names), 3))
    for f in range(nframes):
        k, world, n = 0, [], 0
        for j in joints:
            r, p = np.eye(3), j["offset"].copy()
            for c in j["channels"]:
                if c.endswith("position"):
                    p["XYZ".index(c[0])] = values[f, k] + (j["offset"]["XYZ".index(c[0])] if j["parent"] >= 0 else 0)
                else:
                    r = r @ rot(c[0], values[f, k])
                k += 1
            if j["parent"] >= 0:
                pr, pp = world[j["parent"]]
                r, p = pr @ r, pp + pr @ p
            world.append((r, p))
            if not j["end"]:
                out[f, n] = p
                n += 1
    return names, out


def evaluated_world_vertices(obj):
    """The object's mesh as Blender evaluates it at the scene's frame (shape keys, cache), in world coordinates."""
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    local = np.empty(3 * len(mesh.vertices))
    mesh.vertices.foreach_get("co", local)
    evaluated.to_mesh_clear()
    mw = np.array(evaluated.matrix_world)
    return local.reshape(-1, 3) @ mw[:3, :3].T + mw[:3, 3]


def check(obj_path):
    stem = obj_path[: -len("_surface.obj")]
    pc2, frames_h5, bvh = stem + "_surface.pc2", stem + "_frames.h5", stem + "_skeleton.bvh"
    for p in (pc2, frames_h5):
        if not os.path.exists(p):
            raise Mismatch("%s is missing (render writes it beside the OBJ unless its export is off)" % p)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    bpy.ops.wm.obj_import(filepath=obj_path)
    meshes = [o for o in scene.objects if o.type == "MESH"]
    if len(meshes) != 1:
        raise Mismatch("the OBJ import made %d mesh objects, expected 1" % len(meshes))
    obj = meshes[0]
    points, samples = pc2_header(pc2)
    with h5py.File(frames_h5, "r") as h:
        n = int(h.attrs["frames"])
        nsv = h["/frames/000000/surface"].shape[0]
        if len(obj.data.vertices) != nsv or points != nsv or samples != n:
            raise Mismatch("Blender imported %d vertices; the PC2 has %d points x %d samples; %s has %d vertices x %d frames" % (
                len(obj.data.vertices), points, samples, frames_h5, nsv, n))
        cache = obj.modifiers.new("softcon", "MESH_CACHE")
        cache.cache_format = "PC2"
        cache.filepath = pc2
        cache.time_mode = "FRAME"
        cache.frame_start = 1
        frames = sorted({0, n // 2, n - 1})
        worst = 0.0
        for k in frames:
            scene.frame_set(k + 1)
            world = evaluated_world_vertices(obj)
            want = z_up(h["/frames/%06d/surface" % k][()])
            err = float(np.max(np.abs(world - want)))
            if not err <= tolerance(want):
                raise Mismatch("frame %d (scene frame %d): evaluated vertices differ from %s:/frames/%06d/surface by %.3g m (> %.3g)" % (
                    k, k + 1, frames_h5, k, err, tolerance(want)))
            worst = max(worst, err)
        line = "%d vertices, PC2 %d samples: frames %s match within %.2g m" % (nsv, samples, frames, worst)
        if os.path.exists(bvh):
            note = import_bvh(bvh)
            arms = [o for o in scene.objects if o.type == "ARMATURE"]
            if len(arms) != 1:
                raise Mismatch("the BVH import made %d armatures, expected 1" % len(arms))
            arm = arms[0]
            names = [x.decode() if isinstance(x, bytes) else x for x in h["/mesh/bone_names"][()]]
            fk_names, fk = bvh_forward_kinematics(bvh)
            if sorted(fk_names) != sorted(names) or fk.shape[0] != n:
                raise Mismatch("%s has joints %s over %d frames; %s has bones %s over %d frames" % (bvh, fk_names, fk.shape[0], frames_h5, names, n))
            fk = fk[:, [fk_names.index(b) for b in names]]
            jworst = gap = 0.0
            for k in frames:
                scene.frame_set(k + 1)
                mw = np.array(arm.matrix_world)
                heads = np.array([tuple(arm.pose.bones[b].head) for b in names]) @ mw[:3, :3].T + mw[:3, 3]
                want = z_up(fk[k])
                err = float(np.max(np.abs(heads - want)))
                # the importer turns each joint's Euler angles into float32 matrices and composes them
                # down chains of up to 7 bones: float32 roundings per joint and operation add up
                # (1.3e-7 m on the quickstart's march)
                if not err <= 8 * tolerance(want):
                    raise Mismatch("frame %d: Blender's BVH joints differ from the joints %s puts there by %.3g m (> %.3g)" % (
                        k, bvh, err, 8 * tolerance(want)))
                jworst = max(jworst, err)
            for k in range(n):  # every frame: the file against the simulation
                d = float(np.max(np.abs(fk[k] - h["/frames/%06d/joints" % k][()])))
                if not d <= SIM_JOINT_GAP:
                    raise Mismatch("frame %d: the joints of %s are %.3g m from %s:/frames/%06d/joints (> %g m: more than the simulated joints' separation)" % (
                        k, bvh, d, frames_h5, k, SIM_JOINT_GAP))
                gap = max(gap, d)
            line += "; BVH %d bones: Blender's joints match the file's within %.2g m, the file's the simulated joints within %.2g m%s" % (
                len(names), jworst, gap, note)
        return line


def check_gltf(glb_path):
    frames_h5 = glb_path[: -len(".glb")] + "_frames.h5"
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    if not os.path.exists(frames_h5):  # render --gltf without -o: it imports, nothing to compare with
        bpy.ops.import_scene.gltf(filepath=glb_path, import_shading="SMOOTH")
        meshes = [o for o in scene.objects if o.type == "MESH"]
        keys = meshes[0].data.shape_keys.key_blocks if len(meshes) == 1 and meshes[0].data.shape_keys else []
        if len(meshes) != 1 or len(keys) < 2:
            raise Mismatch("the glTF import made %d mesh objects with %d shape keys, expected 1 with one a frame" % (len(meshes), len(keys)))
        return "%d vertices, %d shape keys, %d objects; no %s beside it: positions not compared" % (
            len(meshes[0].data.vertices), len(keys) - 1, len(scene.objects), os.path.basename(frames_h5))
    with h5py.File(frames_h5, "r") as h:
        n = int(h.attrs["frames"])
        times = [float(h["/frames/%06d" % k].attrs["time"]) for k in range(n)]
        fps = (n - 1) / (times[-1] - times[0]) if n > 1 and times[-1] > times[0] else 30.0
        if abs(fps - round(fps)) > 1e-6:
            raise Mismatch("export rate %.6g fps is not a whole number of frames per second" % fps)
        scene.render.fps, scene.render.fps_base = int(round(fps)), 1  # the importer keys time t at frame t * fps
        bpy.ops.import_scene.gltf(filepath=glb_path, import_shading="SMOOTH")
        meshes = [o for o in scene.objects if o.type == "MESH"]
        if len(meshes) != 1:
            raise Mismatch("the glTF import made %d mesh objects, expected 1" % len(meshes))
        obj = meshes[0]
        nsv = h["/frames/000000/surface"].shape[0]
        keys = obj.data.shape_keys.key_blocks if obj.data.shape_keys else []
        if len(obj.data.vertices) != nsv or len(keys) != n + 1:
            raise Mismatch("Blender imported %d vertices and %d shape keys; %s has %d vertices x %d frames" % (
                len(obj.data.vertices), len(keys), frames_h5, nsv, n))
        names = [x.decode() if isinstance(x, bytes) else x for x in h["/mesh/bone_names"][()]]
        frames = sorted({0, n // 2, n - 1})
        worst = jworst = 0.0
        for k in frames:
            scene.frame_set(k)
            world = evaluated_world_vertices(obj)
            want = z_up(h["/frames/%06d/surface" % k][()])
            err = float(np.max(np.abs(world - want)))
            # float32 base + float32 offset of the shape key, blended in float32
            if not err <= 4 * tolerance(want):
                raise Mismatch("frame %d: evaluated vertices differ from %s:/frames/%06d/surface by %.3g m (> %.3g)" % (
                    k, frames_h5, k, err, 4 * tolerance(want)))
            worst = max(worst, err)
            if names:
                heads = np.array([tuple(scene.objects[b].matrix_world.translation) for b in names])
                want = z_up(h["/frames/%06d/joints" % k][()])
                err = float(np.max(np.abs(heads - want)))
                if not err <= 32 * tolerance(want):  # rotations composed down chains of bones in float32
                    raise Mismatch("frame %d: the bone nodes differ from %s:/frames/%06d/joints by %.3g m" % (k, frames_h5, k, err))
                jworst = max(jworst, err)
        line = "%d vertices, %d shape keys at %d fps: frames %s match within %.2g m" % (nsv, n, int(round(fps)), frames, worst)
        if names:
            line += "; %d bone nodes: joints match within %.2g m" % (len(names), jworst)
        return line


def main():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    if not argv:
        print("usage: blender -b --factory-startup --python check_blender.py -- NAME_surface.obj|NAME.glb ...", file=sys.stderr)
        return 1
    failed = 0
    for obj_path in argv:
        obj_path = os.path.abspath(obj_path)
        try:
            line = check_gltf(obj_path) if obj_path.endswith(".glb") else check(obj_path)
            print("ok    blender %s: %s" % (obj_path, line), flush=True)
        except (Mismatch, OSError, KeyError, RuntimeError) as e:
            print("FAIL  blender %s: %s" % (obj_path, e), flush=True)
            failed += 1
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
