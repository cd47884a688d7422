#include <stdio.h>
#include "fixtures.h"
#include "test.h"

static char log_text[8192];

const char *sc_fixture_log(void) { return log_text; }

const char *sc_fixture_keep(const char *path)
{
    static char slots[64][1024];
    static int next;
    char *p = slots[next++ % 64];
    snprintf(p, 1024, "%s", path);
    return p;
}

/* sc_test_tmp's buffers are a ring reused by later calls: fixtures keep their own copies */
static const char *keep(char *buf, size_t n, const char *path)
{
    snprintf(buf, n, "%s", path);
    return buf;
}

static const char *skinned(const char *name, const char *config, int *state, char *buf, size_t n)
{
    const char *h5 = keep(buf, n, sc_test_tmp(name));
    if (*state == 0) {
        const char *cfg = sc_test_repo(config);
        *state = sc_test_sh(log_text, sizeof log_text, "%s -q -c %s -o %s && %s -q -c %s -o %s %s", sc_test_tool("mesh-prep"), cfg, h5,
                            sc_test_tool("skin-weights"), cfg, h5, h5)
            ? -1
            : 1;
    }
    return *state > 0 ? h5 : NULL;
}

const char *sc_fixture_michelin(void)
{
    static int state;
    static char path[1024];
    return skinned("fixture_michelin.h5", "configs/michelin.yaml", &state, path, sizeof path);
}

const char *sc_fixture_michelin_cmu(void)
{
    static int state;
    static char path[1024];
    return skinned("fixture_michelin_cmu.h5", "configs/michelin_cmu.yaml", &state, path, sizeof path);
}

const char *sc_fixture_march_reference(void)
{
    static int state;
    static char path[1024];
    const char *ref = keep(path, sizeof path, sc_test_tmp("fixture_march_ref.h5")), *ch = sc_fixture_michelin();
    if (state == 0)
        state = ch &&
                !sc_test_sh(log_text, sizeof log_text, "%s -q -c %s -o %s %s", sc_test_tool("inverse-dynamics"), sc_test_repo("configs/march.yaml"),
                            ref, ch)
            ? 1
            : -1;
    return state > 0 ? ref : NULL;
}
