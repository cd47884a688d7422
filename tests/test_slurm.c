/* A real Slurm: a private one-node cluster (scripts/slurm/local-cluster.sh) runs the project's
 * job scripts, scripts/slurm/sample-openloop.sbatch and learn-feedback.sbatch, as 2-task jobs
 * (mpiexec.mpich -n 2) on small presets of the march; each is requeued (`scontrol requeue`, what
 * preemption does) once the tool's first checkpoint exists, released with
 * `scontrol update JobId=N StartTime=now`, and must complete after the requeue (Restarts=1,
 * COMPLETED 0:0, resumed from its checkpoint: tests/slurm/requeue-test.sh) with an output
 * identical to an uninterrupted mpiexec.mpich -n 2 run's. Skipped, and says so, when Slurm is
 * not installed (scripts/install-deps.sh --slurm). */
#include <stdio.h>
#include <string.h>
#include "core/log.h"
#include "fixtures.h"
#include "test.h"

static char out[16384];

/* 0 when Slurm can run here; else reports why not and returns 77 */
static int slurm_here(void)
{
    int rc = sc_test_sh(out, sizeof out, "%s %s check", sc_test_repo("tests/slurm/requeue-test.sh"), sc_test_tmp("slurm_check"));
    if (rc == 77) {
        char *line = strstr(out, "requeue-test: "), *nl = strchr(out, '\n');
        if (nl && !nl[1]) *nl = 0;
        sc_test_report("%s", line ? line : out);
    }
    return rc == 77 ? 77 : 0;
}

/* The job (the real sbatch script, submitted with the layout's options), requeued once after its first checkpoint; returns
   the script's exit code and leaves its report line in line (seconds of the whole step in *s). */
static int requeued_job(const char *layout, const char *tool, const char *args, const char *work, char *line, size_t n, double *s)
{
    double t0 = sc_wall_time();
    int rc = sc_test_sh(out, sizeof out, "REQUEUE_LAYOUT='%s' %s %s %s %s", layout, sc_test_repo("tests/slurm/requeue-test.sh"), work, tool, args);
    *s = sc_wall_time() - t0;
    char *l = strstr(out, "requeue-test: ");
    snprintf(line, n, "%s", l ? l : out);
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    return rc;
}

/* test_samcon.c's same_controller: every dataset and attribute outside /run and the root's provenance */
static int same_controller(const char *a, const char *b)
{
    CHECK(sc_test_h5_same(out, sizeof out, a, b, "/time,/bones,/targets,/start,/segments,/achieved,/report"), "%s", out);
    int rc = sc_test_sh(out, sizeof out,
                        "for a in status seed base_targets time_scaling dt config; do "
                        "h5dump -a /$a %s | tail -n +2 > %s.attr; h5dump -a /$a %s | tail -n +2 | cmp -s - %s.attr || echo $a; done",
                        a, a, b, a);
    CHECK(rc == 0 && out[0] == 0, "root attributes differ: %s", out);
    return 1;
}

/* test_feedback.c's same_policy: the policy, the learning history and the evaluation */
static int same_policy(const char *a, const char *b)
{
    CHECK(sc_test_h5_same(out, sizeof out, a, b,
                          "/policy,/cycle,/start,/learning/survived,/learning/joint_error,/learning/pairs,/learning/residual,/evaluation,/bones"),
          "%s", out);
    return 1;
}

TEST(slurm_requeued_sample_openloop_job_equals_an_uninterrupted_run)
{
    if (slurm_here() == 77) return;
    const char *ch = sc_fixture_michelin(), *ref = sc_fixture_march_reference();
    ENSURE_MSG(ch && ref, "fixtures: %s", sc_fixture_log());
    /* 10 segments of 0.05 s, 24 samples: about 10 s on 2 ranks */
    const char *cfg = sc_fixture_keep(sc_test_write("slurm_sample.yaml",
                                                    "simulation:\n  solver: quick\nsampling:\n  segment: 0.05\n  samples: 24\n"
                                                    "  elites: 4\n  end: 0.5\n"));
    const char *job = sc_fixture_keep(sc_test_tmp("slurm_sample_job.h5")), *direct = sc_fixture_keep(sc_test_tmp("slurm_sample_direct.h5"));
    char args[4400], line[2048];
    snprintf(args, sizeof args, "%s %s %s %s", cfg, ch, ref, job);
    double job_s;
    int rc = requeued_job("--ntasks=2", "sample-openloop", args, sc_test_tmp("slurm_sample"), line, sizeof line, &job_s);
    ENSURE_MSG(rc == 0, "tests/slurm/requeue-test.sh sample-openloop: exit %d:\n%s", rc, out);
    sc_test_report("%s", line);
    ENSURE(strstr(line, "final COMPLETED 0:0, Restarts=1"));

    double t0 = sc_wall_time();
    rc = sc_test_sh(out, sizeof out, "mpiexec.mpich -n 2 %s -q -c %s -o %s %s %s", sc_test_tool("sample-openloop"), cfg, direct, ch, ref);
    double direct_s = sc_wall_time() - t0;
    ENSURE_MSG(rc == 0, "uninterrupted run: exit %d: %s", rc, out);
    ENSURE(same_controller(direct, job));
    sc_test_report("openloop.h5 of the requeued job identical to an uninterrupted mpiexec.mpich -n 2 run's (%.1f s) in /time, /bones, "
                   "/targets, /start, /segments, /achieved, /report and the root's attributes; the Slurm step took %.1f s",
                   direct_s, job_s);
}

TEST(slurm_requeued_learn_feedback_job_equals_an_uninterrupted_run)
{
    if (slurm_here() == 77) return;
    const char *ch = sc_fixture_michelin(), *ref = sc_fixture_march_reference();
    ENSURE_MSG(ch && ref, "fixtures: %s", sc_fixture_log());
    /* test_feedback.c's preset: a cyclic open-loop controller of the march, 2 learning iterations */
    const char *cfg =
        sc_fixture_keep(sc_test_write("slurm_feedback.yaml",
                                      "simulation: {solver: quick}\n"
                                      "sampling: {samples: 8, elites: 3, cycle: auto, cycles: 1, max_retries: 1}\n"
                                      "feedback:\n  iterations: 2\n  cycles: 1\n  samples: 8\n  elites: 3\n"
                                      "  evaluate: {seconds: 1.5, pushes: [150], directions: 1, phases: 1, after: 1, stiffness: [2]}\n"));
    const char *ol = sc_fixture_keep(sc_test_tmp("slurm_openloop.h5"));
    int rc = sc_test_sh(out, sizeof out, "mpiexec.mpich -n 2 %s -q -c %s -o %s %s %s", sc_test_tool("sample-openloop"), cfg, ol, ch, ref);
    ENSURE_MSG(rc == 0, "the cyclic open-loop controller: exit %d: %s", rc, out);
    const char *job = sc_fixture_keep(sc_test_tmp("slurm_policy_job.h5")), *direct = sc_fixture_keep(sc_test_tmp("slurm_policy_direct.h5"));
    char args[4400], line[2048];
    snprintf(args, sizeof args, "%s %s %s %s", cfg, ch, ol, job);
    double job_s;
    /* one task of two CPUs: the job script runs one rank of two threads */
    rc = requeued_job("--ntasks=1 --cpus-per-task=2", "learn-feedback", args, sc_test_tmp("slurm_feedback"), line, sizeof line, &job_s);
    ENSURE_MSG(rc == 0, "tests/slurm/requeue-test.sh learn-feedback: exit %d:\n%s", rc, out);
    sc_test_report("%s", line);
    ENSURE(strstr(line, "final COMPLETED 0:0, Restarts=1"));
    rc = sc_test_sh(out, sizeof out, "h5dump -a /learning/ranks -a /learning/threads %s | awk '/\\(0\\)/ { printf \"%%s \", $2 }'", job);
    ENSURE_MSG(rc == 0 && !strcmp(out, "1 2 "), "the job's layout in /learning (ranks, threads): '%s'", out);

    double t0 = sc_wall_time();
    rc = sc_test_sh(out, sizeof out, "mpiexec.mpich -n 2 %s -q -c %s -o %s %s %s", sc_test_tool("learn-feedback"), cfg, direct, ch, ol);
    double direct_s = sc_wall_time() - t0;
    ENSURE_MSG(rc == 0, "uninterrupted run: exit %d: %s", rc, out);
    ENSURE(same_policy(direct, job));
    sc_test_report(
        "policy.h5 of the requeued 1 rank x 2 threads job identical to an uninterrupted mpiexec.mpich -n 2 run's (%.1f s) in /policy, /cycle, "
        "/start, /learning (survived, joint_error, pairs, residual), /evaluation, /bones; the Slurm step took %.1f s",
        direct_s, job_s);
}
