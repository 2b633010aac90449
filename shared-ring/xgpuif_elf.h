/* SPDX-License-Identifier: MIT */
/*
 * xgpuif_elf.h: the counts of a cubin (ELF64) image, read the same way at
 * both ends (user space): the guest library measures an image it ships,
 * the worker checks that one lies inside its blob.
 */
#ifndef XGPUIF_ELF_H
#define XGPUIF_ELF_H

#include <elf.h>
#include <stdint.h>
#include <string.h>

/*
 * The section count, program header count and section name table index
 * (shstrndx may be NULL) of the ELF64 at p, whose header is *eh.  With
 * extended numbering (e_shnum 0, e_phnum PN_XNUM, e_shstrndx SHN_XINDEX)
 * the real ones are in section 0's header: when e_shoff is set, the
 * caller has checked that it lies in the image.
 */
static inline void xgpuif_elf_counts(const uint8_t *p, const Elf64_Ehdr *eh,
				     uint64_t *shnum, uint64_t *phnum,
				     uint64_t *shstrndx)
{
	Elf64_Shdr sh0;

	*shnum = eh->e_shnum;
	*phnum = eh->e_phnum;
	if (shstrndx)
		*shstrndx = eh->e_shstrndx;
	if (!eh->e_shoff)
		return;
	memcpy(&sh0, p + eh->e_shoff, sizeof(sh0));
	if (*shnum == 0)
		*shnum = sh0.sh_size;
	if (*phnum == PN_XNUM)
		*phnum = sh0.sh_info;
	if (shstrndx && *shstrndx == SHN_XINDEX)
		*shstrndx = sh0.sh_link;
}

#endif /* XGPUIF_ELF_H */
