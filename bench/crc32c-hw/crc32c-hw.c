/*
 * An experiment, not part of the broker: CRC32C (Castagnoli) with the SSE4.2 crc32 instruction,
 * three independent streams interleaved (the instruction's latency is 3 cycles, its throughput
 * 1 per cycle), joined by multiplying a stream's register by x^(8n) mod P. Loaded by preload.cjs
 * in place of @node-rs/crc32's crc32c, whose x86-64 build has no crc32 instruction (a table
 * path, about 4 times slower here), to measure what a hardware CRC saves a producing broker.
 * Same contract as @node-rs/crc32: crc32c(bytes, initial = 0), and
 * crc32c(b, crc32c(a)) === crc32c(a + b).
 */
#include <node_api.h>
#include <nmmintrin.h>
#include <stdint.h>
#include <string.h>

#define POLY 0x82f63b78u /* Castagnoli, bit-reflected */

/* a * b modulo P, both bit-reflected polynomials (bit 31 is x^0). */
static uint32_t mul_mod_p(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t bit = 1u << 31; bit != 0; bit >>= 1) {
    if (a & bit) product ^= b;
    b = (b & 1) ? (b >> 1) ^ POLY : b >> 1;
  }
  return product;
}

/* x^(2^k) mod P for k = 0..63. */
static uint32_t x_pow_2k[64];

static void init_tables(void) {
  uint32_t p = 1u << 30; /* x^1 */
  for (int k = 0; k < 64; k++) {
    x_pow_2k[k] = p;
    p = mul_mod_p(p, p);
  }
}

/* x^(8 * bytes) mod P: the factor that moves a register past `bytes` zero bytes. */
static uint32_t x_pow_bytes(uint64_t bytes) {
  uint32_t p = 1u << 31; /* x^0 */
  for (int k = 3; bytes != 0; bytes >>= 1, k++)
    if (bytes & 1) p = mul_mod_p(x_pow_2k[k & 63], p);
  return p;
}

static uint64_t one_stream(uint64_t crc, const uint8_t *p, size_t n) {
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    memcpy(&word, p, 8);
    crc = _mm_crc32_u64(crc, word);
  }
  for (; n > 0; p++, n--) crc = _mm_crc32_u8((uint32_t)crc, *p);
  return crc;
}

/* The raw register after `n` bytes from `crc` (no pre- or post-inversion). */
static uint32_t update(uint32_t crc, const uint8_t *p, size_t n) {
  if (n < 3 * 512) return (uint32_t)one_stream(crc, p, n);
  size_t third = (n / 3) & ~(size_t)7;
  const uint8_t *a = p, *b = p + third, *c = p + 2 * third;
  uint64_t ca = crc, cb = 0, cc = 0;
  for (size_t i = 0; i < third; i += 8) {
    uint64_t wa, wb, wc;
    memcpy(&wa, a + i, 8);
    memcpy(&wb, b + i, 8);
    memcpy(&wc, c + i, 8);
    ca = _mm_crc32_u64(ca, wa);
    cb = _mm_crc32_u64(cb, wb);
    cc = _mm_crc32_u64(cc, wc);
  }
  /* The register is linear in its start value: reg(s, B) = s * x^(8|B|) ^ reg(0, B). */
  uint32_t shift = x_pow_bytes(third);
  uint32_t joined = mul_mod_p(shift, (uint32_t)ca) ^ (uint32_t)cb;
  joined = mul_mod_p(shift, joined) ^ (uint32_t)cc;
  return (uint32_t)one_stream(joined, p + 3 * third, n - 3 * third);
}

static napi_value crc32c(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  napi_typedarray_type type;
  size_t length = 0;
  void *data = NULL;
  napi_value backing;
  size_t offset;
  if (argc < 1 || napi_get_typedarray_info(env, argv[0], &type, &length, &data, &backing, &offset) != napi_ok || type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "crc32c: a Uint8Array is expected");
    return NULL;
  }
  uint32_t initial = 0;
  if (argc > 1) {
    napi_valuetype t;
    napi_typeof(env, argv[1], &t);
    if (t == napi_number) napi_get_value_uint32(env, argv[1], &initial);
  }
  uint32_t crc = ~update(~initial, (const uint8_t *)data, length);
  napi_value result;
  napi_create_uint32(env, crc, &result);
  return result;
}

NAPI_MODULE_INIT() {
  init_tables();
  napi_value fn;
  napi_create_function(env, "crc32c", NAPI_AUTO_LENGTH, crc32c, NULL, &fn);
  napi_set_named_property(env, exports, "crc32c", fn);
  return exports;
}
