/* stdio_lines.c - test program: N lines of 11 B by fprintf, read back by
 * fgets (N fprintf, N + 1 fgets: the last at the end of the file), as a
 * program makes them: plain calls through the PLT, which ltrace sees (a
 * program that takes a function's address calls it through the GOT, which
 * ltrace does not: this one takes none).
 * usage: prog_stdio_lines FILE N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long n = atol(argv[2]);
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 1;
	for (long i = 0; i < n; i++)
		if (fprintf(f, "line %05ld\n", i % 100000) != 11)
			return 1;
	if (fclose(f) != 0)
		return 1;
	f = fopen(argv[1], "r");
	if (!f)
		return 1;
	char line[64];
	long got = 0;
	while (fgets(line, sizeof(line), f) != NULL && got <= n)
		got++;
	if (got != n || fclose(f) != 0)
		return 1;
	return 0;
}
