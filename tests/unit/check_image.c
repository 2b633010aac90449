/* SPDX-License-Identifier: MIT */
/* needs: xen-frontend/lib/xgpulib_image.c */
/* needs: xen-frontend/lib/xgpulib_api_launch.c */
/*
 * Images and kernel parameters, guest side: how many bytes of an image
 * are shipped (fatbin wrappers, fatbin headers, ELF cubins whose sections
 * lie past the section header table, PTX text), and how a launch's
 * kernelParams or extra buffer becomes the flat parameter buffer of the
 * wire.  The worker's side of the same images and parameters is
 * check_worker_module.c; the samples are image_samples.h.
 */
#include <check.h>
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpulib.h"
#include "xgpulib_image.h"
#include "image_samples.h"
#include "check_run.h"

/* ---- guest: image sizes -------------------------------------------------- */

START_TEST(test_size_null_and_ptx)
{
	static const char ptx[] = ".version 8.0\n.target sm_90\n";

	ck_assert_uint_eq(xgpulib_image_size(NULL), 0);
	ck_assert_uint_eq(xgpulib_image_size(ptx), sizeof(ptx));
	ck_assert_uint_eq(xgpulib_image_size(""), 1);
	/* a short string that starts like a magic number */
	ck_assert_uint_eq(xgpulib_image_size("\x7f" "E"), 3);
	ck_assert_uint_eq(xgpulib_image_size("\x50\xed"), 3);
}
END_TEST

START_TEST(test_size_fatbin)
{
	make_fatbin(fatbin_img, 16, 4400);
	ck_assert_uint_eq(xgpulib_image_size(fatbin_img), 16 + 4400);
	make_fatbin(fatbin_img, 64, 100);
	ck_assert_uint_eq(xgpulib_image_size(fatbin_img), 164);
	/* a header size below the header itself is not a fatbin we ship */
	make_fatbin(fatbin_img, 8, 100);
	ck_assert_uint_eq(xgpulib_image_size(fatbin_img), 0);
}
END_TEST

START_TEST(test_size_wrapper)
{
	struct wrapper wr = { XGPULIB_FATBIN_WRAPPER_MAGIC, 1, fatbin_img,
			      NULL };
	size_t n = 0;

	make_fatbin(fatbin_img, 16, 3792);
	ck_assert_uint_eq(xgpulib_image_size(&wr), 16 + 3792);
	/* the wrapper is replaced by the fatbin it points to */
	ck_assert_ptr_eq(xgpulib_image_bytes(&wr, &n), fatbin_img);
	ck_assert_uint_eq(n, 16 + 3792);
	wr.data = "not a fatbin";
	ck_assert_uint_eq(xgpulib_image_size(&wr), 0);
	wr.data = NULL;
	ck_assert_ptr_null(xgpulib_image_bytes(&wr, &n));
}
END_TEST

START_TEST(test_size_elf_sections_past_table)
{
	make_elf(0);
	ck_assert_uint_eq(xgpulib_image_size(elf_img), 0x480);
}
END_TEST

START_TEST(test_size_elf_extended_numbering)
{
	make_elf(1);
	ck_assert_uint_eq(xgpulib_image_size(elf_img), 0x480);
}
END_TEST

START_TEST(test_size_elf_table_last)
{
	Elf64_Ehdr eh;

	make_elf(0);
	/* move the section header table past every section */
	memcpy(&eh, elf_img, sizeof(eh));
	memmove(elf_img + 0x800, elf_img + 0x100, 4 * sizeof(Elf64_Shdr));
	eh.e_shoff = 0x800;
	memcpy(elf_img, &eh, sizeof(eh));
	ck_assert_uint_eq(xgpulib_image_size(elf_img),
			  0x800 + 4 * sizeof(Elf64_Shdr));
}
END_TEST

START_TEST(test_size_elf32_refused)
{
	make_elf(0);
	elf_img[EI_CLASS] = ELFCLASS32;
	ck_assert_uint_eq(xgpulib_image_size(elf_img), 0);
}
END_TEST

/* ---- guest: parameter packing -------------------------------------------- */

/* vadd's layout is image_samples.h's vadd_params */
static struct xgpulib_func vadd = {
	.magic = XGPULIB_FUNC_MAGIC,
	.kind = XGPUIF_FN_FUNCTION,
	.remote = 1,
	.name = "vadd",
	.nparams = 6,
	.param_bytes = 41,
	.params = vadd_params,
};

static struct xgpulib_func unknown = {
	.magic = XGPULIB_FUNC_MAGIC,
	.kind = XGPUIF_FN_KERNEL,
	.remote = 2,
	.name = "mystery",
	.nparams = XGPUIF_PARAMS_UNKNOWN,
};

static struct xgpulib_func noargs = {
	.magic = XGPULIB_FUNC_MAGIC,
	.kind = XGPUIF_FN_FUNCTION,
	.remote = 3,
	.name = "noargs",
	.nparams = 0,
};

START_TEST(test_pack_kernel_params)
{
	uint64_t a = 0x1111111111111111ull, b = 0x2222222222222222ull,
		 c = 0x3333333333333333ull;
	int n = 4096;
	double scale = 1.5;
	char tag = 7;
	void *args[6] = { &a, &b, &c, &n, &scale, &tag };
	uint8_t buf[64], want[41];
	uint32_t len = 0;

	memset(buf, 0xee, sizeof(buf));
	memset(want, 0, sizeof(want));
	memcpy(want, &a, 8);
	memcpy(want + 8, &b, 8);
	memcpy(want + 16, &c, 8);
	memcpy(want + 24, &n, 4);
	memcpy(want + 32, &scale, 8);
	memcpy(want + 40, &tag, 1);
	ck_assert_int_eq(xgpulib_params_len(&vadd, args, NULL, &len), 0);
	ck_assert_uint_eq(len, 41);
	ck_assert_int_eq(xgpulib_pack_params(&vadd, args, NULL, buf,
					     sizeof(buf), &len), 0);
	ck_assert_uint_eq(len, 41);
	/* the padding after n is zero, not whatever was in the buffer */
	ck_assert_mem_eq(buf, want, 41);
	/* too small a buffer */
	ck_assert_int_eq(xgpulib_pack_params(&vadd, args, NULL, buf, 40,
					     &len),
			 CUDA_ERROR_INVALID_VALUE);
	/* a NULL argument pointer */
	args[2] = NULL;
	ck_assert_int_eq(xgpulib_pack_params(&vadd, args, NULL, buf,
					     sizeof(buf), &len),
			 CUDA_ERROR_INVALID_VALUE);
	/* no kernelParams for a function that has parameters */
	ck_assert_int_eq(xgpulib_params_len(&vadd, NULL, NULL, &len),
			 CUDA_ERROR_INVALID_VALUE);
}
END_TEST

START_TEST(test_pack_extra)
{
	uint8_t argbuf[48], buf[64];
	size_t size = sizeof(argbuf);
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, argbuf,
			  CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
			  CU_LAUNCH_PARAM_END };
	void *args[6] = { 0 };
	uint32_t len = 0;

	for (size_t i = 0; i < sizeof(argbuf); i++)
		argbuf[i] = (uint8_t)i;
	/* a known layout: its bytes, even from a longer buffer */
	ck_assert_int_eq(xgpulib_pack_params(&vadd, NULL, extra, buf,
					     sizeof(buf), &len), 0);
	ck_assert_uint_eq(len, 41);
	ck_assert_mem_eq(buf, argbuf, 41);
	/* a shorter buffer leaves parameters unset */
	size = 40;
	ck_assert_int_eq(xgpulib_params_len(&vadd, NULL, extra, &len),
			 CUDA_ERROR_INVALID_VALUE);
	/* an unknown layout: the buffer as given */
	size = 24;
	ck_assert_int_eq(xgpulib_pack_params(&unknown, NULL, extra, buf,
					     sizeof(buf), &len), 0);
	ck_assert_uint_eq(len, 24);
	ck_assert_mem_eq(buf, argbuf, 24);
	/* both forms at once */
	ck_assert_int_eq(xgpulib_params_len(&vadd, args, extra, &len),
			 CUDA_ERROR_INVALID_VALUE);
	/* no size */
	extra[2] = CU_LAUNCH_PARAM_END;
	ck_assert_int_eq(xgpulib_params_len(&unknown, NULL, extra, &len),
			 CUDA_ERROR_INVALID_VALUE);
	/* an unknown key */
	extra[0] = (void *)(uintptr_t)0x77;
	ck_assert_int_eq(xgpulib_params_len(&unknown, NULL, extra, &len),
			 CUDA_ERROR_INVALID_VALUE);
}
END_TEST

START_TEST(test_pack_unknown_layout_and_noargs)
{
	int x = 1;
	void *args[1] = { &x };
	uint32_t len = 99;

	ck_assert_int_eq(xgpulib_params_len(&unknown, args, NULL, &len),
			 CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(xgpulib_params_len(&noargs, NULL, NULL, &len), 0);
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(xgpulib_pack_params(&noargs, NULL, NULL, NULL, 0,
					     &len), 0);
	ck_assert_uint_eq(len, 0);
}
END_TEST

static Suite *image_suite(void)
{
	Suite *s = suite_create("image");
	TCase *tc;

	tc = tcase_create("size");
	tcase_add_test(tc, test_size_null_and_ptx);
	tcase_add_test(tc, test_size_fatbin);
	tcase_add_test(tc, test_size_wrapper);
	tcase_add_test(tc, test_size_elf_sections_past_table);
	tcase_add_test(tc, test_size_elf_extended_numbering);
	tcase_add_test(tc, test_size_elf_table_last);
	tcase_add_test(tc, test_size_elf32_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("params");
	tcase_add_test(tc, test_pack_kernel_params);
	tcase_add_test(tc, test_pack_extra);
	tcase_add_test(tc, test_pack_unknown_layout_and_noargs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(image_suite(), true);
}
