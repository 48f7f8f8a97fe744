/*
 * A stand-in for libze_loader.so.1 with one fake GPU, for testing the Level Zero backend on
 * machines without one. Built by tests/level_zero_fake.rs against the real ze_api.h, so every
 * prototype is checked by the C compiler. Memory is host memory; the only kernel is
 * `add_one(float *a, int n)`, run on the host per work-item with the group geometry of the launch.
 *
 * Variants (compile-time): FAKE_NO_IMMEDIATE (no immediate command lists: queue + list path),
 * FAKE_API_1_1 (a driver older than spec 1.2: timerResolution in ns per cycle).
 */
#include <level_zero/ze_api.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define TICK_HZ 12500000u /* 80 ns per tick */
#define VALID_BITS 32
#define MEM_BYTES (1ull << 30)

static int live;     /* objects created and not yet destroyed */
static int unordered; /* commands appended while an earlier one may still run, with no barrier between */
static int arguments_set; /* zeKernelSetArgumentValue calls that succeeded */
static int events_made;   /* zeEventCreate calls that succeeded */
static uint64_t clock_ticks = 0xFFFFFFC0ull; /* wraps the 32-bit counter in the first kernel */
static ze_api_version_t api_version =
#ifdef FAKE_API_1_1
    ZE_MAKE_VERSION(1, 1);
#else
    ZE_MAKE_VERSION(1, 3);
#endif

EXPORT int fake_live_objects(void) { return live; }
EXPORT int fake_unordered_commands(void) { return unordered; }
EXPORT int fake_arguments_set(void) { return arguments_set; }
EXPORT int fake_events_made(void) { return events_made; }

static void *make(size_t size) { live++; return calloc(1, size); }
static ze_result_t destroy(void *object) {
    if (!object) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    live--; free(object); return ZE_RESULT_SUCCESS;
}

struct _ze_driver_handle_t { int unused; };
struct _ze_device_handle_t { int unused; };
static struct _ze_driver_handle_t the_driver;
static struct _ze_device_handle_t the_device;
struct _ze_context_handle_t { int unused; };
struct _ze_command_queue_handle_t { int unused; };
struct _ze_event_pool_handle_t { ze_event_pool_flags_t flags; uint32_t count; };
struct _ze_event_handle_t { ze_event_pool_handle_t pool; int signaled; ze_kernel_timestamp_result_t ts; };
struct _ze_module_handle_t { int unused; };
struct _ze_module_build_log_handle_t { const char *text; };
struct arg { size_t size; unsigned char value[8]; };
struct _ze_kernel_handle_t { struct arg args[2]; uint32_t group[3]; };

enum op_kind { OP_COPY, OP_LAUNCH, OP_BARRIER };
struct op {
    enum op_kind kind;
    void *dst; const void *src; size_t size;
    struct _ze_kernel_handle_t kernel; ze_group_count_t groups;
    ze_event_handle_t event;
};
/* `busy`: a command since the last barrier (or since the list was made or reset) may still run. */
struct _ze_command_list_handle_t { int immediate, closed, busy; size_t n; struct op ops[64]; };

ze_result_t zeInit(ze_init_flags_t flags) { return flags == ZE_INIT_FLAG_GPU_ONLY ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT; }

ze_result_t zeDriverGet(uint32_t *count, ze_driver_handle_t *drivers) {
    if (*count && drivers) drivers[0] = &the_driver;
    *count = 1; return ZE_RESULT_SUCCESS;
}
ze_result_t zeDriverGetProperties(ze_driver_handle_t d, ze_driver_properties_t *p) {
    (void)d; p->driverVersion = 42; return ZE_RESULT_SUCCESS;
}
ze_result_t zeDriverGetApiVersion(ze_driver_handle_t d, ze_api_version_t *v) { (void)d; *v = api_version; return ZE_RESULT_SUCCESS; }
ze_result_t zeDeviceGet(ze_driver_handle_t d, uint32_t *count, ze_device_handle_t *devices) {
    (void)d; if (*count && devices) devices[0] = &the_device;
    *count = 1; return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGetProperties(ze_device_handle_t d, ze_device_properties_t *p) {
    (void)d;
    if (p->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 && api_version < ZE_MAKE_VERSION(1, 2))
        return ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    p->type = ZE_DEVICE_TYPE_GPU; p->vendorId = 0x8086; p->deviceId = 0xfa4e;
    p->numSlices = 1; p->numSubslicesPerSlice = 2; p->numEUsPerSubslice = 8;
    p->timerResolution = p->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ? TICK_HZ : 1000000000u / TICK_HZ;
    p->timestampValidBits = VALID_BITS; p->kernelTimestampValidBits = VALID_BITS;
    strcpy(p->name, "Fake Level Zero GPU");
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGetComputeProperties(ze_device_handle_t d, ze_device_compute_properties_t *p) {
    (void)d; p->maxTotalGroupSize = 512; return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGetMemoryProperties(ze_device_handle_t d, uint32_t *count, ze_device_memory_properties_t *p) {
    (void)d; if (*count && p) p[0].totalSize = MEM_BYTES;
    *count = 1; return ZE_RESULT_SUCCESS;
}
/* Group 0 copies only; group 1 computes: the backend must pick ordinal 1. */
ze_result_t zeDeviceGetCommandQueueGroupProperties(ze_device_handle_t d, uint32_t *count, ze_command_queue_group_properties_t *p) {
    (void)d;
    if (*count >= 2 && p) { p[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY; p[1].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE; }
    *count = 2; return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGetGlobalTimestamps(ze_device_handle_t d, uint64_t *host, uint64_t *device) {
    (void)d; *host = 0; *device = clock_ticks; return ZE_RESULT_SUCCESS;
}

ze_result_t zeContextCreate(ze_driver_handle_t d, const ze_context_desc_t *desc, ze_context_handle_t *out) {
    if (d != &the_driver || desc->stype != ZE_STRUCTURE_TYPE_CONTEXT_DESC) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *out = make(sizeof(**out)); return ZE_RESULT_SUCCESS;
}
ze_result_t zeContextDestroy(ze_context_handle_t c) { return destroy(c); }

static ze_result_t new_list(const ze_command_queue_desc_t *desc, int immediate, ze_command_list_handle_t *out) {
    if (desc->ordinal != 1) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *out = make(sizeof(**out)); (*out)->immediate = immediate; return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListCreateImmediate(ze_context_handle_t c, ze_device_handle_t d, const ze_command_queue_desc_t *desc, ze_command_list_handle_t *out) {
    (void)c; (void)d;
#ifdef FAKE_NO_IMMEDIATE
    (void)desc; (void)out; return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
#else
    return new_list(desc, 1, out);
#endif
}
ze_result_t zeCommandListCreate(ze_context_handle_t c, ze_device_handle_t d, const ze_command_list_desc_t *desc, ze_command_list_handle_t *out) {
    (void)c; (void)d;
    ze_command_queue_desc_t q = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, 0, desc->commandQueueGroupOrdinal, 0, 0, 0, 0};
    return new_list(&q, 0, out);
}
ze_result_t zeCommandListDestroy(ze_command_list_handle_t l) { return destroy(l); }
ze_result_t zeCommandQueueCreate(ze_context_handle_t c, ze_device_handle_t d, const ze_command_queue_desc_t *desc, ze_command_queue_handle_t *out) {
    (void)c; (void)d; if (desc->ordinal != 1) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *out = make(sizeof(**out)); return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandQueueDestroy(ze_command_queue_handle_t q) { return destroy(q); }

static void signal_event(ze_event_handle_t e, uint64_t start, uint64_t end) {
    if (!e) return;
    e->signaled = 1;
    if (e->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) {
        uint64_t mask = (1ull << VALID_BITS) - 1;
        e->ts.global.kernelStart = e->ts.context.kernelStart = start & mask;
        e->ts.global.kernelEnd = e->ts.context.kernelEnd = end & mask;
    }
}
static void run(struct op *op) {
    if (op->kind == OP_COPY) { memcpy(op->dst, op->src, op->size); signal_event(op->event, clock_ticks, clock_ticks); return; }
    if (op->kind == OP_BARRIER) { signal_event(op->event, clock_ticks, clock_ticks); return; }
    float *a; int n; memcpy(&a, op->kernel.args[0].value, sizeof a); memcpy(&n, op->kernel.args[1].value, sizeof n);
    uint64_t items = (uint64_t)op->groups.groupCountX * op->kernel.group[0];
    for (uint64_t i = 0; i < items; i++) if (i < (uint64_t)n) a[i] += 1.0f;
    uint64_t start = clock_ticks; clock_ticks += 100; /* every kernel takes 100 ticks: 8000 ns */
    signal_event(op->event, start, clock_ticks);
}
static ze_result_t append(ze_command_list_handle_t l, struct op op) {
    if (l->closed || l->n == 64) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (op.kind != OP_BARRIER && l->busy) unordered++;
    l->busy = op.kind != OP_BARRIER;
    if (l->immediate) run(&op); else l->ops[l->n++] = op;
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListClose(ze_command_list_handle_t l) { l->closed = 1; return ZE_RESULT_SUCCESS; }
ze_result_t zeCommandListReset(ze_command_list_handle_t l) { l->closed = 0; l->busy = 0; l->n = 0; return ZE_RESULT_SUCCESS; }
ze_result_t zeCommandQueueExecuteCommandLists(ze_command_queue_handle_t q, uint32_t n, ze_command_list_handle_t *lists, ze_fence_handle_t f) {
    (void)q; (void)f;
    for (uint32_t i = 0; i < n; i++) {
        if (!lists[i]->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        for (size_t j = 0; j < lists[i]->n; j++) run(&lists[i]->ops[j]);
    }
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandQueueSynchronize(ze_command_queue_handle_t q, uint64_t t) { (void)q; (void)t; return ZE_RESULT_SUCCESS; }
ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t l, ze_kernel_handle_t k, const ze_group_count_t *g, ze_event_handle_t e, uint32_t nw, ze_event_handle_t *w) {
    (void)nw; (void)w;
    if (!k->group[0]) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct op op = {.kind = OP_LAUNCH, .kernel = *k, .groups = *g, .event = e};
    return append(l, op);
}
ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t l, void *dst, const void *src, size_t size, ze_event_handle_t e, uint32_t nw, ze_event_handle_t *w) {
    (void)nw; (void)w;
    struct op op = {.kind = OP_COPY, .dst = dst, .src = src, .size = size, .event = e};
    return append(l, op);
}
ze_result_t zeCommandListAppendBarrier(ze_command_list_handle_t l, ze_event_handle_t e, uint32_t nw, ze_event_handle_t *w) {
    (void)nw; (void)w;
    struct op op = {.kind = OP_BARRIER, .event = e};
    return append(l, op);
}

/* A module whose second word is 0xdead fails to build, with a log. */
ze_result_t zeModuleCreate(ze_context_handle_t c, ze_device_handle_t d, const ze_module_desc_t *desc, ze_module_handle_t *out, ze_module_build_log_handle_t *log) {
    (void)c; (void)d;
    const uint32_t *words = (const uint32_t *)desc->pInputModule;
    if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV || desc->inputSize < 8 || words[0] != 0x07230203)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    int bad = words[1] == 0xdead;
    if (log) { *log = make(sizeof(**log)); (*log)->text = bad ? "fake: error: line 1: bad module\n" : ""; }
    if (bad) return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    *out = make(sizeof(**out)); return ZE_RESULT_SUCCESS;
}
ze_result_t zeModuleDestroy(ze_module_handle_t m) { return destroy(m); }
ze_result_t zeModuleBuildLogGetString(ze_module_build_log_handle_t log, size_t *size, char *text) {
    size_t needed = strlen(log->text) + 1;
    if (text) { if (*size < needed) return ZE_RESULT_ERROR_INVALID_SIZE; memcpy(text, log->text, needed); }
    *size = needed; return ZE_RESULT_SUCCESS;
}
ze_result_t zeModuleBuildLogDestroy(ze_module_build_log_handle_t log) { return destroy(log); }

ze_result_t zeKernelCreate(ze_module_handle_t m, const ze_kernel_desc_t *desc, ze_kernel_handle_t *out) {
    (void)m; if (strcmp(desc->pKernelName, "add_one") != 0) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    *out = make(sizeof(**out)); return ZE_RESULT_SUCCESS;
}
ze_result_t zeKernelDestroy(ze_kernel_handle_t k) { return destroy(k); }
ze_result_t zeKernelSetArgumentValue(ze_kernel_handle_t k, uint32_t index, size_t size, const void *value) {
    static const size_t sizes[2] = {sizeof(void *), sizeof(int)};
    if (index >= 2) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    if (size != sizes[index] || !value) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    k->args[index].size = size; memcpy(k->args[index].value, value, size); arguments_set++; return ZE_RESULT_SUCCESS;
}
ze_result_t zeKernelSetGroupSize(ze_kernel_handle_t k, uint32_t x, uint32_t y, uint32_t z) {
    if (x * y * z > 512) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    k->group[0] = x; k->group[1] = y; k->group[2] = z; return ZE_RESULT_SUCCESS;
}
ze_result_t zeKernelSuggestGroupSize(ze_kernel_handle_t k, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t *x, uint32_t *y, uint32_t *z) {
    (void)k; (void)gx; (void)gy; (void)gz; *x = 64; *y = 1; *z = 1; return ZE_RESULT_SUCCESS;
}

static ze_result_t alloc(size_t size, void **out) {
    if (size > MEM_BYTES) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    *out = make(size); return ZE_RESULT_SUCCESS;
}
ze_result_t zeMemAllocDevice(ze_context_handle_t c, const ze_device_mem_alloc_desc_t *desc, size_t size, size_t align, ze_device_handle_t d, void **out) {
    (void)c; (void)desc; (void)align; (void)d; return alloc(size, out);
}
ze_result_t zeMemAllocHost(ze_context_handle_t c, const ze_host_mem_alloc_desc_t *desc, size_t size, size_t align, void **out) {
    (void)c; (void)desc; (void)align; return alloc(size, out);
}
ze_result_t zeMemAllocShared(ze_context_handle_t c, const ze_device_mem_alloc_desc_t *dd, const ze_host_mem_alloc_desc_t *hd, size_t size, size_t align, ze_device_handle_t d, void **out) {
    (void)c; (void)dd; (void)hd; (void)align; (void)d; return alloc(size, out);
}
ze_result_t zeMemFree(ze_context_handle_t c, void *p) { (void)c; return destroy(p); }

ze_result_t zeEventPoolCreate(ze_context_handle_t c, const ze_event_pool_desc_t *desc, uint32_t nd, ze_device_handle_t *ds, ze_event_pool_handle_t *out) {
    (void)c; (void)nd; (void)ds;
    *out = make(sizeof(**out)); (*out)->flags = desc->flags; (*out)->count = desc->count; return ZE_RESULT_SUCCESS;
}
ze_result_t zeEventPoolDestroy(ze_event_pool_handle_t p) { return destroy(p); }
ze_result_t zeEventCreate(ze_event_pool_handle_t p, const ze_event_desc_t *desc, ze_event_handle_t *out) {
    if (desc->index >= p->count) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *out = make(sizeof(**out)); (*out)->pool = p; events_made++; return ZE_RESULT_SUCCESS;
}
ze_result_t zeEventDestroy(ze_event_handle_t e) { return destroy(e); }
/* Never blocks: an event that nothing signalled yet is a bug in the caller (it would hang). */
ze_result_t zeEventHostSynchronize(ze_event_handle_t e, uint64_t t) { (void)t; return e->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY; }
ze_result_t zeEventHostReset(ze_event_handle_t e) { e->signaled = 0; return ZE_RESULT_SUCCESS; }
ze_result_t zeEventQueryStatus(ze_event_handle_t e) { return e->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY; }
ze_result_t zeEventQueryKernelTimestamp(ze_event_handle_t e, ze_kernel_timestamp_result_t *out) {
    if (!e->signaled) return ZE_RESULT_NOT_READY;
    *out = e->ts; return ZE_RESULT_SUCCESS;
}
