/* plot_frame.c - copying what the panels draw out of the stream model, and
 * the per-node rate series they share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iogp_layers.h"
#include "iogp_metrics.h"
#include "plot.h"

#define MAX_POINTS (1u << 20)
#define MAX_FILES 65536


static iogp_hist *hist_slot(iogplot_frame *f, int i)
{
	return i < 2 ? &f->size[i] : i < 5 ? &f->lat[i - 2] : &f->qd;
}

void iogplot_frame_init(iogplot_frame *f)
{
	memset(f, 0, sizeof(*f));
	iogp_bins nb;
	iogp_bins_native(&nb, IOGP_NATIVE_K_DEFAULT);
	for (int i = 0; i < 6; i++)
		iogp_hist_init(hist_slot(f, i), &nb);
	iogp_hist_init(&f->msgsize, &nb);
}

static void free_access(iogplot_frame *f)
{
	for (size_t i = 0; i < f->nfiles; i++) {
		free(f->files[i].path);
		free(f->files[i].source);
	}
	free(f->files);
	free(f->access);
	f->files = NULL;
	f->access = NULL;
	f->nfiles = f->naccess = 0;
}

void iogplot_frame_free(iogplot_frame *f)
{
	for (int i = 0; i < 6; i++)
		iogp_hist_free(hist_slot(f, i));
	free_access(f);
	iogplot_series_free(&f->rates);
	iogp_node_table_free(&f->nodes);
	iogplot_series_free(&f->lat_heat);
	pl_frame_phases_free(f);
	pl_frame_probes_free(f);
	pl_frame_matrix_free(f);
	iogp_hist_free(&f->msgsize);
}

static int in_sel(const iogp_source_info *si, const iogp_sel *sel)
{
	if (!sel || sel->kind == IOGP_SEL_ALL)
		return 1;
	if (sel->kind == IOGP_SEL_NODE)
		return sel->node && !strcmp(si->node ? si->node : "", sel->node);
	return si->id == sel->source;
}

int iogplot_frame_from_model(iogplot_frame *f, const iogp_model *m, const iogp_sel *sel)
{
	for (int i = 0; i < 6; i++) {
		iogp_hist *h = hist_slot(f, i);
		iogp_hist_free(h);
		const char *name = iogp_layer_slot_metric(f->layer, i);
		if (!name) {   /* none in this layer (stdio: meta latency, queue depth) */
			iogp_bins nb;
			iogp_bins_native(&nb, IOGP_NATIVE_K_DEFAULT);
			iogp_hist_init(h, &nb);
			continue;
		}
		int rc = iogp_model_hist(m, name, sel, h);
		if (rc == IOGP_ENOMEM)
			return rc;
	}
	free_access(f);
	f->nsources = f->nlive = 0;
	f->messages = f->gaps = f->drops = 0;
	double first = 0;
	int rc = 0;
	size_t ns = iogp_model_source_count(m);
	for (size_t i = 0; i < ns && !rc; i++) {
		iogp_source_info si;
		if (iogp_model_source(m, i, &si) < 0 || !in_sel(&si, sel))
			continue;
		f->nsources++;
		f->nlive += si.state == IOGP_SRC_LIVE;
		f->messages += si.messages;
		f->gaps += si.gaps;
		f->drops += si.dropped;
		if (si.first_wall_ns && (!first || (double)si.first_wall_ns / 1e9 < first))
			first = (double)si.first_wall_ns / 1e9;
	}
	if ((rc = pl_frame_access(f, m, sel)) < 0)   /* plot_access.c */
		return rc;
	iogp_model_stats st;
	iogp_model_get_stats(m, &st);
	f->bad = st.bad_messages;
	if (!sel || sel->kind == IOGP_SEL_ALL) {
		f->nnodes = iogp_model_node_count(m);
	} else {
		f->nnodes = f->nsources ? 1 : 0;
	}
	f->t_first = first;
	if ((rc = pl_frame_phases(f, m, sel)) < 0)
		return rc;
	if ((rc = iogplot_frame_mpi(f, m, sel, 0)) < 0)   /* plot_matrix.c */
		return rc;
	return pl_frame_probes(f, m, sel);   /* plot_probe.c */
}

int iogplot_frame_hist_since(iogplot_frame *f, const iogplot_frame *base)
{
	for (int i = 0; i < 6; i++) {
		iogp_hist d;
		const iogp_hist *b = i < 2 ? &base->size[i] : i < 5 ? &base->lat[i - 2] : &base->qd;
		iogp_hist *h = hist_slot(f, i);
		if (!iogp_bins_equal(&h->scheme, &b->scheme) || !b->total)
			continue;
		int rc = iogp_hist_diff(&d, h, b);
		if (rc < 0) {
			iogp_hist_free(&d);
			return rc;
		}
		iogp_hist_free(h);
		*h = d;
	}
	return 0;
}

/* ---- series ---- */

#define SERIES_MAX_CELLS (64u << 20)

void iogplot_series_free(iogplot_series *s)
{
	for (size_t i = 0; i < s->nnodes && s->nodes; i++)
		free(s->nodes[i]);
	free(s->nodes);
	for (int op = 0; op < 2; op++) {
		free(s->v[op]);
		free(s->min[op]);
		free(s->avg[op]);
		free(s->max[op]);
		free(s->total[op]);
	}
	free(s->rwmax);
	memset(s, 0, sizeof(*s));
}

int iogplot_series_alloc(iogplot_series *s, size_t nnodes, size_t nbins, double t0, double step)
{
	memset(s, 0, sizeof(*s));
	if (!(step > 0) || (nnodes && nbins > SERIES_MAX_CELLS / nnodes))
		return IOGP_ELIMIT;
	s->t0 = t0;
	s->step = step;
	s->nbins = nbins;
	s->nnodes = nnodes;
	s->nodes = calloc(nnodes ? nnodes : 1, sizeof(char *));
	int bad = !s->nodes;
	for (int op = 0; op < 2 && !bad; op++) {
		size_t cells = nnodes * nbins, nb = nbins ? nbins : 1;
		if (!cells)
			cells = 1;
		s->v[op] = malloc(cells * sizeof(float));
		s->min[op] = malloc(nb * sizeof(float));
		s->avg[op] = malloc(nb * sizeof(float));
		s->max[op] = malloc(nb * sizeof(float));
		s->total[op] = malloc(nb * sizeof(float));
		bad = !s->v[op] || !s->min[op] || !s->avg[op] || !s->max[op] || !s->total[op];
		for (size_t i = 0; !bad && i < cells; i++)
			s->v[op][i] = NAN;
		for (size_t i = 0; !bad && i < nb; i++)
			s->min[op][i] = s->avg[op][i] = s->max[op][i] = s->total[op][i] = NAN;
	}
	if (!bad) {
		size_t nb = nbins ? nbins : 1;
		s->rwmax = malloc(nb * sizeof(float));
		bad = !s->rwmax;
		for (size_t i = 0; !bad && i < nb; i++)
			s->rwmax[i] = NAN;
	}
	if (bad) {
		iogplot_series_free(s);
		return IOGP_ENOMEM;
	}
	return 0;
}

int iogplot_series_set_node(iogplot_series *s, size_t i, const char *name)
{
	if (i >= s->nnodes)
		return IOGP_EINVAL;
	char *d = strdup(name ? name : "");
	if (!d)
		return IOGP_ENOMEM;
	free(s->nodes[i]);
	s->nodes[i] = d;
	return 0;
}

void iogplot_series_stats(iogplot_series *s)
{
	for (size_t b = 0; b < s->nbins; b++) {
		float mx = NAN;
		for (size_t k = 0; k < s->nnodes; k++) {
			float r = s->v[0][k * s->nbins + b], w = s->v[1][k * s->nbins + b];
			if (isnan(r) && isnan(w))
				continue;
			float c = (isnan(r) ? 0 : r) + (isnan(w) ? 0 : w);
			if (isnan(mx) || c > mx)
				mx = c;
		}
		s->rwmax[b] = mx;
	}
	for (int op = 0; op < 2; op++)
		for (size_t b = 0; b < s->nbins; b++) {
			float mn = INFINITY, mx = -INFINITY;
			double sum = 0;
			size_t n = 0;
			for (size_t k = 0; k < s->nnodes; k++) {
				float x = s->v[op][k * s->nbins + b];
				if (isnan(x))
					continue;
				if (x < mn)
					mn = x;
				if (x > mx)
					mx = x;
				sum += x;
				n++;
			}
			s->min[op][b] = n ? mn : NAN;
			s->max[op][b] = n ? mx : NAN;
			s->avg[op][b] = n ? (float)(sum / (double)n) : NAN;
			s->total[op][b] = n ? (float)sum : NAN;
		}
}

int iogplot_series_copy(iogplot_series *dst, const iogplot_series *src)
{
	int rc = iogplot_series_alloc(dst, src->nnodes, src->nbins, src->t0, src->step);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < src->nnodes; i++)
		if ((rc = iogplot_series_set_node(dst, i, src->nodes[i])) < 0) {
			iogplot_series_free(dst);
			return rc;
		}
	size_t cells = src->nnodes * src->nbins, nb = src->nbins;
	for (int op = 0; op < 2; op++) {
		memcpy(dst->v[op], src->v[op], cells * sizeof(float));
		memcpy(dst->min[op], src->min[op], nb * sizeof(float));
		memcpy(dst->avg[op], src->avg[op], nb * sizeof(float));
		memcpy(dst->max[op], src->max[op], nb * sizeof(float));
		memcpy(dst->total[op], src->total[op], nb * sizeof(float));
	}
	memcpy(dst->rwmax, src->rwmax, nb * sizeof(float));
	return 0;
}

int iogplot_series_from_iogp(iogplot_series *s, const iogp_series *rd, const iogp_series *wr)
{
	const iogp_series *in[2] = { rd, wr };
	double step = rd && rd->nbins ? rd->step_s : wr ? wr->step_s : 1;
	double t0 = INFINITY, t1 = -INFINITY;
	for (int op = 0; op < 2; op++) {
		if (!in[op] || !in[op]->nbins)
			continue;
		if (fabs(in[op]->step_s - step) > 1e-9)
			return IOGP_EINVAL;
		double a = (double)in[op]->origin_ns / 1e9, b = a + step * (double)in[op]->nbins;
		t0 = fmin(t0, a);
		t1 = fmax(t1, b);
	}
	if (!(t1 > t0))
		return iogplot_series_alloc(s, 0, 0, 0, step);
	/* union of node names, order of first appearance */
	size_t nn = 0;
	const char **names = calloc((rd ? rd->nnodes : 0) + (wr ? wr->nnodes : 0) + 1, sizeof(char *));
	if (!names)
		return IOGP_ENOMEM;
	for (int op = 0; op < 2; op++)
		for (size_t i = 0; in[op] && i < in[op]->nnodes; i++) {
			size_t j = 0;
			while (j < nn && strcmp(names[j], in[op]->nodes[i]))
				j++;
			if (j == nn)
				names[nn++] = in[op]->nodes[i];
		}
	size_t nbins = (size_t)llround((t1 - t0) / step);
	int rc = iogplot_series_alloc(s, nn, nbins, t0, step);
	for (size_t i = 0; !rc && i < nn; i++)
		rc = iogplot_series_set_node(s, i, names[i]);
	for (int op = 0; op < 2 && !rc; op++) {
		if (!in[op])
			continue;
		size_t off = (size_t)llround(((double)in[op]->origin_ns / 1e9 - t0) / step);
		for (size_t i = 0; i < in[op]->nnodes; i++) {
			size_t k = 0;
			while (k < nn && strcmp(names[k], in[op]->nodes[i]))
				k++;
			for (size_t b = 0; b < in[op]->nbins && b + off < nbins; b++)
				if (in[op]->covered[i][b])
					s->v[op][k * nbins + b + off] = (float)in[op]->v[i][b];
		}
	}
	free(names);
	if (rc) {
		iogplot_series_free(s);
		return rc;
	}
	iogplot_series_stats(s);
	return 0;
}

void pl_series_window(const iogplot_series *s, double lo, double hi, double t_now,
                      size_t *b0, size_t *b1)
{
	*b0 = *b1 = 0;
	if (!s->nbins || !(s->step > 0))
		return;
	double a = floor((lo - s->t0) / s->step), b = ceil((hi - s->t0) / s->step);
	if (t_now > 0)
		b = fmin(b, ceil((t_now - s->t0) / s->step - 1e-9));
	if (a < 0)
		a = 0;
	if (b > (double)s->nbins)
		b = (double)s->nbins;
	if (b <= a)
		return;
	*b0 = (size_t)a;
	*b1 = (size_t)b;
}
