/* Runs own their files (issue 27, items 3, 4, 5, 8 and 9's seed): the checkpoint is never the
 * output, an input or the config; every file a tool reads (named in a config or inside an input
 * too) is an input; a run locks its output and checkpoint, so a second run on them is refused
 * naming the holder; every path a run writes is checked before any work; --seed takes only a
 * non-negative integer that fits. Each test asserts exit codes, messages and files, never time. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fixtures.h"
#include "test.h"

static char out[16384];

static const char *copy_of(const char *src, const char *name)
{
    const char *dst = sc_test_tmp(name);
    return sc_test_sh(NULL, 0, "cp '%s' '%s'", src, dst) == 0 ? dst : NULL;
}

static int same_bytes(const char *a, const char *b) { return sc_test_sh(NULL, 0, "cmp -s '%s' '%s'", a, b) == 0; }

/* Nothing written beside path: no path, no temporary, no lock file. */
static int nothing_left(const char *path)
{
    return !sc_test_file_exists(path) && sc_test_sh(NULL, 0, "ls -d '%s'.tmp* '%s'.lock 2> /dev/null | grep -q .", path, path) != 0;
}

/* ---- item 3: the checkpoint is never the output, an input or the config ----------------- */

TEST(ownership_checkpoint_is_not_the_output)
{
    /* refused before any input is read: placeholder inputs, which a run would reject (exit 2) */
    const char *ch = sc_test_write("own_ch.h5", "not a character\n"), *in2 = sc_test_write("own_in2.h5", "not a reference\n");
    const char *cfg = sc_test_write("own_ck.yaml", "simulation: {}\n");
    ENSURE(copy_of(in2, "own_in2.orig") && copy_of(cfg, "own_ck.orig"));
    const char *o = sc_test_tmp("own_ck_out.h5");
    char dot[1100];
    snprintf(dot, sizeof dot, "%s/./own_ck_out.h5", sc_test_tmpdir());
    static const char *const tools[] = {"sample-openloop", "learn-feedback"};
    for (int t = 0; t < 2; t++) {
        const char *ckpts[] = {o, dot, in2, cfg};
        static const char *const what[] = {"output", "output", "input", "config"};
        for (int k = 0; k < 4; k++) {
            int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --checkpoint %s %s %s", sc_test_tool(tools[t]), cfg, o, ckpts[k], ch, in2);
            sc_test_report("%s --checkpoint = the %s: exit %d: %s", tools[t], what[k], rc, out);
            ENSURE_MSG(rc == 1 && strstr(out, "checkpoint") && strstr(out, what[k]), "%s --checkpoint = %s: exit %d: %s", tools[t], what[k], rc, out);
            ENSURE_MSG(nothing_left(o), "%s left output", tools[t]);
            ENSURE(same_bytes(in2, sc_test_tmp("own_in2.orig")) && same_bytes(cfg, sc_test_tmp("own_ck.orig")));
        }
    }
}

/* ---- item 4: files named in a config or inside an input are inputs ---------------------- */

TEST(ownership_files_named_in_a_config_are_inputs)
{
    const char *ch = sc_fixture_michelin(), *ref = sc_fixture_march_reference();
    ENSURE_MSG(ch && ref, "fixtures: %s", sc_fixture_log());
    /* inverse-dynamics -o = the config's motion.bvh; mesh-prep -o = the config's skeleton.bvh */
    const char *bvh = copy_of(sc_test_repo("mocap/march_in_place.bvh"), "own_motion.bvh");
    ENSURE(bvh && copy_of(bvh, "own_motion.orig"));
    int rc = sc_test_sh(out, sizeof out, "sed 's/bvh: march_in_place.bvh/bvh: own_motion.bvh/' %s > %s", sc_test_repo("configs/march.yaml"),
                        sc_test_tmp("own_id.yaml"));
    ENSURE(rc == 0);
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("inverse-dynamics"), sc_test_tmp("own_id.yaml"), bvh, ch);
    sc_test_report("inverse-dynamics -o = motion.bvh: exit %d: %s", rc, out);
    ENSURE_MSG(rc == 1 && strstr(out, "motion.bvh") && same_bytes(bvh, sc_test_tmp("own_motion.orig")), "exit %d: %s", rc, out);
    const char *mp = sc_test_write("own_mp.yaml", "skeleton: {bvh: own_motion.bvh}\nbody: {builtin: michelin}\n");
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s", sc_test_tool("mesh-prep"), mp, bvh);
    sc_test_report("mesh-prep -o = skeleton.bvh: exit %d: %s", rc, out);
    ENSURE_MSG(rc == 1 && strstr(out, "skeleton.bvh") && same_bytes(bvh, sc_test_tmp("own_motion.orig")), "exit %d: %s", rc, out);
    ENSURE(!sc_test_file_exists(sc_test_tmp("own_motion.xdmf")));

    /* simulate -o = the config's controller.file (a trajectory), and = --policy */
    const char *ctrl = copy_of(ref, "own_ctrl.h5");
    ENSURE(ctrl && copy_of(ref, "own_ctrl.orig"));
    const char *sim = sc_test_write("own_sim.yaml", "simulation: {duration: 0.005}\ncontroller: {type: trajectory, file: own_ctrl.h5}\n");
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("simulate"), sim, ctrl, ch);
    sc_test_report("simulate -o = controller.file: exit %d: %s", rc, out);
    ENSURE_MSG(rc == 1 && strstr(out, "controller file") && same_bytes(ctrl, sc_test_tmp("own_ctrl.orig")), "exit %d: %s", rc, out);
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --policy %s %s", sc_test_tool("simulate"), sim, ctrl, ctrl, ch);
    ENSURE_MSG(rc == 1 && strstr(out, "--policy") && same_bytes(ctrl, sc_test_tmp("own_ctrl.orig")), "exit %d: %s", rc, out);

    /* render: an input that is a file render writes into OUTDIR */
    const char *dir = sc_test_tmp("own_render");
    mkdir(dir, 0777);
    char frame[1100];
    snprintf(frame, sizeof frame, "%s/contact_sheet.png", dir);
    ENSURE(sc_test_sh(NULL, 0, "cp %s %s && cp %s %s.orig", ref, frame, ref, frame) == 0);
    rc = sc_test_sh(out, sizeof out, "%s -q --no-movie -o %s --reference %s %s", sc_test_tool("render"), dir, frame, ch);
    sc_test_report("render --reference OUTDIR/contact_sheet.png: exit %d: %s", rc, out);
    char orig[1200];
    snprintf(orig, sizeof orig, "%s.orig", frame);
    ENSURE_MSG(rc == 1 && strstr(out, "contact_sheet.png") && same_bytes(frame, orig), "exit %d: %s", rc, out);
}

/* learn-feedback -o = the reference its openloop.h5 names (found beside it) */
TEST(ownership_reference_named_in_an_openloop_is_an_input)
{
    const char *ch = sc_fixture_michelin(), *ref = sc_fixture_march_reference();
    ENSURE_MSG(ch && ref, "fixtures: %s", sc_fixture_log());
    const char *ref2 = copy_of(ref, "own_ref.h5");
    ENSURE(ref2 && copy_of(ref, "own_ref.orig"));
    const char *cfg = sc_test_write("own_fb.yaml",
                                    "simulation: {solver: exact}\n"
                                    "sampling: {samples: 8, elites: 3, cycle: auto, cycles: 1, max_retries: 1}\n"
                                    "feedback: {iterations: 1, cycles: 1, samples: 8, elites: 3, actions: [l_thigh]}\n");
    const char *ol = sc_test_tmp("own_ol.h5");
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("sample-openloop"), cfg, ol, ch, ref2);
    ENSURE_MSG(rc == 0, "sample-openloop: exit %d: %s", rc, out);
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"), cfg, ref2, ch, ol);
    sc_test_report("learn-feedback -o = the reference openloop.h5 names: exit %d: %s", rc, out);
    ENSURE_MSG(rc == 1 && strstr(out, "reference named in the openloop.h5") && same_bytes(ref2, sc_test_tmp("own_ref.orig")), "exit %d: %s", rc, out);
}

/* ---- item 5: a run owns its output and checkpoint --------------------------------------- */

/* Holds path.lock as another run would (flock, the holder's line written); returns the fd. */
static int hold_lock(const char *path, const char *holder)
{
    char lock[1100];
    snprintf(lock, sizeof lock, "%s.lock", path);
    int fd = open(lock, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 || write(fd, holder, strlen(holder)) != (ssize_t)strlen(holder)) {
        close(fd);
        return -1;
    }
    return fd;
}

TEST(ownership_a_held_output_or_checkpoint_is_refused)
{
    /* placeholder inputs: the lock is taken before any input is read */
    const char *ch = sc_test_write("own_l_ch.h5", "x\n"), *in2 = sc_test_write("own_l_in2.h5", "y\n"), *cfg = sc_test_write("own_l.yaml", "{}\n");
    const char *o = sc_test_tmp("own_l_out.h5");
    char ckpt[1100];
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", o);
    const char *holder = "pid 4242 on host elsewhere, started 2024-01-01 00:00:00, cmd sample-openloop ...\n";
    /* the output held: every tool that writes one refuses, naming the holder */
    int fd = hold_lock(o, holder);
    ENSURE(fd >= 0);
    static const char *const tools[] = {"sample-openloop", "learn-feedback", "simulate", "inverse-dynamics", "mesh-prep", "skin-weights"};
    for (int t = 0; t < 6; t++) {
        int two = t < 2, none = t == 4;
        int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s", sc_test_tool(tools[t]), cfg, o, none ? "" : ch, two ? in2 : "");
        sc_test_report("%s on a held output: exit %d: %s", tools[t], rc, out);
        ENSURE_MSG(rc == 1 && strstr(out, "pid 4242 on host elsewhere") && strstr(out, "in use by another run"), "%s: exit %d: %s", tools[t], rc,
                   out);
        ENSURE(!sc_test_file_exists(o) && !sc_test_file_exists(ckpt));
    }
    close(fd); /* a lock file without a holder (a killed run's) does not block */
    /* the checkpoint held: refused with or without --resume */
    fd = hold_lock(ckpt, holder);
    ENSURE(fd >= 0);
    for (int resume = 0; resume < 2; resume++) {
        int rc =
            sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s %s %s", sc_test_tool("sample-openloop"), cfg, o, resume ? "--resume" : "", ch, in2);
        sc_test_report("sample-openloop%s on a held checkpoint: exit %d: %s", resume ? " --resume" : "", rc, out);
        ENSURE_MSG(rc == 1 && strstr(out, "pid 4242 on host elsewhere") && strstr(out, "checkpoint"), "exit %d: %s", rc, out);
    }
    char lock[1200];
    snprintf(lock, sizeof lock, "%s.lock", o);
    ENSURE_MSG(!sc_test_file_exists(lock), "the refused run left its output's lock file"); /* taken, then removed at exit */
    snprintf(lock, sizeof lock, "%s.lock", ckpt);
    char *text = sc_test_read_file(lock, NULL);
    ENSURE_MSG(text && !strcmp(text, holder), "the refused run touched the holder's lock file");
    free(text);
    close(fd);
}

/* Two simulate runs on one output: the first holds its lock while it waits for its config (a
 * FIFO), so the second starts while the first owns the output, whatever the load. */
TEST(ownership_two_runs_on_one_output)
{
    const char *ch = sc_fixture_michelin();
    ENSURE_MSG(ch, "fixtures: %s", sc_fixture_log());
    const char *fifo = sc_test_tmp("own_fifo.yaml"), *o = sc_test_tmp("own_race.h5"), *lone = sc_test_tmp("own_lone.h5");
    const char *text = "simulation: {duration: 0.01}\n";
    unlink(fifo);
    ENSURE(mkfifo(fifo, 0666) == 0);
    /* the lone run, with the same command line */
    int rc = sc_test_sh(out, sizeof out, "printf '%s' > %s & %s -q -c %s -o %s %s; r=$?; wait; exit $r", text, fifo, sc_test_tool("simulate"), fifo,
                        o, ch);
    ENSURE_MSG(rc == 0, "lone run: exit %d: %s", rc, out);
    ENSURE(rename(o, lone) == 0);

    char lock[1100];
    snprintf(lock, sizeof lock, "%s.lock", o);
    pid_t a = fork();
    if (a == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execl(sc_test_tool("simulate"), sc_test_tool("simulate"), "-q", "-c", fifo, "-o", o, ch, (char *)NULL);
        _exit(127);
    }
    ENSURE(a > 0);
    char want[64];
    snprintf(want, sizeof want, "pid %ld on host", (long)a);
    /* the first run locks before it reads its config, then blocks on the FIFO: wait for its line */
    int held = 0;
    for (int i = 0; i < 6000 && !held; i++) {
        char *t = sc_test_read_file(lock, NULL);
        held = t && strstr(t, want);
        free(t);
        if (!held) {
            int st;
            if (waitpid(a, &st, WNOHANG) == a) break;
            usleep(10000);
        }
    }
    if (!held) {
        kill(a, SIGKILL);
        waitpid(a, NULL, 0);
    }
    ENSURE_MSG(held, "the first run never took its lock");
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("simulate"),
                    sc_test_write("own_race2.yaml", "simulation: {duration: 0.02}\n"), o, ch);
    sc_test_report("a second run on the output of a running one: exit %d: %s", rc, out);
    int refused = rc == 1 && strstr(out, want) != NULL;
    /* let the first run go on: its config through the FIFO */
    int w = open(fifo, O_WRONLY);
    if (w >= 0) {
        ssize_t put = write(w, text, strlen(text));
        (void)put;
        close(w);
    }
    int st;
    while (waitpid(a, &st, 0) < 0 && errno == EINTR) {}
    ENSURE_MSG(refused, "the second run was not refused naming the first's pid: exit %d: %s", rc, out);
    ENSURE_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the first run failed (status %d)", st);
    rc = sc_test_sh(out, sizeof out, "%s %s %s", sc_test_repo("scripts/h5-same.py"), lone, o);
    ENSURE_MSG(rc == 0, "the winner's output differs from a lone run's: %s", out);
    ENSURE_MSG(!sc_test_file_exists(lock), "the lock file was left behind");
}

/* A run killed with SIGKILL leaves its OUTPUT.tmp.<pid>.<hex>: the next run on that output, once
 * it holds the lock, removes it (and nothing else of the folder). */
TEST(ownership_stale_temporaries_removed_by_the_next_run)
{
    const char *ch = sc_fixture_michelin();
    ENSURE_MSG(ch, "fixtures: %s", sc_fixture_log());
    const char *o = sc_test_tmp("own_stale.h5");
    char stale[1100], other[1100];
    snprintf(stale, sizeof stale, "%s.tmp.99999999.0123abcd", o); /* above any pid_max */
    snprintf(other, sizeof other, "%s.tmp.notours", o);
    ENSURE(sc_test_write("own_stale.h5.tmp.99999999.0123abcd", "x") && sc_test_write("own_stale.h5.tmp.notours", "x"));
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("simulate"),
                        sc_test_write("own_stale.yaml", "simulation: {duration: 0.01}\n"), o, ch);
    ENSURE_MSG(rc == 0, "simulate: exit %d: %s", rc, out);
    ENSURE_MSG(!sc_test_file_exists(stale), "the stale temporary %s is still there", stale);
    ENSURE_MSG(sc_test_file_exists(other), "%s, not a temporary's name, was removed", other);
}

/* ---- item 8: every path a run writes is checked before any work ------------------------- */

TEST(ownership_unwritable_paths_found_at_start)
{
    /* placeholder inputs: the paths are checked before any input is read (else exit 2) */
    const char *ch = sc_test_write("own_w_ch.h5", "x\n"), *in2 = sc_test_write("own_w_in2.h5", "y\n"), *cfg = sc_test_write("own_w.yaml", "{}\n");
    const char *o = sc_test_tmp("own_w_out.h5");
    char missing[1100];
    snprintf(missing, sizeof missing, "%s/no_such_folder/run.ckpt", sc_test_tmpdir());
    static const char *const tools[] = {"sample-openloop", "learn-feedback"};
    for (int t = 0; t < 2; t++) {
        int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --checkpoint %s %s %s", sc_test_tool(tools[t]), cfg, o, missing, ch, in2);
        sc_test_report("%s with a checkpoint in a missing folder: exit %d: %s", tools[t], rc, out);
        ENSURE_MSG(rc == 3 && strstr(out, missing), "%s: exit %d: %s", tools[t], rc, out);
        ENSURE(nothing_left(o));
    }
    /* a read-only folder (root writes anyway: then there is nothing to find) */
    const char *ro = sc_test_tmp("own_readonly");
    mkdir(ro, 0555);
    chmod(ro, 0555);
    char ro_ckpt[1100];
    snprintf(ro_ckpt, sizeof ro_ckpt, "%s/run.ckpt", ro);
    if (access(ro, W_OK) != 0) {
        int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --checkpoint %s %s %s", sc_test_tool("sample-openloop"), cfg, o, ro_ckpt, ch, in2);
        ENSURE_MSG(rc == 3 && strstr(out, ro_ckpt), "read-only folder: exit %d: %s", rc, out);
    } else {
        sc_test_report("running as root: the read-only folder case is not observable");
    }
    /* names whose temporary file would exceed NAME_MAX (255): refused at start-up, exit 3 */
    char longname[300], longpath[1400];
    memset(longname, 'n', 248);
    snprintf(longname + 248, sizeof longname - 248, ".h5");
    snprintf(longpath, sizeof longpath, "%s/%s", sc_test_tmpdir(), longname);
    char longckpt[1400];
    snprintf(longckpt, sizeof longckpt, "%.*s", (int)strlen(longpath) - 6, longpath); /* 245 characters: its .tmp fits, its unique temporary not */
    int rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s --checkpoint %s %s %s", sc_test_tool("sample-openloop"), cfg, o, longckpt, ch, in2);
    sc_test_report("sample-openloop with a checkpoint name of %zu characters: exit %d", strlen(longname) - 6, rc);
    ENSURE_MSG(rc == 3 && strstr(out, "too long"), "long checkpoint name: exit %d: %s", rc, out);
    ENSURE(nothing_left(o));
    const char *ch_real = sc_fixture_michelin();
    ENSURE_MSG(ch_real, "fixtures: %s", sc_fixture_log());
    rc = sc_test_sh(out, sizeof out, "%s -q -c %s -o %s %s", sc_test_tool("simulate"),
                    sc_test_write("own_w_sim.yaml", "simulation: {duration: 0.005}\n"), longpath, ch_real);
    sc_test_report("simulate -o a name of %zu characters: exit %d", strlen(longname), rc);
    ENSURE_MSG(rc == 3 && strstr(out, "too long"), "long output name: exit %d: %s", rc, out);
    ENSURE(nothing_left(longpath));
}

/* ---- item 9: --seed ------------------------------------------------------------------------ */

TEST(ownership_seed_is_a_non_negative_integer)
{
    static const char *const bad[] = {"-1", "99999999999999999999999", "18446744073709551616", "12abc", "' 5'", "+5", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = sc_test_sh(out, sizeof out, "%s --seed %s --help", sc_test_tool("simulate"), bad[i]);
        ENSURE_MSG(rc == 1 && strstr(out, "non-negative integer"), "--seed %s: exit %d: %s", bad[i], rc, out);
    }
    static const char *const good[] = {"0", "7", "18446744073709551615"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        int rc = sc_test_sh(out, sizeof out, "%s --seed %s --help", sc_test_tool("sample-openloop"), good[i]);
        ENSURE_MSG(rc == 0, "--seed %s: exit %d: %s", good[i], rc, out);
    }
}
