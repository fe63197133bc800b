//go:build linux

package sandbox

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompFd is where bwrap reads the sandbox's seccomp filter (--seccomp).
const seccompFd = 6

// affinityABIs are the system call ABIs a process may use on the kernels of
// the GOARCHes the filter is for (amd64, 386, arm64, arm): a 64-bit kernel
// also runs the 32-bit one (i386 through int $0x80, which seccomp sees as
// its own architecture; arm on arm64), and x86-64's x32 is x86-64 with bit
// 0x40000000 in the number (arch.X32's SeccompMask). The numbers are
// elastic's tables of the kernel's (go-seccomp-bpf/arch).
var affinityABIs = []*arch.Info{arch.X86_64, arch.X32, arch.I386, arch.AARCH64, arch.ARM}

// refusedCalls are the calls the filter refuses. sched_setaffinity would let
// an engine leave the CPUs it was started on (Config.CPUs) where no cpuset
// holds them. io_uring_setup would too, the other way: io_uring's kernel
// workers run the work an engine hands them on any CPU of the machine (or of
// the cpuset), not on the engine's (and Docker's default profile refuses
// io_uring as well); engines have no need of it.
var refusedCalls = []string{"sched_setaffinity", "io_uring_setup"}

// affinityFilter is the seccomp filter of every sandbox, as bwrap reads it
// (struct sock_filter, native byte order): the refusedCalls fail with
// EPERM in every ABI, so that an engine cannot leave the CPUs it was
// started on (Config.CPUs) where no cpuset holds them; every other call,
// sched_getaffinity included, is let through, as are ABIs the filter does
// not know. It is built only where those tables cover every ABI the kernel
// can run (see affinityABIs): elsewhere no sandbox starts.
var affinityFilter = sync.OnceValues(func() ([]byte, error) {
	switch runtime.GOARCH {
	case "amd64", "386", "arm64", "arm":
	default:
		return nil, fmt.Errorf("sandbox: no seccomp filter for %s: the system call tables cover x86 and arm only", runtime.GOARCH)
	}
	prog, err := affinityProgram()
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("sandbox: assemble the seccomp filter: %w", err)
	}
	var b []byte
	for _, r := range raw {
		b = binary.NativeEndian.AppendUint16(b, r.Op)
		b = append(b, r.Jt, r.Jf)
		b = binary.NativeEndian.AppendUint32(b, r.K)
	}
	return b, nil
})

// affinityProgram is affinityFilter's program: for each architecture, its
// numbers of the refusedCalls, then the next architecture.
//
//	ld arch
//	jne AUDIT_ARCH_X86_64, next  ; then per architecture:
//	ld nr
//	jeq 203, refuse              ; sched_setaffinity
//	jeq 425, refuse              ; io_uring_setup
//	jeq 0x40000000|203, refuse   ; x32's, and so on
//	ret ALLOW
//	refuse: ret ERRNO|EPERM
//	next: ...
//	ret ALLOW
func affinityProgram() ([]bpf.Instruction, error) {
	var archs []uint32
	nrs := map[uint32][]uint32{}
	for _, a := range affinityABIs {
		id := uint32(a.ID)
		if _, seen := nrs[id]; !seen {
			archs = append(archs, id)
		}
		for _, call := range refusedCalls {
			n, ok := a.SyscallNames[call]
			if !ok {
				return nil, fmt.Errorf("sandbox: no %s in %s's table", call, a.Name)
			}
			nrs[id] = append(nrs[id], uint32(n|a.SeccompMask))
		}
	}
	// seccomp_data: int nr; __u32 arch; ...
	prog := []bpf.Instruction{bpf.LoadAbsolute{Off: 4, Size: 4}}
	for _, id := range archs {
		n := len(nrs[id])
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: id, SkipTrue: uint8(n + 3)},
			bpf.LoadAbsolute{Off: 0, Size: 4})
		for i, nr := range nrs[id] {
			prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipTrue: uint8(n - i)})
		}
		prog = append(prog,
			bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
			bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)})
	}
	return append(prog, bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW}), nil
}
