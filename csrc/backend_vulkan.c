/* libtinynn_vulkan: one Vulkan device through ggml-vulkan. The thread count
 * is not used.
 *
 * Which device: ggml's own choice (the dedicated GPUs, else the first other
 * non-CPU device), or GGML_VK_VISIBLE_DEVICES when the user names one. ggml
 * skips CPU-type devices unless named, so on a machine whose only Vulkan
 * device is a software rasterizer (Mesa's lavapipe) it would find none; a
 * library asked for by name (--device vulkan) should still run there, so
 * tinynn names that device itself and says so in tnn_backend_variant. */
#include "internal.h"
#include "ggml-vulkan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

const char * tnn_backend_name(void) { return "vulkan"; }

/* "<device name>" or "<device name> (software: a CPU-type Vulkan device)",
 * filled in by the first tnn_backend_create */
static char device_description[256] = "no device";

const char * tnn_backend_variant(void) { return device_description; }

/* The index of the first CPU-type physical device when the loader lists no
 * other kind, else -1 (ggml's own choice then stands). Asks Vulkan directly:
 * ggml picks its devices once, at its first call, from the environment. */
static int software_device_only(void) {
    const VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2,
    };
    const VkInstanceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app,
    };
    VkInstance instance;
    if (vkCreateInstance(&info, NULL, &instance) != VK_SUCCESS) {
        return -1;
    }
    VkPhysicalDevice devices[16];
    uint32_t n = 16;
    int cpu_device = -1;
    bool other_kind = false;
    VkResult res = vkEnumeratePhysicalDevices(instance, &n, devices);
    if (res == VK_SUCCESS || res == VK_INCOMPLETE) {
        for (uint32_t i = 0; i < n; i++) {
            VkPhysicalDeviceProperties props;
            vkGetPhysicalDeviceProperties(devices[i], &props);
            if (props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) {
                other_kind = true;
            } else if (cpu_device < 0) {
                cpu_device = (int) i;
            }
        }
    }
    vkDestroyInstance(instance, NULL);
    return other_kind ? -1 : cpu_device;
}

ggml_backend_t tnn_backend_create(int32_t n_threads) {
    (void) n_threads;
    static bool chosen = false;
    static bool software = false;
    if (!chosen) {
        chosen = true;
        if (getenv("GGML_VK_VISIBLE_DEVICES") == NULL) {
            const int cpu_device = software_device_only();
            if (cpu_device >= 0) {
                char index[16];
                snprintf(index, sizeof index, "%d", cpu_device);
                setenv("GGML_VK_VISIBLE_DEVICES", index, 0);
                software = true;
            }
        }
    }
    if (ggml_backend_vk_get_device_count() < 1) {
        return NULL;
    }
    char name[200] = "";
    ggml_backend_vk_get_device_description(0, name, sizeof name);
    snprintf(device_description, sizeof device_description, "%s%s", name,
             software ? " (software: a CPU-type Vulkan device)" : "");
    return ggml_backend_vk_init(0);
}

bool tnn_backend_uses_host_memory(void) { return false; }

/* the device computes every node: none of tinynn's CPU kernels */
int tnn_backend_cpu_kernels(struct tnn_cpu_kernels * kernels) {
    *kernels = (struct tnn_cpu_kernels) { 0 };
    return TNN_OK;
}
