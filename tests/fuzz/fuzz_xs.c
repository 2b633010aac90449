// SPDX-License-Identifier: MIT
/*
 * fuzz_xs.c: libFuzzer target of what the backend makes of the xenstore
 * values a guest's frontend writes (xen-backend/transport/
 * xgpub_xs_parse.c): a channel's directory (ring-page-order, data-pages,
 * event-channel, ring-ref<i>, data-dir-ref<i>) against the published
 * limits, a host-memory region's grant directory in the data area, and
 * the numbers and names of single nodes and directory entries.
 *
 * The first byte picks one; the rest is its input:
 *   0  limits (u8 ring order, u32 data pages), then "node=value" lines:
 *      the frontend's directory (a value is any bytes but newline)
 *   1  u64 size, the directory memref (u64 off, u64 len, u32 region),
 *      u64 pages already mapped, then the data area (exactly its size)
 *   2  u64 max, then a value: a number, a state, an entry's name, a name
 * What is accepted is checked against what was asked: ranges, counts,
 * digits only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub.h"
#include "xgpub_xs_parse.h"

struct dir {
	const uint8_t *p;
	size_t n;
};

/* the value of the first line "node=..." of the directory, or NULL */
static char *dir_get(void *arg, const char *node)
{
	const struct dir *d = arg;
	size_t nl = strlen(node), i = 0;

	while (i < d->n) {
		const uint8_t *line = d->p + i;
		const uint8_t *end = memchr(line, '\n', d->n - i);
		size_t len = end ? (size_t)(end - line) : d->n - i;

		if (len > nl && !memcmp(line, node, nl) && line[nl] == '=')
			return strndup((const char *)line + nl + 1,
				       len - nl - 1);
		i += len + 1;
	}
	return NULL;
}

static volatile uint32_t sink;

static void check(int ok)
{
	if (!ok)
		abort();
}

static void fuzz_chan(const uint8_t *p, size_t n)
{
	struct xgpub_xen_limits lim = { 0 };
	struct xgpub_xen_chan_desc d;
	struct dir dir;
	uint32_t pages;
	char why[160];

	if (n < 5)
		return;
	lim.max_ring_order = p[0] % 12;
	memcpy(&pages, p + 1, 4);
	lim.max_data_pages = pages % (1u << 18);
	dir.p = p + 5;
	dir.n = n - 5;
	if (xgpub_xen_chan_parse(dir_get, &dir, &lim, &d, why, sizeof(why))) {
		check(why[0] != 0);
		return;
	}
	check(d.ring_pages >= 1 &&
	      d.ring_pages <= (1u << lim.max_ring_order));
	check(d.data_pages >= 1 && d.data_pages <= lim.max_data_pages);
	check(d.ndir * XGPUIF_XEN_REFS_PER_DIR >= d.data_pages &&
	      (d.ndir - 1) * XGPUIF_XEN_REFS_PER_DIR < d.data_pages);
	/* the arrays hold what they claim (ASan) */
	sink ^= d.ring_refs[d.ring_pages - 1] ^ d.dir_refs[d.ndir - 1];
	xgpub_xen_chan_desc_free(&d);
}

static void fuzz_region(const uint8_t *p, size_t n)
{
	struct xgpuif_memref dir;
	uint64_t size, used, npages = 0;
	uint32_t *refs = NULL;
	uint8_t *data;
	char why[160];
	int rc;

	if (n < 8 + 20 + 8)
		return;
	memcpy(&size, p, 8);
	memset(&dir, 0, sizeof(dir));
	memcpy(&dir.off, p + 8, 8);
	memcpy(&dir.len, p + 16, 8);
	memcpy(&dir.region, p + 24, 4);
	memcpy(&used, p + 28, 8);
	/* small sizes are where the directory fits the data */
	if (p[0] & 1)
		size %= 64ull * XGPUIF_PAGE_SIZE + 1;
	if (p[1] & 1)
		used %= XGPUB_XEN_REGION_GRANTS + 1ull;
	n -= 36;
	data = malloc(n ? n : 1);
	memcpy(data, p + 36, n);
	rc = xgpub_xen_region_refs(size, &dir, data, n, used, &refs, &npages,
				   why, sizeof(why));
	if (rc == 0) {
		check(npages * XGPUIF_PAGE_SIZE == size && npages);
		check(used + npages <= XGPUB_XEN_REGION_GRANTS);
		check(dir.off + npages * 4 <= n);
		check(!memcmp(refs, data + dir.off, npages * 4));
		for (uint64_t i = 0; i < npages; i++)
			for (uint64_t j = i + 1; j < npages && j < i + 64; j++)
				check(refs[i] != refs[j]);
		free(refs);
	}
	free(data);
}

static int digits_only(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static void fuzz_value(const uint8_t *p, size_t n)
{
	uint64_t max, v = 0;
	int64_t e;
	char *s;

	if (n < 8)
		return;
	memcpy(&max, p, 8);
	s = strndup((const char *)p + 8, n - 8);
	if (!s)
		return;
	check(xgpub_xs_uint(NULL, max, &v) == -1);
	if (xgpub_xs_uint(s, max, &v) == 0)
		check(v <= max && digits_only(s));
	e = xgpub_xs_dirent(s, max > INT32_MAX ? INT32_MAX : max);
	check(e == -1 || (e >= 0 && (uint64_t)e <= max && digits_only(s)));
	(void)xgpub_xs_long(s, -7);
	xgpub_xs_printable(s);
	for (const char *c = s; *c; c++)
		check(*c >= 0x20 && *c <= 0x7e);
	free(s);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	xgpub_log_init("fuzz", false, -1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	switch (data[0] % 3) {
	case 0:
		fuzz_chan(data + 1, size - 1);
		break;
	case 1:
		fuzz_region(data + 1, size - 1);
		break;
	default:
		fuzz_value(data + 1, size - 1);
		break;
	}
	return 0;
}
