/* SPDX-License-Identifier: MIT */
/*
 * The slice of the TFLite C ABI that an external delegate touches, written for meta-npu's board twin.
 *
 * Layouts follow tflite/core/c/common.h, tflite/core/c/c_api_types.h and
 * tflite/converter/core/c/tflite_types.h of google-ai-edge/LiteRT (identical at tag v2.2.0,
 * commit 145c7523f, and at f67457790c9c2ab67347d6fe53270e8d3df20868, 2026-08-21), the sources of the
 * ai-edge-litert 2.x wheels. Member order and types must match exactly: TfLiteRegistration is passed
 * by value to ReplaceNodeSubsetsWithDelegateKernels, so its size is part of the ABI. Fields the twin
 * never reads keep their real types so that the offsets of the later fields stay right.
 * Non-Windows LP64 only (the TfLiteContext tail differs on _WIN32).
 */
#ifndef NPU_TWIN_TFLITE_ABI_H
#define NPU_TWIN_TFLITE_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum TfLiteStatus { kTfLiteOk = 0, kTfLiteError = 1, kTfLiteDelegateError = 2 } TfLiteStatus;

typedef enum {
  kTfLiteNoType = 0, kTfLiteFloat32 = 1, kTfLiteInt32 = 2, kTfLiteUInt8 = 3, kTfLiteInt64 = 4,
  kTfLiteString = 5, kTfLiteBool = 6, kTfLiteInt16 = 7, kTfLiteComplex64 = 8, kTfLiteInt8 = 9,
} TfLiteType;

enum { kTfLiteBuiltinReshape = 22, kTfLiteBuiltinCustom = 32, kTfLiteBuiltinDelegate = 51 };

typedef struct TfLiteIntArray {
  int size;
  int data[];
} TfLiteIntArray;

typedef struct TfLiteQuantizationParams {
  float scale;
  int32_t zero_point;
} TfLiteQuantizationParams;

typedef struct TfLiteQuantization {
  int type; /* TfLiteQuantizationType */
  void* params;
} TfLiteQuantization;

typedef int TfLiteBufferHandle;

typedef union TfLitePtrUnion {
  int32_t* i32;
  float* f;
  char* raw;
  uint8_t* uint8;
  int8_t* int8;
  void* data;
} TfLitePtrUnion;

struct TfLiteDelegate;
struct TfLiteContext;
struct TfLiteRegistration;

typedef struct TfLiteTensor {
  TfLiteType type;
  TfLitePtrUnion data;
  TfLiteIntArray* dims;
  TfLiteQuantizationParams params;
  int allocation_type; /* TfLiteAllocationType */
  size_t bytes;
  const void* allocation;
  const char* name;
  struct TfLiteDelegate* delegate;
  TfLiteBufferHandle buffer_handle;
  bool data_is_stale;
  bool is_variable;
  TfLiteQuantization quantization;
  void* sparsity; /* TfLiteSparsity* */
  const TfLiteIntArray* dims_signature;
} TfLiteTensor;

typedef struct TfLiteNode {
  TfLiteIntArray* inputs;
  TfLiteIntArray* outputs;
  TfLiteIntArray* intermediates;
  TfLiteIntArray* temporaries;
  void* user_data;
  void* builtin_data;
  const void* custom_initial_data;
  int custom_initial_data_size;
  struct TfLiteDelegate* delegate;
  bool might_have_side_effect;
} TfLiteNode;

typedef struct TfLiteDelegateParams {
  struct TfLiteDelegate* delegate;
  TfLiteIntArray* nodes_to_replace;
  TfLiteIntArray* input_tensors;
  TfLiteIntArray* output_tensors;
} TfLiteDelegateParams;

typedef struct TfLiteRegistration {
  void* (*init)(struct TfLiteContext* context, const char* buffer, size_t length);
  void (*free)(struct TfLiteContext* context, void* buffer);
  TfLiteStatus (*prepare)(struct TfLiteContext* context, TfLiteNode* node);
  TfLiteStatus (*invoke)(struct TfLiteContext* context, TfLiteNode* node);
  const char* (*profiling_string)(const struct TfLiteContext* context, const TfLiteNode* node);
  int32_t builtin_code;
  const char* custom_name;
  int version;
  void* registration_external; /* TfLiteOperator* */
  void* (*async_kernel)(struct TfLiteContext* context, TfLiteNode* node);
  uint64_t inplace_operator;
} TfLiteRegistration;

typedef struct TfLiteContext {
  size_t tensors_size;
  TfLiteStatus (*GetExecutionPlan)(struct TfLiteContext* context, TfLiteIntArray** execution_plan);
  TfLiteTensor* tensors;
  void* impl_;
  TfLiteStatus (*ResizeTensor)(struct TfLiteContext*, TfLiteTensor* tensor, TfLiteIntArray* new_size);
  void (*ReportError)(struct TfLiteContext*, const char* msg, ...);
  TfLiteStatus (*AddTensors)(struct TfLiteContext*, int tensors_to_add, int* first_new_tensor_index);
  TfLiteStatus (*GetNodeAndRegistration)(struct TfLiteContext*, int node_index, TfLiteNode** node,
                                         TfLiteRegistration** registration);
  TfLiteStatus (*ReplaceNodeSubsetsWithDelegateKernels)(struct TfLiteContext*,
                                                        TfLiteRegistration registration,
                                                        const TfLiteIntArray* nodes_to_replace,
                                                        struct TfLiteDelegate* delegate);
  int recommended_num_threads;
  void* (*GetExternalContext)(struct TfLiteContext*, int);
  void (*SetExternalContext)(struct TfLiteContext*, int, void*);
  bool allow_fp32_relax_to_fp16;
  void* profiler;
  void* (*AllocatePersistentBuffer)(struct TfLiteContext* ctx, size_t bytes);
  TfLiteStatus (*AllocateBufferForEval)(struct TfLiteContext* ctx, size_t bytes, void** ptr);
  TfLiteStatus (*RequestScratchBufferInArena)(struct TfLiteContext* ctx, size_t bytes, int* buffer_idx);
  void* (*GetScratchBuffer)(struct TfLiteContext* ctx, int buffer_idx);
  TfLiteStatus (*ResizeTensorExplicit)(struct TfLiteContext* ctx, TfLiteTensor* tensor, int dims,
                                       const int* shape);
  TfLiteStatus (*PreviewDelegatePartitioning)(struct TfLiteContext* context,
                                              const TfLiteIntArray* nodes_to_replace,
                                              TfLiteDelegateParams** partition_params_array,
                                              int* num_partitions);
  TfLiteTensor* (*GetTensor)(const struct TfLiteContext* context, int tensor_idx);
  void* (*GetEvalTensor)(const struct TfLiteContext* context, int tensor_idx);
  TfLiteStatus (*GetModelMetadata)(const struct TfLiteContext* context, const char* name,
                                   const char** ptr, size_t* bytes);
  TfLiteStatus (*AcquireSubgraphContext)(struct TfLiteContext* context, int subgraph_index,
                                         struct TfLiteContext** acquired_context);
  TfLiteStatus (*ReleaseSubgraphContext)(struct TfLiteContext* context, int subgraph_index);
} TfLiteContext;

typedef struct TfLiteDelegate {
  void* data_;
  TfLiteStatus (*Prepare)(TfLiteContext* context, struct TfLiteDelegate* delegate);
  TfLiteStatus (*CopyFromBufferHandle)(TfLiteContext* context, struct TfLiteDelegate* delegate,
                                       TfLiteBufferHandle buffer_handle, TfLiteTensor* tensor);
  TfLiteStatus (*CopyToBufferHandle)(TfLiteContext* context, struct TfLiteDelegate* delegate,
                                     TfLiteBufferHandle buffer_handle, TfLiteTensor* tensor);
  void (*FreeBufferHandle)(TfLiteContext* context, struct TfLiteDelegate* delegate,
                           TfLiteBufferHandle* handle);
  int64_t flags;
  void* opaque_delegate_builder; /* struct TfLiteOpaqueDelegateBuilder* */
} TfLiteDelegate;

/* Sizes on LP64 as computed from the declarations above; checked at compile time so that an edit
 * that shifts a member cannot go unnoticed. */
_Static_assert(sizeof(TfLiteRegistration) == 88, "TfLiteRegistration size");
_Static_assert(offsetof(TfLiteContext, ReplaceNodeSubsetsWithDelegateKernels) == 64, "context layout");
_Static_assert(offsetof(TfLiteContext, PreviewDelegatePartitioning) == 152, "context layout");
_Static_assert(sizeof(TfLiteTensor) == 112, "TfLiteTensor size");
_Static_assert(sizeof(TfLiteDelegate) == 56, "TfLiteDelegate size");

#endif
