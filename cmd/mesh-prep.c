/* mesh-prep: skeleton + body -> simulation-ready character.h5 ([L13] sections 3, 4.2, 4.3, 6). */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include "common/cli.h"
#include "common/output.h"
#include "core/cleanup.h"
#include "core/log.h"
#include "store/character.h"
#include "io/config.h"
#include "mesh/prep.h"
#include "settings/mesh.h"
#include "settings/muscle.h"
#include "settings/reduced.h"
#include "reduced/basis.h"

static const char *usage_head = "-c CONFIG.yaml -o character.h5 [--surface-obj FILE] [--envelope-obj FILE]\n"
                                "Builds the character: fine surface, coarse envelope, fixed nodes, TetGen tet mesh,\n"
                                "embedding, masses. Writes character.h5 and character.xdmf (ParaView). Without `skeleton:`\n"
                                "the character is boneless ([T12]): body.letter (%s) or body.obj,\n"
                                "its tet mesh the body itself (envelope.offset 0) sized by tetgen.target_tets;\n"
                                "`reduced: {modes: K}` also stores its K lowest vibration modes ([P17], /reduced).\n"
                                "  --surface-obj FILE   also write the fine surface (config frame) as OBJ\n"
                                "  --envelope-obj FILE  also write the coarse envelope (config frame) as OBJ\n"
                                "environment: SOFTCON_TETGEN=PROGRAM runs PROGRAM instead of the `tetgen` on PATH.\n"
                                "\n"
                                "The default bone map (skeleton.bvh without skeleton.bone_map: a CMU clip's 31 joints to\n"
                                "16 bones; copy it into skeleton.bone_map to change it):\n";

static const char *surface_obj, *envelope_obj;

static int extra_opt(const char *name, const char *value, int *used)
{
    *used = 2;
    if (!strcmp(name, "--surface-obj")) {
        surface_obj = value;
        return value ? 1 : -1;
    }
    if (!strcmp(name, "--envelope-obj")) {
        envelope_obj = value;
        return value ? 1 : -1;
    }
    return 0;
}

/* The skeleton's fit into an OBJ body, joint by joint (also when a later stage fails). */
static void log_fit(const sc_fit_info *f)
{
    sc_log_info("  fit           skeleton fitted into the %.3f m body: scale %.4f; arms down %.1f / %.1f deg, forward %.1f / %.1f deg, "
                "forearm and hand x %.3f / %.3f; legs moved %.3f / %.3f m",
                f->body_height, f->scale, f->arm_down_deg[0], f->arm_down_deg[1], f->arm_forward_deg[0], f->arm_forward_deg[1],
                f->arm_length_scale[0], f->arm_length_scale[1], f->leg_shift[0], f->leg_shift[1]);
    const sc_body_landmarks *l = &f->landmarks;
    char crotch[64] = "not found", pits[2][64] = {"not found", "not found"}, neck[128] = "not found";
    if (l->have_crotch) snprintf(crotch, sizeof crotch, "(%.3f, %.3f, %.3f)", l->crotch.x, l->crotch.y, l->crotch.z);
    for (int i = 0; i < 2; i++)
        if (l->have_armpit[i]) snprintf(pits[i], sizeof pits[i], "(%.3f, %.3f, %.3f)", l->armpit[i].x, l->armpit[i].y, l->armpit[i].z);
    if (l->have_neck)
        snprintf(neck, sizeof neck, "base (%.3f, %.3f, %.3f), narrowest (%.3f, %.3f, %.3f)", l->neck_base.x, l->neck_base.y, l->neck_base.z,
                 l->neck_narrowest.x, l->neck_narrowest.y, l->neck_narrowest.z);
    sc_log_info("  fit landmarks crotch %s m; armpits %s / %s m; neck %s m", crotch, pits[0], pits[1], neck);
    for (int b = 0; b < f->njoints; b++)
        sc_log_info("  fit joint     %-12s (%6.3f, %6.3f, %6.3f) m, %.3f m from the scaled skeleton: %s%s", f->joint_name[b], f->joint_pos[3 * b],
                    f->joint_pos[3 * b + 1], f->joint_pos[3 * b + 2], f->joint_moved[b], f->joint_how[b],
                    f->foot_turned[b] ? "; foot turned along the body's" : "");
}

static void log_report(const char *output, const sc_prep_report *r)
{
    sc_log_info("mesh-prep: %s", output);
    if (r->nbones)
        sc_log_info("  skeleton      %d bones, %d joints, %d fixed nodes (%.2f kg on the bones)", r->nbones, r->njoints, r->nfixed,
                    r->bone_mass_total);
    else sc_log_info("  skeleton      none: a boneless character ([T12]), every node free");
    sc_log_info("  surface       %d vertices, %d faces (grid %.4f m)", r->nsurf_verts, r->nsurf_tris, r->surface_spacing);
    if (r->fitted) log_fit(&r->fit);
    if (r->nbones) sc_log_info("  fixed nodes   %d boxes sized to the body (soles under the feet, every node inside the flesh)", r->fixed_fitted);
    if (r->env_conforming)
        sc_log_info("  envelope      the body itself, decimated: %d vertices, %d faces (mean edge %.4f m), %.4f m^3", r->env_verts, r->env_tris,
                    r->env_spacing, r->volume);
    else sc_log_info("  envelope      %d vertices, %d faces (grid %.4f m), %.4f m^3", r->env_verts, r->env_tris, r->env_spacing, r->volume);
    sc_log_info("  tet mesh      %d nodes, %d tets (%d flipped to positive), tetgen %.2f s: %s", r->nnodes, r->ntets, r->flipped_tets,
                r->seconds_tetgen, r->tetgen_command);
    sc_log_info("  slivers       %d peeled, %d node moves, %d nodes dropped; min dihedral %.2f -> %.2f deg", r->improve.peeled,
                r->improve.smoothed_moves, r->improve.removed_nodes, r->improve.min_dihedral_before, r->improve.min_dihedral_after);
    sc_log_info("  quality       dihedral %.2f..%.2f deg, volume %.3g..%.3g m^3, %d tets with volume <= 0", r->quality.min_dihedral,
                r->quality.max_dihedral, r->quality.min_volume, r->quality.max_volume, r->quality.nonpositive);
    sc_log_info("  radius-edge   mean %.3f, max %.3f", r->quality.radius_edge_mean, r->quality.radius_edge_max);
    sc_log_info("  embedding     %d inside a tet, %d mapped to the nearest tet (max %.2g m away)", r->embed.inside, r->embed.fallback,
                r->embed.max_fallback_distance);
    sc_log_info("  mass          %.2f kg total = density x body volume %.4f m^3 (tets %.4f m^3); %d light nodes raised to the mass floor",
                r->total_mass, r->body_volume, r->tet_volume, r->mass_floored);
    sc_log_info("  time          %.2f s", r->seconds);
}

/* [P17] 3.3, eq. 2: the modes of the tet mesh just made (dies naming the config line when it has too few) */
static void make_basis(sc_cli *cli, const sc_reduced_settings *rs, const sc_model *model, sc_reduced_basis *basis)
{
    sc_err err = {0};
    sc_reduced_basis_stats bs;
    if (sc_reduced_settings_check(rs, model, &err) || sc_reduced_basis_compute(model, rs->modes, basis, &bs, &err)) sc_cli_die(cli, &err);
    sc_log_info("  reduced       %d modes, %.3f..%.3f Hz, residuals <= %.1e, |phi^T M phi - I| %.1e (%d Krylov vectors, %.2f s)", basis->nmodes,
                basis->frequency[0], basis->frequency[basis->nmodes - 1], bs.max_residual, bs.orthonormality, bs.subspace, bs.seconds);
}

int main(int argc, char **argv)
{
    sc_cli cli;
    static char usage[8192];
    int n = snprintf(usage, sizeof usage, usage_head, sc_letter_names());
    snprintf(usage + n, sizeof usage - (size_t)n, "%s", sc_rig_cmu_map_yaml());
    sc_cli_parse(&cli, argc, argv, "mesh-prep", usage, 0, 0, 1, SC_CLI_OUTPUT, extra_opt);
    sc_err err = {0};
    sc_cfg *cfg = NULL;
    sc_prep_opts opts;
    sc_reduced_settings reduced_settings;
    int has_reduced;
    if (sc_cfg_load_file(cli.config, &cfg, &err) || sc_prep_read_config(cfg, &opts, &err) ||
        sc_reduced_settings_read(cfg, &reduced_settings, &has_reduced, &err))
        sc_cli_die(&cli, &err);
    sc_cli_ignore_other_sections(cfg);
    if (sc_cfg_check_unknown(cfg, &err)) sc_cli_die(&cli, &err);
    /* every file this run writes, checked against the OBJ inputs the config names */
    sc_cli_add_input_named(&cli, opts.body_obj[0] ? opts.body_obj : NULL, "config's body.obj");
    sc_cli_add_input_named(&cli, opts.envelope_obj[0] ? opts.envelope_obj : NULL, "config's envelope.obj");
    sc_cli_add_input_named(&cli, opts.skeleton_bvh[0] ? opts.skeleton_bvh : NULL, "config's skeleton.bvh");
    char xdmf[1024], h5rel[1024];
    sc_output_xdmf_paths(cli.output, xdmf, sizeof xdmf, h5rel, sizeof h5rel);
    sc_cli_add_output(&cli, xdmf);
    sc_cli_add_output(&cli, surface_obj);
    sc_cli_add_output(&cli, envelope_obj);

    sc_muscle_defs muscle_defs;
    int has_muscles;
    if (sc_muscle_settings_read(cfg, opts.body_kind == SC_PREP_BODY_LETTER ? &opts.letter : NULL, &muscle_defs, &has_muscles, &err))
        sc_cli_die(&cli, &err);
    sc_model model;
    sc_trimesh envelope;
    sc_prep_report rep;
    if (sc_prep_run(&opts, &model, &envelope, &rep, &err)) {
        if (rep.fitted) log_fit(&rep.fit); /* what the fit did, to see why the body and skeleton disagree */
        sc_cli_die(&cli, &err);
    }
    sc_muscles muscles = {0};
    if (has_muscles) { /* the fibres are in the config's frame; the model was raised by shift_y */
        if (model.nbones) {
            sc_fail(&err, SC_EINPUT, "%s: `muscles:` are for a boneless character ([T12]); this one has a skeleton", cli.config);
            sc_cli_die(&cli, &err);
        }
        for (int f = 0; f < muscle_defs.nfibres; f++)
            for (int i = 0; i < muscle_defs.fibres[f].npoints; i++) muscle_defs.fibres[f].points[3 * i + 1] += rep.shift_y;
        if (sc_muscles_build(&model, &muscle_defs, &muscles, &err)) sc_cli_die(&cli, &err);
        sc_log_info("  muscles       %d fibres in %d groups, %d segments (control variables)", muscles.nfibres, muscles.ngroups, muscles.nsegs);
    }
    sc_reduced_basis basis = {0};
    if (has_reduced) make_basis(&cli, &reduced_settings, &model, &basis);
    if (rep.quality.min_dihedral < opts.min_dihedral)
        sc_log_warn("mesh-prep: tetgen.sliver_angle target %.1f deg not reached: the smallest dihedral angle is %.2f deg "
                    "(the explicit step may need a smaller dt; try a larger tetgen.min_dihedral or a finer envelope)",
                    opts.min_dihedral, rep.quality.min_dihedral);

    char *resolved = sc_cfg_resolved_text(cfg);
    if (sc_character_save(cli.output, argc, argv, resolved, &model, has_muscles ? &muscles : NULL, has_reduced ? &basis : NULL, &rep, &err))
        sc_cli_die(&cli, &err);
    sc_cleanup_add(cli.output, SC_CLEANUP_OUTPUT); /* removed again if a later output fails */
    if (sc_character_write_xdmf(xdmf, h5rel, &model, 0, &err)) sc_cli_die(&cli, &err);
    sc_cleanup_add(xdmf, SC_CLEANUP_OUTPUT);
    /* the OBJ exports are in the config's frame (before the ground shift), so that feeding them
       back as body.obj / envelope.obj with the same skeleton reproduces this character */
    for (int i = 0; i < model.nsurf_verts; i++) model.surf_rest[3 * i + 1] -= rep.shift_y;
    for (int i = 0; i < envelope.nverts; i++) envelope.verts[3 * i + 1] -= rep.shift_y;
    sc_trimesh surf = {model.nsurf_verts, model.nsurf_tris, model.surf_rest, model.surf_tris};
    if (surface_obj && sc_obj_write(surface_obj, &surf, &err)) sc_cli_die(&cli, &err);
    if (surface_obj) sc_cleanup_add(surface_obj, SC_CLEANUP_OUTPUT);
    if (envelope_obj && sc_obj_write(envelope_obj, &envelope, &err)) sc_cli_die(&cli, &err);
    sc_cleanup_keep_outputs();

    log_report(cli.output, &rep);
    free(resolved);
    sc_trimesh_free(&envelope);
    sc_muscles_free(&muscles);
    sc_reduced_basis_free(&basis);
    sc_muscle_defs_free(&muscle_defs);
    sc_model_free(&model);
    sc_cfg_free(cfg);
    return 0;
}
