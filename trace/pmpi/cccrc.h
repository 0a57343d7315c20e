/*
 * CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, initial value and
 * final xor 0xFFFFFFFF) for the trace's header and block checksums. Each
 * function continues a CRC: cct_crc32c_*(0, p, n) is the CRC of p's n
 * bytes, and cct_crc32c_*(cct_crc32c_*(0, a, n), b, m) that of a then b.
 *
 * cct_crc32c_table is slicing-by-8 (eight 256-entry tables, 8 KiB, filled
 * on first use): about 1.5 cycles per byte. cct_crc32c_hw uses the CPU's
 * CRC instruction where the compiler can emit it (x86-64 SSE4.2's crc32q,
 * aarch64's crc32cx), one 8-byte word per instruction; cct_crc32c picks
 * it when the CPU has it (cct_crc32c_init, called once at start-up), else
 * the table. Both give the same value; Go's hash/crc32 with the
 * Castagnoli table too.
 */
#ifndef COMMCOST_CCCRC_H
#define COMMCOST_CCCRC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CCT_CRC32C_POLY 0x82f63b78u

static uint32_t cct_crc_tab[8][256];
static int cct_crc_filled;

static void cct_crc_fill(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (CCT_CRC32C_POLY & (0u - (c & 1u)));
		cct_crc_tab[0][i] = c;
	}
	for (int t = 1; t < 8; t++)
		for (int i = 0; i < 256; i++)
			cct_crc_tab[t][i] = (cct_crc_tab[t - 1][i] >> 8) ^ cct_crc_tab[0][cct_crc_tab[t - 1][i] & 0xff];
	cct_crc_filled = 1;
}

/* cct_crc32c_table: slicing-by-8 over little-endian 8-byte words. */
static inline uint32_t cct_crc32c_table(uint32_t crc, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	if (!cct_crc_filled)
		cct_crc_fill();
	crc = ~crc;
	for (; n >= 8; p += 8, n -= 8) {
		uint32_t lo, hi;
		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= crc;
		crc = cct_crc_tab[7][lo & 0xff] ^ cct_crc_tab[6][(lo >> 8) & 0xff] ^ cct_crc_tab[5][(lo >> 16) & 0xff] ^
		      cct_crc_tab[4][lo >> 24] ^ cct_crc_tab[3][hi & 0xff] ^ cct_crc_tab[2][(hi >> 8) & 0xff] ^
		      cct_crc_tab[1][(hi >> 16) & 0xff] ^ cct_crc_tab[0][hi >> 24];
	}
	while (n--)
		crc = (crc >> 8) ^ cct_crc_tab[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

/* cct_crc_mult is a times b modulo the polynomial, both reflected (bit 31
 * the coefficient of x^0). */
static inline uint32_t cct_crc_mult(uint32_t a, uint32_t b)
{
	uint32_t p = 0;
	for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
		if (a & m)
			p ^= b;
		b = b & 1 ? (b >> 1) ^ CCT_CRC32C_POLY : b >> 1;
	}
	return p;
}

/* cct_crc_zeros is the operator x^(8n) mod the polynomial: a CRC register
 * times it is the register after n more zero bytes. */
static inline uint32_t cct_crc_zeros(size_t n)
{
	uint32_t x2k = 1u << 30, r = 1u << 31; /* x^(2^k) for k = 0, and 1 */
	for (size_t bits = n * 8; bits; bits >>= 1) {
		if (bits & 1)
			r = cct_crc_mult(r, x2k);
		x2k = cct_crc_mult(x2k, x2k);
	}
	return r;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define CCT_CRC_HW 1
/* cct_crc32c_hw runs three independent CRCs over the thirds of the buffer
 * (crc32q's latency is 3 cycles, its throughput 1 a cycle) and joins them:
 * the CRC register of A then B is A's times x^(8|B|) xor B's from 0
 * (linearity). The operator for the thirds' length is cached, as full
 * blocks all have the same. */
__attribute__((target("sse4.2"))) static uint32_t cct_crc32c_hw(uint32_t crc, const void *buf, size_t n)
{
	static size_t op_len;
	static uint32_t op;
	const unsigned char *p = buf;
	uint64_t c = ~crc;
	size_t lane = n / 24 * 8;
	if (lane >= 256) {
		uint64_t c1 = 0, c2 = 0;
		for (size_t i = 0; i < lane; i += 8) {
			uint64_t w0, w1, w2;
			memcpy(&w0, p + i, 8);
			memcpy(&w1, p + lane + i, 8);
			memcpy(&w2, p + 2 * lane + i, 8);
			c = _mm_crc32_u64(c, w0);
			c1 = _mm_crc32_u64(c1, w1);
			c2 = _mm_crc32_u64(c2, w2);
		}
		if (op_len != lane) {
			op = cct_crc_zeros(lane);
			op_len = lane;
		}
		c = cct_crc_mult((uint32_t)c, op) ^ (uint32_t)c1;
		c = cct_crc_mult((uint32_t)c, op) ^ (uint32_t)c2;
		p += 3 * lane;
		n -= 3 * lane;
	}
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		c = _mm_crc32_u64(c, w);
	}
	uint32_t c32 = (uint32_t)c;
	while (n--)
		c32 = _mm_crc32_u8(c32, *p++);
	return ~c32;
}
static int cct_crc_hw_present(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
}
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#define CCT_CRC_HW 1
static uint32_t cct_crc32c_hw(uint32_t crc, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	crc = ~crc;
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		crc = __crc32cd(crc, w);
	}
	while (n--)
		crc = __crc32cb(crc, *p++);
	return ~crc;
}
/* the compiler was told the CPU has the instructions (-march) */
static int cct_crc_hw_present(void) { return 1; }
#else
#define CCT_CRC_HW 0
#endif

static uint32_t (*cct_crc32c_fn)(uint32_t, const void *, size_t) = cct_crc32c_table;

/* cct_crc32c_init chooses the hardware CRC when the CPU has it; force_table
 * keeps the table (a test compares both paths). Returns 1 for hardware. */
static inline int cct_crc32c_init(int force_table)
{
	cct_crc_fill();
	cct_crc32c_fn = cct_crc32c_table;
#if CCT_CRC_HW
	if (!force_table && cct_crc_hw_present()) {
		cct_crc32c_fn = cct_crc32c_hw;
		return 1;
	}
#else
	(void)force_table;
#endif
	return 0;
}

static inline uint32_t cct_crc32c(uint32_t crc, const void *p, size_t n) { return cct_crc32c_fn(crc, p, n); }

#endif
