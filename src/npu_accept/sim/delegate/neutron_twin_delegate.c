// SPDX-License-Identifier: MIT
/*
 * meta-npu board twin: a real TFLite external delegate standing in for NXP's libneutron_delegate.so.
 *
 * It loads through the external-delegate ABI (tflite_plugin_create_delegate / _destroy_delegate,
 * what tflite.load_delegate() and label_image --external_delegate_path use), claims nodes in
 * Prepare through the real TfLiteContext API (GetExecutionPlan, GetNodeAndRegistration,
 * PreviewDelegatePartitioning, ReplaceNodeSubsetsWithDelegateKernels) and computes them: a
 * "NeutronGraph" custom op (the twin's converted model turns RESHAPE nodes into it) is a byte copy
 * of its first input, which is exactly what RESHAPE computes. Like NXP's delegate (a TFLite
 * SimpleDelegate named "NeutronDelegate" claiming builtin CUSTOM nodes named "NeutronGraph",
 * nxp-imx/tflite-neutron-delegate neutron_delegate.cc at f6ed0fc8) it prints the line TFLite's
 * SimpleDelegate prints (tflite/delegates/utils/simple_delegate.cc):
 * "NeutronDelegate delegate: N nodes delegated out of M nodes with P partitions."
 * with M = the execution plan's size and P = the partitions of the claimed nodes.
 *
 * Fault modes come from a config file (default /etc/neutron-twin.conf, or delegate option
 * "config"), "key = value" lines:
 *   mode  = ok | constant[:VALUE] | offset:EPS | fail-invoke | claim-none | jitter
 *           (jitter: each process nudges one output element, chosen by the clock, by one step:
 *           the same input gives different outputs from run to run)
 *   claim = neutrongraph | reshape     (reshape: also claim builtin RESHAPE nodes)
 *   report = N                         (print N as the delegated count: a delegate whose log lies)
 *   kernel_log = TEXT                  (each invoke appends "[uptime] TEXT" to the twin's kernel
 *                                      log, /usr/share/twin/kernel.log: a fault during the run)
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tflite_abi.h"

#define DEFAULT_CONFIG "/etc/neutron-twin.conf"
#define TWIN_VERSION "twin-1.0.0"
#define CUSTOM_OP "NeutronGraph"
#define TWIN_KERNEL_LOG "/usr/share/twin/kernel.log"

enum twin_mode { MODE_OK, MODE_CONSTANT, MODE_OFFSET, MODE_FAIL_INVOKE, MODE_CLAIM_NONE, MODE_JITTER };

struct twin_config {
  enum twin_mode mode;
  double value; /* constant value or offset */
  int claim_reshape;
  int report_nodes; /* -1: print the true count */
  char kernel_log[160]; /* appended to the twin's kernel log at each invoke when not empty */
};

struct twin_delegate {
  TfLiteDelegate base; /* first member: the TfLiteDelegate* handed to TFLite is this struct */
  struct twin_config config;
};

struct twin_op {
  int input;
  int output;
};

struct twin_kernel {
  struct twin_config config;
  int count;
  struct twin_op ops[];
};

static char* trim(char* s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = 0;
  return s;
}

/* Returns 0, or -1 with a message in err for a malformed file (a missing file means mode ok). */
static int read_config(const char* path, struct twin_config* cfg, char* err, size_t errlen) {
  cfg->mode = MODE_OK;
  cfg->value = 0.0;
  cfg->claim_reshape = 0;
  cfg->report_nodes = -1;
  cfg->kernel_log[0] = 0;
  FILE* f = fopen(path, "r");
  if (!f) {
    if (errno == ENOENT) return 0;
    snprintf(err, errlen, "NeutronTwin: cannot read %s: %s", path, strerror(errno));
    return -1;
  }
  char line[256];
  int lineno = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    char* hash = strchr(line, '#');
    if (hash) *hash = 0;
    char* s = trim(line);
    if (!*s) continue;
    char* eq = strchr(s, '=');
    if (!eq) {
      snprintf(err, errlen, "NeutronTwin: %s:%d is not 'key = value'", path, lineno);
      fclose(f);
      return -1;
    }
    *eq = 0;
    char* key = trim(s);
    char* val = trim(eq + 1);
    if (strcmp(key, "mode") == 0) {
      char* colon = strchr(val, ':');
      if (colon) *colon = 0;
      const char* arg = colon ? colon + 1 : NULL;
      if (strcmp(val, "ok") == 0) cfg->mode = MODE_OK;
      else if (strcmp(val, "constant") == 0) cfg->mode = MODE_CONSTANT;
      else if (strcmp(val, "offset") == 0 && arg) cfg->mode = MODE_OFFSET;
      else if (strcmp(val, "fail-invoke") == 0) cfg->mode = MODE_FAIL_INVOKE;
      else if (strcmp(val, "claim-none") == 0) cfg->mode = MODE_CLAIM_NONE;
      else if (strcmp(val, "jitter") == 0) cfg->mode = MODE_JITTER;
      else {
        snprintf(err, errlen, "NeutronTwin: %s:%d unknown mode '%s'", path, lineno, val);
        fclose(f);
        return -1;
      }
      if (arg) {
        char* end = NULL;
        cfg->value = strtod(arg, &end);
        if (end == arg || *end) {
          snprintf(err, errlen, "NeutronTwin: %s:%d '%s' is not a number", path, lineno, arg);
          fclose(f);
          return -1;
        }
      }
    } else if (strcmp(key, "claim") == 0) {
      if (strcmp(val, "reshape") == 0) cfg->claim_reshape = 1;
      else if (strcmp(val, "neutrongraph") == 0) cfg->claim_reshape = 0;
      else {
        snprintf(err, errlen, "NeutronTwin: %s:%d unknown claim '%s'", path, lineno, val);
        fclose(f);
        return -1;
      }
    } else if (strcmp(key, "report") == 0) {
      char* end = NULL;
      long n = strtol(val, &end, 10);
      if (end == val || *end || n < 0) {
        snprintf(err, errlen, "NeutronTwin: %s:%d report '%s' is not a node count", path, lineno, val);
        fclose(f);
        return -1;
      }
      cfg->report_nodes = (int)n;
    } else if (strcmp(key, "kernel_log") == 0) {
      snprintf(cfg->kernel_log, sizeof cfg->kernel_log, "%s", val);
    } else {
      snprintf(err, errlen, "NeutronTwin: %s:%d unknown key '%s'", path, lineno, key);
      fclose(f);
      return -1;
    }
  }
  fclose(f);
  return 0;
}

static void* kernel_init(TfLiteContext* context, const char* buffer, size_t length) {
  (void)length;
  const TfLiteDelegateParams* params = (const TfLiteDelegateParams*)buffer;
  const struct twin_delegate* twin = (const struct twin_delegate*)params->delegate;
  int n = params->nodes_to_replace->size;
  struct twin_kernel* k = calloc(1, sizeof *k + (size_t)n * sizeof(struct twin_op));
  if (!k) return NULL;
  k->config = twin->config;
  k->count = n;
  for (int i = 0; i < n; i++) {
    TfLiteNode* node = NULL;
    TfLiteRegistration* reg = NULL;
    if (context->GetNodeAndRegistration(context, params->nodes_to_replace->data[i], &node, &reg) != kTfLiteOk) {
      free(k);
      return NULL;
    }
    k->ops[i].input = node->inputs->data[0];
    k->ops[i].output = node->outputs->data[0];
  }
  return k;
}

static void kernel_free(TfLiteContext* context, void* buffer) {
  (void)context;
  free(buffer);
}

static TfLiteStatus kernel_prepare(TfLiteContext* context, TfLiteNode* node) {
  const struct twin_kernel* k = node->user_data;
  if (!k) {
    context->ReportError(context, "NeutronTwin: kernel state missing");
    return kTfLiteError;
  }
  for (int i = 0; i < k->count; i++) {
    const TfLiteTensor* in = &context->tensors[k->ops[i].input];
    const TfLiteTensor* out = &context->tensors[k->ops[i].output];
    if (in->bytes != out->bytes || in->type != out->type) {
      context->ReportError(context, "NeutronTwin: NeutronGraph input and output differ in size or type");
      return kTfLiteError;
    }
  }
  return kTfLiteOk;
}

static void apply_fault(const struct twin_config* cfg, TfLiteTensor* t) {
  size_t n;
  switch (t->type) {
    case kTfLiteFloat32:
      n = t->bytes / sizeof(float);
      for (size_t i = 0; i < n; i++)
        t->data.f[i] = cfg->mode == MODE_CONSTANT ? (float)cfg->value : t->data.f[i] + (float)cfg->value;
      break;
    case kTfLiteUInt8:
      for (size_t i = 0; i < t->bytes; i++) {
        double v = cfg->mode == MODE_CONSTANT ? t->params.zero_point + cfg->value : t->data.uint8[i] + cfg->value;
        t->data.uint8[i] = (uint8_t)fmin(255.0, fmax(0.0, round(v)));
      }
      break;
    case kTfLiteInt8:
      for (size_t i = 0; i < t->bytes; i++) {
        double v = cfg->mode == MODE_CONSTANT ? t->params.zero_point + cfg->value : t->data.int8[i] + cfg->value;
        t->data.int8[i] = (int8_t)fmin(127.0, fmax(-128.0, round(v)));
      }
      break;
    default:
      break;
  }
}

/* A kernel message "during the run", stamped with the board's uptime as printk does. */
static void log_kernel_fault(const char* text) {
  double uptime = 0.0;
  FILE* f = fopen("/proc/uptime", "r");
  if (f) {
    if (fscanf(f, "%lf", &uptime) != 1) uptime = 0.0;
    fclose(f);
  }
  f = fopen(TWIN_KERNEL_LOG, "a");
  if (!f) return;
  fprintf(f, "[%12.6f] %s\n", uptime, text);
  fclose(f);
}

/* One element moved by one step, the element chosen by the clock: differs from run to run. */
static void jitter(TfLiteTensor* t) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  if (t->bytes == 0) return;
  if (t->type == kTfLiteFloat32) {
    size_t n = t->bytes / sizeof(float);
    t->data.f[(size_t)now.tv_nsec % n] += 1e-3f;
  } else if (t->type == kTfLiteUInt8 || t->type == kTfLiteInt8) {
    size_t i = (size_t)now.tv_nsec % t->bytes;
    t->data.uint8[i] = t->data.uint8[i] == 0x7f || t->data.uint8[i] == 0xff ? t->data.uint8[i] - 1 : t->data.uint8[i] + 1;
  }
}

static TfLiteStatus kernel_invoke(TfLiteContext* context, TfLiteNode* node) {
  const struct twin_kernel* k = node->user_data;
  if (k->config.kernel_log[0]) log_kernel_fault(k->config.kernel_log);
  if (k->config.mode == MODE_FAIL_INVOKE) {
    context->ReportError(context, "NeutronTwin: NPU job failed (twin fault mode fail-invoke)");
    return kTfLiteError;
  }
  for (int i = 0; i < k->count; i++) {
    const TfLiteTensor* in = &context->tensors[k->ops[i].input];
    TfLiteTensor* out = &context->tensors[k->ops[i].output];
    if (!in->data.raw || !out->data.raw) {
      context->ReportError(context, "NeutronTwin: tensor %d or %d has no buffer", k->ops[i].input,
                           k->ops[i].output);
      return kTfLiteError;
    }
    memcpy(out->data.raw, in->data.raw, out->bytes);
    if (k->config.mode == MODE_CONSTANT || k->config.mode == MODE_OFFSET) apply_fault(&k->config, out);
    if (k->config.mode == MODE_JITTER) jitter(out);
  }
  return kTfLiteOk;
}

static int claims(const struct twin_config* cfg, const TfLiteRegistration* reg) {
  if (cfg->mode == MODE_CLAIM_NONE) return 0;
  if (reg->builtin_code == kTfLiteBuiltinCustom && reg->custom_name && strcmp(reg->custom_name, CUSTOM_OP) == 0)
    return 1;
  return cfg->claim_reshape && reg->builtin_code == kTfLiteBuiltinReshape;
}

static TfLiteStatus delegate_prepare(TfLiteContext* context, TfLiteDelegate* delegate) {
  const struct twin_delegate* twin = (const struct twin_delegate*)delegate;
  TfLiteIntArray* plan = NULL;
  if (context->GetExecutionPlan(context, &plan) != kTfLiteOk) return kTfLiteError;
  TfLiteIntArray* chosen = malloc(sizeof(int) * (size_t)(plan->size + 1));
  if (!chosen) return kTfLiteError;
  chosen->size = 0;
  for (int i = 0; i < plan->size; i++) {
    TfLiteNode* node = NULL;
    TfLiteRegistration* reg = NULL;
    if (context->GetNodeAndRegistration(context, plan->data[i], &node, &reg) != kTfLiteOk) {
      free(chosen);
      return kTfLiteError;
    }
    if (claims(&twin->config, reg)) chosen->data[chosen->size++] = plan->data[i];
  }
  int partitions = 0;
  TfLiteStatus status = kTfLiteOk;
  if (chosen->size > 0) {
    TfLiteDelegateParams* preview = NULL;
    status = context->PreviewDelegatePartitioning(context, chosen, &preview, &partitions);
    if (status == kTfLiteOk) {
      TfLiteRegistration kernel;
      memset(&kernel, 0, sizeof kernel);
      kernel.init = kernel_init;
      kernel.free = kernel_free;
      kernel.prepare = kernel_prepare;
      kernel.invoke = kernel_invoke;
      kernel.builtin_code = kTfLiteBuiltinDelegate;
      kernel.custom_name = "NeutronDelegate";
      kernel.version = 1;
      status = context->ReplaceNodeSubsetsWithDelegateKernels(context, kernel, chosen, delegate);
    }
  }
  fprintf(stderr, "INFO: NeutronDelegate delegate: %d nodes delegated out of %d nodes with %d partitions.\n",
          twin->config.report_nodes >= 0 ? twin->config.report_nodes : chosen->size, plan->size, partitions);
  fflush(stderr);
  free(chosen);
  return status;
}

__attribute__((visibility("default"))) TfLiteDelegate* tflite_plugin_create_delegate(
    const char* const* options_keys, const char* const* options_values, size_t num_options,
    void (*report_error)(const char*)) {
  const char* config_path = DEFAULT_CONFIG;
  for (size_t i = 0; i < num_options; i++) {
    if (strcmp(options_keys[i], "config") == 0) {
      config_path = options_values[i];
    } else {
      char msg[256];
      snprintf(msg, sizeof msg, "NeutronTwin: unknown option '%s' (known: config)", options_keys[i]);
      if (report_error) report_error(msg);
      return NULL;
    }
  }
  struct twin_delegate* twin = calloc(1, sizeof *twin);
  if (!twin) return NULL;
  char err[512];
  if (read_config(config_path, &twin->config, err, sizeof err) != 0) {
    if (report_error) report_error(err);
    free(twin);
    return NULL;
  }
  twin->base.data_ = twin;
  twin->base.Prepare = delegate_prepare;
  /* kTfLiteDelegateFlagsAllowDynamicTensors (1), as NXP's delegate is created (nxp-imx/
   * tflite-neutron-delegate neutron_delegate.cc, commit f6ed0fc8): without it
   * Subgraph::ModifyGraphWithDelegateImpl prepares every op before calling Prepare, and the
   * unresolved NeutronGraph custom op fails there before the delegate can claim it. */
  twin->base.flags = 1;
  fprintf(stderr, "INFO: Neutron delegate version: %s, meta-npu board twin (config %s).\n", TWIN_VERSION,
          config_path);
  fflush(stderr);
  return &twin->base;
}

__attribute__((visibility("default"))) void tflite_plugin_destroy_delegate(TfLiteDelegate* delegate) {
  free(delegate);
}
