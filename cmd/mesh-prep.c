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

static const char *usage_head =
    "-c CONFIG.yaml -o character.h5 [--surface-obj FILE] [--envelope-obj FILE]\n"
    "Builds the character: fine surface, coarse envelope, fixed nodes, TetGen tet mesh,\n"
    "embedding, masses. Writes character.h5 and character.xdmf (ParaView).\n"
    "  --surface-obj FILE   also write the fine surface (config frame) as OBJ\n"
    "  --envelope-obj FILE  also write the coarse envelope (config frame) as OBJ\n"
    "environment: SOFTCON_TETGEN=PROGRAM runs PROGRAM instead of the `tetgen` on PATH.\n"
    "\n"
    "The default bone map (skeleton.bvh without skeleton.bone_map: a CMU clip's 31 joints to\n"
    "16 bones; copy it into skeleton.bone_map to change it):\n";

static const char *surface_obj, *envelope_obj;

static int write_report(sc_h5 *f, const sc_prep_report *r, sc_err *err)
{
    int rc;
#define A_I(n, v) if ((rc = sc_h5_attr_i64(f, "/report", n, v, err))) return rc
#define A_F(n, v) if ((rc = sc_h5_attr_f64(f, "/report", n, v, err))) return rc
    if ((rc = sc_h5_group(f, "/report", "mesh-prep report; lengths m, volumes m^3, masses kg, angles degrees, times s", err))) return rc;
    A_I("nodes", r->nnodes); A_I("tets", r->ntets); A_I("surface_vertices", r->nsurf_verts);
    A_I("surface_faces", r->nsurf_tris); A_I("bones", r->nbones); A_I("joints", r->njoints);
    A_I("fixed_nodes", r->nfixed); A_I("envelope_vertices", r->env_verts); A_I("envelope_faces", r->env_tris);
    A_F("min_dihedral_deg", r->quality.min_dihedral); A_F("max_dihedral_deg", r->quality.max_dihedral);
    A_F("min_tet_volume_m3", r->quality.min_volume); A_F("max_tet_volume_m3", r->quality.max_volume);
    A_I("nonpositive_tets", r->quality.nonpositive); A_F("radius_edge_mean", r->quality.radius_edge_mean);
    A_F("radius_edge_max", r->quality.radius_edge_max); A_I("embedded_inside", r->embed.inside);
    A_I("embedded_nearest_tet", r->embed.fallback); A_F("max_nearest_tet_distance_m", r->embed.max_fallback_distance);
    A_I("slivers_peeled", r->improve.peeled); A_I("sliver_node_moves", r->improve.smoothed_moves);
    A_F("tetgen_min_dihedral_deg", r->improve.min_dihedral_before);
    A_F("total_mass_kg", r->total_mass); A_F("bone_mass_kg", r->bone_mass_total); A_F("volume_m3", r->volume);
    A_F("body_volume_m3", r->body_volume); A_I("mass_floored_nodes", r->mass_floored); A_F("tet_volume_m3", r->tet_volume);
    A_F("seconds", r->seconds); A_F("seconds_tetgen", r->seconds_tetgen); A_F("ground_shift_m", r->shift_y);
    A_I("skeleton_fitted", r->fitted); A_I("fixed_boxes_sized_to_body", r->fixed_fitted);
    if (r->fitted) {
        A_F("fit_body_height_m", r->fit.body_height); A_F("fit_scale", r->fit.scale);
        static const char *const side[2] = {"left", "right"};
        for (int i = 0; i < 2; i++) {
            char a[64];
#define A_S(fmt, v) snprintf(a, sizeof a, fmt, side[i]); A_F(a, v)
            A_S("fit_arm_down_deg_%s", r->fit.arm_down_deg[i]);
            A_S("fit_arm_forward_deg_%s", r->fit.arm_forward_deg[i]);
            A_S("fit_arm_length_scale_%s", r->fit.arm_length_scale[i]);
            A_S("fit_leg_shift_m_%s", r->fit.leg_shift[i]);
#undef A_S
        }
    }
#undef A_I
#undef A_F
    return sc_h5_attr_str(f, "/report", "tetgen_command", r->tetgen_command, err);
}

static int extra_opt(const char *name, const char *value, int *used)
{
    *used = 2;
    if (!strcmp(name, "--surface-obj")) { surface_obj = value; return value ? 1 : -1; }
    if (!strcmp(name, "--envelope-obj")) { envelope_obj = value; return value ? 1 : -1; }
    return 0;
}

int main(int argc, char **argv)
{
    sc_cli cli;
    static char usage[8192];
    snprintf(usage, sizeof usage, "%s%s", usage_head, sc_rig_cmu_map_yaml());
    sc_cli_parse(&cli, argc, argv, "mesh-prep", usage, 0, 0, 1, SC_CLI_OUTPUT, extra_opt);
    sc_err err = {0};
    sc_cfg *cfg = NULL;
    sc_prep_opts opts;
    if (sc_cfg_load_file(cli.config, &cfg, &err) || sc_prep_read_config(cfg, &opts, &err)) sc_cli_die(&cli, &err);
    sc_cli_ignore_other_sections(cfg);
    if (sc_cfg_check_unknown(cfg, &err)) sc_cli_die(&cli, &err);
    /* every file this run writes, checked against the OBJ inputs the config names */
    sc_cli_add_input(&cli, opts.body_obj[0] ? opts.body_obj : NULL);
    sc_cli_add_input(&cli, opts.envelope_obj[0] ? opts.envelope_obj : NULL);
    char xdmf[1024], h5rel[1024];
    sc_output_xdmf_paths(cli.output, xdmf, sizeof xdmf, h5rel, sizeof h5rel);
    sc_cli_add_output(&cli, xdmf);
    sc_cli_add_output(&cli, surface_obj);
    sc_cli_add_output(&cli, envelope_obj);

    sc_model model;
    sc_trimesh envelope;
    sc_prep_report rep;
    if (sc_prep_run(&opts, &model, &envelope, &rep, &err)) sc_cli_die(&cli, &err);
    if (rep.quality.min_dihedral < opts.min_dihedral)
        sc_log_warn("mesh-prep: tetgen.sliver_angle target %.1f deg not reached: the smallest dihedral angle is %.2f deg "
                    "(the explicit step may need a smaller dt; try a larger tetgen.min_dihedral or a finer envelope)",
                    opts.min_dihedral, rep.quality.min_dihedral);

    char *resolved = sc_cfg_resolved_text(cfg);
    sc_h5 *f;
    if (sc_h5_create(cli.output, &f, &err)) sc_cli_die(&cli, &err);
    if (sc_h5_provenance(f, SC_CHARACTER_SCHEMA, argc, argv, resolved, &err) || sc_character_write(f, &model, &err) ||
        write_report(f, &rep, &err)) {
        sc_h5_abort(f);
        sc_cli_die(&cli, &err);
    }
    if (sc_h5_commit(f, &err)) sc_cli_die(&cli, &err);
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

    sc_log_info("mesh-prep: %s", cli.output);
    sc_log_info("  skeleton      %d bones, %d joints, %d fixed nodes (%.2f kg on the bones)", rep.nbones, rep.njoints,
                rep.nfixed, rep.bone_mass_total);
    sc_log_info("  surface       %d vertices, %d faces (grid %.4f m)", rep.nsurf_verts, rep.nsurf_tris, rep.surface_spacing);
    if (rep.fitted)
        sc_log_info("  fit           skeleton fitted into the %.3f m body: scale %.4f; arms down %.1f / %.1f deg, forward %.1f / %.1f deg, "
                    "length x %.3f / %.3f; legs moved %.3f / %.3f m", rep.fit.body_height, rep.fit.scale, rep.fit.arm_down_deg[0],
                    rep.fit.arm_down_deg[1], rep.fit.arm_forward_deg[0], rep.fit.arm_forward_deg[1], rep.fit.arm_length_scale[0],
                    rep.fit.arm_length_scale[1], rep.fit.leg_shift[0], rep.fit.leg_shift[1]);
    sc_log_info("  fixed nodes   %d boxes sized to the body (soles under the feet, every node inside the flesh)", rep.fixed_fitted);
    sc_log_info("  envelope      %d vertices, %d faces (grid %.4f m), %.4f m^3", rep.env_verts, rep.env_tris, rep.env_spacing, rep.volume);
    sc_log_info("  tet mesh      %d nodes, %d tets (%d flipped to positive), tetgen %.2f s: %s", rep.nnodes, rep.ntets,
                rep.flipped_tets, rep.seconds_tetgen, rep.tetgen_command);
    sc_log_info("  slivers       %d peeled, %d node moves, %d nodes dropped; min dihedral %.2f -> %.2f deg",
                rep.improve.peeled, rep.improve.smoothed_moves, rep.improve.removed_nodes, rep.improve.min_dihedral_before,
                rep.improve.min_dihedral_after);
    sc_log_info("  quality       dihedral %.2f..%.2f deg, volume %.3g..%.3g m^3, %d tets with volume <= 0",
                rep.quality.min_dihedral, rep.quality.max_dihedral, rep.quality.min_volume, rep.quality.max_volume, rep.quality.nonpositive);
    sc_log_info("  radius-edge   mean %.3f, max %.3f", rep.quality.radius_edge_mean, rep.quality.radius_edge_max);
    sc_log_info("  embedding     %d inside a tet, %d mapped to the nearest tet (max %.2g m away)", rep.embed.inside,
                rep.embed.fallback, rep.embed.max_fallback_distance);
    sc_log_info("  mass          %.2f kg total = density x body volume %.4f m^3 (tets %.4f m^3); %d light nodes raised to the mass floor",
                rep.total_mass, rep.body_volume, rep.tet_volume, rep.mass_floored);
    sc_log_info("  time          %.2f s", rep.seconds);
    free(resolved);
    sc_trimesh_free(&envelope);
    sc_model_free(&model);
    sc_cfg_free(cfg);
    return 0;
}
