/*
 * A stand-in for Windows' bcryptprimitives.dll under Wine 8.0, which lacks it.
 * Go 1.22+ Windows binaries import ProcessPrng from it at start; this forwards
 * to RtlGenRandom (SystemFunction036 in advapi32), which Wine implements.
 * Used only by the test lane (scripts/wine-setup); never shipped.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!SystemFunction036(data, chunk))
			return FALSE;
		data += chunk;
		len -= chunk;
	}
	return TRUE;
}
