//go:build linux && (mips || mipsle || mips64 || mips64le)

package launch

// siginfoCodeOffset is the offset of si_code: MIPS swaps si_code and
// si_errno.
const siginfoCodeOffset = 4
