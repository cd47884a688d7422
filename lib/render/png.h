/* PNG writer with its own deflate (LZ77 with hash chains + dynamic Huffman blocks), CRC-32 and
 * Adler-32, so rendering needs no image or compression library. 8-bit RGB, no interlace;
 * each scanline gets the filter with the smallest sum of absolute residuals (the PNG spec's
 * heuristic). */
#ifndef SC_RENDER_PNG_H
#define SC_RENDER_PNG_H
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"

/* CRC-32 (ISO 3309, as PNG uses) and Adler-32 (RFC 1950), continuing from `crc` / `adler`
   (start with 0 and 1). */
uint32_t sc_crc32(uint32_t crc, const uint8_t *p, size_t n);
uint32_t sc_adler32(uint32_t adler, const uint8_t *p, size_t n);

/* A zlib stream (RFC 1950 around RFC 1951 deflate) of src; level 0 = stored blocks only,
   1..9 = longer hash-chain searches. *out is malloc'd. SC_EIO only when out of memory. */
int sc_zlib_compress(const uint8_t *src, size_t n, int level, uint8_t **out, size_t *out_n, sc_err *err);

/* The PNG file bytes for a w x h RGB image (rows top to bottom, 3 bytes per pixel). */
int sc_png_encode(const uint8_t *rgb, int w, int h, int level, uint8_t **out, size_t *out_n, sc_err *err);
/* Encodes and writes a temporary (core/cleanup.h, sc_temp_name), then renames it onto path. */
int sc_png_write(const char *path, const uint8_t *rgb, int w, int h, sc_err *err);

#endif
