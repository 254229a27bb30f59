// SPDX-License-Identifier: MIT
/* Stand-in for librknnrt.so: the C API of rknn_api.h (RKNN SDK 2.3.2), computing on the CPU. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef TWIN_VERSION
#define TWIN_VERSION "2.3.2"
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
struct model { uint32_t n_in, n_out; struct tensor t[8]; unsigned char *in[4]; uint32_t in_size[4]; int ran; };

static uint32_t elems(const struct tensor *t) { uint32_t n = 1; for (uint32_t i = 0; i < t->n_dims; i++) n *= t->dims[i]; return n; }
static uint32_t type_size(uint32_t type) { return type == 0 || type == 6 || type == 7 ? 4 : type == 1 || type == 4 || type == 5 ? 2 : type == 8 ? 8 : 1; }

int rknn_init(rknn_context *ctx, void *data, uint32_t size, uint32_t flag, void *extend)
{
    (void)flag; (void)extend;
    const unsigned char *p = data;
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

int rknn_inputs_set(rknn_context ctx, uint32_t n, rknn_input inputs[])
{
    struct model *m = (struct model *)(uintptr_t)ctx;
    if (!m || n != m->n_in) return -8;
    for (uint32_t i = 0; i < n; i++) {
        const struct tensor *t = &m->t[inputs[i].index];
        if (inputs[i].size != elems(t) * type_size((uint32_t)inputs[i].type)) return -8;
        free(m->in[i]);
        m->in[i] = malloc(inputs[i].size);
        memcpy(m->in[i], inputs[i].buf, inputs[i].size);
        m->in_size[i] = inputs[i].size;
    }
    return 0;
}

int rknn_run(rknn_context ctx, void *extend)
{
    (void)extend;
    struct model *m = (struct model *)(uintptr_t)ctx;
    if (!m || !m->in[0]) return -8;
    m->ran = 1;
    return 0;
}

/* Output j, byte k = (sum of all input bytes + 7 k + j) mod 256, in the output's (8-bit) type. */
int rknn_outputs_get(rknn_context ctx, uint32_t n, rknn_output outputs[], void *extend)
{
    (void)extend;
    struct model *m = (struct model *)(uintptr_t)ctx;
    if (!m || !m->ran || n != m->n_out) return -9;
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
    for (int i = 0; i < 4; i++) free(m->in[i]);
    free(m);
    return 0;
}
