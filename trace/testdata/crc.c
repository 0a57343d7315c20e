/*
 * crc: the tracing library's CRC-32C (trace/pmpi/cccrc.h) on given bytes,
 * by both paths, for TestCBlockSumAgrees: stdin holds records of a 32-bit
 * little-endian length and that many bytes; each gives one line "TABLE HW"
 * (hex), HW the table's value again where the CPU has no CRC instruction.
 * The first line says "hw 1" or "hw 0".
 *
 * crc --bench: the cost of cct_block_sum per 64-byte event on full blocks
 * (1024 events), by both paths: 7 runs of 20000 blocks each, the median in
 * ns per event.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cctrace.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double bench(cct_event *blk)
{
	enum { RUNS = 7, BLOCKS = 20000 };
	double r[RUNS];
	volatile uint32_t sink = 0;
	for (int k = 0; k < RUNS; k++) {
		double t = now();
		for (int i = 0; i < BLOCKS; i++) {
			blk[i % CCT_BLOCK_EVENTS].t0 = i; /* the events change between writes */
			sink ^= cct_block_sum(blk, CCT_BLOCK_EVENTS);
		}
		r[k] = (now() - t) * 1e9 / ((double)BLOCKS * CCT_BLOCK_EVENTS);
	}
	(void)sink;
	qsort(r, RUNS, sizeof r[0], cmp);
	return r[RUNS / 2];
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
		static cct_event blk[CCT_BLOCK_EVENTS];
		unsigned char *p = (unsigned char *)blk;
		for (size_t i = 0; i < sizeof blk; i++)
			p[i] = (unsigned char)(i * 131 + 7);
		int hw = cct_crc32c_init(0);
		double h = hw ? bench(blk) : -1;
		cct_crc32c_init(1);
		double t = bench(blk);
		printf("hardware %.2f ns/event%s, table %.2f ns/event\n", h, hw ? "" : " (no CRC instruction)", t);
		return 0;
	}
	int hw = cct_crc32c_init(0);
	printf("hw %d\n", hw);
	unsigned char len[4];
	while (fread(len, 1, 4, stdin) == 4) {
		size_t n = (size_t)len[0] | (size_t)len[1] << 8 | (size_t)len[2] << 16 | (size_t)len[3] << 24;
		unsigned char *b = malloc(n ? n : 1);
		if (fread(b, 1, n, stdin) != n)
			return 1;
		uint32_t h = cct_crc32c(0, b, n);
		printf("%08x %08x\n", cct_crc32c_table(0, b, n), h);
		free(b);
	}
	return 0;
}
