/*
 * vdso.c - find the vDSO's clock_gettime (see vdso.h).
 *
 * The kernel maps the vDSO, a small ELF shared object, into every process and
 * names its address in the auxiliary vector (AT_SYSINFO_EHDR).  Its dynamic
 * symbol table gives the function's offset; the first loadable segment gives
 * the bias between the object's addresses and where it was mapped.
 */
#include "vdso.h"

#include <elf.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

#include "hot.h"

typedef int (*gettime_fn)(clockid_t, struct timespec *);

#if UINTPTR_MAX == 0xffffffffffffffffu
typedef Elf64_Ehdr ehdr_t;
typedef Elf64_Phdr phdr_t;
typedef Elf64_Shdr shdr_t;
typedef Elf64_Sym sym_t;
#define SYM_TYPE ELF64_ST_TYPE
#define CLASS ELFCLASS64
#else
typedef Elf32_Ehdr ehdr_t;
typedef Elf32_Phdr phdr_t;
typedef Elf32_Shdr shdr_t;
typedef Elf32_Sym sym_t;
#define SYM_TYPE ELF32_ST_TYPE
#define CLASS ELFCLASS32
#endif

/* NAME's address in the vDSO, or NULL. */
static void *vdso_sym(const char *name)
{
	const unsigned char *base = (const unsigned char *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return NULL;
	const ehdr_t *eh = (const ehdr_t *)(const void *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != CLASS)
		return NULL;
	const phdr_t *ph = (const phdr_t *)(const void *)(base + eh->e_phoff);
	uintptr_t bias = 0;
	int loaded = 0;
	for (unsigned i = 0; i < eh->e_phnum && !loaded; i++)
		if (ph[i].p_type == PT_LOAD) {
			bias = (uintptr_t)base + ph[i].p_offset - ph[i].p_vaddr;
			loaded = 1;
		}
	if (!loaded || !eh->e_shoff)
		return NULL;
	const shdr_t *sh = (const shdr_t *)(const void *)(base + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
			continue;
		const sym_t *sym = (const sym_t *)(const void *)(base + sh[i].sh_offset);
		const char *str = (const char *)(base + sh[sh[i].sh_link].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++)
			if (SYM_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_shndx != SHN_UNDEF &&
			    strcmp(str + sym[k].st_name, name) == 0)
				return (void *)(bias + sym[k].st_value);
	}
	return NULL;
}

static int gettime_first(clockid_t clock, struct timespec *ts);

LS_HOT_DATA int (*vdso_clock_gettime)(clockid_t, struct timespec *) = gettime_first;

static int gettime_first(clockid_t clock, struct timespec *ts)
{
	gettime_fn f = (gettime_fn)vdso_sym("__vdso_clock_gettime");
	vdso_clock_gettime = f ? f : clock_gettime;
	return vdso_clock_gettime(clock, ts);
}
