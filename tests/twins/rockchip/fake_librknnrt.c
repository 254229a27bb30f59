// SPDX-License-Identifier: MIT
/* Stand-in for librknnrt.so: the C API of rknn_api.h (RKNN SDK 2.3.2), computing on the CPU.
   It runs twin models (computed outputs) and real .rknn files, whose outputs it replays from a
   recording the test wrote (see boards_rockchip.py): it cannot run an NPU graph itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef TWIN_VERSION
#define TWIN_VERSION "2.3.2"
#endif
#ifndef TWIN_RECORDINGS
#define TWIN_RECORDINGS "/usr/share/rknn-twin"
#endif

const char twin_version_string[] = "librknnrt version: " TWIN_VERSION " (twin)";

#ifdef __arm__
typedef uint32_t rknn_context;
#else
typedef uint64_t rknn_context;
#endif

typedef struct { uint32_t n_input; uint32_t n_output; } rknn_input_output_num;
typedef struct {
    uint32_t index; uint32_t n_dims; uint32_t dims[16]; char name[256];
    uint32_t n_elems; uint32_t size; int fmt; int type; int qnt_type;
    int8_t fl; int32_t zp; float scale; uint32_t w_stride; uint32_t size_with_stride;
    uint8_t pass_through; uint32_t h_stride;
} rknn_tensor_attr;
typedef struct { uint32_t index; void *buf; uint32_t size; uint8_t pass_through; int type; int fmt; } rknn_input;
typedef struct { uint8_t want_float; uint8_t is_prealloc; uint32_t index; void *buf; uint32_t size; } rknn_output;
typedef struct { char api_version[256]; char drv_version[256]; } rknn_sdk_version;

/* Twin model: "RKNNTWIN", u32 n_in, u32 n_out, then per tensor (inputs first):
   u32 n_dims, u32 dims[4], u32 type, u32 fmt, i32 zp, f32 scale, char name[32]. */
struct tensor { uint32_t n_dims, dims[4], type, fmt; int32_t zp; float scale; char name[32]; };
struct model {
    uint32_t n_in, n_out; struct tensor t[8]; unsigned char *in[4]; uint32_t in_size[4]; int ran;
    /* A real .rknn: its recording "RKNNREC1", u32 n_in, u32 n_out, the tensor table, u32 n_records,
       then per record u64 input key and the raw bytes of every output in order. */
    unsigned char *rec; uint32_t n_records; uint64_t key; const unsigned char *hit;
    int core_mask, core_mask_set, sram; /* rknn_set_core_mask; SRAM held (RKNN_FLAG_ENABLE_SRAM) */
};

/* The twin's NPU SRAM bitmap, as the RKNPU driver prints it (RKNN SDK v2.3.2 guide 5.7.3.2): a
   context created with RKNN_FLAG_ENABLE_SRAM holds 512 KB of it until rknn_destroy, unless the board
   twin says its runtime leaves the SRAM unused (TWIN_NO_SRAM exists). */
#define TWIN_MM "/sys/kernel/debug/rknpu/mm"
#define TWIN_NO_SRAM "/etc/rknn-twin/no-sram"
#define TWIN_ONE_CORE "/etc/rknn-twin/one-core"
#define TWIN_SRAM_USE 524288UL
static void twin_mm_set_used(unsigned long used)
{
    char buf[8192];
    FILE *f = fopen(TWIN_MM, "r");
    if (!f) return;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strstr(buf, "SRAM total size: ");
    if (!p) return;
    unsigned long total = strtoul(p + 17, NULL, 10), pages = total / 4096;
    if (used > total) used = total;
    f = fopen(TWIN_MM, "w");
    if (!f) return;
    fprintf(f, "SRAM bitmap: \"*\" - used, \".\" - free (1bit = 4KB)\n");
    for (unsigned long row = 0; row * 32 < pages; row++) {
        fprintf(f, "[%03lu] [", row);
        for (unsigned long b = row * 32; b < pages && b < row * 32 + 32; b++) fputc(b < used / 4096 ? '*' : '.', f);
        fprintf(f, "]\n");
    }
    fprintf(f, "SRAM total size: %lu, used: %lu, free: %lu\n", total, used, total - used);
    fclose(f);
}

static int twin_exists(const char *path) { FILE *f = fopen(path, "r"); if (f) fclose(f); return f != NULL; }

int rknn_set_core_mask(rknn_context ctx, int core_mask)
{
    struct model *m = (struct model *)(uintptr_t)ctx;
    if (!m) return -7;
    if (core_mask != 0 && core_mask != 1 && core_mask != 2 && core_mask != 4 && core_mask != 3 && core_mask != 7) return -5;
    m->core_mask = core_mask; m->core_mask_set = 1;
    return 0;
}

/* With a core mask set, a run takes 6 ms of "NPU time" shared by the cores of the mask (one core
   only when the board twin says so), so a 3-core run is faster than a 1-core run. */
static void twin_core_time(const struct model *m)
{
    if (!m->core_mask_set) return;
    int cores = (m->core_mask & 1) + ((m->core_mask >> 1) & 1) + ((m->core_mask >> 2) & 1);
    if (cores == 0 || twin_exists(TWIN_ONE_CORE)) cores = 1;
    struct timespec t = {0, 6000000L / cores};
    nanosleep(&t, NULL);
}

/* FNV-1a, 64 bit: names a model's recording and keys a recorded input. */
static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) { h ^= p[i]; h *= 1099511628211ULL; }
    return h;
}
#define FNV_SEED 14695981039346656037ULL

static uint32_t elems(const struct tensor *t) { uint32_t n = 1; for (uint32_t i = 0; i < t->n_dims; i++) n *= t->dims[i]; return n; }
static uint32_t type_size(uint32_t type) { return type == 0 || type == 6 || type == 7 ? 4 : type == 1 || type == 4 || type == 5 ? 2 : type == 8 ? 8 : 1; }

static uint32_t out_bytes(const struct model *m)
{
    uint32_t n = 0;
    for (uint32_t j = 0; j < m->n_out; j++) n += elems(&m->t[m->n_in + j]) * type_size(m->t[m->n_in + j].type);
    return n;
}

/* The recording of a real .rknn: RKNN_TWIN_RECORDINGS (or TWIN_RECORDINGS)/<fnv of the file>.rec. */
static int load_recording(struct model *m, const void *data, uint32_t size)
{
    const char *dir = getenv("RKNN_TWIN_RECORDINGS");
    char path[512];
    snprintf(path, sizeof(path), "%s/%016llx.rec", dir ? dir : TWIN_RECORDINGS,
             (unsigned long long)fnv(FNV_SEED, data, size));
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "E RKNN: twin: no recording %s for this model\n", path); return -6; }
    unsigned char head[16];
    size_t table = 0;
    long total = 0;
    if (fread(head, 1, 16, f) == 16 && memcmp(head, "RKNNREC1", 8) == 0) {
        memcpy(&m->n_in, head + 8, 4); memcpy(&m->n_out, head + 12, 4);
        table = (m->n_in + m->n_out) * sizeof(struct tensor);
        fseek(f, 0, SEEK_END); total = ftell(f); fseek(f, 16, SEEK_SET);
    }
    if (m->n_in < 1 || m->n_in > 4 || m->n_out < 1 || m->n_in + m->n_out > 8 || total < (long)(16 + table + 4)) {
        fclose(f); fprintf(stderr, "E RKNN: twin: %s is not a recording\n", path); return -6;
    }
    m->rec = malloc((size_t)total - 16);
    int ok = fread(m->rec, 1, (size_t)total - 16, f) == (size_t)total - 16;
    fclose(f);
    if (ok) { memcpy(m->t, m->rec, table); memcpy(&m->n_records, m->rec + table, 4); }
    if (!ok || (size_t)total - 16 - table - 4 != (size_t)m->n_records * (8 + out_bytes(m))) {
        fprintf(stderr, "E RKNN: twin: %s is truncated\n", path); return -6;
    }
    return 0;
}

static int twin_init(rknn_context *ctx, void *data, uint32_t size, uint32_t flag, void *extend)
{
    (void)flag; (void)extend;
    const unsigned char *p = data;
    if (size >= 16 && memcmp(p, "RKNN", 4) == 0 && memcmp(p, "RKNNTWIN", 8) != 0) {
        struct model *m = calloc(1, sizeof(*m));
        int ret = load_recording(m, data, size);
        if (ret != 0) { free(m->rec); free(m); return ret; }
        *ctx = (rknn_context)(uintptr_t)m;
        return 0;
    }
    if (size < 16 || memcmp(p, "RKNNTWIN", 8) != 0) return -6;
    struct model *m = calloc(1, sizeof(*m));
    memcpy(&m->n_in, p + 8, 4); memcpy(&m->n_out, p + 12, 4);
    if (m->n_in < 1 || m->n_in > 4 || m->n_out < 1 || m->n_in + m->n_out > 8) { free(m); return -6; }
    if (size < 16 + (m->n_in + m->n_out) * sizeof(struct tensor)) { free(m); return -6; }
    memcpy(m->t, p + 16, (m->n_in + m->n_out) * sizeof(struct tensor));
    *ctx = (rknn_context)(uintptr_t)m;
    return 0;
}

int rknn_query(rknn_context ctx, int cmd, void *info, uint32_t size)
{
    struct model *m = (struct model *)(uintptr_t)ctx;
    if (!m) return -7;
    if (cmd == 0 && size >= sizeof(rknn_input_output_num)) {
        rknn_input_output_num *n = info; n->n_input = m->n_in; n->n_output = m->n_out; return 0;
    }
    if ((cmd == 1 || cmd == 2) && size >= sizeof(rknn_tensor_attr)) {
        rknn_tensor_attr *a = info;
        uint32_t count = cmd == 1 ? m->n_in : m->n_out;
        if (a->index >= count) return -5;
        const struct tensor *t = &m->t[(cmd == 1 ? 0 : m->n_in) + a->index];
        uint32_t index = a->index;
        memset(a, 0, sizeof(*a));
        a->index = index; a->n_dims = t->n_dims;
        for (uint32_t i = 0; i < t->n_dims; i++) a->dims[i] = t->dims[i];
        strncpy(a->name, t->name, sizeof(a->name) - 1);
        a->n_elems = elems(t); a->size = a->n_elems * type_size(t->type);
        a->fmt = (int)t->fmt; a->type = (int)t->type; a->qnt_type = 2; a->zp = t->zp; a->scale = t->scale;
        return 0;
    }
    if (cmd == 5 && size >= sizeof(rknn_sdk_version)) {
        rknn_sdk_version *v = info;
        strcpy(v->api_version, TWIN_VERSION " (twin)"); strcpy(v->drv_version, "0.9.8");
        return 0;
    }
    return -5;
}

/* A real model takes, with pass_through = 0, float32/float16/int8/uint8 data (the runtime
   converts it), 4-D inputs as NHWC (RKNN SDK 2.3.2 guide, "how to fill the input data"); with
   pass_through = 1, the model's own type. The key of the inputs as given selects the recording. */
static int recorded_inputs_set(struct model *m, uint32_t n, const rknn_input inputs[])
{
    uint64_t key = FNV_SEED;
    for (uint32_t i = 0; i < n; i++) {
        if (inputs[i].index != i) return -8;
        const struct tensor *t = &m->t[i];
        uint32_t type = inputs[i].pass_through ? t->type : (uint32_t)inputs[i].type;
        if (!inputs[i].pass_through && type > 3) {
            fprintf(stderr, "E RKNN: input %u: type %u cannot be converted to the model's input\n", i, type);
            return -8;
        }
        if (!inputs[i].pass_through && t->n_dims == 4 && inputs[i].fmt != 1) {
            fprintf(stderr, "E RKNN: input %u: a 4-D input must be given as NHWC (fmt %d)\n", i, inputs[i].fmt);
            return -8;
        }
        if (inputs[i].size != elems(t) * type_size(type)) {
            fprintf(stderr, "E RKNN: input %u: size %u, the model needs %u\n", i, inputs[i].size, elems(t) * type_size(type));
            return -8;
        }
        key = fnv(key, &type, 4);
        key = fnv(key, inputs[i].buf, inputs[i].size);
    }
    m->key = key; m->hit = NULL; m->ran = 0;
    return 0;
}

int rknn_inputs_set(rknn_context ctx, uint32_t n, rknn_input inputs[])
{
    struct model *m = (struct model *)(uintptr_t)ctx;
    if (!m || n != m->n_in) return -8;
    if (m->rec) return recorded_inputs_set(m, n, inputs);
    for (uint32_t i = 0; i < n; i++) {
        const struct tensor *t = &m->t[inputs[i].index];
        if (t->n_dims == 4 && inputs[i].fmt != 1) {
            fprintf(stderr, "E RKNN: input %u: a 4-D input must be given as NHWC (fmt %d)\n", i, inputs[i].fmt);
            return -8;
        }
        if (inputs[i].size != elems(t) * type_size((uint32_t)inputs[i].type)) return -8;
        free(m->in[i]);
        m->in[i] = malloc(inputs[i].size);
        memcpy(m->in[i], inputs[i].buf, inputs[i].size);
        m->in_size[i] = inputs[i].size;
    }
    return 0;
}

int rknn_init(rknn_context *ctx, void *data, uint32_t size, uint32_t flag, void *extend)
{
    int ret = twin_init(ctx, data, size, flag, extend);
    if (ret == 0 && (flag & 0x800) && !twin_exists(TWIN_NO_SRAM)) { /* RKNN_FLAG_ENABLE_SRAM */
        ((struct model *)(uintptr_t)*ctx)->sram = 1;
        twin_mm_set_used(TWIN_SRAM_USE);
    }
    return ret;
}

int rknn_run(rknn_context ctx, void *extend)
{
    (void)extend;
    struct model *m = (struct model *)(uintptr_t)ctx;
    if (m) twin_core_time(m);
    if (m && m->rec) {
        const unsigned char *record = m->rec + (m->n_in + m->n_out) * sizeof(struct tensor) + 4;
        for (uint32_t r = 0; r < m->n_records; r++, record += 8 + out_bytes(m)) {
            if (memcmp(record, &m->key, 8) == 0) { m->hit = record + 8; m->ran = 1; return 0; }
        }
        fprintf(stderr, "E RKNN: twin: no recorded outputs for this input (key %016llx)\n", (unsigned long long)m->key);
        return -1;
    }
    if (!m || !m->in[0]) return -8;
    m->ran = 1;
    return 0;
}

/* The recorded raw output, or (want_float) the output dequantized with its zero point and scale. */
static int recorded_outputs_get(struct model *m, uint32_t n, rknn_output outputs[])
{
    for (uint32_t j = 0; j < n; j++) {
        if (outputs[j].index >= m->n_out) return -9;
        const unsigned char *src = m->hit;
        for (uint32_t k = 0; k < outputs[j].index; k++) src += elems(&m->t[m->n_in + k]) * type_size(m->t[m->n_in + k].type);
        const struct tensor *t = &m->t[m->n_in + outputs[j].index];
        uint32_t count = elems(t), bytes = count * type_size(t->type);
        if (outputs[j].want_float && t->type == 2) {
            float *values = malloc(count * sizeof(float));
            for (uint32_t k = 0; k < count; k++) values[k] = ((int8_t)src[k] - t->zp) * t->scale;
            outputs[j].buf = values; outputs[j].size = count * sizeof(float);
        } else {
            outputs[j].buf = malloc(bytes); memcpy(outputs[j].buf, src, bytes); outputs[j].size = bytes;
        }
    }
    return 0;
}

/* Output j, byte k = (sum of all input bytes + 7 k + j) mod 256, in the output's (8-bit) type. */
int rknn_outputs_get(rknn_context ctx, uint32_t n, rknn_output outputs[], void *extend)
{
    (void)extend;
    struct model *m = (struct model *)(uintptr_t)ctx;
    if (!m || !m->ran || n != m->n_out) return -9;
    if (m->rec) return recorded_outputs_get(m, n, outputs);
    uint32_t sum = 0;
    for (uint32_t i = 0; i < m->n_in; i++) for (uint32_t b = 0; b < m->in_size[i]; b++) sum += m->in[i][b];
    for (uint32_t j = 0; j < n; j++) {
        const struct tensor *t = &m->t[m->n_in + outputs[j].index];
        uint32_t bytes = elems(t) * type_size(t->type);
        unsigned char *buf = malloc(bytes);
        for (uint32_t k = 0; k < bytes; k++) buf[k] = (unsigned char)((sum + 7 * k + j) & 0xff);
        outputs[j].buf = buf; outputs[j].size = bytes;
    }
    return 0;
}

int rknn_outputs_release(rknn_context ctx, uint32_t n, rknn_output outputs[])
{
    (void)ctx;
    for (uint32_t j = 0; j < n; j++) { free(outputs[j].buf); outputs[j].buf = NULL; }
    return 0;
}

int rknn_destroy(rknn_context ctx)
{
    struct model *m = (struct model *)(uintptr_t)ctx;
    if (!m) return -7;
    if (m->sram) twin_mm_set_used(0);
    for (int i = 0; i < 4; i++) free(m->in[i]);
    free(m->rec);
    free(m);
    return 0;
}
