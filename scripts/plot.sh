#!/usr/bin/env bash
# PNG plots (gnuplot) of softcon results.
#   sim.h5 (softcon.sim/1):             NAME_momentum.png NAME_energy.png NAME_contact.png NAME_tracking.png
#   reference.h5 (softcon.reference/1): NAME_torques.png NAME_contact_forces.png
#   openloop.h5 (softcon.openloop/1):   NAME_segments.png (cost terms, time scale) NAME_tracking.png
#   policy.h5 (softcon.policy/2):       NAME_pushes.png (success rate by push, open vs closed loop)
#                                       NAME_stiffness.png NAME_learning.png
#   explore.h5 (softcon.explore/1, network-sample): NAME_targets.png (reached against asked, per round;
#                                       a second objective: NAME_targets_MEASURE.png) NAME_rounds.png
#                                       (targets hit and mean error per round)
#   experiment.h5 (softcon.experiment/1, scripts/softcontact-experiment.py): NAME_pushes.png (largest push
#                                       survived per direction and contact model) or NAME_drift.png (lateral
#                                       drift per seed), NAME_cop.png ([J11] Fig. 5), NAME_force.png (Fig. 6),
#                                       NAME_contacts.png
# Usage: scripts/plot.sh [-o OUTDIR] FILE.h5 [FILE.h5 ...]   (OUTDIR defaults to each file's folder)
# Data are read with python3 + h5py (Debian: python3-h5py, installed by scripts/install-deps.sh).
# Exit codes: 0 ok, 1 usage, 2 not a sim/reference file or a dataset missing, 3 I/O, 5 gnuplot or
# h5py missing. Prints the path of every PNG written.
set -euo pipefail

usage() { echo "usage: $0 [-o OUTDIR] FILE.h5 [FILE.h5 ...]" >&2; exit 1; }
outdir=""
while getopts "o:h" opt; do
  case $opt in
    o) outdir=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage

command -v gnuplot >/dev/null || { echo "plot.sh: the gnuplot program is missing (apt-get install gnuplot-nox)" >&2; exit 5; }
py=""
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null && "$p" -c "import h5py, numpy" 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "plot.sh: python3 with h5py and numpy is missing (apt-get install python3-h5py python3-numpy)" >&2; exit 5; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Writes whitespace-separated columns into $work and prints the schema kind (sim | reference).
extract() {
  "$py" - "$1" "$work" <<'PY'
import sys, h5py, numpy as np
path, work = sys.argv[1], sys.argv[2]
def fail(code, msg):
    print(f"plot.sh: {path}: {msg}", file=sys.stderr); sys.exit(code)
try:
    f = h5py.File(path, "r")
except FileNotFoundError:
    fail(3, "no such file")
except OSError as e:
    fail(2, f"not a readable HDF5 file ({e})")
schema = f.attrs.get("schema", b"")
schema = schema.decode() if isinstance(schema, bytes) else str(schema)
def get(p, ndim=None):
    if p not in f:
        fail(2, f"{p}: missing")
    try:
        a = np.asarray(f[p][()], dtype=float)
    except Exception as e:
        fail(3, f"{p}: cannot read ({e})")
    if ndim is not None and a.ndim != ndim:
        fail(2, f"{p}: expected {ndim} dimensions, found shape {a.shape}")
    return a
def save(name, cols, header):
    np.savetxt(f"{work}/{name}.dat", np.column_stack(cols), header=header, fmt="%.9g")
if schema.startswith("softcon.sim/") or (not schema and "/energy" in f):
    kind = "sim"
elif schema.startswith("softcon.reference/") or (not schema and "/torques/joint" in f):
    kind = "reference"
elif schema.startswith("softcon.openloop/"):
    kind = "openloop"
elif schema.startswith("softcon.policy/"):
    kind = "policy"
elif schema.startswith("softcon.experiment/"):
    kind = "experiment"
elif schema.startswith("softcon.explore/"):
    kind = "explore"
else:
    fail(2, f"schema '{schema}': expected softcon.sim/1, softcon.reference/1, softcon.openloop/1, softcon.policy/2, softcon.experiment/1 "
            "or softcon.explore/1")
if kind == "explore":
    kinds, rounds = get("/trials/kind", 1), get("/trials/round", 1)
    targets, reached = get("/trials/target", 2), get("/trials/reached", 2)
    ranges = get("/objectives/ranges", 2)
    text = lambda x: x.decode() if isinstance(x, bytes) else str(x)
    measures, units = [text(x) for x in f["/objectives/measures"][()]], [text(x) for x in f["/objectives/units"][()]]
    with open(f"{work}/objectives.txt", "w") as out:  # per objective: measure, unit, range
        for j in range(len(measures)):
            for k, name in ((1, "interpolated"), (2, "local")):
                sel = kinds == k
                save(f"{name}_{j}", [rounds[sel], targets[sel, j], np.where(np.isnan(reached[sel, j]), -1e9, reached[sel, j])], "round target reached")
            out.write(f"{measures[j]} {units[j]} {ranges[j, 0]} {ranges[j, 1]}\n")
    nt = float(f["/rounds"].attrs["targets"])
    r = np.arange(get("/rounds/trials", 1).size)
    save("rounds", [r[1:], 100 * get("/rounds/interpolated_hits", 1)[1:] / nt, 100 * get("/rounds/targets_hit", 1)[1:] / nt,
                    get("/rounds/interpolated_error", 2)[1:, 0], get("/rounds/best_error", 2)[1:, 0]], "round interp_hit% hit% interp_err best_err")
    print("explore"); sys.exit(0)
if kind == "experiment":
    def strings(p):
        if p not in f:
            fail(2, f"{p}: missing")
        return [x.decode() if isinstance(x, bytes) else str(x) for x in f[p][()]]
    model, direction = strings("/trials/model"), strings("/trials/direction")
    models = [m for m in ("rigid", "layer", "soft") if m in model]
    with open(f"{work}/models.txt", "w") as out:
        out.write("\n".join(models) + "\n")
    exp = f.attrs["experiment"]
    exp = exp.decode() if isinstance(exp, bytes) else str(exp)
    if exp == "push":
        largest = get("/trials/largest", 1)
        dirs = list(dict.fromkeys(direction))
        rows = []
        for i, d in enumerate(dirs):
            row = [i]
            for m in models:
                v = np.array([largest[k] for k in range(largest.size) if model[k] == m and direction[k] == d])
                row += [v.mean(), v.min(), v.max()]
            rows.append(row)
        np.savetxt(f"{work}/pushes.dat", np.array(rows), fmt="%.9g")
        with open(f"{work}/directions.txt", "w") as out:
            out.write(", ".join(f'"{d}" {i}' for i, d in enumerate(dirs)))
    else:
        drift, seed = np.abs(get("/trials/drift_10s", 1)), get("/trials/seed", 1)
        seeds = sorted(set(seed))
        cols = [np.array(seeds)] + [np.array([next((drift[k] for k in range(seed.size) if model[k] == m and seed[k] == s_), np.nan) for s_ in seeds]) for m in models]
        save("drift", cols, "seed " + " ".join(models))
    for m in models:
        g = f"/series/{m}"
        save(f"series_{m}", [get(g + "/time", 1), get(g + "/cop", 1), get(g + "/force", 1), get(g + "/contacts", 1)], "t cop_m force_N contacts")
    with open(f"{work}/experiment.txt", "w") as out:
        out.write(exp)
    print("experiment"); sys.exit(0)
if kind == "openloop":
    c = get("/segments/cost_terms", 2)
    w = np.asarray(f["/segments/cost_terms"].attrs["weights"], dtype=float)
    t1 = get("/segments/ref_t1", 1)
    save("segments", [t1, get("/segments/cost", 1), c * w, get("/segments/time_scale", 1)], "ref_t1 cost pose root ee balance com scale")
    save("ol_tracking", [get("/achieved/time", 1), np.degrees(get("/achieved/joint_error", 1))], "t joint_error_deg")
    print("openloop"); sys.exit(0)
if kind == "policy":
    m = get("/evaluation/push_magnitude", 1)
    save("pushes", [m, 100 * get("/evaluation/push_success_rate_openloop", 1), 100 * get("/evaluation/push_success_rate_closedloop", 1)],
         "N open% closed%")
    if "/evaluation/youngs_modulus" in f:
        save("stiffness", [get("/evaluation/youngs_modulus", 1), get("/evaluation/stiffness_survived_openloop", 1),
                           get("/evaluation/stiffness_survived_closedloop", 1)], "E open_s closed_s")
    s_ = get("/learning/survived", 1)
    save("learning", [np.arange(1, s_.size + 1), s_, np.degrees(get("/learning/joint_error", 1))], "iteration survived_s joint_error_deg")
    with open(f"{work}/test_seconds.txt", "w") as out:
        out.write(str(float(f["/evaluation"].attrs["test_seconds"])) + "\n")
    with open(f"{work}/learning_unit.txt", "w") as out:  # guided learning: iterations; search: generations (best candidate)
        out.write("generation" if "/learning/score" in f else "iteration")
    print("policy"); sys.exit(0)
t = get("/time", 1)
if t.size == 0:
    fail(2, "/time: no frames")
n = t.size
def series(p, ndim):
    a = get(p, ndim)
    if a.shape[0] != n:
        fail(2, f"{p}: {a.shape[0]} rows for {n} times")
    return a
if kind == "sim":
    lin, ang = series("/momentum/linear", 2), series("/momentum/angular", 2)
    save("momentum", [t, lin, np.linalg.norm(lin, axis=1), ang, np.linalg.norm(ang, axis=1)], "t px py pz |p| Lx Ly Lz |L|")
    e = [series(f"/energy/{k}", 1) for k in ("kinetic", "elastic", "potential", "total")]
    save("energy", [t, e[0], e[1], e[2] - e[2][0], e[3] - e[3][0]], "t kinetic elastic potential-potential0 total-total0")
    cf = series("/contact/force", 2)
    cnt = series("/contact/count", 1) if "/contact/count" in f else np.zeros(n)
    push = series("/control/push_force", 2) if "/control/push_force" in f else np.zeros((n, 3))
    save("contact", [t, cf, np.linalg.norm(cf, axis=1), cnt, np.linalg.norm(push, axis=1)], "t fx fy fz |f| count |push|")
    te = series("/control/tracking_error", 1)
    save("tracking", [t, np.degrees(te)], "t tracking_error_deg")
    print("sim")
else:
    names = [x.decode() if isinstance(x, bytes) else str(x) for x in f["/bones/names"][()]] if "/bones/names" in f else []
    tq = series("/torques/joint", 3)
    nb = tq.shape[1]
    names = (names + [f"bone{b}" for b in range(len(names), nb)])[:nb]
    mag = np.linalg.norm(tq, axis=2)
    save("torques", [t, mag], "t " + " ".join(names))
    cf = series("/contact/force", 3)
    flag = series("/contact/flag", 2) if "/contact/flag" in f else (np.linalg.norm(cf, axis=2) > 0).astype(float)
    used = [b for b in range(cf.shape[1]) if np.any(flag[:, b] > 0) or np.any(np.abs(cf[:, b, :]) > 0)]
    total = cf.sum(axis=1)
    cols = [t, total[:, 1], np.linalg.norm(total, axis=1)] + [cf[:, b, 1] for b in used]
    save("contact_forces", cols, "t total_fy total_norm " + " ".join(names[b] if b < len(names) else f"bone{b}" for b in used))
    with open(f"{work}/names.txt", "w") as out:
        out.write("\n".join(names) + "\n")
    with open(f"{work}/contact_names.txt", "w") as out:
        out.write("\n".join(names[b] if b < len(names) else f"bone{b}" for b in used) + "\n")
    print("reference")
PY
}

plot() { # plot OUT.png TITLE YLABEL 'gnuplot plot clause'
  gnuplot <<EOF
set terminal pngcairo size 900,500 enhanced font "DejaVu Sans,11"
set output "$1.tmp"
set title "$2" noenhanced
set xlabel "time (s)"
set ylabel "$3"
set grid lc rgb "#dddddd"
set key outside right top noenhanced
set offsets 0, 0, graph 0.05, 0
$4
EOF
  mv "$1.tmp" "$1"
  echo "$1"
}

for file in "$@"; do
  kind=$(extract "$file") || exit $?
  dir=${outdir:-$(dirname "$file")}
  mkdir -p "$dir" || { echo "plot.sh: cannot create $dir" >&2; exit 3; }
  stem=$(basename "$file"); stem=${stem%.*}
  d=$work
  name=$(basename "$file")
  if [ "$kind" = explore ]; then
    j=0
    while read -r measure unit lo hi; do
      out="$dir/${stem}_targets.png"; [ "$j" -eq 0 ] || out="$dir/${stem}_targets_$measure.png"
      label=${measure//_/ }
      plot "$out" "$name: $label reached against asked (a fall: below the range)" "reached $label ($unit)" \
        "set xlabel 'asked $label ($unit)'; set xrange [$lo:$hi]; set yrange [$lo - 0.1 * ($hi - $lo):$hi]; \
         set palette defined (1 '#4477aa', 4 '#cc6677'); set cblabel 'round'; plot x w l lc rgb 'gray50' t 'asked', \
         '$d/local_$j.dat' u 2:3:1 w p pt 6 ps 1 lc palette t 'local samples', '$d/interpolated_$j.dat' u 2:3:1 w p pt 7 ps 1.6 lc palette t 'interpolated'"
      [ "$j" -eq 0 ] && first="$label ($unit)"
      j=$((j + 1))
    done < "$d/objectives.txt"
    plot "$dir/${stem}_rounds.png" "$name: targets hit per round (every objective within its tolerance)" "targets hit (%)" \
      "set xlabel 'round'; set xtics 1; set yrange [0:105]; set y2label 'mean |reached - asked|, $first'; set y2tics; set ytics nomirror; \
       plot '$d/rounds.dat' u 1:2 w lp lw 2 pt 7 t 'interpolated controller', '' u 1:3 w lp lw 2 pt 5 t 'with local samples', \
       '' u 1:4 axes x1y2 w lp dt 2 lw 2 pt 7 t 'error, interpolated', '' u 1:5 axes x1y2 w lp dt 2 lw 2 pt 5 t 'error, best'"
  elif [ "$kind" = experiment ]; then
    mapfile -t models < "$d/models.txt"
    span="set xrange [$(awk 'NR==2{print $1; exit}' "$d/series_${models[0]}.dat"):$(awk 'NR==2{print $1 + 2; exit}' "$d/series_${models[0]}.dat")]"
    cop="plot"; force="plot"; contacts="plot"
    for m in "${models[@]}"; do
      cop="$cop '$d/series_$m.dat' u 1:(100*\$2) w l lw 2 t '$m',"
      force="$force '$d/series_$m.dat' u 1:3 w l lw 2 t '$m',"
      contacts="$contacts '$d/series_$m.dat' u 1:4 w l lw 2 t '$m',"
    done
    plot "$dir/${stem}_cop.png" "$name: centre of pressure along the stance foot, 2 s of the first seed ([J11] Fig. 5)" "cm from the foot bone's origin" "$span; ${cop%,}"
    plot "$dir/${stem}_force.png" "$name: |total contact force|, 2 s of the first seed ([J11] Fig. 6)" "N" "$span; ${force%,}"
    plot "$dir/${stem}_contacts.png" "$name: contacts (rigid: contact points; layer, soft: skin vertices)" "contacts" "$span; ${contacts%,}"
    if [ "$(cat "$d/experiment.txt")" = push ]; then
      cmd="plot"
      i=0
      for m in "${models[@]}"; do
        cmd="$cmd '$d/pushes.dat' u (\$1+0.2*($i-1)):$((3 * i + 2)):$((3 * i + 3)):$((3 * i + 4)) w yerrorbars pt 7 ps 1.5 lw 2 t '$m (mean, min-max over seeds)',"
        i=$((i + 1))
      done
      plot "$dir/${stem}_pushes.png" "$name: largest push survived" "N" \
        "set xlabel 'direction'; set xtics ($(cat "$d/directions.txt")); set xrange [-0.5:$(wc -l < "$d/pushes.dat")-0.5]; set yrange [0:*]; ${cmd%,}"
    else
      cmd="plot"
      i=0
      for m in "${models[@]}"; do
        cmd="$cmd '$d/drift.dat' u 1:$((i + 2)) w p pt 7 ps 1.5 t '$m',"
        i=$((i + 1))
      done
      plot "$dir/${stem}_drift.png" "$name: |lateral drift| after 10 s per seed (a fall: no point)" "m" "set xlabel 'seed'; set yrange [0:*]; ${cmd%,}"
    fi
  elif [ "$kind" = openloop ]; then
    plot "$dir/${stem}_segments.png" "$name: weighted cost of each segment, and its time scale" "cost" \
      "set xlabel 'reference time at the segment end (s)'; set y2label 'time scale'; set y2tics; set ytics nomirror; \
       plot '$d/segments.dat' u 1:2 w lp lw 2 lc rgb 'black' t 'cost', '' u 1:3 w l t 'pose', '' u 1:4 w l t 'root', \
            '' u 1:5 w l t 'end effector', '' u 1:6 w l t 'balance', '' u 1:7 w l t 'com', '' u 1:8 axes x1y2 w p pt 7 t 'time scale'"
    plot "$dir/${stem}_tracking.png" "$name: joint angle error against the reference (RMS over joints)" "degrees" \
      "plot '$d/ol_tracking.dat' u 1:2 w l lw 2 t 'achieved vs reference'"
  elif [ "$kind" = policy ]; then
    plot "$dir/${stem}_pushes.png" "$name: pushes survived, over directions and cycle phases" "success rate (%)" \
      "set xlabel 'push (N)'; set yrange [0:105]; \
       plot '$d/pushes.dat' u 1:2 w lp lw 2 pt 7 t 'open loop', '' u 1:3 w lp lw 2 pt 5 t 'closed loop (feedback)'"
    if [ -f "$d/stiffness.dat" ]; then
      plot "$dir/${stem}_stiffness.png" "$name: the policy at other flesh stiffness" "time before a fall (s)" \
        "set xlabel \"Young's modulus (Pa)\"; set logscale x; set yrange [0:$(cat "$d/test_seconds.txt")*1.05]; \
         plot '$d/stiffness.dat' u 1:2 w lp lw 2 pt 7 t 'open loop', '' u 1:3 w lp lw 2 pt 5 t 'closed loop'"
    fi
    unit=$(cat "$d/learning_unit.txt")
    plot "$dir/${stem}_learning.png" "$name: $([ "$unit" = generation ] && echo "search (each generation's best candidate)" || echo "guided learning")" "s" \
      "set xlabel '$unit'; set y2label 'joint error (deg)'; set y2tics; set ytics nomirror; \
       plot '$d/learning.dat' u 1:2 w lp lw 2 pt 7 t 'closed loop went (s)', '' u 1:3 axes x1y2 w lp lw 2 pt 5 t 'joint error'"
  elif [ "$kind" = sim ]; then
    plot "$dir/${stem}_momentum.png" "$name: whole-body momentum" "kg m/s, kg m^2/s" \
      "plot '$d/momentum.dat' u 1:2 w l lw 2 t 'p_x', '' u 1:3 w l lw 2 t 'p_y', '' u 1:4 w l lw 2 t 'p_z', \
            '' u 1:6 w l dt 2 lw 2 t 'L_x', '' u 1:7 w l dt 2 lw 2 t 'L_y', '' u 1:8 w l dt 2 lw 2 t 'L_z'"
    plot "$dir/${stem}_energy.png" "$name: energy" "J" \
      "plot '$d/energy.dat' u 1:2 w l lw 2 t 'kinetic', '' u 1:3 w l lw 2 t 'elastic', \
            '' u 1:4 w l lw 2 t 'potential - potential(0)', '' u 1:5 w l lw 2 lc rgb 'black' t 'total - total(0)'"
    plot "$dir/${stem}_contact.png" "$name: ground contact" "N" \
      "set y2label 'vertices in contact'; set y2tics; set ytics nomirror; \
       plot '$d/contact.dat' u 1:3 w l lw 2 t 'F_y', '' u 1:2 w l lw 2 t 'F_x', '' u 1:4 w l lw 2 t 'F_z', \
            '' u 1:7 w l lw 2 lc rgb '#e0307a' t '|push|', '' u 1:6 axes x1y2 w l dt 3 lc rgb 'gray40' t 'contacts'"
    plot "$dir/${stem}_tracking.png" "$name: PD tracking error (RMS over joints)" "degrees" \
      "plot '$d/tracking.dat' u 1:2 w l lw 2 t 'tracking error'"
  else
    ncol=$(wc -l < "$d/names.txt")
    cmd="plot"
    i=0
    while read -r bn; do
      cmd="$cmd '$d/torques.dat' u 1:$((i + 2)) w l lw 1.5 dt $((i / 8 + 1)) t '$bn',"  # 8 colours, then dashes
      i=$((i + 1))
    done < "$d/names.txt"
    plot "$dir/${stem}_torques.png" "$name: inverse-dynamics joint torques ($ncol bones)" "|torque| (N m)" "${cmd%,}"
    cmd="plot '$d/contact_forces.dat' u 1:2 w l lw 2.5 lc rgb 'black' t 'total F_y',"
    i=0
    while read -r bn; do
      [ -n "$bn" ] || continue
      cmd="$cmd '' u 1:$((i + 4)) w l lw 1.5 dt $((i / 8 + 1)) t '$bn F_y',"
      i=$((i + 1))
    done < "$d/contact_names.txt"
    plot "$dir/${stem}_contact_forces.png" "$name: estimated ground contact forces" "N" "${cmd%,}"
  fi
done
