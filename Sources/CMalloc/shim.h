#ifndef CMALLOC_SHIM_H
#define CMALLOC_SHIM_H

// glibc's malloc extensions (malloc_trim, mallopt), which the Glibc module does not import. The
// daemon limits its malloc arenas at start and returns the heap it freed while building its
// queue to the system once it is ready.
#include <malloc.h>

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

// glibc's dl_iterate_phdr and the leading, stable fields of its struct dl_phdr_info, which
// <link.h> declares only for _GNU_SOURCE.
struct cmalloc_phdr_info {
    ElfW(Addr) dlpi_addr;
    const char *dlpi_name;
    const ElfW(Phdr) *dlpi_phdr;
    ElfW(Half) dlpi_phnum;
};
extern int dl_iterate_phdr(int (*callback)(struct cmalloc_phdr_info *info, size_t size, void *data), void *data);

// Unmaps the pages of one loaded object's segments that are never written (read-only and code:
// no PF_W), so the kernel maps them again from the page cache when they are next read. An object
// with text relocations (whose code the loader writes) and the vDSO are left alone. Called by
// dl_iterate_phdr, which holds the loader's lock, so no object it lists is unmapped meanwhile;
// relocation writes only the writable segments, never touched here.
static inline int cmalloc_release_object_pages(struct cmalloc_phdr_info *info, size_t size, void *data) {
    (void)size;
    if (info->dlpi_name != NULL && strncmp(info->dlpi_name, "linux-", 6) == 0) return 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *phdr = &info->dlpi_phdr[i];
        if (phdr->p_type != PT_DYNAMIC) continue;
        for (const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + phdr->p_vaddr); dyn->d_tag != DT_NULL; dyn++) {
            if (dyn->d_tag == DT_TEXTREL) return 0;
            if (dyn->d_tag == DT_FLAGS && (dyn->d_un.d_val & DF_TEXTREL)) return 0;
        }
    }
    // The ranges are gathered before any is unmapped: the program headers are in the first
    // segment, and reading them after it was unmapped would map 64 KB of it again.
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t ranges[32][2];
    int count = 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum && count < 32; i++) {
        const ElfW(Phdr) *phdr = &info->dlpi_phdr[i];
        if (phdr->p_type != PT_LOAD || (phdr->p_flags & PF_W) || !(phdr->p_flags & PF_R)) continue;
        ranges[count][0] = (info->dlpi_addr + phdr->p_vaddr) & ~(page - 1);
        ranges[count][1] = (info->dlpi_addr + phdr->p_vaddr + phdr->p_memsz + page - 1) & ~(page - 1);
        count++;
    }
    for (int i = 0; i < count; i++) {
        uintptr_t start = ranges[i][0], end = ranges[i][1];
        if (end > start && madvise((void *)start, end - start, MADV_DONTNEED) == 0) *(size_t *)data += end - start;
    }
    return 0;
}

// Unmaps the never-written pages of every loaded object (the executable and its libraries):
// they stay in the page cache, and what runs next maps them again, a minor fault each. Returns
// the bytes of the ranges unmapped (resident or not).
static inline size_t cmalloc_release_code_pages(void) {
    size_t released = 0;
    dl_iterate_phdr(cmalloc_release_object_pages, &released);
    return released;
}

#endif
