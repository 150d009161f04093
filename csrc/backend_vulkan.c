/* libtinynn_vulkan: one Vulkan device through ggml-vulkan. The thread count
 * is not used.
 *
 * Which device: ggml's own choice (the dedicated GPUs, else the first other
 * non-CPU device), or the ones GGML_VK_VISIBLE_DEVICES names (the first of
 * them). ggml skips CPU-type devices unless named, so on a machine whose only
 * Vulkan device is a software rasterizer (Mesa's lavapipe) it finds none;
 * a library asked for by name (--device vulkan) should still run there, so
 * tinynn names that device itself and says so in tnn_backend_variant.
 *
 * Precision: on a device with float16 ggml-vulkan runs even float32 matrix
 * products through float16 tiles (operands rounded to 11 bits). A training
 * step's products are float32 on every other backend, and the rounding moved
 * a full fine-tune's loss 4e-3 from the CPU's within 3 steps (3e-5 without),
 * so tinynn asks ggml for its float32 shaders (GGML_VK_DISABLE_F16) unless
 * TNN_VULKAN_F16=1 trades that precision for the float16 speed. */
#include "csrc/backend.h"
#include "ggml-vulkan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

const char * tnn_backend_name(void) { return "vulkan"; }

/* The loader's physical devices: how many, and the first CPU-type one when
 * there is no other kind (else -1). Asks Vulkan directly: ggml picks its
 * devices once, at its first call, from the environment, and throws a C++
 * exception (ending the process) where there is no driver or Vulkan < 1.2. */
struct physical_devices {
    int count;
    int software_only;
    uint64_t storage_range;
};

static struct physical_devices list_physical_devices(void) {
    struct physical_devices found = { 0, -1, UINT64_MAX };
    uint32_t version = 0;
    if (vkEnumerateInstanceVersion(&version) != VK_SUCCESS || version < VK_API_VERSION_1_2) {
        return found;
    }
    const VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .apiVersion = VK_API_VERSION_1_2,
    };
    const VkInstanceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app,
    };
    VkInstance instance;
    if (vkCreateInstance(&info, NULL, &instance) != VK_SUCCESS) {
        return found;
    }
    VkPhysicalDevice devices[16];
    uint32_t n = 16;
    bool other_kind = false;
    const VkResult res = vkEnumeratePhysicalDevices(instance, &n, devices);
    if (res == VK_SUCCESS || res == VK_INCOMPLETE) {
        found.count = (int) n;
        for (uint32_t i = 0; i < n; i++) {
            VkPhysicalDeviceProperties props;
            vkGetPhysicalDeviceProperties(devices[i], &props);
            /* the least of all devices: which one ggml picks is its own affair */
            if (props.limits.maxStorageBufferRange < found.storage_range) {
                found.storage_range = props.limits.maxStorageBufferRange;
            }
            if (props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) {
                other_kind = true;
            } else if (found.software_only < 0) {
                found.software_only = (int) i;
            }
        }
    }
    vkDestroyInstance(instance, NULL);
    if (other_kind) {
        found.software_only = -1;
    }
    return found;
}

/* GGML_VK_VISIBLE_DEVICES as ggml reads it (indices separated by commas or
 * spaces), checked first: ggml throws a C++ exception on a bad index, which
 * would end the process. */
static bool visible_devices_ok(const char * list, int count) {
    const char * c = list;
    bool any = false;
    while (*c != '\0') {
        if (*c == ',' || *c == ' ') {
            c++;
            continue;
        }
        char * end;
        const long index = strtol(c, &end, 10);
        if (end == c || index < 0 || index >= count) {
            return false;
        }
        any = true;
        c = end;
    }
    return any;
}

/* "<device name>", "<device name> (software: a CPU-type Vulkan device)" or
 * "none", settled by the first call of either function below */
static char device_description[256] = "none";
static int n_devices = 0;
static uint64_t storage_range = UINT64_MAX;   /* the largest range a shader addresses */
static char choice_error[256] = "";   /* why no device was chosen, for every later session */

static void choose_device(void) {
    static bool chosen = false;
    if (chosen) {
        return;
    }
    chosen = true;
    ggml_log_set(tnn_log_warnings_only, NULL);
    const char * f16 = getenv("TNN_VULKAN_F16");
    if (f16 == NULL || strcmp(f16, "1") != 0) {
        setenv("GGML_VK_DISABLE_F16", "1", 0);    /* read by ggml when it starts the device */
    }
    const struct physical_devices found = list_physical_devices();
    storage_range = found.storage_range;
    const char * visible = getenv("GGML_VK_VISIBLE_DEVICES");
    bool software = false;
    if (visible != NULL && !visible_devices_ok(visible, found.count)) {
        snprintf(choice_error, sizeof choice_error,
                 "GGML_VK_VISIBLE_DEVICES='%.40s' names no Vulkan "
                 "device here (%d found; indices from 0, comma-separated)",
                 visible, found.count);
        return;
    }
    if (found.count == 0) {
        return;     /* ggml would throw: no driver, or none with Vulkan 1.2 */
    }
    if (visible == NULL && found.software_only >= 0) {
        char index[16];
        snprintf(index, sizeof index, "%d", found.software_only);
        setenv("GGML_VK_VISIBLE_DEVICES", index, 0);
        software = true;
    }
    n_devices = ggml_backend_vk_get_device_count();
    if (n_devices > 0) {
        char name[200] = "";
        ggml_backend_vk_get_device_description(0, name, sizeof name);
        snprintf(device_description, sizeof device_description, "%s%s", name,
                 software ? " (software: a CPU-type Vulkan device)" : "");
    }
}

const char * tnn_backend_variant(void) {
    choose_device();
    return device_description;
}

ggml_backend_t tnn_backend_create(int32_t n_threads) {
    (void) n_threads;
    choose_device();
    if (n_devices < 1) {
        tnn_fail(TNN_ERR_BACKEND, "%s",
                 choice_error[0] != '\0'
                     ? choice_error
                     : "no Vulkan 1.2 device here: install the GPU's Vulkan driver (or Mesa's lavapipe, "
                       "Debian's mesa-vulkan-drivers, to run on the CPU)");
        return NULL;
    }
    return ggml_backend_vk_init(0);
}

size_t tnn_backend_work_bytes(ggml_backend_t backend, struct ggml_cgraph * graph, int32_t n_threads) {
    (void) backend;
    (void) graph;
    (void) n_threads;
    return 0;
}

size_t tnn_backend_max_tensor_bytes(ggml_backend_t backend) {
    const size_t buffer = ggml_backend_get_max_size(backend);
    return storage_range < buffer ? (size_t) storage_range : buffer;
}

bool tnn_backend_uses_host_memory(void) { return false; }

/* the device computes every node: none of tinynn's CPU kernels */
int tnn_backend_cpu_kernels(struct tnn_cpu_kernels * kernels) {
    *kernels = (struct tnn_cpu_kernels){ 0 };
    return TNN_OK;
}
