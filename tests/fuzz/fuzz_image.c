// SPDX-License-Identifier: MIT
/*
 * fuzz_image.c: libFuzzer target of the worker's module-image check,
 * xgpub_image_fits (xen-backend/worker/xgpub_op_module.c): the driver
 * parses a guest's fatbin, ELF cubin or PTX with no length to go by, so
 * the worker lets through only an image that lies inside its blob by its
 * own description.
 *
 * The input is the image, copied into a buffer of exactly its size (ASan
 * catches a read past it).  Where the check says yes, the harness then
 * reads what a driver reads of such an image, on the check's word: a
 * fatbin's header and declared bytes; an ELF's header, its section and
 * program header tables, the file bytes of each section and segment, the
 * section header of its name table; PTX up to its terminator.  Any of
 * those outside the buffer is a hole in the check.
 *
 * Every input also goes to xgpub_image_may_print
 * (xen-backend/worker/xgpub_print_scan.c), which walks a fatbin's members
 * and unpacks ZSTD-packed ones (with the system's libzstd.so.1) before a
 * load, whatever the check says.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xgpub_worker.h"
#include "xgpub_module.h"

static volatile uint8_t sink;

/* a driver reads [off, off + n) of the image */
static void touch(const uint8_t *p, uint64_t off, uint64_t n)
{
	if (!n)
		return;
	sink ^= p[off];
	sink ^= p[off + n - 1];
}

static void read_elf(const uint8_t *p)
{
	Elf64_Ehdr eh;
	uint64_t shnum, phnum, shstrndx;

	memcpy(&eh, p, sizeof(eh));
	shnum = eh.e_shnum;
	phnum = eh.e_phnum;
	shstrndx = eh.e_shstrndx;
	if (eh.e_shoff) {
		Elf64_Shdr sh0;

		memcpy(&sh0, p + eh.e_shoff, sizeof(sh0));
		if (!shnum)
			shnum = sh0.sh_size;
		if (eh.e_phnum == PN_XNUM)
			phnum = sh0.sh_info;
		if (shstrndx == SHN_XINDEX)
			shstrndx = sh0.sh_link;
		for (uint64_t i = 0; i < shnum; i++) {
			Elf64_Shdr sh;

			memcpy(&sh, p + eh.e_shoff + i * eh.e_shentsize,
			       sizeof(sh));
			if (sh.sh_type != SHT_NOBITS)
				touch(p, sh.sh_offset, sh.sh_size);
		}
		/* the section names' table: its header */
		if (shstrndx != SHN_UNDEF)
			touch(p, eh.e_shoff + shstrndx * eh.e_shentsize,
			      sizeof(Elf64_Shdr));
	}
	for (uint64_t i = 0; i < phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, p + eh.e_phoff + i * eh.e_phentsize, sizeof(ph));
		touch(p, ph.p_offset, ph.p_filesz);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t fatbin[4] = { 0x50, 0xed, 0x55, 0xba };
	static const uint8_t elf[4] = { 0x7f, 'E', 'L', 'F' };
	uint8_t *p = malloc(size ? size : 1);

	if (!p)
		return 0;
	memcpy(p, data, size);
	(void)xgpub_image_may_print(p, size);
	if (xgpub_image_fits(p, size)) {
		if (size >= 4 && !memcmp(p, fatbin, 4)) {
			uint16_t hsize;
			uint64_t fsize;

			memcpy(&hsize, p + 6, sizeof(hsize));
			memcpy(&fsize, p + 8, sizeof(fsize));
			touch(p, 0, hsize + fsize);
		} else if (size >= 4 && !memcmp(p, elf, 4)) {
			read_elf(p);
		} else {
			touch(p, 0, strlen((const char *)p) + 1);
		}
	}
	free(p);
	return 0;
}
