// Trampolines for a C library loaded on first use, as GNU assembler macros for a target's
// Trampolines.S (CGStreamer's, CTagLib's): `lazy_trampoline name, index, table, jumper` defines
// a hidden function `name` that jumps to `table[index]` (the address the target's loader
// resolved), or, while that is NULL, to `jumper` with the index; `lazy_resolve_and_jump jumper,
// resolve` defines `jumper`, which keeps every argument register, calls `resolve(index)` (the
// loader: it loads the library and returns the address) and jumps to what it returns. Hidden,
// the trampolines are not exported, so the library's own calls never come back through them.
#ifndef LAZY_TRAMPOLINES_H
#define LAZY_TRAMPOLINES_H
#ifdef __ASSEMBLER__

#if defined(__x86_64__)

    .text
    .macro lazy_trampoline name, index, table, jumper
    .globl \name
    .hidden \name
    .type \name, @function
    .p2align 4
\name:
    movq \table+8*\index(%rip), %r11
    testq %r11, %r11
    jz 1f
    jmpq *%r11
1:  movl $\index, %r11d
    jmp \jumper
    .size \name, .-\name
    .endm

// With the index in r11: saves the argument registers (rax counts a variadic call's vector
// arguments), calls `resolve`, restores them and jumps to the function. Arguments on the
// stack stay where the caller put them.
    .macro lazy_resolve_and_jump jumper, resolve
    .p2align 4
    .type \jumper, @function
\jumper:
    pushq %rbp
    movq %rsp, %rbp
    pushq %rdi
    pushq %rsi
    pushq %rdx
    pushq %rcx
    pushq %r8
    pushq %r9
    pushq %rax
    pushq %r11
    subq $128, %rsp
    movdqu %xmm0, 0(%rsp)
    movdqu %xmm1, 16(%rsp)
    movdqu %xmm2, 32(%rsp)
    movdqu %xmm3, 48(%rsp)
    movdqu %xmm4, 64(%rsp)
    movdqu %xmm5, 80(%rsp)
    movdqu %xmm6, 96(%rsp)
    movdqu %xmm7, 112(%rsp)
    movq %r11, %rdi
    call \resolve
    movq %rax, %r10
    movdqu 0(%rsp), %xmm0
    movdqu 16(%rsp), %xmm1
    movdqu 32(%rsp), %xmm2
    movdqu 48(%rsp), %xmm3
    movdqu 64(%rsp), %xmm4
    movdqu 80(%rsp), %xmm5
    movdqu 96(%rsp), %xmm6
    movdqu 112(%rsp), %xmm7
    addq $128, %rsp
    popq %r11
    popq %rax
    popq %r9
    popq %r8
    popq %rcx
    popq %rdx
    popq %rsi
    popq %rdi
    popq %rbp
    jmpq *%r10
    .size \jumper, .-\jumper
    .endm

#elif defined(__aarch64__)

    .text
    .macro lazy_trampoline name, index, table, jumper
    .globl \name
    .hidden \name
    .type \name, %function
    .p2align 4
\name:
    adrp x16, \table+8*\index
    ldr x16, [x16, #:lo12:\table+8*\index]
    cbz x16, 1f
    br x16
1:  mov x17, #\index
    b \jumper
    .size \name, .-\name
    .endm

// With the index in x17: saves the argument registers (x8 holds where a large result goes),
// calls `resolve`, restores them and jumps to the function.
    .macro lazy_resolve_and_jump jumper, resolve
    .p2align 4
    .type \jumper, %function
\jumper:
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    stp x0, x1, [sp, #-16]!
    stp x2, x3, [sp, #-16]!
    stp x4, x5, [sp, #-16]!
    stp x6, x7, [sp, #-16]!
    stp x8, x17, [sp, #-16]!
    stp q0, q1, [sp, #-32]!
    stp q2, q3, [sp, #-32]!
    stp q4, q5, [sp, #-32]!
    stp q6, q7, [sp, #-32]!
    mov x0, x17
    bl \resolve
    mov x16, x0
    ldp q6, q7, [sp], #32
    ldp q4, q5, [sp], #32
    ldp q2, q3, [sp], #32
    ldp q0, q1, [sp], #32
    ldp x8, x17, [sp], #16
    ldp x6, x7, [sp], #16
    ldp x4, x5, [sp], #16
    ldp x2, x3, [sp], #16
    ldp x0, x1, [sp], #16
    ldp x29, x30, [sp], #16
    br x16
    .size \jumper, .-\jumper
    .endm

#else
#error "Trampolines.S has trampolines for x86_64 and aarch64 only: add this architecture's"
#endif

#endif
#endif
