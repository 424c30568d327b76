/* The Vulkan driver denylist (see vk_denylist.h and
 * docs/VULKAN_DENYLIST.md): parsing, matching a device record, and the
 * questions placement asks. */
#include "ep/vulkan/vk_denylist.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/dtype.h"
#include "ep/vulkan/vk_internal.h"

/* Generated from denylist.txt by embed_text.cmake. */
extern const char ox_vk_denylist_text[];

/* ---- driver versions ---- */

#define VENDOR_NVIDIA 0x10DEu
#define VENDOR_INTEL 0x8086u
#define DRIVER_ID_INTEL_WINDOWS 5u /* VK_DRIVER_ID_INTEL_PROPRIETARY_WINDOWS */

void ox_vk_driver_version(uint32_t vendor, uint32_t driver_id, uint32_t raw, uint32_t out[4]) {
    if (vendor == VENDOR_NVIDIA) {
        out[0] = raw >> 22, out[1] = (raw >> 14) & 0xff, out[2] = (raw >> 6) & 0xff, out[3] = raw & 0x3f;
    } else if (vendor == VENDOR_INTEL && driver_id == DRIVER_ID_INTEL_WINDOWS) {
        out[0] = raw >> 14, out[1] = raw & 0x3fff, out[2] = 0, out[3] = 0;
    } else {
        out[0] = raw >> 22, out[1] = (raw >> 12) & 0x3ff, out[2] = raw & 0xfff, out[3] = 0;
    }
}

uint32_t ox_vk_driver_version_encode(uint32_t vendor, uint32_t driver_id, const uint32_t v[4]) {
    if (vendor == VENDOR_NVIDIA)
        return v[0] << 22 | (v[1] & 0xff) << 14 | (v[2] & 0xff) << 6 | (v[3] & 0x3f);
    if (vendor == VENDOR_INTEL && driver_id == DRIVER_ID_INTEL_WINDOWS) return v[0] << 14 | (v[1] & 0x3fff);
    return v[0] << 22 | (v[1] & 0x3ff) << 12 | (v[2] & 0xfff);
}

void ox_vk_driver_version_text(uint32_t vendor, uint32_t driver_id, uint32_t raw, char *buf,
                               size_t size) {
    uint32_t v[4];
    ox_vk_driver_version(vendor, driver_id, raw, v);
    if (vendor == VENDOR_NVIDIA) snprintf(buf, size, "%u.%u.%u.%u", v[0], v[1], v[2], v[3]);
    else if (vendor == VENDOR_INTEL && driver_id == DRIVER_ID_INTEL_WINDOWS)
        snprintf(buf, size, "%u.%u", v[0], v[1]);
    else snprintf(buf, size, "%u.%u.%u", v[0], v[1], v[2]);
}

int ox_vk_parse_version(const char *s, uint32_t out[4]) {
    memset(out, 0, 4 * sizeof out[0]);
    for (int i = 0; i < 4; i++) {
        if (!isdigit((unsigned char)*s)) return -1;
        char *end;
        errno = 0;
        unsigned long x = strtoul(s, &end, 10);
        if (errno || x > 0xffffffffUL) return -1;
        out[i] = (uint32_t)x;
        s = end;
        if (!*s) return 0;
        if (*s != '.') return -1;
        s++;
    }
    return -1;
}

static int version_cmp(const uint32_t a[4], const uint32_t b[4]) {
    for (int i = 0; i < 4; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* ---- parsing ---- */

static int bad(ox_error *err, const char *source, int line, const char *fmt, const char *what) {
    return ox_fail(err, ONYX_INVALID_ARGUMENT, "vulkan denylist %s:%d: %s%s", source, line, fmt, what);
}

static int parse_u32(const char *s, uint32_t *out) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (!*s || *end || errno || x > 0xffffffffULL || *s == '-') return -1;
    *out = (uint32_t)x;
    return 0;
}

static int parse_cmp(const char *s, int *cmp, const char **rest) {
    static const struct { const char *t; int c; } C[] = {
        {">=", OX_VK_CMP_GE}, {"<=", OX_VK_CMP_LE}, {"!=", OX_VK_CMP_NE},
        {">", OX_VK_CMP_GT},  {"<", OX_VK_CMP_LT},  {"=", OX_VK_CMP_EQ}};
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++)
        if (strncmp(s, C[i].t, strlen(C[i].t)) == 0) {
            *cmp = C[i].c;
            *rest = s + strlen(C[i].t);
            return 0;
        }
    return -1;
}

/* One `disable` value: op=NAME [dtype=T] [attr=NAMEcmpINT] | feature=F | dispatch>N | device */
static int parse_action(char *v, ox_vk_deny_action *a, const char *src, int line, ox_error *err) {
    memset(a, 0, sizeof *a);
    if (strcmp(v, "device") == 0) {
        a->kind = OX_VK_DENY_DEVICE;
        return 0;
    }
    if (strncmp(v, "feature=", 8) == 0) {
        a->kind = OX_VK_DENY_FEATURE;
        if (ox_vk_parse_mask(v + 8, &a->feature, err) != 0 || !a->feature)
            return bad(err, src, line, "unknown feature (int64, fp16, subgroup, hostmap): ", v + 8);
        return 0;
    }
    if (strncmp(v, "dispatch>", 9) == 0) {
        a->kind = OX_VK_DENY_DISPATCH;
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v + 9, &end, 10);
        if (!v[9] || *end || errno || n == 0 || v[9] == '-')
            return bad(err, src, line, "dispatch>N needs a positive work-unit count: ", v);
        a->dispatch = n;
        return 0;
    }
    if (strncmp(v, "op=", 3) != 0)
        return bad(err, src, line, "disable takes op=NAME [dtype=T] [attr=NAME>N], feature=F, "
                   "dispatch>N or device, not: ", v);
    a->kind = OX_VK_DENY_OP;
    char *save = NULL;
    for (char *tok = strtok_r(v, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (strncmp(tok, "op=", 3) == 0 && tok[3]) {
            snprintf(a->op, sizeof a->op, "%s", tok + 3);
        } else if (strncmp(tok, "dtype=", 6) == 0) {
            a->dtype = (int)ox_dtype_from_name(tok + 6);
            if (!a->dtype) return bad(err, src, line, "unknown dtype: ", tok + 6);
        } else if (strncmp(tok, "attr=", 5) == 0) {
            const char *p = tok + 5, *rest;
            size_t len = strcspn(p, "<>=!");
            if (!len || len >= sizeof a->attr || parse_cmp(p + len, &a->cmp, &rest) != 0)
                return bad(err, src, line, "attr= needs NAME, a comparison (= != < <= > >=) and an integer: ", tok);
            char *end;
            errno = 0;
            long long x = strtoll(rest, &end, 10);
            if (!*rest || *end || errno)
                return bad(err, src, line, "attr= needs an integer value: ", tok);
            memcpy(a->attr, p, len);
            a->attr[len] = '\0';
            a->attr_value = x;
        } else {
            return bad(err, src, line, "unknown op qualifier (dtype=, attr=): ", tok);
        }
    }
    if (!a->op[0]) return bad(err, src, line, "op= needs an operator name", "");
    return 0;
}

static int finish_rule(const ox_vk_deny_rule *r, const char *src, ox_error *err) {
    const char *missing = !r->has_vendor ? "vendor" : !r->n_actions ? "disable" : !r->reason[0] ? "reason"
                          : !r->ref[0] ? "ref" : NULL;
    if (missing) return bad(err, src, r->line, "rule has no ", missing);
    return 0;
}

int ox_vk_denylist_parse(const char *text, const char *source, ox_vk_denylist *out, ox_error *err) {
    memset(out, 0, sizeof *out);
    snprintf(out->source, sizeof out->source, "%s", source);
    int cap = 0, line = 0;
    ox_vk_deny_rule *r = NULL;
    const char *p = text;
    while (*p) {
        line++;
        size_t len = strcspn(p, "\n");
        char buf[1024];
        if (len >= sizeof buf) {
            ox_vk_denylist_free(out);
            return bad(err, source, line, "line longer than 1023 characters", "");
        }
        memcpy(buf, p, len);
        buf[len] = '\0';
        p += len + (p[len] == '\n');
        /* trim; '#' starts a comment only at the start of a line (URLs hold '#') */
        char *s = buf + strspn(buf, " \t\r");
        size_t n = strlen(s);
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = '\0';
        if (!*s || *s == '#') continue;
        size_t klen = strcspn(s, " \t");
        char *val = s + klen + strspn(s + klen, " \t");
        s[klen] = '\0';
        int rc = 0;
        if (strcmp(s, "rule") == 0) {
            if (r && finish_rule(r, source, err) != 0) goto fail;
            if (!*val || strlen(val) >= sizeof r->name) {
                rc = bad(err, source, line, "rule needs a name (under 64 characters)", "");
                goto fail;
            }
            if (out->n == cap) {
                cap = cap ? cap * 2 : 16;
                ox_vk_deny_rule *nr = realloc(out->rules, (size_t)cap * sizeof *nr);
                if (!nr) {
                    rc = ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
                    goto fail;
                }
                out->rules = nr;
            }
            r = &out->rules[out->n++];
            memset(r, 0, sizeof *r);
            snprintf(r->name, sizeof r->name, "%s", val);
            r->line = line;
            r->device_hi = UINT32_MAX;
            r->driver_id = -1;
            continue;
        }
        if (!r) {
            rc = bad(err, source, line, "expected 'rule NAME' before: ", s);
            goto fail;
        }
        if (!*val) {
            rc = bad(err, source, line, "no value for: ", s);
            goto fail;
        }
        if (strcmp(s, "vendor") == 0) {
            if (parse_u32(val, &r->vendor) != 0) rc = bad(err, source, line, "vendor needs an id (0x1002): ", val);
            r->has_vendor = 1;
        } else if (strcmp(s, "device") == 0) {
            char *dash = strchr(val, '-');
            if (dash) *dash = '\0';
            if (parse_u32(val, &r->device_lo) != 0 || parse_u32(dash ? dash + 1 : val, &r->device_hi) != 0 ||
                r->device_hi < r->device_lo)
                rc = bad(err, source, line, "device needs an id or a range LO-HI (0x67c0-0x67ff)", "");
        } else if (strcmp(s, "driver") == 0) {
            if (strlen(val) >= sizeof r->driver) rc = bad(err, source, line, "driver name too long", "");
            else snprintf(r->driver, sizeof r->driver, "%s", val);
        } else if (strcmp(s, "driver_id") == 0) {
            uint32_t id = 0;
            if (parse_u32(val, &id) != 0) rc = bad(err, source, line, "driver_id needs a VkDriverId number: ", val);
            r->driver_id = id;
        } else if (strcmp(s, "version_from") == 0 || strcmp(s, "version_below") == 0) {
            int from = s[8] == 'f';
            if (ox_vk_parse_version(val, from ? r->from : r->below) != 0)
                rc = bad(err, source, line, "a version is 1 to 4 dotted numbers: ", val);
            *(from ? &r->has_from : &r->has_below) = 1;
        } else if (strcmp(s, "disable") == 0) {
            if (r->n_actions == OX_VK_DENY_MAX_ACTIONS)
                rc = bad(err, source, line, "more than 8 disable lines in one rule", "");
            else rc = parse_action(val, &r->actions[r->n_actions++], source, line, err);
        } else if (strcmp(s, "reason") == 0) {
            snprintf(r->reason, sizeof r->reason, "%s", val);
        } else if (strcmp(s, "ref") == 0) {
            if (strncmp(val, "https://", 8) != 0 && strncmp(val, "http://", 7) != 0)
                rc = bad(err, source, line, "ref must be a URL (https://...): ", val);
            snprintf(r->ref, sizeof r->ref, "%s", val);
        } else {
            rc = bad(err, source, line, "unknown key (rule, vendor, device, driver, driver_id, version_from, "
                     "version_below, disable, reason, ref): ", s);
        }
        if (rc != 0) goto fail;
    }
    if (r && finish_rule(r, source, err) != 0) goto fail;
    return 0;
fail:
    ox_vk_denylist_free(out);
    return -1;
}

int ox_vk_denylist_load(const char *path, ox_vk_denylist *out, ox_error *err) {
    if (!path || !path[0]) path = getenv("ONYX_VK_DENYLIST");
    if (!path || !path[0]) return ox_vk_denylist_parse(ox_vk_denylist_text, "embedded", out, err);
    if (strcmp(path, "none") == 0) return ox_vk_denylist_parse("", "none", out, err);
    FILE *f = fopen(path, "rb");
    /* a file the caller named: a mistake in the options, never a reason
     * to fall back quietly to the CPU */
    if (!f) return ox_fail(err, ONYX_INVALID_ARGUMENT, "vulkan denylist %s: cannot open: %s", path, strerror(errno));
    char *text = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *t = cap <= (1u << 24) ? realloc(text, cap) : NULL;
            if (!t) {
                free(text);
                fclose(f);
                return ox_fail(err, ONYX_INVALID_ARGUMENT, "vulkan denylist %s: too large (over 16 MiB) "
                               "or out of memory", path);
            }
            text = t;
        }
        size_t got = fread(text + n, 1, 4096, f);
        n += got;
        if (got < 4096) break;
    }
    int io = ferror(f);
    fclose(f);
    if (io) {
        free(text);
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "vulkan denylist %s: read error", path);
    }
    text[n] = '\0';
    if (memchr(text, '\0', n)) {
        free(text);
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "vulkan denylist %s: not a text file (NUL byte)", path);
    }
    int rc = ox_vk_denylist_parse(text, path, out, err);
    free(text);
    return rc;
}

void ox_vk_denylist_free(ox_vk_denylist *l) {
    if (!l) return;
    free(l->rules);
    l->rules = NULL;
    l->n = 0;
}

/* ---- matching ---- */

int ox_vk_deny_matches(const ox_vk_deny_rule *r, const ox_vk_caps *c) {
    if (r->vendor != c->vendor_id) return 0;
    if (c->device_id < r->device_lo || c->device_id > r->device_hi) return 0;
    if (r->driver[0] && strcasecmp(r->driver, c->driver_name) != 0) return 0;
    if (r->driver_id >= 0 && (uint32_t)r->driver_id != c->driver_id) return 0;
    uint32_t v[4];
    ox_vk_driver_version(c->vendor_id, c->driver_id, c->driver_version, v);
    if (r->has_from && version_cmp(v, r->from) < 0) return 0;
    if (r->has_below && version_cmp(v, r->below) >= 0) return 0;
    return 1;
}

int ox_vk_denylist_select(ox_vk_denylist *l, const ox_vk_caps *c, ox_error *err) {
    (void)err;
    int k = 0;
    for (int i = 0; i < l->n; i++)
        if (ox_vk_deny_matches(&l->rules[i], c)) l->rules[k++] = l->rules[i];
    l->n = k;
    return 0;
}

const ox_vk_deny_rule *ox_vk_deny_device_rule(const ox_vk_denylist *l) {
    for (int i = 0; i < l->n; i++)
        for (int a = 0; a < l->rules[i].n_actions; a++)
            if (l->rules[i].actions[a].kind == OX_VK_DENY_DEVICE) return &l->rules[i];
    return NULL;
}

unsigned ox_vk_deny_features(const ox_vk_denylist *l) {
    unsigned m = 0;
    for (int i = 0; i < l->n; i++)
        for (int a = 0; a < l->rules[i].n_actions; a++)
            if (l->rules[i].actions[a].kind == OX_VK_DENY_FEATURE) m |= l->rules[i].actions[a].feature;
    return m;
}

uint64_t ox_vk_deny_dispatch(const ox_vk_denylist *l) {
    uint64_t b = 0;
    for (int i = 0; i < l->n; i++)
        for (int a = 0; a < l->rules[i].n_actions; a++) {
            const ox_vk_deny_action *x = &l->rules[i].actions[a];
            if (x->kind == OX_VK_DENY_DISPATCH && (!b || x->dispatch < b)) b = x->dispatch;
        }
    return b;
}

static int cmp_holds(int cmp, int64_t a, int64_t b) {
    switch (cmp) {
    case OX_VK_CMP_EQ: return a == b;
    case OX_VK_CMP_NE: return a != b;
    case OX_VK_CMP_LT: return a < b;
    case OX_VK_CMP_LE: return a <= b;
    case OX_VK_CMP_GT: return a > b;
    default: return a >= b;
    }
}

/* The ONNX operator a node computes, for rules naming one: its own type,
 * or for onyx's fused operators the operator under the epilogue (a Conv
 * a driver gets wrong is as wrong with a Relu after it). NULL for other
 * domains. */
static const char *onnx_op_of(const ir_node *node) {
    if (!node->domain[0]) return node->op_type;
    if (strcmp(node->domain, "onyx") != 0) return NULL;
    if (strcmp(node->op_type, "FusedConv") == 0) return "Conv";
    if (strcmp(node->op_type, "FusedMatMul") == 0) return "MatMul";
    return NULL;
}

static int action_hits(const ox_vk_deny_action *a, const ir_node *node, const ir_type *const *in, int n) {
    const char *op = onnx_op_of(node);
    if (a->kind != OX_VK_DENY_OP || !op || strcmp(a->op, op) != 0) return 0;
    if (a->dtype) {
        int found = 0;
        for (int i = 0; i < n && !found; i++) found = in[i] && (int)in[i]->dtype == a->dtype;
        if (!found) return 0;
    }
    if (a->attr[0]) {
        const ir_attr *at = ir_node_attr(node, a->attr);
        if (!at || !cmp_holds(a->cmp, ir_attr_int(node, a->attr, 0), a->attr_value)) return 0;
    }
    return 1;
}

const ox_vk_deny_rule *ox_vk_deny_node(const ox_vk_denylist *l, const ir_node *node,
                                       const ir_type *const *in, int n) {
    for (int i = 0; i < l->n; i++)
        for (int a = 0; a < l->rules[i].n_actions; a++)
            if (action_hits(&l->rules[i].actions[a], node, in, n)) return &l->rules[i];
    return NULL;
}

static const char *const CMP_TEXT[] = {"=", "!=", "<", "<=", ">", ">="};

size_t ox_vk_denylist_describe(const ox_vk_denylist *l, char *buf, size_t size) {
    size_t off = 0;
#define PUT(...)                                                                      \
    do {                                                                              \
        int k_ = snprintf(off < size ? buf + off : NULL, off < size ? size - off : 0, __VA_ARGS__); \
        if (k_ > 0) off += (size_t)k_;                                                \
    } while (0)
    if (size) buf[0] = '\0';
    for (int i = 0; i < l->n; i++) {
        const ox_vk_deny_rule *r = &l->rules[i];
        PUT("%srule '%s' (%s:%d) disables", i ? "; " : "", r->name, l->source, r->line);
        for (int a = 0; a < r->n_actions; a++) {
            const ox_vk_deny_action *x = &r->actions[a];
            PUT("%s", a ? "," : "");
            if (x->kind == OX_VK_DENY_DEVICE) PUT(" the device");
            else if (x->kind == OX_VK_DENY_DISPATCH) PUT(" dispatches over %llu", (unsigned long long)x->dispatch);
            else if (x->kind == OX_VK_DENY_FEATURE) {
                static const char *const F[] = {"int64", "fp16", "subgroup", "hostmap"};
                for (int b = 0; b < 4; b++)
                    if (x->feature & (1u << b)) PUT(" feature %s", F[b]);
            } else {
                PUT(" op %s", x->op);
                if (x->dtype) PUT(" on %s", ox_dtype_name((ox_dtype)x->dtype));
                if (x->attr[0]) PUT(" with %s%s%lld", x->attr, CMP_TEXT[x->cmp], (long long)x->attr_value);
            }
        }
        PUT(": %s (%s)", r->reason, r->ref);
    }
#undef PUT
    return off;
}
