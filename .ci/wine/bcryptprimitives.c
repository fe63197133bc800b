/* A stand-in for Windows' bcryptprimitives.dll, for the wine smoke test only.
 * Go's runtime (1.24 and later) takes its random bytes from ProcessPrng in
 * bcryptprimitives.dll, which every Windows 10 and 11 has but Debian
 * bookworm's wine 8.0 does not: without it a Go program under that wine dies
 * at start ("bcryptprimitives.dll not found"). This DLL exports ProcessPrng
 * and fills the buffer from wine's BCryptGenRandom. .ci/wine-smoke builds it
 * with mingw-w64 and puts it in the wine prefix's system32 only. */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
