// SPDX-License-Identifier: GPL-2.0
/*
 * The control of tests/static/nss.sh: static glibc's getpwnam of argv[1], which loads the NSS
 * modules nsswitch.conf names when /etc/passwd does not have the name.
 */
#include <pwd.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	struct passwd *p;

	if (argc != 2)
		return 2;
	p = getpwnam(argv[1]);
	printf("%s: %s\n", argv[1], p ? "found" : "not found");
	return 0;
}
