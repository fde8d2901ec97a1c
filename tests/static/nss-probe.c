// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in NSS module for tests/static/nss.sh: nsswitch.conf names it for users and groups,
 * and if the static rdna1ctl ever dlopens it, its constructor makes the directory MARKER.
 * Without libc (-nostdlib): a shared libc in a static process is what crashes it, and the
 * test must see the load, not a crash before it. x86_64 system calls, as the static build.
 */
static void __attribute__((constructor)) rdna1_probe_loaded(void)
{
	static const char path[] = MARKER;
	long ret;

	/* mkdir(MARKER, 0700) */
	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(83L), "D"(path), "S"(0700L)
		     : "rcx", "r11", "memory");
	(void)ret;
}
