/* A stand-in for Windows 10's bcryptprimitives.dll, which Wine 8 lacks and Rust's standard
 * library imports (ProcessPrng, its source of random bytes). Only for running the smoke test
 * under Wine (see ../README.md); it is never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length); /* RtlGenRandom, in advapi32 */

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG piece = length > 0x10000000 ? 0x10000000 : (ULONG)length;
    if (!SystemFunction036(data, piece)) return FALSE;
    data += piece;
    length -= piece;
  }
  return TRUE;
}
