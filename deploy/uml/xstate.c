/*
 * deploy/uml/xstate.c: preloaded into linux.uml by deploy/uml/run.sh.
 *
 * Debian's user-mode Linux 6.1 saves and restores each of its processes'
 * FPU state with PTRACE_GETREGSET/PTRACE_SETREGSET (NT_X86_XSTATE) and an
 * XSAVE area of its own, smaller size. A host kernel accepts a
 * SETREGSET only with its whole XSAVE area, which is larger on a CPU with
 * AVX-512 or AMX: there every write fails with EFAULT ("ptrace set fp regs
 * failed, errno = 14") and UML's init dies at once.
 *
 * This wrapper of ptrace(2) reads the whole area on every such call: on a
 * read it gives the caller its part and keeps the rest, by the caller's
 * buffer (UML keeps one per thread); on a write it sends the caller's part
 * followed by the rest kept for that buffer (or, for a buffer never read,
 * the traced thread's current state). Every other request, and every
 * request on a host whose area is no larger, goes to ptrace unchanged.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

typedef long (*ptrace_fn)(int, pid_t, void *, void *);

static ptrace_fn real(void) {
	static ptrace_fn f;
	if (!f)
		f = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
	return f;
}

/* The tails (bytes past what the caller's buffer holds) of the last full
 * state read into each caller buffer, keyed by the buffer's address. */
#define SLOTS 65536
struct slot { void *key; size_t len; unsigned char *tail; };
static struct slot slots[SLOTS];

static struct slot *slot_of(void *key, int make) {
	size_t h = ((uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[(h + i) % SLOTS];
		if (s->key == key)
			return s;
		if (!s->key) {
			if (!make)
				return NULL;
			s->key = key;
			return s;
		}
	}
	return NULL;
}

long ptrace(enum __ptrace_request req, ...) {
	va_list ap;
	va_start(ap, req);
	pid_t pid = va_arg(ap, pid_t);
	void *addr = va_arg(ap, void *);
	void *data = va_arg(ap, void *);
	va_end(ap);
	if ((req != PTRACE_GETREGSET && req != PTRACE_SETREGSET) || (uintptr_t)addr != NT_X86_XSTATE)
		return real()(req, pid, addr, data);
	struct iovec *iov = data;
	static unsigned char full[1 << 16];
	struct iovec fiov = { full, sizeof full };
	long r = real()(PTRACE_GETREGSET, pid, addr, &fiov);
	if (r < 0 || fiov.iov_len <= iov->iov_len)
		return real()(req, pid, addr, data);
	size_t n = iov->iov_len, rest = fiov.iov_len - n;
	struct slot *s = slot_of(iov->iov_base, 1);
	if (req == PTRACE_GETREGSET) {
		memcpy(iov->iov_base, full, n);
		if (s) {
			if (s->len != rest) {
				free(s->tail);
				s->tail = malloc(rest);
				s->len = s->tail ? rest : 0;
			}
			if (s->tail)
				memcpy(s->tail, full + n, rest);
		}
		return r;
	}
	memcpy(full, iov->iov_base, n);
	if (s && s->tail && s->len == rest)
		memcpy(full + n, s->tail, rest);
	return real()(PTRACE_SETREGSET, pid, addr, &fiov);
}
