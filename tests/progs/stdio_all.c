/* stdio_all.c - test program: every stdio call the interposer wraps, a known
 * number of times with known sizes, on a regular file.
 * usage: prog_stdio_all FILE SYSFILE   (stdout: a regular file)
 *        prog_stdio_all FILE lines     (10,000 lines by fprintf, read back)
 * Expected (stdio.*): see check_posix.c test_stdio_all / test_stdio_lines.
 * The one mode's own syscalls (posix.*): open, 3 writes of 1000 B, 1 pread
 * of 500 B, close on SYSFILE, and the open behind fdopen: meta ops 3. Every
 * call goes through a volatile pointer, so none is inlined by the headers. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int _IO_getc(FILE *);
int _IO_putc(int, FILE *);
int __fprintf_chk(FILE *, int, const char *, ...);
int __printf_chk(int, const char *, ...);
int __vfprintf_chk(FILE *, int, const char *, va_list);
int __vprintf_chk(int, const char *, va_list);
char *__fgets_chk(char *, size_t, int, FILE *);
size_t __fread_chk(void *, size_t, size_t, size_t, FILE *);
size_t __fread_unlocked_chk(void *, size_t, size_t, size_t, FILE *);
ssize_t __getdelim(char **, size_t *, int, FILE *);
int __isoc99_fscanf(FILE *, const char *, ...);
int __isoc99_vfscanf(FILE *, const char *, va_list);

#define P(f) (*(__typeof__(&f) volatile *)&(__typeof__(&f)){ &f })
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "line %d: %s\n", __LINE__, #c); return 1; } } while (0)

static int my_vfprintf(int chk, FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = chk ? P(__vfprintf_chk)(f, 1, fmt, ap) : P(vfprintf)(f, fmt, ap);
	va_end(ap);
	return r;
}

static int my_vprintf(int chk, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = chk ? P(__vprintf_chk)(1, fmt, ap) : P(vprintf)(fmt, ap);
	va_end(ap);
	return r;
}

static int my_vfscanf(int c99, FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = c99 ? P(__isoc99_vfscanf)(f, fmt, ap) : P(vfscanf)(f, fmt, ap);
	va_end(ap);
	return r;
}

/* 10,000 lines of 11 B by fprintf; 5,000 read back by fgets, the rest by
 * getline, then getline at the end of the file (-1). */
static int lines(const char *path)
{
	FILE *f = P(fopen)(path, "w");
	CHECK(f);
	for (int i = 0; i < 10000; i++)
		CHECK(P(fprintf)(f, "line %05d\n", i) == 11);
	CHECK(P(fclose)(f) == 0);
	f = P(fopen)(path, "r");
	CHECK(f);
	char line[64], *lp = NULL;
	size_t n = 0;
	for (int i = 0; i < 5000; i++)
		CHECK(P(fgets)(line, sizeof(line), f) && strlen(line) == 11);
	for (int i = 0; i < 5000; i++)
		CHECK(P(getline)(&lp, &n, f) == 11);
	CHECK(P(getline)(&lp, &n, f) == -1);
	free(lp);
	CHECK(P(fclose)(f) == 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	if (strcmp(argv[2], "lines") == 0)
		return lines(argv[1]);
	static char buf[1024];
	memset(buf, 'z', sizeof(buf));
	const char *path = argv[1];

	/* ---- writes: 14 on the file (240 B), 7 on stdout (19 B) ---- */
	CHECK(P(fopen)("/nonexistent-iogram/x", "r") == NULL);   /* meta 1 */
	FILE *f = P(fopen)(path, "w");                           /* meta 2 */
	CHECK(f);
	CHECK(P(fwrite)(buf, 1, 100, f) == 100);
	CHECK(P(fwrite_unlocked)(buf, 10, 10, f) == 10);
	CHECK(P(fputc)('a', f) == 'a');
	CHECK(P(putc)('a', f) == 'a');
	CHECK(P(_IO_putc)('a', f) == 'a');
	CHECK(P(fputc_unlocked)('a', f) == 'a');
	CHECK(P(putc_unlocked)('a', f) == 'a');
	CHECK(P(putw)(0x61616161, f) == 0);
	CHECK(P(fputs)("hello\n", f) >= 0);
	CHECK(P(fputs_unlocked)("hello\n", f) >= 0);
	CHECK(P(fprintf)(f, "%d\n", 12345) == 6);
	CHECK(my_vfprintf(0, f, "%s\n", "abc") == 4);
	CHECK(P(__fprintf_chk)(f, 1, "%05d\n", 7) == 6);
	CHECK(my_vfprintf(1, f, "%s\n", "xy") == 3);
	CHECK(P(fflush)(f) == 0);                                /* meta 3 */
	CHECK(P(fflush_unlocked)(f) == 0);                       /* meta 4 */
	CHECK(P(ftell)(f) == 240);                               /* meta 5 */
	CHECK(P(ftello)(f) == 240);                              /* meta 6 */
	CHECK(P(fclose)(f) == 0);                                /* meta 7 */
	CHECK(P(printf)("%s\n", "p1") == 3);
	CHECK(my_vprintf(0, "%s\n", "p2") == 3);
	CHECK(P(__printf_chk)(1, "%s\n", "p3") == 3);
	CHECK(my_vprintf(1, "%s\n", "p4") == 3);
	CHECK(P(puts)("puts") >= 0);
	CHECK(P(putchar)('c') == 'c');
	CHECK(P(putchar_unlocked)('\n') == '\n');
	CHECK(P(fflush)(stdout) == 0);                           /* meta 8 */
	/* stderr is not storage here: never counted */
	P(fprintf)(stderr, "not counted\n");

	/* ---- reads: 28 (244 B) ---- */
	f = P(fopen64)(path, "r");                               /* meta 9 */
	CHECK(f);
	CHECK(P(fread)(buf, 1, 50, f) == 50);
	CHECK(P(fread_unlocked)(buf, 10, 5, f) == 5);
	CHECK(P(__fread_chk)(buf, sizeof(buf), 1, 50, f) == 50);
	CHECK(P(__fread_unlocked_chk)(buf, sizeof(buf), 25, 2, f) == 2);
	CHECK(P(fgetc)(f) == 'a');
	CHECK(P(getc)(f) == 'a');
	CHECK(P(_IO_getc)(f) == 'a');
	CHECK(P(fgetc_unlocked)(f) == 'a');
	CHECK(P(getc_unlocked)(f) == 'a');
	CHECK(P(getw)(f) == 0x61616161);
	char line[64], *lp = NULL;
	size_t n = 0;
	CHECK(P(fgets)(line, sizeof(line), f) && !strcmp(line, "hello\n"));
	CHECK(P(fgets_unlocked)(line, sizeof(line), f) && !strcmp(line, "hello\n"));
	CHECK(P(__fgets_chk)(line, sizeof(line), 64, f) && !strcmp(line, "12345\n"));
	CHECK(P(getline)(&lp, &n, f) == 4);
	CHECK(P(getdelim)(&lp, &n, '\n', f) == 6);
	CHECK(P(__getdelim)(&lp, &n, '\n', f) == 3);
	/* at the end: 4 ops of 0 B */
	CHECK(P(fgets)(line, sizeof(line), f) == NULL);
	CHECK(P(getline)(&lp, &n, f) == -1);
	CHECK(P(fgetc)(f) == EOF);
	CHECK(P(fread)(buf, 1, 10, f) == 0);
	free(lp);
	/* 4 scanf: 1 op, 0 B each */
	CHECK(P(fseek)(f, 209, SEEK_SET) == 0);                 /* meta 10 */
	char w[16];
	CHECK(P(fscanf)(f, "%15s", w) == 1 && !strcmp(w, "hello"));
	CHECK(P(__isoc99_fscanf)(f, "%15s", w) == 1 && !strcmp(w, "hello"));
	CHECK(my_vfscanf(0, f, "%15s", w) == 1 && !strcmp(w, "12345"));
	CHECK(my_vfscanf(1, f, "%15s", w) == 1 && !strcmp(w, "abc"));
	CHECK(P(fseeko)(f, 0, SEEK_SET) == 0);                  /* meta 11 */
	CHECK(P(fseeko64)(f, 10, SEEK_SET) == 0);               /* meta 12 */
	CHECK(P(ftell)(f) == 10);                               /* meta 13 */
	CHECK(P(ftello)(f) == 10);                              /* meta 14 */
	CHECK(P(ftello64)(f) == 10);                            /* meta 15 */
	fpos_t pos;
	fpos64_t pos64;
	CHECK(P(fgetpos)(f, &pos) == 0);                        /* meta 16 */
	CHECK(P(fsetpos)(f, &pos) == 0);                        /* meta 17 */
	CHECK(P(fgetpos64)(f, &pos64) == 0);                    /* meta 18 */
	CHECK(P(fsetpos64)(f, &pos64) == 0);                    /* meta 19 */
	P(rewind)(f);                                           /* meta 20 */
	CHECK(P(fclose)(f) == 0);                               /* meta 21 */
	CHECK(P(freopen)(path, "r", stdin) == stdin);           /* meta 22 */
	CHECK(P(getchar)() == 'z');
	CHECK(P(getchar_unlocked)() == 'z');
	CHECK(P(freopen64)(path, "r", stdin) == stdin);         /* meta 23 */
	CHECK(P(getchar)() == 'z');
	int fd = open(path, O_RDONLY);                          /* posix meta 1 */
	CHECK(fd >= 0);
	f = P(fdopen)(fd, "r");                                 /* meta 24 */
	CHECK(f && P(fgetc)(f) == 'z');
	CHECK(P(fclose)(f) == 0);                               /* meta 25 */

	/* ---- the program's own syscalls (posix.*) ---- */
	fd = open(argv[2], O_CREAT | O_TRUNC | O_RDWR, 0644);   /* posix meta 2 */
	CHECK(fd >= 0);
	for (int i = 0; i < 3; i++)
		CHECK(write(fd, buf, 1000) == 1000);
	CHECK(pread(fd, buf, 500, 0) == 500);
	CHECK(close(fd) == 0);                                  /* posix meta 3 */
	return 0;
}
