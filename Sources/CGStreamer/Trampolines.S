// One trampoline per function of functions.h, with the function's own name, so that the Swift
// binding and the inline functions of shim.h call GStreamer as if it were linked. A trampoline
// jumps to the function Loader.c resolved; until then it calls cgst_resolve (which loads the
// libraries) with its index, every argument register kept, and jumps to what it returns.
// The trampolines are hidden: the binary does not export them, so a GStreamer library's own
// calls never come back through them.

#if defined(__x86_64__)

    .text
    .macro cgst_trampoline name, index
    .globl \name
    .hidden \name
    .type \name, @function
    .p2align 4
\name:
    movq cgst_functions+8*\index(%rip), %r11
    testq %r11, %r11
    jz 1f
    jmpq *%r11
1:  movl $\index, %r11d
    jmp cgst_resolve_and_jump
    .size \name, .-\name
    .endm

// With the index in r11: saves the argument registers (rax counts a variadic call's vector
// arguments), calls cgst_resolve, restores them and jumps to the function. Arguments on the
// stack stay where the caller put them.
    .p2align 4
    .type cgst_resolve_and_jump, @function
cgst_resolve_and_jump:
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
    call cgst_resolve
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
    .size cgst_resolve_and_jump, .-cgst_resolve_and_jump

#elif defined(__aarch64__)

    .text
    .macro cgst_trampoline name, index
    .globl \name
    .hidden \name
    .type \name, %function
    .p2align 4
\name:
    adrp x16, cgst_functions+8*\index
    ldr x16, [x16, #:lo12:cgst_functions+8*\index]
    cbz x16, 1f
    br x16
1:  mov x17, #\index
    b cgst_resolve_and_jump
    .size \name, .-\name
    .endm

// With the index in x17: saves the argument registers (x8 holds where a large result goes),
// calls cgst_resolve, restores them and jumps to the function.
    .p2align 4
    .type cgst_resolve_and_jump, %function
cgst_resolve_and_jump:
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
    bl cgst_resolve
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
    .size cgst_resolve_and_jump, .-cgst_resolve_and_jump

#else
#error "Trampolines.S has trampolines for x86_64 and aarch64 only: add this architecture's"
#endif

#define CGST_FUNCTION(library, name) cgst_trampoline name, __COUNTER__
#include "functions.h"
#undef CGST_FUNCTION

// No executable stack.
    .section .note.GNU-stack, "", %progbits
