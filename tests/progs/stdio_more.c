/* stdio_more.c - test program: the stdio calls beyond stdio_all.c (dprintf,
 * scanf on stdin, the wide-character calls), the stream positions the
 * stdio layer samples, and the sync calls. Each mode does a known number
 * of calls of known sizes; check_stdio.c holds the expected counts.
 * usage: prog_stdio_more dprintf FILE      posix.*: 4 writes (19 B) on FILE
 *        prog_stdio_more scanf             stdin: "12 ab 34 cd 56 ef 78 gh\n"
 *        prog_stdio_more wide FILE         stdin: wide text, stdout: a file
 *        prog_stdio_more pos FILE          stdout: a file
 *        prog_stdio_more sync FILE DIR     DIR: a directory on storage
 *        prog_stdio_more chars FILE        10,000 fputc, then 10,000 fgetc, 4 KiB buffers
 * Every call goes through a volatile pointer, so none is inlined by the
 * headers; every failed check says its line on stderr (exit 1). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wchar.h>

int __dprintf_chk(int, int, const char *, ...);
int __vdprintf_chk(int, int, const char *, va_list);
int __isoc99_scanf(const char *, ...);
int __isoc99_vscanf(const char *, va_list);
wchar_t *__fgetws_chk(wchar_t *, size_t, int, FILE *);
wchar_t *__fgetws_unlocked_chk(wchar_t *, size_t, int, FILE *);
int __fwprintf_chk(FILE *, int, const wchar_t *, ...);
int __wprintf_chk(int, const wchar_t *, ...);
int __vfwprintf_chk(FILE *, int, const wchar_t *, va_list);
int __vwprintf_chk(int, const wchar_t *, va_list);
int __isoc99_fwscanf(FILE *, const wchar_t *, ...);
int __isoc99_wscanf(const wchar_t *, ...);
int __isoc99_vfwscanf(FILE *, const wchar_t *, va_list);
int __isoc99_vwscanf(const wchar_t *, va_list);
int __uflow(FILE *);

#define P(f) (*(__typeof__(&f) volatile *)&(__typeof__(&f)){ &f })
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "line %d: %s (errno %d)\n", __LINE__, #c, errno); exit(1); } } while (0)

/* ---- dprintf: posix.* writes on FILE, and one on /dev/null (other.*) ---- */

static int my_vdprintf(int chk, int fd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = chk ? P(__vdprintf_chk)(fd, 1, fmt, ap) : P(vdprintf)(fd, fmt, ap);
	va_end(ap);
	return r;
}

static int mode_dprintf(const char *path)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);   /* posix meta 1 */
	CHECK(fd >= 0);
	errno = 4242;
	CHECK(P(dprintf)(fd, "%d\n", 12345) == 6);                 /* at 0 */
	CHECK(errno == 4242);
	CHECK(my_vdprintf(0, fd, "%s\n", "abc") == 4);             /* at 6 */
	CHECK(P(__dprintf_chk)(fd, 1, "%05d\n", 7) == 6);          /* at 10 */
	CHECK(my_vdprintf(1, fd, "%s\n", "xy") == 3);              /* at 16 */
	CHECK(close(fd) == 0);                                      /* posix meta 2 */
	int nul = open("/dev/null", O_WRONLY);
	CHECK(nul >= 0);
	CHECK(P(dprintf)(nul, "%s", "seven!!") == 7);              /* other.write: 1, 7 B */
	CHECK(close(nul) == 0);
	/* a descriptor that is not open: libc's EBADF, counted nowhere */
	errno = 0;
	CHECK(P(dprintf)(500, "x") < 0 && errno == EBADF);
	return 0;
}

/* ---- scanf on stdin ---- */

static int my_vscanf(int c99, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = c99 ? P(__isoc99_vscanf)(fmt, ap) : P(vscanf)(fmt, ap);
	va_end(ap);
	return r;
}

static int mode_scanf(void)
{
	int n;
	char w[16];
	errno = 4242;
	CHECK(P(scanf)("%d %15s", &n, w) == 2 && n == 12 && !strcmp(w, "ab"));
	CHECK(errno == 4242);
	CHECK(my_vscanf(0, "%d %15s", &n, w) == 2 && n == 34 && !strcmp(w, "cd"));
	CHECK(P(__isoc99_scanf)("%d %15s", &n, w) == 2 && n == 56 && !strcmp(w, "ef"));
	CHECK(my_vscanf(1, "%d %15s", &n, w) == 2 && n == 78 && !strcmp(w, "gh"));
	CHECK(P(getchar)() == '\n');                                /* 1 B */
	return 0;
}

/* ---- wide characters: 10 writes on FILE, 6 on stdout, 12 reads from
 * FILE, 6 from stdin ---- */

static int my_vfwprintf(int chk, FILE *f, const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = chk ? P(__vfwprintf_chk)(f, 1, fmt, ap) : P(vfwprintf)(f, fmt, ap);
	va_end(ap);
	return r;
}

static int my_vwprintf(int chk, const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = chk ? P(__vwprintf_chk)(1, fmt, ap) : P(vwprintf)(fmt, ap);
	va_end(ap);
	return r;
}

static int my_vfwscanf(int c99, FILE *f, const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = c99 ? P(__isoc99_vfwscanf)(f, fmt, ap) : P(vfwscanf)(f, fmt, ap);
	va_end(ap);
	return r;
}

static int my_vwscanf(int c99, const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = c99 ? P(__isoc99_vwscanf)(fmt, ap) : P(vwscanf)(fmt, ap);
	va_end(ap);
	return r;
}

static int mode_wide(const char *path)
{
	FILE *f = P(fopen)(path, "w");                              /* meta 1 */
	CHECK(f);
	errno = 4242;
	CHECK(P(fputwc)(L'a', f) == L'a');
	CHECK(errno == 4242);
	CHECK(P(putwc)(L'b', f) == L'b');
	CHECK(P(fputwc_unlocked)(L'c', f) == L'c');
	CHECK(P(putwc_unlocked)(L'd', f) == L'd');
	CHECK(P(fputws)(L"ef\n", f) >= 0);
	CHECK(P(fputws_unlocked)(L"gh\n", f) >= 0);
	CHECK(P(fwprintf)(f, L"%d %ls\n", 12, L"ij") == 6);
	CHECK(my_vfwprintf(0, f, L"%d %ls\n", 34, L"kl") == 6);
	CHECK(P(__fwprintf_chk)(f, 1, L"%d %ls\n", 56, L"mn") == 6);
	CHECK(my_vfwprintf(1, f, L"%d %ls\n", 78, L"op") == 6);
	CHECK(P(fclose)(f) == 0);                                   /* meta 2 */
	CHECK(P(putwchar)(L'P') == L'P');
	CHECK(P(putwchar_unlocked)(L'\n') == L'\n');
	CHECK(P(wprintf)(L"%ls\n", L"w1") == 3);
	CHECK(my_vwprintf(0, L"%ls\n", L"w2") == 3);
	CHECK(P(__wprintf_chk)(1, L"%ls\n", L"w3") == 3);
	CHECK(my_vwprintf(1, L"%ls\n", L"w4") == 3);
	CHECK(P(fflush)(stdout) == 0);                              /* meta 3 */

	f = P(fopen)(path, "r");                                    /* meta 4 */
	CHECK(f);
	wchar_t w[16];
	int n;
	CHECK(P(fgetwc)(f) == L'a');
	CHECK(P(getwc)(f) == L'b');
	CHECK(P(fgetwc_unlocked)(f) == L'c');
	CHECK(P(getwc_unlocked)(f) == L'd');
	CHECK(P(fgetws)(w, 16, f) && !wcscmp(w, L"ef\n"));
	CHECK(P(fgetws_unlocked)(w, 16, f) && !wcscmp(w, L"gh\n"));
	CHECK(P(fwscanf)(f, L"%d %15ls", &n, w) == 2 && n == 12 && !wcscmp(w, L"ij"));
	CHECK(my_vfwscanf(0, f, L"%d %15ls", &n, w) == 2 && n == 34 && !wcscmp(w, L"kl"));
	CHECK(P(__isoc99_fwscanf)(f, L"%d %15ls", &n, w) == 2 && n == 56 && !wcscmp(w, L"mn"));
	CHECK(my_vfwscanf(1, f, L"%d %15ls", &n, w) == 2 && n == 78 && !wcscmp(w, L"op"));
	CHECK(P(__fgetws_chk)(w, 16, 16, f) && !wcscmp(w, L"\n"));
	CHECK(P(__fgetws_unlocked_chk)(w, 16, 16, f) == NULL);      /* at the end */
	CHECK(P(fclose)(f) == 0);                                   /* meta 5 */
	/* stdin: "x\ny\n1 a\n2 b\n3 c\n4 d\n" */
	CHECK(P(getwchar)() == L'x');
	CHECK(P(getwchar_unlocked)() == L'\n');
	CHECK(P(wscanf)(L"%ls %d %15ls", w, &n, w) == 3 && n == 1 && !wcscmp(w, L"a"));
	CHECK(my_vwscanf(0, L"%d %15ls", &n, w) == 2 && n == 2 && !wcscmp(w, L"b"));
	CHECK(P(__isoc99_wscanf)(L"%d %15ls", &n, w) == 2 && n == 3 && !wcscmp(w, L"c"));
	CHECK(my_vwscanf(1, L"%d %15ls", &n, w) == 2 && n == 4 && !wcscmp(w, L"d"));
	return 0;
}

/* ---- positions: see check_stdio.c test_positions for each sample ---- */

/* What glibc's inline getc_unlocked does (not a call any wrapper sees). */
static int inline_getc(FILE *f)
{
	return f->_IO_read_ptr < f->_IO_read_end ? *(unsigned char *)f->_IO_read_ptr++ : __uflow(f);
}

static int mode_pos(const char *path)
{
	static char z[20], b[64];
	memset(z, 'z', sizeof(z));
	FILE *f = P(fopen)(path, "w+");                             /* meta 1 */
	CHECK(f);
	CHECK(P(fprintf)(f, "%s", "0123456789") == 10);             /* W 0+10 consecutive */
	CHECK(P(fputs)("abcdefghij", f) >= 0);                      /* W 10+10 consecutive */
	CHECK(P(fwrite)(z, 1, 20, f) == 20);                        /* W 20+20 consecutive */
	CHECK(P(fseek)(f, 5, SEEK_SET) == 0);                       /* meta 2 */
	CHECK(P(fread)(b, 1, 10, f) == 10);                         /* R 5+10 sequential */
	CHECK(P(fgetc)(f) == 'f');                                  /* R 15+1 consecutive */
	CHECK(P(ungetc)('f', f) == 'f');                            /* back to 15 */
	CHECK(P(fgetc)(f) == 'f');                                  /* R 15+1 random */
	CHECK(P(fgets)(b, sizeof(b), f) && strlen(b) == 24);        /* R 16+24 consecutive */
	CHECK(P(fseek)(f, -10, SEEK_END) == 0);                     /* meta 3 */
	CHECK(P(fread)(b, 1, 4, f) == 4);                           /* R 30+4 random */
	CHECK(P(ftell)(f) == 34);                                   /* meta 4 */
	P(rewind)(f);                                               /* meta 5 */
	CHECK(P(fputc)('Q', f) == 'Q');                             /* W 0+1 random */
	CHECK(P(fclose)(f) == 0);                                   /* meta 6 */
	f = P(fopen)(path, "a");                                    /* meta 7 */
	CHECK(f);
	CHECK(P(fputs)("tail\n", f) >= 0);                          /* W, at the end: no sample */
	CHECK(P(fclose)(f) == 0);                                   /* meta 8 */
	f = P(fopen)(path, "r");                                    /* meta 9 */
	CHECK(f);
	CHECK(P(fread)(b, 1, 5, f) == 5 && !memcmp(b, "Q1234", 5)); /* R 0+5 consecutive */
	for (int i = 0; i < 3; i++)                                 /* unseen: 3 B */
		CHECK(inline_getc(f) == '5' + i);
	CHECK(P(fread)(b, 1, 5, f) == 5 && !memcmp(b, "89abc", 5)); /* R, position lost */
	CHECK(P(ftell)(f) == 13);                                   /* meta 10: known again */
	CHECK(P(fread)(b, 1, 2, f) == 2 && !memcmp(b, "de", 2));    /* R 13+2 sequential */
	char w[64];
	CHECK(P(fscanf)(f, "%63s", w) == 1);                        /* R 0 B, position lost */
	CHECK(P(fread)(b, 1, 1, f) == 1 && b[0] == '\n');           /* R, not known */
	CHECK(P(fclose)(f) == 0);                                   /* meta 11 */
	/* stdout, a new file: its position asked once (0) */
	CHECK(P(printf)("%s", "hello\n") == 6);                     /* W 0+6 consecutive */
	CHECK(P(fputs)("x\n", stdout) >= 0);                        /* W 6+2 consecutive */
	return 0;
}

/* ---- sync calls: 9 posix.sync.ops, 1 posix.errors ---- */

static int mode_sync(const char *path, const char *dir)
{
	static char buf[8192];
	memset(buf, 's', sizeof(buf));
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);     /* meta 1 */
	CHECK(fd >= 0);
	CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	errno = 4242;
	CHECK(fsync(fd) == 0);                                      /* sync 1 */
	CHECK(fdatasync(fd) == 0);                                  /* sync 2 */
	CHECK(P(sync_file_range)(fd, 0, 8192, SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) == 0); /* 3 */
	CHECK(errno == 4242);
	CHECK(P(syncfs)(fd) == 0);                                  /* sync 4 */
	P(sync)();                                                  /* sync 5 */
	int d = open(dir, O_RDONLY | O_DIRECTORY);                  /* meta 2 */
	CHECK(d >= 0);
	CHECK(P(syncfs)(d) == 0);                                   /* sync 6 */
	CHECK(close(d) == 0);                                       /* meta 3 */
	/* a failure on storage: posix.errors, libc's errno */
	errno = 0;
	CHECK(P(sync_file_range)(fd, -1, 10, SYNC_FILE_RANGE_WRITE) < 0 && errno == EINVAL);
	char *m = mmap(NULL, sizeof(buf), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	m[0] = 'M';
	errno = 4242;
	CHECK(P(msync)(m, sizeof(buf), MS_SYNC) == 0);              /* sync 7 */
	CHECK(errno == 4242);
	CHECK(P(msync)(m, 4096, MS_ASYNC) == 0);                    /* sync 8: the thread's mapping, cached */
	CHECK(P(msync)(m, 4096, MS_INVALIDATE) == 0);               /* no write-back asked: not counted */
	/* a mapping of /dev/shm at the same address: not storage */
	char shm[128];
	snprintf(shm, sizeof(shm), "/dev/shm/iogram-stdio-more-%d", (int)getpid());
	int s = open(shm, O_CREAT | O_TRUNC | O_RDWR, 0600);
	CHECK(s >= 0 && ftruncate(s, sizeof(buf)) == 0);
	CHECK(mmap(m, sizeof(buf), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, s, 0) == m);
	m[0] = 'S';
	CHECK(P(msync)(m, sizeof(buf), MS_SYNC) == 0);              /* not storage */
	CHECK(munmap(m, sizeof(buf)) == 0);
	CHECK(close(s) == 0 && unlink(shm) == 0);
	/* anonymous memory: not counted; an address not mapped: ENOMEM, nowhere */
	char *a = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(a != MAP_FAILED);
	CHECK(P(msync)(a, 4096, MS_SYNC) == 0);
	CHECK(munmap(a, 4096) == 0);
	errno = 0;
	CHECK(P(msync)(a, 4096, MS_SYNC) < 0 && errno == ENOMEM);
	/* a deleted file still mapped: storage */
	CHECK(unlink(path) == 0);                                   /* meta 4 */
	m = mmap(NULL, sizeof(buf), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	m[1] = 'D';
	CHECK(P(msync)(m, sizeof(buf), MS_SYNC) == 0);              /* sync 9 */
	CHECK(munmap(m, sizeof(buf)) == 0);
	/* what is not storage: nothing */
	int nul = open("/dev/null", O_WRONLY);
	CHECK(nul >= 0);
	CHECK(P(syncfs)(nul) == 0);
	CHECK(close(nul) == 0);
	CHECK(close(fd) == 0);                                      /* meta 5 */
	return 0;
}

/* One character a call through a 4 KiB buffer each way: all but a few
 * calls (the first, and each that fills or drains the buffer) stay in it. */
static int mode_chars(const char *path)
{
	static char wb[4096], rb[4096];
	FILE *f = fopen(path, "w");
	CHECK(f != NULL && setvbuf(f, wb, _IOFBF, sizeof(wb)) == 0);
	for (int i = 0; i < 10000; i++)
		CHECK(P(fputc)('a' + i % 26, f) == 'a' + i % 26);
	CHECK(fclose(f) == 0);
	f = fopen(path, "r");
	CHECK(f != NULL && setvbuf(f, rb, _IOFBF, sizeof(rb)) == 0);
	for (int i = 0; i < 10000; i++)
		CHECK(P(fgetc)(f) == 'a' + i % 26);
	CHECK(fclose(f) == 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *m = argv[1];
	if (!strcmp(m, "dprintf") && argc == 3)
		return mode_dprintf(argv[2]);
	if (!strcmp(m, "scanf"))
		return mode_scanf();
	if (!strcmp(m, "wide") && argc == 3)
		return mode_wide(argv[2]);
	if (!strcmp(m, "pos") && argc == 3)
		return mode_pos(argv[2]);
	if (!strcmp(m, "chars") && argc == 3)
		return mode_chars(argv[2]);
	if (!strcmp(m, "sync") && argc == 4)
		return mode_sync(argv[2], argv[3]);
	return 2;
}
