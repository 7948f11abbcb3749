/* config.c - the agent's settings: iog_init() over the environment over defaults. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

static struct {
	int set;
	int has_endpoint, has_output, has_node;
	char endpoint[1024];
	char output[4096];
	char node[256];
	uint32_t interval_ms;
	int disable;
} init;

static int copy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		return IOG_EINVAL;
	memcpy(dst, src, n + 1);
	return 0;
}

int iog_init(const iog_config *cfg)
{
	if (cfg == NULL)
		return IOG_EINVAL;
	if (iog__started())
		return IOG_ESTATE;
	memset(&init, 0, sizeof(init));
	if (cfg->endpoint != NULL) {
		if (copy(init.endpoint, sizeof(init.endpoint), cfg->endpoint) < 0)
			return IOG_EINVAL;
		init.has_endpoint = 1;
	}
	if (cfg->output != NULL) {
		if (copy(init.output, sizeof(init.output), cfg->output) < 0)
			return IOG_EINVAL;
		init.has_output = 1;
	}
	if (cfg->node != NULL) {
		if (copy(init.node, sizeof(init.node), cfg->node) < 0)
			return IOG_EINVAL;
		init.has_node = 1;
	}
	init.interval_ms = cfg->interval_ms;
	init.disable = cfg->disable != 0;
	init.set = 1;
	return 0;
}

static void endpoint_set(struct iog__cfg *c, const char *e)
{
	if (strcmp(e, "none") == 0 || copy(c->endpoint, sizeof(c->endpoint), e) < 0)
		c->endpoint[0] = '\0';
}

/* A whole decimal number in the environment variable name: 1 and *v, else 0. */
static int env_number(const char *name, unsigned long *v)
{
	const char *e = getenv(name);
	char *end;

	if (e == NULL || *e == '\0')
		return 0;
	*v = strtoul(e, &end, 10);
	return *end == '\0';
}

void iog__config_load(struct iog__cfg *c)
{
	unsigned long v;
	const char *e;

	memset(c, 0, sizeof(*c));
	endpoint_set(c, IOGP_DEFAULT_ENDPOINT);
	c->interval_ms = 1000;

	if ((e = getenv("IOGRAM_ENDPOINT")) != NULL)
		endpoint_set(c, e);
	if ((e = getenv("IOGRAM_OUTPUT")) != NULL && copy(c->output, sizeof(c->output), e) < 0)
		c->output[0] = '\0';
	if ((e = getenv("IOGRAM_NODE")) != NULL && copy(c->node, sizeof(c->node), e) < 0)
		c->node[0] = '\0';
	if (env_number("IOGRAM_INTERVAL_MS", &v) && v > 0)
		c->interval_ms = v > 3600000 ? 3600000 : (uint32_t)v;
	/* the user's kill switch wins over iog_init */
	if ((e = getenv("IOGRAM_DISABLE")) != NULL && *e && strcmp(e, "0") != 0)
		c->disable = 1;

	if (init.set) {
		if (init.has_endpoint)
			endpoint_set(c, init.endpoint);
		if (init.has_output)
			copy(c->output, sizeof(c->output), init.output);
		if (init.has_node)
			copy(c->node, sizeof(c->node), init.node);
		if (init.interval_ms)
			c->interval_ms = init.interval_ms > 3600000 ? 3600000 : init.interval_ms;
		if (init.disable)
			c->disable = 1;
	}
	if (c->interval_ms < 10)
		c->interval_ms = 10;
	c->exit_wait_ms = 2;
	if (env_number("IOGRAM_EXIT_WAIT_MS", &v))
		c->exit_wait_ms = v > 1000 ? 1000 : (uint32_t)v;
	c->max_files = 1024;
	if (env_number("IOGRAM_MAX_FILES", &v))
		c->max_files = v > IOG_FREC_MAX ? IOG_FREC_MAX : (uint32_t)v;
	c->file_budget = IOG_FREC_BUDGET;
	if (env_number("IOGRAM_FILE_BUDGET", &v))
		c->file_budget = v > IOG_FREC_MAX ? 0 : (uint32_t)v;   /* more than there are: all */
	c->dir_files = 16;
	if (env_number("IOGRAM_DIR_FILES", &v))
		c->dir_files = v > IOG_MAX_FILES ? IOG_MAX_FILES : (uint32_t)v;
	c->paths = IOG_PATHS_FULL;
	if ((e = getenv("IOGRAM_PATHS")) != NULL && *e)
		c->paths = !strcmp(e, "basename") ? IOG_PATHS_BASENAME :
		           !strcmp(e, "full") ? IOG_PATHS_FULL : IOG_PATHS_HASH;   /* unknown: the safest */
	if ((e = getenv("IOGRAM_SPOOL")) != NULL && *e) {
		if (copy(c->spool, sizeof(c->spool), e) < 0)
			c->spool[0] = '\0';
	} else if ((e = getenv("XDG_RUNTIME_DIR")) != NULL && *e && e[0] == '/') {
		snprintf(c->spool, sizeof(c->spool), "%s/iogram-spool", e);
	} else {
		snprintf(c->spool, sizeof(c->spool), "/tmp/iogram-spool-%u", (unsigned)getuid());
	}
}

int iog__config_expand(char *dst, size_t len, const char *tmpl, const char *host, long pid)
{
	size_t o = 0;

	if (len == 0)
		return IOG_EINVAL;
	for (const char *p = tmpl; *p; p++) {
		char num[24];
		const char *ins = NULL;
		size_t n;

		if (p[0] == '%' && p[1] == 'p') {
			snprintf(num, sizeof(num), "%ld", pid);
			ins = num;
		} else if (p[0] == '%' && p[1] == 'h') {
			ins = host;
		} else if (p[0] == '%' && p[1] == '%') {
			ins = "%";
		}
		if (ins != NULL) {
			n = strlen(ins);
			p++;
		} else {
			ins = p;
			n = 1;
		}
		if (o + n >= len)
			return IOG_EINVAL;
		memcpy(dst + o, ins, n);
		o += n;
	}
	dst[o] = '\0';
	return 0;
}

/* ---- what is storage (the interposer's descriptor classes) ------------------- */

/* Add the ':'-separated absolute directories of v as kind; trailing slashes
 * go ("/" matches everything), relative and empty entries are ignored, and
 * what does not fit. */
static void scope_add(iog__scope *s, const char *v, int kind)
{
	while (v && *v) {
		size_t n = strcspn(v, ":");
		size_t len = n;
		while (len > 0 && v[len - 1] == '/')
			len--;
		if (v[0] == '/' && s->n < IOG_SCOPE_DIRS && s->used + len + 1 <= sizeof(s->buf)) {
			memcpy(s->buf + s->used, v, len);
			s->buf[s->used + len] = '\0';
			s->dir[s->n++] = (struct iog__scope_dir){ s->buf + s->used, len, kind };
			s->used += len + 1;
			s->user += kind != IOG_DIR_SYSTEM;
		}
		v += n + (v[n] == ':');
	}
}

void iog__scope_load(iog__scope *s)
{
	const char *e;

	memset(s, 0, sizeof(*s));
	e = getenv("IOGRAM_ALL_FILES");
	s->all_files = e != NULL && *e && strcmp(e, "0") != 0;
	scope_add(s, "/proc:/sys:/dev", IOG_DIR_SYSTEM);
	scope_add(s, getenv("IOGRAM_EXCLUDE_DIRS"), IOG_DIR_EXCLUDE);
	scope_add(s, getenv("IOGRAM_INCLUDE_DIRS"), IOG_DIR_INCLUDE);
}

int iog__scope_match(const iog__scope *s, const char *path)
{
	size_t best = 0;
	int kind = IOG_DIR_NONE;

	for (uint32_t i = 0; i < s->n; i++) {
		const struct iog__scope_dir *d = &s->dir[i];
		if (strncmp(path, d->path, d->len) != 0 || (path[d->len] != '/' && path[d->len] != '\0'))
			continue;
		if (kind == IOG_DIR_NONE || d->len > best || (d->len == best && d->kind > kind)) {
			best = d->len;
			kind = d->kind;
		}
	}
	return kind;
}
