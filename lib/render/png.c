/* PNG (ISO 15948) writer over a small deflate (RFC 1951) encoder: greedy LZ77 on 3-byte hash
 * chains, blocks of up to 32K symbols, each coded with its own length-limited canonical
 * Huffman codes (BTYPE 2). */
#include <errno.h>
#include <stdio.h>
#include "core/cleanup.h"
#include "io/paths.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "render/png.h"

/* ---- checksums ---- */

uint32_t sc_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    static uint32_t table[256];
    static int ready;
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint32_t sc_adler32(uint32_t adler, const uint8_t *p, size_t n)
{
    uint32_t a = adler & 0xffff, b = adler >> 16;
    while (n) {
        size_t k = n < 5552 ? n : 5552; /* largest run without 32-bit overflow before the modulo */
        n -= k;
        while (k--) {
            a += *p++;
            b += a;
        }
        a %= 65521u;
        b %= 65521u;
    }
    return (b << 16) | a;
}

/* ---- bit writer (LSB first, as deflate packs) ---- */

typedef struct {
    uint8_t *buf;
    size_t n, cap;
    uint64_t acc;
    int nacc;
    int oom;
} bitw;

static void bw_byte(bitw *w, uint8_t b)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 4096;
        uint8_t *nb = realloc(w->buf, cap);
        if (!nb) {
            w->oom = 1;
            return;
        }
        w->buf = nb;
        w->cap = cap;
    }
    w->buf[w->n++] = b;
}

static void bw_bits(bitw *w, uint32_t v, int n)
{
    w->acc |= (uint64_t)v << w->nacc;
    w->nacc += n;
    while (w->nacc >= 8) {
        bw_byte(w, (uint8_t)w->acc);
        w->acc >>= 8;
        w->nacc -= 8;
    }
}

static void bw_align(bitw *w)
{
    if (w->nacc > 0) bw_bits(w, 0, 8 - w->nacc);
}

/* ---- Huffman codes ---- */

/* Code lengths (<= maxbits) for symbols with the given frequencies: a Huffman tree by the
   two-queue method over the sorted leaves, then lengths over the limit pushed down while
   keeping the Kraft sum exact. Fewer than two used symbols still get a complete code of two
   1-bit codes, which every inflater accepts. */
static void huff_lengths(const uint32_t *freq, int n, int maxbits, uint8_t *len)
{
    int sym[320], parent[640];
    uint32_t weight[640];
    int depth[640];
    int count = 0;
    memset(len, 0, (size_t)n);
    for (int i = 0; i < n; i++)
        if (freq[i]) sym[count++] = i;
    if (count < 2) {
        int a = count ? sym[0] : 0, b = a == 0 ? 1 : 0;
        len[a] = len[b] = 1;
        return;
    }
    /* insertion sort by (frequency, symbol): deterministic */
    for (int i = 1; i < count; i++) {
        int s = sym[i], j = i;
        while (j > 0 && (freq[sym[j - 1]] > freq[s] || (freq[sym[j - 1]] == freq[s] && sym[j - 1] > s))) {
            sym[j] = sym[j - 1];
            j--;
        }
        sym[j] = s;
    }
    for (int i = 0; i < count; i++) weight[i] = freq[sym[i]];
    int leaf = 0, node = count, next = count;
    for (int k = 0; k < count - 1; k++) {
        int pick[2];
        for (int t = 0; t < 2; t++) {
            if (leaf < count && (node >= next || weight[leaf] <= weight[node])) pick[t] = leaf++;
            else pick[t] = node++;
        }
        weight[next] = weight[pick[0]] + weight[pick[1]];
        parent[pick[0]] = parent[pick[1]] = next;
        next++;
    }
    int root = next - 1;
    depth[root] = 0;
    for (int i = root - 1; i >= 0; i--) depth[i] = depth[parent[i]] + 1;
    int bl_count[64] = {0};
    for (int i = 0; i < count; i++) bl_count[depth[i] < 63 ? depth[i] : 63]++;
    for (int d = maxbits + 1; d < 64; d++) {
        bl_count[maxbits] += bl_count[d];
        bl_count[d] = 0;
    }
    uint32_t total = 0;
    for (int d = 1; d <= maxbits; d++) total += (uint32_t)bl_count[d] << (maxbits - d);
    while (total > (1u << maxbits)) {
        /* one code at the limit less, one shorter code split into two: Kraft sum - 1 */
        bl_count[maxbits]--;
        for (int d = maxbits - 1; d > 0; d--)
            if (bl_count[d]) {
                bl_count[d]--;
                bl_count[d + 1] += 2;
                break;
            }
        total--;
    }
    /* the least frequent symbols get the longest codes */
    int i = 0;
    for (int d = maxbits; d >= 1; d--)
        for (int k = 0; k < bl_count[d]; k++) len[sym[i++]] = (uint8_t)d;
}

/* Canonical codes (RFC 1951 3.2.2), bit-reversed for LSB-first output. */
static void huff_codes(const uint8_t *len, int n, uint16_t *code)
{
    int bl_count[16] = {0}, next[16];
    for (int i = 0; i < n; i++) bl_count[len[i]]++;
    bl_count[0] = 0;
    int c = 0;
    for (int b = 1; b < 16; b++) {
        c = (c + bl_count[b - 1]) << 1;
        next[b] = c;
    }
    for (int i = 0; i < n; i++) {
        if (!len[i]) {
            code[i] = 0;
            continue;
        }
        int v = next[len[i]]++, r = 0;
        for (int k = 0; k < len[i]; k++) r |= ((v >> k) & 1) << (len[i] - 1 - k);
        code[i] = (uint16_t)r;
    }
}

/* ---- deflate ---- */

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
                                       193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
static const uint8_t cl_order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

static int high_bit(unsigned x) { return 31 - __builtin_clz(x); }

static int length_code(int len) /* 3..258 -> 0..28 (symbol - 257) */
{
    if (len == 258) return 28;
    int l = len - 3;
    if (l < 8) return l;
    int hb = high_bit((unsigned)l);
    return 4 * (hb - 1) + ((l >> (hb - 2)) & 3);
}

static int dist_code(int d) /* 1..32768 -> 0..29 */
{
    if (d <= 4) return d - 1;
    int x = d - 1, hb = high_bit((unsigned)x);
    return 2 * hb + ((x >> (hb - 1)) & 1);
}

#define WSIZE      32768
#define HBITS      15
#define BLOCK_SYMS 32768

typedef struct {
    uint16_t *lit;  /* literal byte, or 256 + match length */
    uint16_t *dist; /* 0 for a literal */
    int n;
} symbuf;

static void emit_block(bitw *w, const symbuf *s, int final)
{
    uint32_t lf[286] = {0}, df[30] = {0};
    for (int i = 0; i < s->n; i++) {
        if (!s->dist[i]) lf[s->lit[i]]++;
        else {
            lf[257 + length_code(s->lit[i] - 256)]++;
            df[dist_code(s->dist[i])]++;
        }
    }
    lf[256] = 1;
    uint8_t ll[286], dl[30], cll[19];
    uint16_t lc[286], dc[30], clc[19];
    huff_lengths(lf, 286, 15, ll);
    huff_lengths(df, 30, 15, dl);
    huff_codes(ll, 286, lc);
    huff_codes(dl, 30, dc);
    int hlit = 286, hdist = 30;
    while (hlit > 257 && !ll[hlit - 1]) hlit--;
    while (hdist > 1 && !dl[hdist - 1]) hdist--;
    /* run-length code the concatenated lengths (runs may cross from literal to distance lengths) */
    uint8_t seq[316], rle[316], rle_extra[316];
    int nseq = 0, nrle = 0;
    for (int i = 0; i < hlit; i++) seq[nseq++] = ll[i];
    for (int i = 0; i < hdist; i++) seq[nseq++] = dl[i];
    uint32_t cf[19] = {0};
    for (int i = 0; i < nseq;) {
        int v = seq[i], run = 1;
        while (i + run < nseq && seq[i + run] == v) run++;
        if (v == 0 && run >= 3) {
            int r = run > 138 ? 138 : run;
            rle[nrle] = r >= 11 ? 18 : 17;
            rle_extra[nrle++] = (uint8_t)(r >= 11 ? r - 11 : r - 3);
            i += r;
        } else if (v != 0 && run >= 4) {
            rle[nrle] = (uint8_t)v;
            rle_extra[nrle++] = 0;
            int r = run - 1 > 6 ? 6 : run - 1;
            rle[nrle] = 16;
            rle_extra[nrle++] = (uint8_t)(r - 3);
            i += 1 + r;
        } else {
            rle[nrle] = (uint8_t)v;
            rle_extra[nrle++] = 0;
            i++;
        }
    }
    for (int i = 0; i < nrle; i++) cf[rle[i]]++;
    huff_lengths(cf, 19, 7, cll);
    huff_codes(cll, 19, clc);
    int hclen = 19;
    while (hclen > 4 && !cll[cl_order[hclen - 1]]) hclen--;

    bw_bits(w, (uint32_t) final, 1);
    bw_bits(w, 2, 2);
    bw_bits(w, (uint32_t)(hlit - 257), 5);
    bw_bits(w, (uint32_t)(hdist - 1), 5);
    bw_bits(w, (uint32_t)(hclen - 4), 4);
    for (int i = 0; i < hclen; i++) bw_bits(w, cll[cl_order[i]], 3);
    for (int i = 0; i < nrle; i++) {
        bw_bits(w, clc[rle[i]], cll[rle[i]]);
        if (rle[i] == 16) bw_bits(w, rle_extra[i], 2);
        else if (rle[i] == 17) bw_bits(w, rle_extra[i], 3);
        else if (rle[i] == 18) bw_bits(w, rle_extra[i], 7);
    }
    for (int i = 0; i < s->n; i++) {
        if (!s->dist[i]) {
            bw_bits(w, lc[s->lit[i]], ll[s->lit[i]]);
        } else {
            int len = s->lit[i] - 256, c = length_code(len), d = s->dist[i], dcode = dist_code(d);
            bw_bits(w, lc[257 + c], ll[257 + c]);
            if (len_extra[c]) bw_bits(w, (uint32_t)(len - len_base[c]), len_extra[c]);
            bw_bits(w, dc[dcode], dl[dcode]);
            if (dist_extra[dcode]) bw_bits(w, (uint32_t)(d - dist_base[dcode]), dist_extra[dcode]);
        }
    }
    bw_bits(w, lc[256], ll[256]);
}

static void emit_stored(bitw *w, const uint8_t *src, size_t n)
{
    size_t pos = 0;
    do {
        size_t k = n - pos > 65535 ? 65535 : n - pos;
        bw_bits(w, pos + k == n, 1);
        bw_bits(w, 0, 2);
        bw_align(w);
        bw_bits(w, (uint32_t)k & 0xffff, 16);
        bw_bits(w, ~(uint32_t)k & 0xffff, 16);
        for (size_t i = 0; i < k; i++) bw_byte(w, src[pos + i]);
        pos += k;
    } while (pos < n);
}

static inline uint32_t hash3(const uint8_t *p)
{
    return ((uint32_t)p[0] * 2654435761u ^ (uint32_t)p[1] * 40503u ^ (uint32_t)p[2]) & ((1u << HBITS) - 1);
}

int sc_zlib_compress(const uint8_t *src, size_t n, int level, uint8_t **out, size_t *out_n, sc_err *err)
{
    *out = NULL;
    *out_n = 0;
    bitw w = {0};
    bw_byte(&w, 0x78);                    /* CMF: deflate, 32K window */
    bw_byte(&w, 0x9c);                    /* FLG: (0x78 * 256 + 0x9c) % 31 == 0 */
    if (level <= 0 || n >= 0x7fffffffu) { /* int32 hash positions */
        emit_stored(&w, src, n);
    } else {
        int max_chain = level >= 9 ? 256 : level >= 6 ? 32 : level >= 3 ? 12 : 4;
        int32_t *head = malloc(sizeof(int32_t) << HBITS);
        int32_t *prev = malloc(sizeof(int32_t) * WSIZE);
        symbuf s = {malloc(sizeof(uint16_t) * BLOCK_SYMS), malloc(sizeof(uint16_t) * BLOCK_SYMS), 0};
        if (!head || !prev || !s.lit || !s.dist) {
            free(head);
            free(prev);
            free(s.lit);
            free(s.dist);
            free(w.buf);
            return sc_fail(err, SC_EIO, "out of memory (deflate)");
        }
        /* positions are relative to a base that advances so int32 never overflows */
        memset(head, 0xff, sizeof(int32_t) << HBITS);
        size_t i = 0;
        int emitted_final = 0;
        while (i < n) {
            int best = 0, best_d = 0;
            if (i + 3 <= n) {
                uint32_t h = hash3(src + i);
                int32_t cand = head[h];
                size_t maxlen = n - i < 258 ? n - i : 258;
                for (int chain = 0; cand >= 0 && chain < max_chain; chain++) {
                    size_t j = (size_t)cand;
                    if (i - j > WSIZE - 1 || j >= i) break;
                    if (src[j + (size_t)best] == src[i + (size_t)best] && src[j] == src[i]) {
                        size_t l = 0;
                        while (l < maxlen && src[j + l] == src[i + l]) l++;
                        if ((int)l > best) {
                            best = (int)l;
                            best_d = (int)(i - j);
                            if (l == maxlen) break;
                        }
                    }
                    int32_t nx = prev[j & (WSIZE - 1)];
                    if (nx >= cand) break; /* a stale slot from an older window */
                    cand = nx;
                }
                prev[i & (WSIZE - 1)] = head[h];
                head[h] = (int32_t)i;
            }
            if (best >= 3) {
                s.lit[s.n] = (uint16_t)(256 + best);
                s.dist[s.n++] = (uint16_t)best_d;
                for (size_t k = i + 1; k < i + (size_t)best && k + 3 <= n; k++) {
                    uint32_t h = hash3(src + k);
                    prev[k & (WSIZE - 1)] = head[h];
                    head[h] = (int32_t)k;
                }
                i += (size_t)best;
            } else {
                s.lit[s.n] = src[i];
                s.dist[s.n++] = 0;
                i++;
            }
            if (s.n == BLOCK_SYMS) {
                emit_block(&w, &s, i >= n);
                emitted_final = i >= n;
                s.n = 0;
            }
        }
        if (!emitted_final) emit_block(&w, &s, 1);
        free(head);
        free(prev);
        free(s.lit);
        free(s.dist);
        bw_align(&w);
    }
    uint32_t a = sc_adler32(1, src, n);
    for (int k = 3; k >= 0; k--) bw_byte(&w, (uint8_t)(a >> (8 * k)));
    if (w.oom) {
        free(w.buf);
        return sc_fail(err, SC_EIO, "out of memory (deflate)");
    }
    *out = w.buf;
    *out_n = w.n;
    return SC_OK;
}

/* ---- PNG ---- */

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint8_t *put_chunk(uint8_t *p, const char *type, const uint8_t *data, size_t n)
{
    put_be32(p, (uint32_t)n);
    memcpy(p + 4, type, 4);
    if (n) memcpy(p + 8, data, n);
    put_be32(p + 8 + n, sc_crc32(0, p + 4, n + 4));
    return p + 12 + n;
}

int sc_png_encode(const uint8_t *rgb, int w, int h, int level, uint8_t **out, size_t *out_n, sc_err *err)
{
    *out = NULL;
    *out_n = 0;
    if (w <= 0 || h <= 0 || w > 65535 || h > 65535) return sc_fail(err, SC_EINPUT, "PNG: bad image size %d x %d", w, h);
    size_t stride = 3 * (size_t)w, rowlen = stride + 1;
    uint8_t *filt = malloc(rowlen * (size_t)h), *cand = malloc(5 * stride);
    if (!filt || !cand) {
        free(filt);
        free(cand);
        return sc_fail(err, SC_EIO, "out of memory (PNG)");
    }
    for (int y = 0; y < h; y++) {
        const uint8_t *cur = rgb + (size_t)y * stride, *up = y ? cur - stride : NULL;
        long best_sum = -1;
        int best = 0;
        /* the five predictors, one loop each (no branch per byte) */
        uint8_t *c0 = cand, *c1 = cand + stride, *c2 = cand + 2 * stride, *c3 = cand + 3 * stride, *c4 = cand + 4 * stride;
        for (size_t x = 0; x < stride; x++) c0[x] = cur[x];
        for (size_t x = 0; x < stride; x++) c1[x] = (uint8_t)(cur[x] - (x >= 3 ? cur[x - 3] : 0));
        if (up) {
            for (size_t x = 0; x < stride; x++) c2[x] = (uint8_t)(cur[x] - up[x]);
            for (size_t x = 0; x < 3 && x < stride; x++) {
                c3[x] = (uint8_t)(cur[x] - (up[x] >> 1));
                c4[x] = (uint8_t)(cur[x] - up[x]); /* Paeth with a = c = 0 predicts b */
            }
            for (size_t x = 3; x < stride; x++) {
                c3[x] = (uint8_t)(cur[x] - ((cur[x - 3] + up[x]) >> 1));
                c4[x] = (uint8_t)(cur[x] - paeth(cur[x - 3], up[x], up[x - 3]));
            }
        } else {
            memcpy(c2, c0, stride);
            for (size_t x = 0; x < stride; x++) c3[x] = (uint8_t)(cur[x] - (x >= 3 ? cur[x - 3] >> 1 : 0));
            memcpy(c4, c1, stride); /* Paeth with b = c = 0 predicts a */
        }
        for (int f = 0; f < 5; f++) {
            const uint8_t *c = cand + (size_t)f * stride;
            long sum = 0;
            for (size_t x = 0; x < stride; x++) sum += c[x] < 128 ? c[x] : 256 - c[x];
            if (best_sum < 0 || sum < best_sum) {
                best_sum = sum;
                best = f;
            }
        }
        filt[(size_t)y * rowlen] = (uint8_t)best;
        memcpy(filt + (size_t)y * rowlen + 1, cand + (size_t)best * stride, stride);
    }
    free(cand);
    uint8_t *z;
    size_t zn;
    int rc = sc_zlib_compress(filt, rowlen * (size_t)h, level, &z, &zn, err);
    free(filt);
    if (rc) return rc;
    size_t total = 8 + (12 + 13) + (12 + zn) + 12;
    uint8_t *png = malloc(total);
    if (!png) {
        free(z);
        return sc_fail(err, SC_EIO, "out of memory (PNG)");
    }
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    memcpy(png, sig, 8);
    uint8_t ihdr[13];
    put_be32(ihdr, (uint32_t)w);
    put_be32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8;  /* bit depth */
    ihdr[9] = 2;  /* truecolour */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering */
    ihdr[12] = 0; /* no interlace */
    uint8_t *p = put_chunk(png + 8, "IHDR", ihdr, 13);
    p = put_chunk(p, "IDAT", z, zn);
    p = put_chunk(p, "IEND", NULL, 0);
    free(z);
    *out = png;
    *out_n = (size_t)(p - png);
    return SC_OK;
}

int sc_png_write(const char *path, const uint8_t *rgb, int w, int h, sc_err *err)
{
    uint8_t *png;
    size_t n;
    int rc = sc_png_encode(rgb, w, h, 6, &png, &n, err);
    if (rc) return rc;
    char tmp[4096];
    FILE *f = sc_file_open_tmp(path, "wb", tmp, sizeof tmp, err);
    if (!f) {
        free(png);
        return err->code;
    }
    /* a short write leaves the error on the stream: sc_file_commit reports the system's reason
       (ENOSPC) from the failing flush, not a stale errno */
    fwrite(png, 1, n, f);
    free(png);
    return sc_file_commit(f, tmp, path, err);
}
