#ifndef CMALLOC_SHIM_H
#define CMALLOC_SHIM_H

// glibc's malloc extensions (malloc_trim, mallopt), which the Glibc module does not import. The
// daemon limits its malloc arenas at start and returns the heap it freed while building its
// queue to the system once it is ready.
#include <malloc.h>

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
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

// A range of the process's addresses, page-aligned; empty when start == end.
struct cmalloc_range {
    uintptr_t start;
    uintptr_t end;
};

static inline int cmalloc_main_program_base(struct cmalloc_phdr_info *info, size_t size, void *data) {
    (void)size;
    *(uintptr_t *)data = info->dlpi_addr;
    return 1;  // the first object listed is the program itself
}

// Whether `count` bytes at `offset` of `fd` were read whole.
static inline int cmalloc_read_at(int fd, void *buffer, size_t count, off_t offset) {
    return pread(fd, buffer, count, offset) == (ssize_t)count;
}

// Whether a relocation of the SHT_RELA section `section` of `fd` writes into [start, end).
static inline int cmalloc_relocates_into(int fd, const ElfW(Shdr) *section, uint64_t start, uint64_t end) {
    ElfW(Rela) chunk[256];
    uint64_t count = section->sh_size / sizeof(ElfW(Rela));
    for (uint64_t done = 0; done < count;) {
        uint64_t batch = count - done < 256 ? count - done : 256;
        if (!cmalloc_read_at(fd, chunk, batch * sizeof(ElfW(Rela)), (off_t)(section->sh_offset + done * sizeof(ElfW(Rela)))))
            return 1;  // unreadable: assume it does
        for (uint64_t i = 0; i < batch; i++) {
            if (chunk[i].r_offset + sizeof(uint64_t) > start && chunk[i].r_offset < end) return 1;
        }
        done += batch;
    }
    return 0;
}

// The whole pages of the executable's `.rodata` when the linker put it in a writable segment
// (Swift's object files mark their `.rodata` writable, so the merged section is too, and lands
// after the RELRO part of the writable segment): constant data that nothing writes once loaded,
// yet pages that `cmalloc_release_code_pages` leaves alone. Read from the executable's section
// headers; empty when `.rodata` is read-only, when a dynamic relocation writes into it, or when
// the file cannot be read. Reads a few kilobytes and the relocation tables (about 1.4 MB): call
// once.
static inline struct cmalloc_range cmalloc_writable_constant_data(void) {
    struct cmalloc_range none = {0, 0};
    uintptr_t base = 0;
    dl_iterate_phdr(cmalloc_main_program_base, &base);
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return none;
    struct cmalloc_range found = none;
    ElfW(Shdr) *sections = NULL;
    char *names = NULL;
    ElfW(Ehdr) header;
    if (!cmalloc_read_at(fd, &header, sizeof header, 0) || memcmp(header.e_ident, ELFMAG, SELFMAG) != 0
        || header.e_shentsize != sizeof(ElfW(Shdr)) || header.e_shnum == 0 || header.e_shstrndx >= header.e_shnum)
        goto done;
    sections = malloc(header.e_shnum * sizeof(ElfW(Shdr)));
    if (sections == NULL
        || !cmalloc_read_at(fd, sections, header.e_shnum * sizeof(ElfW(Shdr)), (off_t)header.e_shoff))
        goto done;
    const ElfW(Shdr) *table = &sections[header.e_shstrndx];
    names = malloc(table->sh_size + 1);
    if (names == NULL || !cmalloc_read_at(fd, names, table->sh_size, (off_t)table->sh_offset)) goto done;
    names[table->sh_size] = 0;
    const ElfW(Shdr) *rodata = NULL;
    for (ElfW(Half) i = 0; i < header.e_shnum; i++) {
        if (sections[i].sh_name < table->sh_size && strcmp(names + sections[i].sh_name, ".rodata") == 0) {
            rodata = &sections[i];
            break;
        }
    }
    if (rodata == NULL || rodata->sh_type != SHT_PROGBITS || (rodata->sh_flags & (SHF_ALLOC | SHF_WRITE)) != (SHF_ALLOC | SHF_WRITE))
        goto done;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t start = (rodata->sh_addr + page - 1) & ~(page - 1);
    uint64_t end = (rodata->sh_addr + rodata->sh_size) & ~(page - 1);
    if (end <= start) goto done;
    for (ElfW(Half) i = 0; i < header.e_shnum; i++) {
        if (sections[i].sh_type == SHT_RELA && (sections[i].sh_flags & SHF_ALLOC)
            && cmalloc_relocates_into(fd, &sections[i], start, end))
            goto done;
        // REL and RELR (packed) tables are not read: assume they write into it.
        if ((sections[i].sh_type == SHT_REL || sections[i].sh_type == 19) && (sections[i].sh_flags & SHF_ALLOC)) goto done;
    }
    found.start = base + start;
    found.end = base + end;
done:
    free(names);
    free(sections);
    close(fd);
    return found;
}

// Unmaps the pages of `range` that were never written: present as the file's own page or not
// present (`/proc/self/pagemap`), so the kernel maps the file's page again when it is next read;
// a written (copied, anonymous) or swapped page is kept. For data that nothing writes once
// loaded (`cmalloc_writable_constant_data`): a page first written between the reading of its
// entry and the unmapping would lose that write. Returns the bytes unmapped.
static inline size_t cmalloc_release_unwritten_pages(struct cmalloc_range range) {
    if (range.end <= range.start) return 0;
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    size_t released = 0;
    uint64_t entries[512];
    uintptr_t run = 0;  // start of the current run of unwritten pages, 0 for none
    uintptr_t address = range.start;  // the pages before it are checked
    while (address < range.end) {
        size_t batch = (range.end - address) / page < 512 ? (range.end - address) / page : 512;
        if (!cmalloc_read_at(fd, entries, batch * sizeof(uint64_t), (off_t)(address / page * sizeof(uint64_t)))) break;
        for (size_t i = 0; i < batch; i++, address += page) {
            uint64_t entry = entries[i];
            int written = (entry >> 62) & 1 || (((entry >> 63) & 1) && !((entry >> 61) & 1));
            if (!written && run == 0) run = address;
            if (written && run != 0) {
                if (madvise((void *)run, address - run, MADV_DONTNEED) == 0) released += address - run;
                run = 0;
            }
        }
    }
    if (run != 0 && madvise((void *)run, address - run, MADV_DONTNEED) == 0) released += address - run;
    close(fd);
    return released;
}

static inline void *cmalloc_return_argument(void *argument) { return argument; }

// Binds now the one symbol glibc binds lazily when it first frees a thread's TLS: libc reaches
// the loader's `_dl_deallocate_tls` through a lazily bound slot, and that first call looks the
// symbol up in every loaded object's hash table, a page fault in each (0.8 MB of the daemon's
// libraries mapped again, 64 KB around each fault). Left to itself it happens when some thread
// ends long after start, such as a worker that played, after a trim. A thread on a stack of our
// own, joined, frees its TLS through that slot at once (a stack glibc made goes to its cache).
// Returns 0, or pthread_create's or pthread_join's error.
static inline int cmalloc_bind_thread_teardown(void) {
    size_t size = 256 * 1024;  // room for the static TLS beside PTHREAD_STACK_MIN
    void *stack = NULL;
    if (posix_memalign(&stack, (size_t)sysconf(_SC_PAGESIZE), size) != 0) return -1;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstack(&attributes, stack, size);
    pthread_t thread;
    int status = pthread_create(&thread, &attributes, cmalloc_return_argument, NULL);
    pthread_attr_destroy(&attributes);
    if (status == 0) status = pthread_join(thread, NULL);
    free(stack);
    return status;
}

#endif
