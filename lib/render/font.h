/* A built-in 5x7 bitmap font (printable ASCII) for labels on rendered images. */
#ifndef SC_RENDER_FONT_H
#define SC_RENDER_FONT_H
#include <stdint.h>

#define SC_FONT_CELL_W 6 /* 5 columns + 1 spacing, before scaling */
#define SC_FONT_CELL_H 8

/* Width in pixels of s at an integer scale (>= 1). */
int sc_font_width(const char *s, int scale);
/* Draws s with its top-left corner at (x, y) into a w x h RGB image, clipped; `shadow`, when
   non-NULL, is drawn one scaled pixel down-right first so the text reads on any background.
   Characters outside printable ASCII are drawn as '?'. */
void sc_font_draw(uint8_t *rgb, int w, int h, int x, int y, const char *s, int scale, const uint8_t color[3], const uint8_t *shadow);

#endif
