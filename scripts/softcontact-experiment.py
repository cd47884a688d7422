#!/usr/bin/python3
"""[J11] 6's experiments: the same SIMBICON walker on rigid contact, the soft contact layer and
the full soft body, under pushes, motor noise (Wang et al. 2010) and bumpy tile floors, over seeds.

Usage: scripts/softcontact-experiment.py [-j N] [-o OUT.h5] [--plots DIR] CONFIG.yaml CHARACTER.h5

CONFIG (configs/simbicon/experiment_*.yaml documents every key) names the walkers, one per
contact model, and the experiment:
  push   per model, direction and seed: the largest push survived, by bisection (the seed sets
         the push's start in its window, i.e. the phase of the gait; with motor noise, also the
         noise stream);
  floor  per model and seed: a walk on a tile floor of that seed (lateral drift, distance, falls);
  gait   per model and seed: an unperturbed walk (the seed sets the noise stream when there is
         noise): the centre of pressure's total variation per stance along the stance foot
         ([J11] Fig. 5), the total contact force's mean and spread (Fig. 6), contacts over time.
Every trial is a run of bin/simulate; each trial's gait measures are taken before any push.
OUT.h5 (schema softcon.experiment/1) holds every trial and the first seed's series, with units,
the configs and provenance (the per-model summary is printed); --plots DIR writes PNGs of it
(gnuplot). Results do not depend on -j. The walk is taken to go along +z (drift: along x).
Environment: SOFTCON_BIN, the folder of the simulate to run (default: bin/ of this checkout).
Exit codes: 0 ok, 1 usage, 2 bad config (named with its key), 3 I/O, 4 a simulation could not
run (the message names the trial), 5 gnuplot, h5py or yaml missing; SIGINT, SIGTERM, SIGHUP:
128 + the signal, its simulations stopped and its temporary folder removed, nothing written.
A trial that ends in a numerical failure (simulate's exit 4, e.g. flesh crushed by a fall)
counts as a fall at its last frame, and /trials/failures counts them.
"""
import argparse, datetime, math, os, shutil, signal, socket, subprocess, sys, tempfile
from multiprocessing import Pool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIMULATE = os.path.join(os.environ.get('SOFTCON_BIN') or os.path.join(ROOT, 'bin'), 'simulate')
try:
    import h5py, numpy as np, yaml
except ImportError as e:
    sys.exit(print('softcontact-experiment: %s (apt-get install python3-h5py python3-numpy python3-yaml)' % e, file=sys.stderr) or 5)

MODELS = ('rigid', 'layer', 'soft')


def fail(code, msg):
    print('softcontact-experiment: ' + msg, file=sys.stderr)
    sys.exit(code)


def read_config(path):
    try:
        with open(path) as fh:
            text = fh.read()
        c = yaml.safe_load(text)
    except OSError as e:
        fail(3, '%s: %s' % (path, e.strerror))
    except yaml.YAMLError as e:
        fail(2, '%s: %s' % (path, e))
    if not isinstance(c, dict):
        fail(2, '%s: expected a map of settings' % path)
    known = {'experiment', 'walkers', 'seeds', 'duration', 'fall_height', 'motor_noise', 'push', 'floor', 'analysis_start', 'every', 'rigid_shape'}
    for k in c:
        if k not in known:
            fail(2, '%s: unknown key %r (known: %s)' % (path, k, ', '.join(sorted(known))))

    def need(cond, key, what):
        if not cond:
            fail(2, '%s: %s: %s' % (path, key, what))
    need(c.get('experiment') in ('push', 'floor', 'gait'), 'experiment', 'push, floor or gait')
    w = c.get('walkers')
    need(isinstance(w, dict) and w and all(m in MODELS for m in w), 'walkers', 'a map of contact models (%s) to walker configs' % ', '.join(MODELS))
    base = os.path.dirname(os.path.abspath(path))
    c['walker_text'] = {}
    for m, f in w.items():
        full = os.path.join(base, str(f))
        try:
            with open(full) as fh:
                c['walker_text'][m] = fh.read()
            c['walkers'][m] = yaml.safe_load(c['walker_text'][m])
        except (OSError, yaml.YAMLError) as e:
            fail(2, '%s: walkers.%s: %s: %s' % (path, m, full, e))
        model = ((c['walkers'][m] or {}).get('contact') or {}).get('model', 'soft')
        need(model == m, 'walkers.%s' % m, '%s sets contact.model: %s' % (f, model))
    c.setdefault('seeds', 20)
    need(isinstance(c['seeds'], int) and 1 <= c['seeds'] <= 10000, 'seeds', 'an integer in [1, 10000]')
    c.setdefault('duration', 10.0)
    need(isinstance(c['duration'], (int, float)) and 0 < c['duration'] <= 1000, 'duration', 'seconds in (0, 1000]')
    c.setdefault('fall_height', 0.55)
    need(isinstance(c['fall_height'], (int, float)) and c['fall_height'] > 0, 'fall_height', 'metres > 0')
    c.setdefault('analysis_start', 1.0)
    c.setdefault('every', 20)
    need(isinstance(c['every'], int) and c['every'] >= 1, 'every', 'steps between the frames measured (an integer >= 1)')
    c.setdefault('motor_noise', 0)
    need(isinstance(c['motor_noise'], (int, float)) and c['motor_noise'] >= 0, 'motor_noise', "Wang et al. 2010's b >= 0")
    need(c.get('rigid_shape') in (None, 'box', 'skin'), 'rigid_shape', "box or skin (the rigid walker's contact.rigid.shape)")
    if c['experiment'] == 'push':
        p = c.get('push')
        need(isinstance(p, dict), 'push', 'a map (bone, duration, window, directions, max, resolution)')
        p.setdefault('bone', 'pelvis')
        p.setdefault('duration', 0.2)
        win = p.get('window')
        need(isinstance(win, list) and len(win) == 2 and 0 < win[0] <= win[1] < c['duration'], 'push.window', '[start, end] s inside the duration')
        d = p.get('directions')
        need(isinstance(d, dict) and d and all(isinstance(v, list) and len(v) == 3 and math.hypot(*v) > 0 for v in d.values()),
             'push.directions', 'a map of names to nonzero [x, y, z]')
        need(isinstance(p.get('max'), (int, float)) and p['max'] > 0, 'push.max', 'newtons > 0')
        need(isinstance(p.get('resolution'), (int, float)) and 0 < p['resolution'] < p['max'], 'push.resolution', 'newtons in (0, max)')
    if c['experiment'] == 'floor':
        fl = c.get('floor')
        need(isinstance(fl, dict) and fl.get('size', 0) > 0 and 0 < fl.get('height', 0) <= fl['size'], 'floor',
             'tiles {size: m, height: m <= size}')
    c['text'] = text
    return c


def trial_config(c, model, seed, push=None):
    """The walker's config for one trial, as YAML text."""
    w = yaml.safe_load(yaml.safe_dump(c['walkers'][model]))
    w.pop('pipeline', None)
    sim = w.setdefault('simulation', {})
    sim['duration'] = float(c['duration'])
    if c['motor_noise'] > 0:
        sim['motor_noise'] = {'b': float(c['motor_noise']), 'seed': seed}
    w['output'] = {'every': c['every'], 'nodes': False}
    if c.get('rigid_shape'):
        w.setdefault('contact', {}).setdefault('rigid', {})['shape'] = c['rigid_shape']
    if c['experiment'] == 'floor':
        w.setdefault('ground', {})['tiles'] = {'size': float(c['floor']['size']), 'height': float(c['floor']['height']), 'seed': seed}
    if push:
        w['perturbations'] = [{'type': 'push', 'bone': c['push']['bone'], 'time': push[0], 'duration': float(c['push']['duration']),
                               'force': [float(v) for v in push[1]]}]
    return yaml.safe_dump(w, sort_keys=False)


def measure(path, c, until):
    """Fall, course and gait measures of one sim.h5; the gait ones over [analysis_start, until)."""
    f = h5py.File(path, 'r')
    status = f.attrs['status']
    status = status.decode() if isinstance(status, bytes) else str(status)
    t = f['time'][:]
    com = f['momentum/com'][:]
    low = np.nonzero(com[:, 1] < c['fall_height'])[0]
    fall = float(t[low[0]]) if len(low) else math.inf
    failed = status != 'completed'
    if failed and not len(low):  # a numerical failure ends the walk: a fall at its last frame
        fall = float(t[-1]) if len(t) else 0.0
    names = [n.decode() if isinstance(n, bytes) else n for n in f['bones/names'][:]]
    r = {'fall_time': fall, 'failed': int(failed), 'distance': float(com[-1, 2] - com[0, 2]), 'drift': float(com[-1, 0] - com[0, 0])}
    i10 = np.searchsorted(t, 10.0 - 1e-9)
    r['drift_10s'] = float(com[i10, 0] - com[0, 0]) if i10 < len(t) and fall > 10 else math.nan
    win = (t >= c['analysis_start']) & (t < min(until, fall))
    fvec = f['contact/force'][:][win]
    force = np.linalg.norm(fvec, axis=1)
    r['force_y_mean'] = float(fvec[:, 1].mean()) if force.size else math.nan
    r['force_mean'] = float(force.mean()) if force.size else math.nan
    r['force_std'] = float(force.std()) if force.size else math.nan
    r['contacts_mean'] = float(f['contact/count'][:][win].mean()) if force.size else math.nan
    # the centre of pressure under the stance foot (the foot nearest to it), along that foot's
    # forward; its total variation ([J11] Fig. 5) summed between frames on the same foot, per
    # stance: a run of frames on one foot lasting 0.1 s or more (shorter runs are double-support
    # flicker between the feet, not steps)
    feet = [names.index(b) for b in ('l_foot', 'r_foot') if b in names]
    cop = f['contact/cop'][:][win]
    pos = f['bones/position'][:][win]
    quat = f['bones/orientation'][:][win]
    tw = t[win]
    tv, steps, cur, last, run_start = 0.0, 0, None, None, None
    series = []
    for k in range(len(cop)):
        if not np.all(np.isfinite(cop[k])) or len(feet) < 2:  # no load: no variation across the gap
            last = None
            series.append(math.nan)
            continue
        d = [np.hypot(*(cop[k] - pos[k, b])[[0, 2]]) for b in feet]
        b = feet[int(np.argmin(d))]
        w, x, y, z = quat[k, b]
        fwd = np.array([2 * (x * z + w * y), 0.0, 1 - 2 * (x * x + y * y)])  # the foot's rest +z, horizontal
        fwd /= np.linalg.norm(fwd) or 1
        s = float(np.dot(cop[k] - pos[k, b], fwd))
        series.append(s)
        if b != cur:
            if cur is not None and run_start is not None and tw[k] - run_start >= 0.1:
                steps += 1
            cur, run_start, last = b, tw[k], None
        if last is not None:
            tv += abs(s - last)
        last = s
    if cur is not None and run_start is not None and tw[-1] - run_start >= 0.1:
        steps += 1
    r['cop_tv_per_step'] = tv / steps if steps else math.nan
    r['steps'] = steps
    r['series'] = {'time': t[win], 'cop': np.array(series), 'force': force, 'contacts': f['contact/count'][:][win]}
    return r, status


def run_trial(c, character, tmp, tag, model, seed, push=None):
    cfg = os.path.join(tmp, tag + '.yaml')
    out = os.path.join(tmp, tag + '.h5')
    with open(cfg, 'w') as fh:
        fh.write(trial_config(c, model, seed, push))
    global RUNNING
    p = RUNNING = subprocess.Popen([SIMULATE, '-q', '-c', cfg, '-o', out, character], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, stderr = p.communicate()
    RUNNING = None
    if p.returncode not in (0, 4) or not os.path.exists(out):
        raise RuntimeError('%s (seed %d): simulate exited %d: %s' % (model, seed, p.returncode, stderr.strip()[-400:]))
    r, _ = measure(out, c, push[0] if push else math.inf)
    for ext in ('.yaml', '.h5', '.xdmf'):
        if os.path.exists(os.path.join(tmp, tag + ext)):
            os.remove(os.path.join(tmp, tag + ext))
    return r


def push_time(c, seed):
    a, b = c['push']['window']
    return a + (b - a) * (seed - 1) / c['seeds']


RUNNING = None  # a worker's simulate in progress


def worker_init():
    """A worker stopped by the pool (SIGTERM) stops its simulate first, which removes its own
    temporary files; the main process then removes the folder."""
    def stop(signum, frame):
        if RUNNING is not None:  # waitpid itself: Popen.wait's lock may be held by the communicate interrupted
            try:
                os.kill(RUNNING.pid, signal.SIGTERM)
                os.waitpid(RUNNING.pid, 0)
            except OSError:
                pass
        os._exit(128 + signum)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles ^C and stops the pool


def interrupted(signum, frame):
    raise KeyboardInterrupt(signum)


def job(args):
    """One task: a trial (floor, gait) or a bisection of the largest push survived (push)."""
    c, character, tmp, model, seed, direction = args
    tag = '%s_%d_%s' % (model, seed, direction or 'walk')
    if c['experiment'] != 'push':
        r = run_trial(c, character, tmp, tag, model, seed)
        return dict(model=model, seed=seed, direction='', largest=math.nan, trials=1, failures=r['failed'], **r)
    d = np.array(c['push']['directions'][direction], float)
    d /= np.linalg.norm(d)
    t0 = push_time(c, seed)
    lo, hi = 0.0, float(c['push']['max'])
    first = run_trial(c, character, tmp, tag, model, seed, (t0, 0 * d))
    n, failures = 1, first['failed']
    if first['fall_time'] <= c['duration']:
        return dict(model=model, seed=seed, direction=direction, largest=0.0, trials=n, failures=failures, **first)
    top = run_trial(c, character, tmp, tag, model, seed, (t0, hi * d))
    n, failures = n + 1, failures + top['failed']
    if top['fall_time'] > c['duration']:
        lo = hi
    while hi - lo > c['push']['resolution']:
        mid = 0.5 * (lo + hi)
        r = run_trial(c, character, tmp, tag, model, seed, (t0, mid * d))
        n, failures = n + 1, failures + r['failed']
        if r['fall_time'] > c['duration']:
            lo = mid
        else:
            hi = mid
    return dict(model=model, seed=seed, direction=direction, largest=lo, trials=n, failures=failures, **first)


def write(out, c, rows, argv):
    tmp = out + '.tmp%d' % os.getpid()
    try:
        with h5py.File(tmp, 'w') as f:
            f.attrs['schema'] = 'softcon.experiment/1'
            f.attrs['experiment'] = c['experiment']
            f.attrs['config'] = c['text']
            f.attrs['created_by'] = ' '.join(argv)
            f.attrs['created_at'] = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
            f.attrs['host'] = socket.gethostname()
            f.attrs['motor_noise_b'] = float(c['motor_noise'])
            f.attrs['fall_height_m'] = float(c['fall_height'])
            f.attrs['duration_s'] = float(c['duration'])
            with open(os.path.join(ROOT, 'VERSION')) as fh:
                f.attrs['softcon_version'] = fh.read().strip()
            g = f.create_group('walkers')
            g.attrs['description'] = "each contact model's walker config (its text), which every trial ran with the experiment's changes"
            for m, text in c['walker_text'].items():
                g.attrs[m] = text
            t = f.create_group('trials')
            t.attrs['description'] = 'one row per task: a push bisection (push) or one walk (floor, gait)'
            cols = [('model', None, ''), ('seed', None, ''), ('direction', None, ''),
                    ('largest', 'N', 'largest push survived, bisected to push.resolution (push.max: the largest tried)'),
                    ('trials', '', 'simulations run for this row'),
                    ('failures', '', 'of them, ended by a numerical failure (counted as a fall at its last frame)'),
                    ('fall_time', 's', 'first time the centre of mass is below fall_height, in the unpushed walk (inf: never)'),
                    ('distance', 'm', 'centre of mass travel along +z (the walk forward) over the unpushed walk'),
                    ('drift', 'm', 'lateral (x) centre of mass displacement at the end of the unpushed walk'),
                    ('drift_10s', 'm', 'lateral displacement after 10 s (NaN: fell before, or shorter)'),
                    ('force_y_mean', 'N', 'mean vertical contact force over the analysis window (the weight, over whole steps)'),
                    ('force_mean', 'N', 'mean |total contact force| over the analysis window'),
                    ('force_std', 'N', 'its standard deviation'),
                    ('contacts_mean', '', 'mean contacts (rigid: contact points; layer, soft: surface vertices)'),
                    ('cop_tv_per_step', 'm', 'total variation of the centre of pressure along the stance foot (between frames on the same foot) per stance'),
                    ('steps', '', 'stances (runs of frames on one foot of 0.1 s or more) in the analysis window')]
            for name, unit, desc in cols:
                vals = [r[name] for r in rows]
                ds = t.create_dataset(name, data=np.array(vals, dtype=h5py.string_dtype()) if isinstance(vals[0], str) else np.array(vals))
                if unit is not None:
                    ds.attrs['units'] = unit
                if desc:
                    ds.attrs['description'] = desc
            s = f.create_group('series')
            s.attrs['description'] = 'the first seed of each model (unpushed part): centre of pressure along the stance foot (m), |contact force| (N), contacts'
            for m in c['walkers']:
                r = next((r for r in rows if r['model'] == m), None)
                if r:
                    g = s.create_group(m)
                    for k, v in r['series'].items():
                        g.create_dataset(k, data=v)
        os.replace(tmp, out)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        fail(3, '%s: %s' % (out, e))


def summary(c, rows):
    lines = []
    for m in c['walkers']:
        mine = [r for r in rows if r['model'] == m]
        if c['experiment'] == 'push':
            parts = []
            for d in c['push']['directions']:
                v = np.array([r['largest'] for r in mine if r['direction'] == d])
                parts.append('%s %.0f N (min %.0f, max %.0f)' % (d, v.mean(), v.min(), v.max()))
            lines.append('%-5s largest push survived, mean over %d seeds: %s (%d numerical failures in %d simulations)'
                         % (m, c['seeds'], '; '.join(parts), sum(r['failures'] for r in mine), sum(r['trials'] for r in mine)))
        else:
            fell = sum(r['fall_time'] <= c['duration'] for r in mine)
            drift = np.array([abs(r['drift_10s']) for r in mine if math.isfinite(r['drift_10s'])])
            lines.append('%-5s falls %d of %d; |lateral drift| after 10 s mean %.3f m (max %.3f); distance %.2f m; '
                         'vertical force %.1f N, |force| %.1f +- %.1f N; contacts %.1f; CoP variation per step %.4f m'
                         % (m, fell, len(mine), drift.mean() if drift.size else math.nan, drift.max() if drift.size else math.nan,
                            np.mean([r['distance'] for r in mine]), np.nanmean([r['force_y_mean'] for r in mine]),
                            np.nanmean([r['force_mean'] for r in mine]),
                            np.nanmean([r['force_std'] for r in mine]), np.nanmean([r['contacts_mean'] for r in mine]),
                            np.nanmean([r['cop_tv_per_step'] for r in mine])))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('config')
    ap.add_argument('character')
    ap.add_argument('-o', '--output', default='experiment.h5')
    ap.add_argument('-j', '--jobs', type=int, default=os.cpu_count() or 1)
    ap.add_argument('--plots', metavar='DIR')
    a = ap.parse_args()
    if a.jobs < 1:
        fail(1, '-j expects a positive number of processes')
    c = read_config(a.config)
    if not os.path.isfile(a.character):
        fail(3, '%s: no such character file' % a.character)
    if os.path.abspath(a.output) in (os.path.abspath(a.config), os.path.abspath(a.character)):
        fail(1, '-o %s would overwrite an input' % a.output)
    if a.plots and not shutil.which('gnuplot'):
        fail(5, 'the gnuplot program is missing (apt-get install gnuplot-nox)')
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupted)
    tmp = tempfile.mkdtemp(prefix='softcon-exp.')
    dirs = list(c['push']['directions']) if c['experiment'] == 'push' else [None]
    tasks = [(c, a.character, tmp, m, s, d) for m in c['walkers'] for d in dirs for s in range(1, c['seeds'] + 1)]
    try:
        with Pool(a.jobs, initializer=worker_init) as pool:  # leaving it (also by a signal) terminates the workers
            rows = pool.map(job, tasks, chunksize=1)
    except RuntimeError as e:
        fail(4, str(e))
    except KeyboardInterrupt as e:
        signum = e.args[0] if e.args else signal.SIGINT
        fail(128 + signum, 'stopped by signal %d: nothing written' % signum)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write(a.output, c, rows, sys.argv)
    for line in summary(c, rows):
        print(line)
    print('softcontact-experiment: wrote %s (%d rows)' % (a.output, len(rows)))
    if a.plots:
        r = subprocess.run([os.path.join(ROOT, 'scripts', 'plot.sh'), '-o', a.plots, a.output])
        if r.returncode:
            sys.exit(r.returncode)


if __name__ == '__main__':
    main()
