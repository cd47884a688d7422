/* A real Slurm: a private one-node cluster (scripts/slurm/local-cluster.sh), a 2-task sbatch job
 * running mpiexec.mpich -n 2, requeued mid-run and released, completing after the requeue from
 * the checkpoint its ranks wrote on SIGTERM (tests/slurm/requeue-test.sh). Skipped, and says
 * so, when Slurm is not installed (scripts/install-deps.sh --slurm). */
#include <string.h>
#include "test.h"

static char out[16384];

TEST(slurm_requeued_mpi_job_completes_from_its_checkpoint)
{
    int rc = sc_test_sh(out, sizeof out, "%s %s", sc_test_repo("tests/slurm/requeue-test.sh"), sc_test_tmp("slurm"));
    char *line = strstr(out, "requeue-test: ");
    if (rc == 77) {
        sc_test_report("%s", line ? line : out);
        return;
    }
    ENSURE_MSG(rc == 0, "tests/slurm/requeue-test.sh exit %d:\n%s", rc, out);
    sc_test_report("%s", line ? line : out);
    ENSURE(line && strstr(line, "final COMPLETED 0:0, Restarts=1"));
}
