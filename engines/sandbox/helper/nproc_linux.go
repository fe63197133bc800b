//go:build linux && !(mips || mipsle || mips64 || mips64le)

package helper

// rlimitNproc is RLIMIT_NPROC, which package syscall does not name.
const rlimitNproc = 6
