/* What the OpenCL runtime charges per kernel launch on the host, and whether profiling events
 * change a tiny kernel's own device time (issue 28: the host time between kernels).
 *
 * Launches one small kernel N times in a row, as a forward of a small model launches 20-35 tiny
 * kernels, under each way the workbench could launch: on a profiling queue with an event per
 * launch (what `OpenClDevice::launch` did), with no event, on a queue without profiling, and
 * with or without setting the arguments again each time. Prints host microseconds per launch
 * spent enqueueing, and per launch until the queue drained.
 *
 * No OpenCL headers are needed (the few entry points are declared below); build and run:
 *   source scripts/env.sh
 *   gcc -O2 scripts/opencl_launch_cost.c -o /tmp/opencl_launch_cost -l:libOpenCL.so.1
 *   /tmp/opencl_launch_cost [launches=2000] [elements=1024] [rounds=7]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef void *cl_platform_id, *cl_device_id, *cl_context, *cl_command_queue, *cl_mem, *cl_program,
    *cl_kernel, *cl_event;
typedef cl_ulong cl_bitfield;

cl_int clGetPlatformIDs(cl_uint, cl_platform_id *, cl_uint *);
cl_int clGetDeviceIDs(cl_platform_id, cl_bitfield, cl_uint, cl_device_id *, cl_uint *);
cl_context clCreateContext(const intptr_t *, cl_uint, const cl_device_id *, void *, void *, cl_int *);
cl_command_queue clCreateCommandQueueWithProperties(cl_context, cl_device_id, const cl_ulong *, cl_int *);
cl_mem clCreateBuffer(cl_context, cl_bitfield, size_t, void *, cl_int *);
cl_program clCreateProgramWithSource(cl_context, cl_uint, const char **, const size_t *, cl_int *);
cl_int clBuildProgram(cl_program, cl_uint, const cl_device_id *, const char *, void *, void *);
cl_kernel clCreateKernel(cl_program, const char *, cl_int *);
cl_int clSetKernelArg(cl_kernel, cl_uint, size_t, const void *);
cl_int clEnqueueNDRangeKernel(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                              const size_t *, cl_uint, const cl_event *, cl_event *);
cl_int clFinish(cl_command_queue);
cl_int clReleaseEvent(cl_event);
cl_int clGetEventProfilingInfo(cl_event, cl_uint, size_t, void *, size_t *);
cl_int clEnqueueReadBuffer(cl_command_queue, cl_mem, cl_uint, size_t, size_t, void *, cl_uint, const cl_event *, cl_event *);

#define CL_DEVICE_TYPE_ALL 0xFFFFFFFF
#define CL_MEM_READ_WRITE 1
#define CL_QUEUE_PROPERTIES 0x1093
#define CL_QUEUE_PROFILING_ENABLE 2
#define CL_PROFILING_COMMAND_START 0x1282
#define CL_PROFILING_COMMAND_END 0x1283

#define CHECK(x)                                                                         \
    do {                                                                                 \
        cl_int e_ = (x);                                                                 \
        if (e_ != 0) { fprintf(stderr, "%s failed: %d (line %d)\n", #x, e_, __LINE__); exit(1); } \
    } while (0)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *SOURCE =
    "__kernel void scale(__global const float *a, __global float *b, long n) {\n"
    "  long i = get_global_id(0); if (i < n) b[i] = a[i] * 2.0f + 1.0f; }\n";

enum { EVENT_KEPT, EVENT_RELEASED, NO_EVENT };
struct variant { const char *name; int profiling; int events; int set_args; };

int main(int argc, char **argv) {
    int launches = argc > 1 ? atoi(argv[1]) : 2000;
    long n = argc > 2 ? atol(argv[2]) : 1024;
    int rounds = argc > 3 ? atoi(argv[3]) : 7;
    if (launches <= 0 || n <= 0 || rounds <= 0) { fprintf(stderr, "bad arguments\n"); return 2; }
    cl_platform_id platform;
    cl_device_id device;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_ulong prof[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue queues[2];
    queues[0] = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    queues[1] = clCreateCommandQueueWithProperties(ctx, device, prof, &err);
    CHECK(err);
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, NULL, &err);
    CHECK(err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, NULL, &err);
    CHECK(err);
    cl_program program = clCreateProgramWithSource(ctx, 1, &SOURCE, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(program, 1, &device, "", NULL, NULL));
    cl_kernel kernel = clCreateKernel(program, "scale", &err);
    CHECK(err);
    size_t local = 256, global = (n + 255) / 256 * 256;
    struct variant variants[] = {
        {"profiling queue, event per launch, timestamps read after", 1, EVENT_KEPT, 1},
        {"profiling queue, event per launch released at once", 1, EVENT_RELEASED, 1},
        {"profiling queue, no event", 1, NO_EVENT, 1},
        {"plain queue, event per launch released at once", 0, EVENT_RELEASED, 1},
        {"plain queue, no event", 0, NO_EVENT, 1},
        {"plain queue, no event, arguments set once", 0, NO_EVENT, 0},
    };
    int nv = sizeof variants / sizeof variants[0];
    cl_event *events = calloc(launches, sizeof(cl_event));
    double *enq = calloc((size_t)rounds * nv, sizeof(double)), *tot = calloc((size_t)rounds * nv, sizeof(double));
    double *dev = calloc(rounds, sizeof(double));
    CHECK(clSetKernelArg(kernel, 0, sizeof a, &a));
    CHECK(clSetKernelArg(kernel, 1, sizeof b, &b));
    CHECK(clSetKernelArg(kernel, 2, sizeof n, &n));
    /* Rounds alternate the variants, so each sees the same machine load. */
    for (int r = -1; r < rounds; r++) {
        for (int v = 0; v < nv; v++) {
            struct variant *w = &variants[v];
            cl_command_queue q = queues[w->profiling];
            CHECK(clFinish(q));
            double t0 = now_us();
            for (int i = 0; i < launches; i++) {
                if (w->set_args) {
                    CHECK(clSetKernelArg(kernel, 0, sizeof a, &a));
                    CHECK(clSetKernelArg(kernel, 1, sizeof b, &b));
                    CHECK(clSetKernelArg(kernel, 2, sizeof n, &n));
                }
                cl_event *e = w->events == NO_EVENT ? NULL : &events[i];
                CHECK(clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, &local, 0, NULL, e));
                if (w->events == EVENT_RELEASED) CHECK(clReleaseEvent(events[i]));
            }
            double t1 = now_us();
            CHECK(clFinish(q));
            double t2 = now_us();
            if (w->events == EVENT_KEPT) {
                double sum = 0;
                for (int i = 0; i < launches; i++) {
                    cl_ulong s, e;
                    CHECK(clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_START, 8, &s, NULL));
                    CHECK(clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_END, 8, &e, NULL));
                    CHECK(clReleaseEvent(events[i]));
                    sum += (double)(e - s) / 1e3;
                }
                t2 = now_us();
                if (r >= 0) dev[r] = sum / launches;
            }
            if (r >= 0) {
                enq[v * rounds + r] = (t1 - t0) / launches;
                tot[v * rounds + r] = (t2 - t0) / launches;
            }
        }
    }
    printf("%d launches of a %ld-element kernel, %d rounds alternated; medians, us per launch\n", launches, n, rounds);
    printf("%-60s %10s %12s\n", "variant", "enqueue", "until done");
    for (int v = 0; v < nv; v++) {
        qsort(enq + v * rounds, rounds, sizeof(double), cmp);
        qsort(tot + v * rounds, rounds, sizeof(double), cmp);
        printf("%-60s %10.2f %12.2f\n", variants[v].name, enq[v * rounds + rounds / 2], tot[v * rounds + rounds / 2]);
    }
    /* What a clFinish costs when the queue already drained (a blocking read right after
     * one waits for nothing more). */
    double *idle = calloc(rounds, sizeof(double));
    for (int r = 0; r < rounds; r++) {
        CHECK(clFinish(queues[1]));
        double t0 = now_us();
        for (int i = 0; i < launches; i++) CHECK(clFinish(queues[1]));
        idle[r] = (now_us() - t0) / launches;
    }
    qsort(idle, rounds, sizeof(double), cmp);
    printf("clFinish on a drained queue: %.2f us\n", idle[rounds / 2]);
    /* The end of a forward: its last kernels, then the outputs read back. A blocking read on an
     * in-order queue waits for every kernel before it, so a clFinish before it is a second
     * wait for the same thing. 20 kernels, then one read of the kernel's output. */
    double *tail[2] = {calloc(rounds, sizeof(double)), calloc(rounds, sizeof(double))};
    float *host = calloc(n, sizeof(float));
    for (int r = -1; r < rounds; r++) {
        for (int f = 0; f < 2; f++) {
            CHECK(clFinish(queues[0]));
            double t0 = now_us();
            for (int i = 0; i < 20; i++) CHECK(clEnqueueNDRangeKernel(queues[0], kernel, 1, NULL, &global, &local, 0, NULL, NULL));
            if (f) CHECK(clFinish(queues[0]));
            CHECK(clEnqueueReadBuffer(queues[0], b, 1, 0, n * 4, host, 0, NULL, NULL));
            if (r >= 0) tail[f][r] = now_us() - t0;
        }
    }
    qsort(tail[0], rounds, sizeof(double), cmp);
    qsort(tail[1], rounds, sizeof(double), cmp);
    printf("20 launches then a blocking read: %.2f us; with a clFinish before the read: %.2f us\n", tail[0][rounds / 2], tail[1][rounds / 2]);
    qsort(dev, rounds, sizeof(double), cmp);
    printf("device time per kernel from its event (first variant): %.2f us\n", dev[rounds / 2]);
    return 0;
}
