// SPDX-License-Identifier: MIT
/*
 * xgpulib_image.c: how long a module image is.  The driver API hands
 * images over as a bare pointer; the worker cannot follow a guest pointer,
 * so the guest must know the image's size to ship it: a fatbin says so in
 * its header, a cubin (ELF) ends where its furthest table or section
 * does, PTX at its terminating zero.  A fatbin wrapper is replaced by the
 * fatbin it points to.
 */
#include <elf.h>
#include <string.h>

#include "xgpuif_elf.h"
#include "xgpulib.h"
#include "xgpulib_image.h"

/* images are shipped whole; anything larger than this cannot be real */
#define IMAGE_MAX	(1ull << 36)

/*
 * Compare the first n bytes of p with magic, byte by byte: none of the
 * magic numbers holds a zero byte, so a short PTX string mismatches at its
 * NUL before anything past it is read.
 */
static bool has_magic(const uint8_t *p, const uint8_t *magic, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != magic[i])
			return false;
	return true;
}

static size_t fatbin_size(const uint8_t *p)
{
	uint16_t hsize;
	uint64_t fsize;

	memcpy(&hsize, p + 6, sizeof(hsize));
	memcpy(&fsize, p + 8, sizeof(fsize));
	if (hsize < 16 || fsize > IMAGE_MAX)
		return 0;
	return (size_t)hsize + (size_t)fsize;
}

/* end of [off, off + n * entsize), or 0 when it overflows the image cap */
static uint64_t table_end(uint64_t off, uint64_t n, uint64_t entsize)
{
	uint64_t bytes, end;

	if (__builtin_mul_overflow(n, entsize, &bytes) ||
	    __builtin_add_overflow(off, bytes, &end) || end > IMAGE_MAX)
		return 0;
	return end;
}

/*
 * A cubin is an ELF file with no length field: it ends where the furthest
 * of its header tables or section contents ends (sections may lie after
 * the section header table).
 */
static size_t elf64_size(const uint8_t *p)
{
	Elf64_Ehdr eh;
	uint64_t end = sizeof(eh), shnum, phnum, e;

	memcpy(&eh, p, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	if (eh.e_ehsize > end)
		end = eh.e_ehsize;
	if (eh.e_shoff && (eh.e_shentsize < sizeof(Elf64_Shdr) ||
			    eh.e_shoff > IMAGE_MAX))
		return 0;
	xgpuif_elf_counts(p, &eh, &shnum, &phnum, NULL);
	if (eh.e_shoff) {
		if (shnum > (1u << 24))
			return 0;
		e = table_end(eh.e_shoff, shnum, eh.e_shentsize);
		if (!e)
			return 0;
		if (e > end)
			end = e;
		for (uint64_t i = 0; i < shnum; i++) {
			Elf64_Shdr sh;

			memcpy(&sh, p + eh.e_shoff + i * eh.e_shentsize,
			       sizeof(sh));
			if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
				continue;
			e = table_end(sh.sh_offset, 1, sh.sh_size);
			if (!e)
				return 0;
			if (e > end)
				end = e;
		}
	}
	if (eh.e_phoff && phnum) {
		e = table_end(eh.e_phoff, phnum, eh.e_phentsize);
		if (!e)
			return 0;
		if (e > end)
			end = e;
	}
	return (size_t)end;
}

const void *xgpulib_image_bytes(const void *image, size_t *size)
{
	static const uint8_t wrapper[4] = { 0xb1, 0x43, 0x62, 0x46 };
	static const uint8_t fatbin[4] = { 0x50, 0xed, 0x55, 0xba };
	static const uint8_t elf[4] = { 0x7f, 'E', 'L', 'F' };
	const uint8_t *p = image;
	size_t n;

	if (!p)
		return NULL;
	if (has_magic(p, wrapper, 4)) {
		const void *data;

		memcpy(&data, p + 8, sizeof(data));
		/* the wrapper's data is a fatbin; nothing else is shipped */
		if (!data || !has_magic(data, fatbin, 4))
			return NULL;
		p = data;
	}
	if (has_magic(p, fatbin, 4))
		n = fatbin_size(p);
	else if (has_magic(p, elf, 4))
		n = elf64_size(p);
	else
		n = strlen((const char *)p) + 1;
	if (!n)
		return NULL;
	*size = n;
	return p;
}

size_t xgpulib_image_size(const void *image)
{
	size_t n;

	return xgpulib_image_bytes(image, &n) ? n : 0;
}
