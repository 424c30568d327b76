/* The Vulkan driver denylist: rules naming drivers (vendor, device id
 * range, driver name or id, driver version range) and what onyx must not
 * do on them (an operator, an operator on a dtype or with an attribute
 * value, a capability, dispatches above a size, the whole device). The
 * schema is in docs/VULKAN_DENYLIST.md; the rules in denylist.txt, which
 * the build embeds, so nothing is read at run time unless
 * ONYX_VK_DENYLIST or the provider option "denylist" names a file. */
#ifndef ONYX_EP_VULKAN_VK_DENYLIST_H
#define ONYX_EP_VULKAN_VK_DENYLIST_H

#include <stdint.h>

#include "core/error.h"
#include "ep/vulkan/vk_ep.h"
#include "ir/ir.h"

enum { OX_VK_DENY_OP, OX_VK_DENY_FEATURE, OX_VK_DENY_DISPATCH, OX_VK_DENY_DEVICE };
enum { OX_VK_CMP_EQ, OX_VK_CMP_NE, OX_VK_CMP_LT, OX_VK_CMP_LE, OX_VK_CMP_GT, OX_VK_CMP_GE };

#define OX_VK_DENY_MAX_ACTIONS 8

typedef struct ox_vk_deny_action {
    int kind;
    char op[64];       /* OP: the operator (ai.onnx domain) */
    int dtype;         /* OP: 0, or an input dtype that must be present */
    char attr[64];     /* OP: "", or an integer attribute compared... */
    int cmp;           /* ...with this comparison... */
    int64_t attr_value; /* ...to this value (an absent attribute never matches) */
    unsigned feature;  /* FEATURE: OX_VK_MASK_* bits */
    uint64_t dispatch; /* DISPATCH: the most work units one dispatch may carry */
} ox_vk_deny_action;

typedef struct ox_vk_deny_rule {
    char name[64];
    int line;
    int has_vendor;
    uint32_t vendor;
    uint32_t device_lo, device_hi; /* 0..UINT32_MAX when not given */
    char driver[128];              /* "": any; else driverName, case-insensitive */
    int64_t driver_id;             /* -1: any */
    int has_from, has_below;
    uint32_t from[4], below[4]; /* driver version: from <= v < below */
    ox_vk_deny_action actions[OX_VK_DENY_MAX_ACTIONS];
    int n_actions;
    char reason[512];
    char ref[512];
} ox_vk_deny_rule;

typedef struct ox_vk_denylist {
    ox_vk_deny_rule *rules;
    int n;
    char source[256]; /* "embedded" or the file */
} ox_vk_denylist;

/* Parses rules from text; `source` names it in errors ("FILE:LINE: ..."). */
int ox_vk_denylist_parse(const char *text, const char *source, ox_vk_denylist *out, ox_error *err);
/* The file `path` when not NULL, else ONYX_VK_DENYLIST's file, else the
 * embedded rules; "none" gives an empty list. */
int ox_vk_denylist_load(const char *path, ox_vk_denylist *out, ox_error *err);
void ox_vk_denylist_free(ox_vk_denylist *l);
/* Keeps only the rules matching the record (the others are dropped). */
int ox_vk_denylist_select(ox_vk_denylist *l, const ox_vk_caps *c, ox_error *err);
int ox_vk_deny_matches(const ox_vk_deny_rule *r, const ox_vk_caps *c);
/* The first rule in l disabling the whole device, or NULL. */
const ox_vk_deny_rule *ox_vk_deny_device_rule(const ox_vk_denylist *l);
/* Bits and budget the rules in l impose (budget 0: none). */
unsigned ox_vk_deny_features(const ox_vk_denylist *l);
uint64_t ox_vk_deny_dispatch(const ox_vk_denylist *l);
/* The rule disabling this node (with these input types), or NULL. */
const ox_vk_deny_rule *ox_vk_deny_node(const ox_vk_denylist *l, const ir_node *node,
                                       const ir_type *const *in, int n);
/* "rule 'x' disables op ConvTranspose, feature fp16 (reason; ref); ..."
 * for the log, snprintf-style. */
size_t ox_vk_denylist_describe(const ox_vk_denylist *l, char *buf, size_t size);

/* The driver version as the vendor encodes it: NVIDIA 10.8.8.6 bits,
 * Intel's Windows driver 18.14, others as VK_MAKE_VERSION (10.10.12). */
void ox_vk_driver_version(uint32_t vendor, uint32_t driver_id, uint32_t raw, uint32_t out[4]);
/* Dotted text of the above ("535.104.5.0", "21.0.0"). */
void ox_vk_driver_version_text(uint32_t vendor, uint32_t driver_id, uint32_t raw, char *buf,
                               size_t size);
/* The raw value encoding dotted parts v for this vendor (for faking). */
uint32_t ox_vk_driver_version_encode(uint32_t vendor, uint32_t driver_id, const uint32_t v[4]);
/* Parses "21", "21.2", "535.104.5.0" into 4 parts; -1 when malformed. */
int ox_vk_parse_version(const char *s, uint32_t out[4]);

#endif
