// SPDX-License-Identifier: MIT
/*
 * xgpub_print_scan.c: whether a guest's image has kernels that may print
 * (device printf).  The driver hands a printing kernel's output over when
 * the program synchronizes, so a synchronize may be answered by the GPU
 * alone (xgpub_fence.c) only while nothing loaded can print.
 *
 * Code that prints calls vprintf by name: an ELF cubin names it in its
 * string table, PTX in an .extern declaration.  A fatbin is read member
 * by member; nvcc compresses members (ZSTD), which are unpacked with the
 * system's libzstd.so.1 where it is installed (loaded at the first
 * compressed member; without it such a member may print).  Whatever
 * cannot be read, or is larger than the bounds below, may print: the
 * answer errs towards the plain synchronize.
 *
 * A kernel's assert (__assertfail) is not output of this kind: a failed
 * assert stops the context, the GPU's answer never comes, and the plain
 * synchronize the guest then asks returns the error with the message.
 */
#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"

#define FATBIN_MAGIC	0xba55ed50u
#define FATBIN_PTX	1	/* a fatbin member's kind */
#define FATBIN_ELF	2
#define ZSTD_MAGIC	"\x28\xb5\x2f\xfd"

/* larger images are not read (a framework's fatbins run to hundreds of
 * MiB): they may print */
#define SCAN_MAX	(64ull << 20)
/* nor members that unpack to more than this */
#define UNPACK_MAX	(64ull << 20)

static bool names_print(const uint8_t *p, uint64_t n)
{
	return memmem(p, n, "vprintf", 7) != NULL;
}

/* PTX: text from its first byte */
static bool is_text(const uint8_t *p, uint64_t n)
{
	uint64_t k = n < 64 ? n : 64;

	if (!n || !p[0])
		return false;
	for (uint64_t i = 0; i < k && p[i]; i++)
		if ((p[i] < 0x20 || p[i] > 0x7e) && p[i] != '\t' &&
		    p[i] != '\n' && p[i] != '\r')
			return false;
	return true;
}

static bool is_cubin(const uint8_t *p, uint64_t n)
{
	Elf64_Ehdr eh;

	if (n < sizeof(eh) || memcmp(p, ELFMAG, SELFMAG))
		return false;
	memcpy(&eh, p, sizeof(eh));
	return eh.e_machine == EM_CUDA;
}

/* ---- ZSTD, from the system's library -------------------------------------- */

static struct {
	size_t (*decompress)(void *dst, size_t cap, const void *src,
			     size_t n);
	unsigned (*is_error)(size_t code);
	unsigned long long (*content_size)(const void *src, size_t n);
	size_t (*frame_size)(const void *src, size_t n);
} zstd;
static pthread_once_t zstd_once = PTHREAD_ONCE_INIT;

static void zstd_load(void)
{
	void *h = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		xgpub_dbg("libzstd.so.1 not found: images with compressed "
			  "members count as printing");
		return;
	}
	*(void **)&zstd.decompress = dlsym(h, "ZSTD_decompress");
	*(void **)&zstd.is_error = dlsym(h, "ZSTD_isError");
	*(void **)&zstd.content_size = dlsym(h, "ZSTD_getFrameContentSize");
	*(void **)&zstd.frame_size = dlsym(h, "ZSTD_findFrameCompressedSize");
	if (!zstd.decompress || !zstd.is_error || !zstd.content_size ||
	    !zstd.frame_size)
		zstd.decompress = NULL;
}

/*
 * A compressed member's payload: one ZSTD frame (then padding).  0: it
 * unpacks and does not name vprintf; 1: it may print.
 */
static bool packed_may_print(const uint8_t *p, uint64_t n)
{
	unsigned long long size;
	size_t fsize, got;
	uint8_t *out;
	bool r;

	pthread_once(&zstd_once, zstd_load);
	if (!zstd.decompress)
		return true;
	fsize = zstd.frame_size(p, n);
	if (zstd.is_error(fsize) || fsize > n)
		return true;
	size = zstd.content_size(p, fsize);
	/* unknown (-1) and error (-2) are both past the bound */
	if (size > UNPACK_MAX)
		return true;
	out = malloc(size ? size : 1);
	if (!out)
		return true;
	got = zstd.decompress(out, size, p, fsize);
	r = zstd.is_error(got) || got != size ||
	    !(is_cubin(out, got) || is_text(out, got)) ||
	    names_print(out, got);
	free(out);
	return r;
}

/*
 * A fatbin: a 16-byte header (magic, version, header size, size of what
 * follows), then its members one after the other, each a header (kind,
 * version, the header's size, the payload's size, ...) and the payload.
 */
static bool fatbin_may_print(const uint8_t *p, uint64_t size)
{
	uint16_t hsize;
	uint64_t fsize, off, end;

	memcpy(&hsize, p + 6, sizeof(hsize));
	memcpy(&fsize, p + 8, sizeof(fsize));
	if (hsize < 16 || fsize > size || hsize > size - fsize)
		return true;
	end = hsize + fsize;
	for (off = hsize; off < end;) {
		uint16_t kind;
		uint32_t mhsize;
		uint64_t len;
		const uint8_t *m;

		if (end - off < 16)
			return true;
		memcpy(&kind, p + off, sizeof(kind));
		memcpy(&mhsize, p + off + 4, sizeof(mhsize));
		memcpy(&len, p + off + 8, sizeof(len));
		if (mhsize < 16 || mhsize > end - off ||
		    len > end - off - mhsize)
			return true;
		m = p + off + mhsize;
		if (kind != FATBIN_ELF && kind != FATBIN_PTX)
			return true;
		if (len >= 4 && !memcmp(m, ZSTD_MAGIC, 4)) {
			if (packed_may_print(m, len))
				return true;
		} else if (kind == FATBIN_ELF ? !is_cubin(m, len) :
			   !is_text(m, len)) {
			return true;
		} else if (names_print(m, len)) {
			return true;
		}
		off += mhsize + len;
	}
	return false;
}

bool xgpub_image_may_print(const uint8_t *p, uint64_t size)
{
	uint32_t magic = 0;

	if (size > SCAN_MAX)
		return true;
	if (size >= 16)
		memcpy(&magic, p, sizeof(magic));
	if (magic == FATBIN_MAGIC)
		return fatbin_may_print(p, size);
	if (is_cubin(p, size) || is_text(p, size))
		return names_print(p, size);
	return true;
}
