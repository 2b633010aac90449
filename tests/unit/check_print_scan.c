/* SPDX-License-Identifier: MIT */
/* needs: xen-backend/worker/xgpub_print_scan.c */
/*
 * Which images may print (xgpub_print_scan.c): while none loaded may, a
 * synchronize may be answered by the GPU alone (xgpub_fence.c).  Bare
 * cubins and PTX by the name vprintf; fatbins member by member,
 * ZSTD-compressed members unpacked (the frames below are PTX that the
 * zstd tool packed); anything not readable may print.
 */
#include <check.h>
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"
#include "check_run.h"

/* PTX whose kernel prints, and PTX whose kernel does not */
static const char ptx_quiet[] =
	".version 8.8\n.target sm_90\n.address_size 64\n"
	".visible .entry k() { ret; }\n";
static const char ptx_print[] =
	".version 8.8\n.target sm_90\n.address_size 64\n"
	".extern .func (.param .b32 r) vprintf (.param .b64 f, .param .b64 a);\n"
	".visible .entry k() { ret; }\n";

/* the same two, packed by `zstd -19` */
static const uint8_t zst_print[] = {
	0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x8f, 0x75, 0x03, 0x00, 0x82, 0xc7, 0x18,
	0x19, 0x70, 0x6f, 0x0e, 0x10, 0x28, 0x29, 0x29, 0x51, 0xe4, 0x77, 0x6d,
	0x0a, 0x83, 0xff, 0xbf, 0x5d, 0xb2, 0xf4, 0xeb, 0x72, 0x01, 0xe8, 0xdf,
	0x43, 0x0d, 0x2d, 0x7b, 0x42, 0xb9, 0x8f, 0xdd, 0x01, 0xcf, 0xad, 0xa6,
	0x92, 0xf7, 0x0c, 0x2d, 0x71, 0xc6, 0xba, 0x2d, 0x71, 0xef, 0x01, 0x7c,
	0x61, 0x40, 0x2a, 0x63, 0x4f, 0xf5, 0xae, 0x3f, 0x10, 0xcb, 0x3e, 0x7a,
	0xfd, 0xa6, 0x05, 0xce, 0x48, 0x0a, 0xee, 0x65, 0x33, 0xad, 0x78, 0x5b,
	0x61, 0x9c, 0xaf, 0x38, 0x95, 0x39, 0xb9, 0x9b, 0xe6, 0x6d, 0x13, 0x10,
	0x25, 0x9a, 0xa7, 0xec, 0xf4, 0xa3, 0xdb, 0x8e, 0x3d, 0x2e, 0xa5, 0x38,
	0x9b, 0xeb, 0x06, 0x02, 0x00, 0x32, 0x79, 0x45, 0x6b, 0x4c, 0x33, 0xd6,
	0xcd, 0xd1, 0x75,
};
static const uint8_t zst_quiet[] = {
	0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x49, 0x1d, 0x02, 0x00, 0x92, 0xc4, 0x0f,
	0x11, 0x90, 0x7d, 0x90, 0x0f, 0x09, 0xe9, 0x70, 0x42, 0x77, 0xbf, 0x64,
	0x6a, 0x7f, 0x30, 0x9e, 0xf4, 0x0c, 0xa0, 0x7f, 0xc2, 0xce, 0x3e, 0x7f,
	0x11, 0xe2, 0x6b, 0x8b, 0xa9, 0x1b, 0xef, 0x24, 0x83, 0x17, 0xe6, 0x01,
	0x8a, 0x79, 0xb7, 0xe1, 0x55, 0xf7, 0x3a, 0xdb, 0xda, 0x1a, 0x80, 0x20,
	0x35, 0xef, 0x63, 0xf7, 0xec, 0xc2, 0x03, 0x9c, 0x71, 0x9e, 0x56, 0x78,
	0xad, 0xcb, 0x23, 0x00, 0x29, 0x30, 0x31, 0x35,
};

/* a cubin of n bytes whose body holds word (or nothing) */
static size_t make_cubin(uint8_t *p, size_t n, uint16_t machine,
			 const char *word)
{
	Elf64_Ehdr eh;

	memset(p, 0, n);
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_machine = machine;
	memcpy(p, &eh, sizeof(eh));
	memcpy(p + sizeof(eh), ".text._Z1kv\0.nv.info", 21);
	if (word)
		memcpy(p + 100, word, strlen(word));
	return n;
}

/* append a member (kind, 64-byte header, payload) to a fatbin at p */
static size_t add_member(uint8_t *p, size_t at, uint16_t kind,
			 const void *payload, uint64_t len)
{
	uint32_t mh = 64;

	memset(p + at, 0, 64);
	memcpy(p + at, &kind, sizeof(kind));
	memcpy(p + at + 4, &mh, sizeof(mh));
	memcpy(p + at + 8, &len, sizeof(len));
	memcpy(p + at + 64, payload, len);
	return at + 64 + len;
}

/* the fatbin header for members that end at end */
static void fatbin_header(uint8_t *p, size_t end)
{
	uint32_t magic = 0xba55ed50u;
	uint16_t version = 1, hsize = 16;
	uint64_t fsize = end - 16;

	memcpy(p, &magic, 4);
	memcpy(p + 4, &version, 2);
	memcpy(p + 6, &hsize, 2);
	memcpy(p + 8, &fsize, 8);
}

START_TEST(test_bare)
{
	uint8_t cubin[256];

	make_cubin(cubin, sizeof(cubin), EM_CUDA, NULL);
	ck_assert(!xgpub_image_may_print(cubin, sizeof(cubin)));
	make_cubin(cubin, sizeof(cubin), EM_CUDA, "vprintf");
	ck_assert(xgpub_image_may_print(cubin, sizeof(cubin)));
	/* an assert is no output of this kind (its failure ends the
	 * context, and the plain synchronize then reports it) */
	make_cubin(cubin, sizeof(cubin), EM_CUDA, "__assertfail");
	ck_assert(!xgpub_image_may_print(cubin, sizeof(cubin)));
	ck_assert(!xgpub_image_may_print((const uint8_t *)ptx_quiet,
					 sizeof(ptx_quiet)));
	ck_assert(xgpub_image_may_print((const uint8_t *)ptx_print,
					sizeof(ptx_print)));
	/* an ELF for another machine, a bare ZSTD frame, nothing known */
	make_cubin(cubin, sizeof(cubin), EM_X86_64, NULL);
	ck_assert(xgpub_image_may_print(cubin, sizeof(cubin)));
	ck_assert(xgpub_image_may_print(zst_quiet, sizeof(zst_quiet)));
	ck_assert(xgpub_image_may_print((const uint8_t *)"\x01\x02", 2));
}
END_TEST

START_TEST(test_fatbin)
{
	static uint8_t fb[4096];
	uint8_t cubin[256], cubin_p[256];
	size_t end;

	make_cubin(cubin, sizeof(cubin), EM_CUDA, NULL);
	make_cubin(cubin_p, sizeof(cubin_p), EM_CUDA, "vprintf");
	/* members that do not print */
	end = add_member(fb, 16, 2, cubin, sizeof(cubin));
	end = add_member(fb, end, 1, ptx_quiet, sizeof(ptx_quiet));
	fatbin_header(fb, end);
	ck_assert(!xgpub_image_may_print(fb, end));
	/* one that prints, the last */
	end = add_member(fb, end, 2, cubin_p, sizeof(cubin_p));
	fatbin_header(fb, end);
	ck_assert(xgpub_image_may_print(fb, end));
	/* a member of a kind not known */
	end = add_member(fb, 16, 8, cubin, sizeof(cubin));
	fatbin_header(fb, end);
	ck_assert(xgpub_image_may_print(fb, end));
	/* sizes that do not add up: a member past the end, a fatbin
	 * larger than its image, a short member header */
	end = add_member(fb, 16, 2, cubin, sizeof(cubin));
	fatbin_header(fb, end - 8);
	ck_assert(xgpub_image_may_print(fb, end));
	fatbin_header(fb, end);
	ck_assert(xgpub_image_may_print(fb, end - 1));
	end = add_member(fb, 16, 2, cubin, sizeof(cubin));
	fatbin_header(fb, end + 8);
	ck_assert(xgpub_image_may_print(fb, end + 8));
	/* no members: nothing prints */
	fatbin_header(fb, 16);
	ck_assert(!xgpub_image_may_print(fb, 16));
}
END_TEST

/* nvcc packs members with ZSTD: they are unpacked and read */
START_TEST(test_fatbin_packed)
{
	static uint8_t fb[4096], pad[sizeof(zst_quiet) + 8];
	uint8_t cubin[256], bad[sizeof(zst_quiet)];
	size_t end;

	make_cubin(cubin, sizeof(cubin), EM_CUDA, NULL);
	end = add_member(fb, 16, 2, cubin, sizeof(cubin));
	end = add_member(fb, end, 1, zst_quiet, sizeof(zst_quiet));
	fatbin_header(fb, end);
	ck_assert(!xgpub_image_may_print(fb, end));
	end = add_member(fb, 16, 2, cubin, sizeof(cubin));
	end = add_member(fb, end, 1, zst_print, sizeof(zst_print));
	fatbin_header(fb, end);
	ck_assert(xgpub_image_may_print(fb, end));
	/* the frame, then padding as nvcc leaves it */
	memcpy(pad, zst_quiet, sizeof(zst_quiet));
	memset(pad + sizeof(zst_quiet), 0, 8);
	end = add_member(fb, 16, 1, pad, sizeof(pad));
	fatbin_header(fb, end);
	ck_assert(!xgpub_image_may_print(fb, end));
	/* a damaged frame, a cut one: may print */
	memcpy(bad, zst_quiet, sizeof(bad));
	bad[sizeof(bad) / 2] ^= 0x5a;
	end = add_member(fb, 16, 1, bad, sizeof(bad));
	fatbin_header(fb, end);
	ck_assert(xgpub_image_may_print(fb, end));
	end = add_member(fb, 16, 1, zst_quiet, sizeof(zst_quiet) - 4);
	fatbin_header(fb, end);
	ck_assert(xgpub_image_may_print(fb, end));
}
END_TEST

/* past the bound an image is not read: it may print */
START_TEST(test_too_large)
{
	size_t n = (64u << 20) + 1;
	uint8_t *p = calloc(1, n);

	ck_assert_ptr_nonnull(p);
	memcpy(p, ptx_quiet, sizeof(ptx_quiet) - 1);
	ck_assert(xgpub_image_may_print(p, n));
	ck_assert(!xgpub_image_may_print(p, n - 1));
	free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("print_scan");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_bare);
	tcase_add_test(tc, test_fatbin);
	tcase_add_test(tc, test_fatbin_packed);
	tcase_add_test(tc, test_too_large);
	suite_add_tcase(s, tc);
	return check_run(s, true);
}
