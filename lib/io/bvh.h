/* BVH (Biovision hierarchy) motion files: reader, writer and forward kinematics.
 * Values stay in file units (degrees, file length units); callers convert (CMU: 0.056444 m/unit).
 * The reader is strict: every problem is an SC_EINPUT error naming file:line, never a crash. */
#ifndef SC_IO_BVH_H
#define SC_IO_BVH_H
#include <stddef.h>
#include "core/mathx.h"
#include "core/status.h"

enum { SC_BVH_XPOS, SC_BVH_YPOS, SC_BVH_ZPOS, SC_BVH_XROT, SC_BVH_YROT, SC_BVH_ZROT };

/* What the reader accepts; beyond these a file is SC_EINPUT naming file:line (and the frame):
 * joints (End Sites included), |OFFSET| and |position channel| in file units (1e6 CMU units
 * are 56 km), |rotation channel| in degrees (1e5 degrees are 278 turns; beyond, a double
 * loses the angle's precision and a single wild value drives the inverse dynamics), and the
 * file size (an hour at 120 fps with 60 channels is ~0.3 GB). */
#define SC_BVH_MAX_JOINTS   512
#define SC_BVH_MAX_POSITION 1e6
#define SC_BVH_MAX_ROTATION 1e5
#define SC_BVH_MAX_BYTES    (1ULL << 30)

typedef struct sc_bvh_joint {
    char name[64];
    int parent;     /* -1 for a root */
    int end_site;   /* 1 for an End Site (no channels); its name is "<parent>_End" */
    sc_vec3 offset; /* in file units */
    int nchannels;
    int channel[6];     /* SC_BVH_* in file order (no channel twice) */
    int channel_offset; /* index of this joint's first channel in a frame */
} sc_bvh_joint;

typedef struct sc_bvh {
    int njoints;
    sc_bvh_joint *joints; /* depth-first file order, parents before children; End Sites included */
    int nchannels, nframes;
    double frame_time; /* s */
    double *frames;    /* nframes * nchannels, degrees / file units as in the file */
} sc_bvh;

/* Unreadable file: SC_EIO (with strerror). Malformed content: SC_EINPUT, message
 * "file:line: ...". Frame numbers in messages are 0-based (frame 0 = first data line, which is
 * the T-pose in the CMU conversions) and the message says so. On failure *out is zeroed.
 * Several ROOTs are accepted (each has parent -1). Blank lines between frames are skipped;
 * a non-blank line beyond the declared frame count is an error. */
int sc_bvh_load(const char *path, sc_bvh *out, sc_err *err);
int sc_bvh_parse(const char *text, size_t len, const char *name_for_errors, sc_bvh *out, sc_err *err);
void sc_bvh_free(sc_bvh *b);

int sc_bvh_find(const sc_bvh *b, const char *joint_name); /* -1 if absent */
const char *sc_bvh_channel_name(int channel);             /* "Xposition" ... "Zrotation" */

/* Local transform of joint j in frame f (f < 0 or f >= nframes: rest pose, all channels zero):
 * rotation from its rotation channels composed in file order ("Zrotation Yrotation Xrotation"
 * gives R = Rz*Ry*Rx), translation = offset + position channels (added to the offset). */
sc_xform sc_bvh_local(const sc_bvh *b, int j, int f);
/* Forward kinematics: world[j] = world[parent] * local[j]; world has njoints entries. */
void sc_bvh_world(const sc_bvh *b, int f, sc_xform *world);

/* Writes LF text with the shortest decimal form that reads back to the identical double
 * (so load(write(b)) == b bit for bit). Writes a temporary, then renames it to path.
 * SC_EINPUT if b is inconsistent (parent order, channel offsets, names), SC_EIO on I/O. */
int sc_bvh_write(const char *path, const sc_bvh *b, sc_err *err);

#endif
