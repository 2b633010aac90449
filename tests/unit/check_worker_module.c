/* SPDX-License-Identifier: MIT */
/* needs: xen-backend/worker/xgpub_op_module.c */
/* needs: xen-backend/worker/xgpub_op_launch.c */
/* needs: xen-backend/worker/xgpub_handles.c (and the generated xgpub_ops[]) */
/*
 * Images and kernel parameters, worker side: the blob, module, library
 * and launch handlers, reached through the generated dispatch table
 * xgpub_ops[], against a recording mock driver (worker_mock.h): blob
 * bounds, images that claim more bytes than they have, option filtering,
 * symbol names without a terminator, the parameter layout of a function
 * reply, kernelParams rebuilt at a launch, event handles in launch
 * attributes, and handles dropped with their module or library.  The
 * guest's side is check_image.c.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"
#include "xgpub_module.h"
#include "image_samples.h"
#include "worker_mock.h"
#include "check_run.h"

/* ---- blobs and module loads --------------------------------------------- */

START_TEST(test_blob_bounds)
{
	struct xgpuif_blob_create_args ca = { (1ull << 30) + 1 };
	struct xgpuif_blob_write_args wa;
	struct xgpuif_handle_args fa;
	xgpuif_handle_t b;

	/* one image may not exceed 1 GiB */
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_CREATE, &ca, sizeof(ca), NULL),
			 CUDA_ERROR_OUT_OF_MEMORY);
	b = blob_of(ptx_text, sizeof(ptx_text));
	memset(&wa, 0, sizeof(wa));
	wa.blob = b;
	wa.src.region = XGPUIF_REGION_DATA;
	/* past the blob's end */
	wa.off = 1;
	wa.src.len = sizeof(ptx_text);
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_WRITE, &wa, sizeof(wa), NULL),
			 XGPUIF_ST_PROTO);
	wa.off = UINT64_MAX;
	wa.src.len = 2;
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_WRITE, &wa, sizeof(wa), NULL),
			 XGPUIF_ST_PROTO);
	/* past the data area */
	wa.off = 0;
	wa.src.off = sizeof(data_area) - 4;
	wa.src.len = 8;
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_WRITE, &wa, sizeof(wa), NULL),
			 XGPUIF_ST_PROTO);
	/* a stale handle */
	fa.handle = b;
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_FREE, &fa, sizeof(fa), NULL), 0);
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_FREE, &fa, sizeof(fa), NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	wa.blob = b;
	wa.src.off = 0;
	wa.src.len = 1;
	ck_assert_int_eq(op(XGPUIF_OP_BLOB_WRITE, &wa, sizeof(wa), NULL),
			 CUDA_ERROR_INVALID_HANDLE);
}
END_TEST

START_TEST(test_blob_total_limit)
{
	struct xgpuif_blob_create_args ca = { 1ull << 30 };
	int i, rc = 0;

	/* four 1 GiB blobs fill the guest's 4 GiB; malloc may refuse
	 * sooner on a small test machine, which is the same answer */
	for (i = 0; i < 5 && rc == 0; i++)
		rc = op(XGPUIF_OP_BLOB_CREATE, &ca, sizeof(ca), NULL);
	ck_assert_int_eq(rc, CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_le(i, 5);
}
END_TEST

START_TEST(test_module_load_options_and_unload)
{
	struct xgpuif_load_opt opts[3] = {
		{ CU_JIT_MAX_REGISTERS, 0, 32 },
		{ CU_JIT_OPTIMIZATION_LEVEL, 0, 3 },
		{ CU_JIT_INFO_LOG_BUFFER, 0, 0xdeadbeef },
	};
	struct xgpuif_handle_args ua;
	xgpuif_handle_t b, m = 0;

	/* a pointer-valued option is refused, and the blob is consumed */
	b = blob_of(ptx_text, sizeof(ptx_text));
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, opts, 3, 0, &m),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, b, XGPUB_H_BLOB));
	/* library options on a module load are malformed */
	b = blob_of(ptx_text, sizeof(ptx_text));
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, opts, 1, 1, &m),
			 XGPUIF_ST_PROTO);
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, opts, 2, 0, &m), 0);
	ck_assert_uint_eq(rec.njit, 2);
	ck_assert_int_eq(rec.jit[0], CU_JIT_MAX_REGISTERS);
	ck_assert_ptr_eq(rec.jitv[0], (void *)(uintptr_t)32);
	ck_assert_str_eq(rec.image, ptx_text);
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, b, XGPUB_H_BLOB));
	ck_assert_ptr_nonnull(xgpub_handle_get(&wk.h, m, XGPUB_H_MODULE));
	ua.handle = m;
	ck_assert_int_eq(op(XGPUIF_OP_MODULE_UNLOAD, &ua, sizeof(ua), NULL), 0);
	ck_assert_int_eq(rec.unloads, 1);
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, m, XGPUB_H_MODULE));
}
END_TEST

START_TEST(test_image_must_fit_blob)
{
	uint8_t img[64];
	struct wrapper wr = { XGPULIB_FATBIN_WRAPPER_MAGIC, 1, fatbin_img,
			      NULL };
	xgpuif_handle_t b, m = 0;

	/* a fatbin claiming more than the blob holds */
	memset(img, 0, sizeof(img));
	make_fatbin(img, 16, 4400);
	b = blob_of(img, sizeof(img));
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, NULL, 0, 0, &m),
			 CUDA_ERROR_INVALID_IMAGE);
	/* the same header with its bytes */
	make_fatbin(img, 16, 48);
	b = blob_of(img, sizeof(img));
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, NULL, 0, 0, &m), 0);
	/* a wrapper holds a guest pointer */
	b = blob_of(&wr, sizeof(wr));
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, NULL, 0, 0, &m),
			 CUDA_ERROR_INVALID_IMAGE);
	/* an ELF whose section lies past the blob */
	make_elf(0);
	b = blob_of(elf_img, 0x470);
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, NULL, 0, 0, &m),
			 CUDA_ERROR_INVALID_IMAGE);
	b = blob_of(elf_img, 0x480);
	ck_assert_int_eq(load(XGPUIF_OP_MODULE_LOAD, b, NULL, 0, 0, &m), 0);
}
END_TEST

/* the ELF tables a loader reads past the ELF's end (found by
 * tests/fuzz/fuzz_image.c): the name table's section header, a
 * segment's file bytes */
START_TEST(test_elf_name_table_and_segments_fit)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh0;
	Elf64_Phdr ph;

	make_elf(0);
	ck_assert(xgpub_image_fits(elf_img, 0x480));
	memcpy(&eh, elf_img, sizeof(eh));
	/* e_shstrndx names a section header past the table (and the ELF) */
	eh.e_shstrndx = 0xf700;
	memcpy(elf_img, &eh, sizeof(eh));
	ck_assert(!xgpub_image_fits(elf_img, 0x480));
	eh.e_shstrndx = 4;
	memcpy(elf_img, &eh, sizeof(eh));
	ck_assert(!xgpub_image_fits(elf_img, 0x480));
	eh.e_shstrndx = 3;
	memcpy(elf_img, &eh, sizeof(eh));
	ck_assert(xgpub_image_fits(elf_img, 0x480));
	/* SHN_XINDEX: the index is section 0's sh_link */
	eh.e_shstrndx = SHN_XINDEX;
	memcpy(elf_img, &eh, sizeof(eh));
	memcpy(&sh0, elf_img + 0x100, sizeof(sh0));
	sh0.sh_link = 9;
	memcpy(elf_img + 0x100, &sh0, sizeof(sh0));
	ck_assert(!xgpub_image_fits(elf_img, 0x480));
	sh0.sh_link = 2;
	memcpy(elf_img + 0x100, &sh0, sizeof(sh0));
	ck_assert(xgpub_image_fits(elf_img, 0x480));
	/* a segment whose file bytes end past the ELF */
	make_elf(0);
	memcpy(&ph, elf_img + 0x40, sizeof(ph));
	ph.p_offset = 0x400;
	ph.p_filesz = 0x80;
	memcpy(elf_img + 0x40, &ph, sizeof(ph));
	ck_assert(xgpub_image_fits(elf_img, 0x480));
	ph.p_filesz = 0x81;
	memcpy(elf_img + 0x40, &ph, sizeof(ph));
	ck_assert(!xgpub_image_fits(elf_img, 0x480));
	ph.p_offset = UINT64_MAX;
	ph.p_filesz = 2;
	memcpy(elf_img + 0x40, &ph, sizeof(ph));
	ck_assert(!xgpub_image_fits(elf_img, 0x480));
}
END_TEST

/* ---- functions and their parameter layout ------------------------------- */

START_TEST(test_get_function_layout)
{
	xgpuif_handle_t m = load_module(), f;
	uint32_t rlen;

	f = get_vadd(m);
	ck_assert_ptr_nonnull(xgpub_handle_get(&wk.h, f, XGPUB_H_FUNCTION));
	/* no terminator inside the request */
	ck_assert_int_eq(get_symbol(XGPUIF_OP_MODULE_GET_FUNCTION, m, "vadd",
				    4, &rlen),
			 XGPUIF_ST_PROTO);
	ck_assert_int_eq(get_symbol(XGPUIF_OP_MODULE_GET_FUNCTION, m, "", 0,
				    &rlen),
			 XGPUIF_ST_PROTO);
	ck_assert_int_eq(get_symbol(XGPUIF_OP_MODULE_GET_FUNCTION, m, "nope",
				    5, &rlen),
			 CUDA_ERROR_NOT_FOUND);
	ck_assert_int_eq(get_symbol(XGPUIF_OP_MODULE_GET_FUNCTION, m + 1,
				    "vadd", 5, &rlen),
			 CUDA_ERROR_INVALID_HANDLE);
}
END_TEST

START_TEST(test_layout_too_big_for_reply)
{
	xgpuif_handle_t m = load_module();
	struct xgpuif_func_reply r;
	uint8_t p[64];
	struct xgpuif_symbol_args a = { m };
	uint32_t rlen = sizeof(r) + 8;	/* room for 2 of 6 parameters */

	memcpy(p, &a, sizeof(a));
	memcpy(p + sizeof(a), "vadd", 5);
	ck_assert_int_eq(op_cap(XGPUIF_OP_MODULE_GET_FUNCTION, p,
				sizeof(a) + 5, rlen, &rlen),
			 0);
	ck_assert_uint_eq(rlen, sizeof(r));
	memcpy(&r, out, sizeof(r));
	ck_assert_uint_eq(r.nparams, XGPUIF_PARAMS_UNKNOWN);
}
END_TEST

/* ---- launches ----------------------------------------------------------- */

struct launch_msg {
	struct xgpuif_launch_args a;
	struct xgpuif_launch_attr attrs[2];
	uint8_t params[64];
};

static uint32_t launch_len(const struct launch_msg *m)
{
	return sizeof(m->a) + m->a.nattrs * sizeof(m->attrs[0]) +
	       m->a.param_bytes;
}

static uint8_t msg[XGPUIF_MAX_PAYLOAD];

/*
 * The message a guest sends: attributes, then the parameters (attribute
 * counts past the two of struct launch_msg go out as zeros).
 */
static void launch_pack(const struct launch_msg *m)
{
	uint32_t n = m->a.nattrs < 2 ? m->a.nattrs : 2;

	memset(msg, 0, sizeof(msg));
	memcpy(msg, &m->a, sizeof(m->a));
	memcpy(msg + sizeof(m->a), m->attrs, n * sizeof(m->attrs[0]));
	memcpy(msg + sizeof(m->a) + m->a.nattrs * sizeof(m->attrs[0]),
	       m->params, m->a.param_bytes);
}

static int do_launch(const struct launch_msg *m)
{
	launch_pack(m);
	return op(XGPUIF_OP_LAUNCH, msg, launch_len(m), NULL);
}

START_TEST(test_launch_rebuilds_kernel_params)
{
	xgpuif_handle_t f = get_vadd(load_module()), ev;
	struct launch_msg m;
	xgpuif_handle_t h;

	memset(&m, 0, sizeof(m));
	m.a.func = f;
	m.a.kind = XGPUIF_FN_FUNCTION;
	for (int i = 0; i < 3; i++) {
		m.a.grid[i] = 1 + i;
		m.a.block[i] = 32 >> i;
	}
	m.a.param_bytes = 41;
	for (int i = 0; i < 41; i++)
		m.params[i] = (uint8_t)(i * 7 + 1);
	ck_assert_int_eq(do_launch(&m), 0);
	ck_assert_int_eq(rec.launched, 1);
	ck_assert_int_eq(rec.used_extra, 0);
	ck_assert_uint_eq(rec.grid[1], 2);
	ck_assert_uint_eq(rec.block[2], 8);
	ck_assert_mem_eq(rec.params, m.params, 24 + 4);
	ck_assert_mem_eq(rec.params + 32, m.params + 32, 9);

	/* the layout decides the parameter bytes */
	m.a.param_bytes = 40;
	ck_assert_int_eq(do_launch(&m), XGPUIF_ST_PROTO);
	m.a.param_bytes = 41;
	/* lengths that do not add up */
	launch_pack(&m);
	ck_assert_int_eq(op(XGPUIF_OP_LAUNCH, msg, launch_len(&m) + 1, NULL),
			 XGPUIF_ST_PROTO);
	m.a.nattrs = XGPUIF_MAX_LAUNCH_ATTRS + 1;
	ck_assert_int_eq(do_launch(&m), XGPUIF_ST_PROTO);
	m.a.nattrs = 0;
	/* an empty grid */
	m.a.grid[0] = 0;
	ck_assert_int_eq(do_launch(&m), CUDA_ERROR_INVALID_VALUE);
	m.a.grid[0] = 1;
	/* a bad kind is malformed, a bad handle is not */
	m.a.kind = 7;
	ck_assert_int_eq(do_launch(&m), XGPUIF_ST_PROTO);
	m.a.kind = XGPUIF_FN_KERNEL;
	ck_assert_int_eq(do_launch(&m), CUDA_ERROR_INVALID_HANDLE);
	m.a.kind = XGPUIF_FN_FUNCTION;
	m.a.stream = (1ull << 32) | 77;
	ck_assert_int_eq(do_launch(&m), CUDA_ERROR_INVALID_HANDLE);
	m.a.stream = XGPUIF_STREAM_PER_THREAD;

	/* attributes: priority as is, the completion event translated */
	ev = xgpub_handle_new(&wk.h, XGPUB_H_EVENT, EVT, NULL);
	m.a.nattrs = 2;
	m.attrs[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
	memset(m.attrs[0].value, 0, sizeof(m.attrs[0].value));
	m.attrs[0].value[0] = 3;
	m.attrs[1].id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
	memcpy(m.attrs[1].value, &ev, sizeof(ev));
	ck_assert_int_eq(do_launch(&m), 0);
	ck_assert_int_eq(rec.launched_ex, 1);
	ck_assert_uint_eq(rec.nattrs, 2);
	ck_assert_int_eq(rec.attrs[0].value.priority, 3);
	ck_assert_ptr_eq(rec.attrs[1].value.launchCompletionEvent.event, EVT);
	ck_assert_mem_eq(rec.params, m.params, 24 + 4);
	/* a stale event */
	h = ev + 1;
	memcpy(m.attrs[1].value, &h, sizeof(h));
	ck_assert_int_eq(do_launch(&m), CUDA_ERROR_INVALID_HANDLE);
	/* a graphs-only attribute carrying an output pointer */
	m.attrs[1].id = CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE;
	ck_assert_int_eq(do_launch(&m), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

/* ---- libraries, attributes, a context's end ----------------------------- */

START_TEST(test_library_kernel_and_unload)
{
	struct xgpuif_load_opt opt = { CU_LIBRARY_BINARY_IS_PRESERVED, 0, 1 };
	struct xgpuif_load_opt bad = {
		CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE, 0, 0x1234 };
	struct xgpuif_handle_args a;
	struct xgpuif_func_reply r;
	struct xgpuif_load_reply lr;
	xgpuif_handle_t lib = 0, k, lm, mf;
	uint32_t rlen;

	ck_assert_int_eq(load(XGPUIF_OP_LIBRARY_LOAD,
			      blob_of(ptx_text, sizeof(ptx_text)), &bad, 0, 1,
			      &lib),
			 CUDA_ERROR_INVALID_VALUE);
	/* the worker keeps the image, so it says so even if the guest
	 * did not */
	ck_assert_int_eq(load(XGPUIF_OP_LIBRARY_LOAD,
			      blob_of(ptx_text, sizeof(ptx_text)), NULL, 0, 0,
			      &lib),
			 0);
	ck_assert_uint_eq(rec.nlib, 1);
	ck_assert_int_eq(rec.lib[0], CU_LIBRARY_BINARY_IS_PRESERVED);
	ck_assert_int_eq(load(XGPUIF_OP_LIBRARY_LOAD,
			      blob_of(ptx_text, sizeof(ptx_text)), &opt, 0, 1,
			      &lib),
			 0);
	ck_assert_uint_eq(rec.nlib, 1);

	ck_assert_int_eq(get_symbol(XGPUIF_OP_LIBRARY_GET_KERNEL, lib, "vadd",
				    5, &rlen),
			 0);
	memcpy(&r, out, sizeof(r));
	ck_assert_uint_eq(r.nparams, 6);
	k = r.handle;
	ck_assert_ptr_nonnull(xgpub_handle_get(&wk.h, k, XGPUB_H_KERNEL));

	a.handle = lib;
	ck_assert_int_eq(op(XGPUIF_OP_LIBRARY_GET_MODULE, &a, sizeof(a), &rlen),
			 0);
	memcpy(&lr, out, sizeof(lr));
	lm = lr.handle;
	mf = get_vadd(lm);
	/* the library's module is not the guest's to unload */
	a.handle = lm;
	ck_assert_int_eq(op(XGPUIF_OP_MODULE_UNLOAD, &a, sizeof(a), NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(rec.unloads, 0);

	/* a driver that cannot give a kernel's function says so */
	a.handle = k;
	ck_assert_int_eq(op(XGPUIF_OP_KERNEL_GET_FUNCTION, &a, sizeof(a), NULL),
			 CUDA_ERROR_NOT_SUPPORTED);

	a.handle = lib;
	ck_assert_int_eq(op(XGPUIF_OP_LIBRARY_UNLOAD, &a, sizeof(a), NULL), 0);
	ck_assert_int_eq(rec.lib_unloads, 1);
	/* everything that came from the library went with it */
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, lib, XGPUB_H_LIBRARY));
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, k, XGPUB_H_KERNEL));
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, lm, XGPUB_H_MODULE));
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, mf, XGPUB_H_FUNCTION));
}
END_TEST

START_TEST(test_func_attributes)
{
	xgpuif_handle_t f = get_vadd(load_module());
	struct xgpuif_func_attr_args a;
	struct xgpuif_func_attrs_reply r;
	uint32_t rlen;

	memset(&a, 0, sizeof(a));
	a.handle = f;
	a.kind = XGPUIF_FN_FUNCTION;
	ck_assert_int_eq(op(XGPUIF_OP_FUNC_GET_ATTRIBUTES, &a, sizeof(a),
			    &rlen),
			 0);
	ck_assert_uint_eq(rlen, sizeof(r));
	memcpy(&r, out, sizeof(r));
	ck_assert_int_eq(r.attrs[CU_FUNC_ATTRIBUTE_NUM_REGS],
			 100 + CU_FUNC_ATTRIBUTE_NUM_REGS);
	ck_assert_uint_eq(r.valid[CU_FUNC_ATTRIBUTE_NUM_REGS], 1);
	ck_assert_uint_eq(
		r.valid[CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE],
		0);
	/* a setting the driver refuses */
	ck_assert_int_eq(op(XGPUIF_OP_FUNC_SET_ATTRIBUTE, &a, sizeof(a), NULL),
			 CUDA_ERROR_NOT_SUPPORTED);
}
END_TEST

START_TEST(test_ctx_gone_drops_its_handles)
{
	CUcontext c1 = (CUcontext)(uintptr_t)0x71;
	CUcontext c2 = (CUcontext)(uintptr_t)0x72;
	xgpuif_handle_t m1, f1, m2, f2;

	wk.cur = c1;
	m1 = load_module();
	f1 = get_vadd(m1);
	wk.cur = c2;
	m2 = load_module();
	f2 = get_vadd(m2);
	xgpub_module_ctx_gone(&wk, c1);
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, m1, XGPUB_H_MODULE));
	ck_assert_ptr_null(xgpub_handle_get(&wk.h, f1, XGPUB_H_FUNCTION));
	ck_assert_ptr_nonnull(xgpub_handle_get(&wk.h, m2, XGPUB_H_MODULE));
	ck_assert_ptr_nonnull(xgpub_handle_get(&wk.h, f2, XGPUB_H_FUNCTION));
	/* the driver already unloaded them with the context */
	ck_assert_int_eq(rec.unloads, 0);
}
END_TEST

static Suite *worker_module_suite(void)
{
	Suite *s = suite_create("worker_module");
	TCase *tc;

	tc = tcase_create("worker");
	tcase_add_checked_fixture(tc, wsetup, wteardown);
	tcase_add_test(tc, test_blob_bounds);
	tcase_add_test(tc, test_blob_total_limit);
	tcase_add_test(tc, test_module_load_options_and_unload);
	tcase_add_test(tc, test_image_must_fit_blob);
	tcase_add_test(tc, test_elf_name_table_and_segments_fit);
	tcase_add_test(tc, test_get_function_layout);
	tcase_add_test(tc, test_layout_too_big_for_reply);
	tcase_add_test(tc, test_launch_rebuilds_kernel_params);
	tcase_add_test(tc, test_library_kernel_and_unload);
	tcase_add_test(tc, test_func_attributes);
	tcase_add_test(tc, test_ctx_gone_drops_its_handles);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(worker_module_suite(), true);
}
