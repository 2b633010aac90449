/* SPDX-License-Identifier: MIT */
/*
 * image_samples.h: images as a guest hands them to the driver API, built
 * in memory, and the parameter layout of one kernel, for the unit suites
 * of both ends (check_image.c: the guest sizes and packs them;
 * check_worker_module.c: the worker loads them and launches that kernel):
 *
 *   make_fatbin()  a fatbin header (its payload left as it is);
 *   struct wrapper the __fatBinC_Wrapper_t that points to a fatbin;
 *   make_elf()     a 64-bit ELF cubin whose sections lie past its section
 *                  header table (and one NOBITS section further out);
 *   vadd_params    vadd(float *a, float *b, float *c, int n, double scale,
 *                  char tag): offsets and sizes as the driver reports them.
 *
 * Included by one file of each program only (the Makefile builds each
 * tests/unit/check_*.c into a program of its own).
 */
#ifndef IMAGE_SAMPLES_H
#define IMAGE_SAMPLES_H

#include <elf.h>
#include <stdint.h>
#include <string.h>

#include "xgpulib_image.h"

struct wrapper {
	uint32_t magic;
	uint32_t version;
	const void *data;
	void *unused;
};

static uint8_t fatbin_img[64 + 4400] __attribute__((aligned(8)));

static void make_fatbin(uint8_t *p, uint16_t hsize, uint64_t fsize)
{
	uint32_t magic = XGPULIB_FATBIN_MAGIC;
	uint16_t version = 1;

	memcpy(p, &magic, 4);
	memcpy(p + 4, &version, 2);
	memcpy(p + 6, &hsize, 2);
	memcpy(p + 8, &fsize, 8);
}

static uint8_t elf_img[0x2000] __attribute__((aligned(8)));

/*
 * An ELF with its section header table at 0x100 (4 entries) and sections
 * after it: the PROGBITS one at 0x400 + 0x80 is the end; the NOBITS one,
 * further "out", occupies no file bytes.
 */
static void make_elf(int extended)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh[4];
	Elf64_Phdr ph;

	memset(elf_img, 0, sizeof(elf_img));
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = 0x100;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = extended ? 0 : 4;
	eh.e_phoff = 0x40;
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 1;
	memcpy(elf_img, &eh, sizeof(eh));
	memset(&ph, 0, sizeof(ph));
	memcpy(elf_img + 0x40, &ph, sizeof(ph));
	memset(sh, 0, sizeof(sh));
	if (extended)
		sh[0].sh_size = 4;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_offset = 0x300;
	sh[1].sh_size = 0x20;
	sh[2].sh_type = SHT_PROGBITS;
	sh[2].sh_offset = 0x400;
	sh[2].sh_size = 0x80;
	sh[3].sh_type = SHT_NOBITS;
	sh[3].sh_offset = 0x1000;
	sh[3].sh_size = 0x5000;
	memcpy(elf_img + 0x100, sh, sizeof(sh));
}

/* vadd(float *a, float *b, float *c, int n, double scale, char tag) */
static struct xgpuif_param vadd_params[6] = {
	{ 0, 8 }, { 8, 8 }, { 16, 8 }, { 24, 4 }, { 32, 8 }, { 40, 1 },
};

#endif /* IMAGE_SAMPLES_H */
