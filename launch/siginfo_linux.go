//go:build linux && !(mips || mipsle || mips64 || mips64le)

package launch

// siginfoCodeOffset is the offset of si_code: si_signo, si_errno, si_code.
const siginfoCodeOffset = 8
