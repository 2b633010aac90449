// SPDX-License-Identifier: MIT
/*
 * xgpub_metrics.c: per-guest figures in Prometheus' text format, on an
 * address the administrator opts into (--metrics ADDR:PORT).
 *
 * The daemon's event loop takes one scrape at a time: accept, read the
 * request line (200 ms at most), answer `GET /metrics` with the figures
 * `xgpu list` shows (anything else: 404), close.  Writes are bounded in
 * time too, so a client that does not read costs the loop at most a
 * second.  Names follow Prometheus' rules: prefix xgpu_, base units
 * (seconds, bytes, ratios), _total for counters.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xgpub_guest.h"
#include "xgpub_metrics.h"
#include "xgpub_sched_glue.h"
#include "xgpu_addr.h"

#define READ_MS		200
#define WRITE_MS	1000

int xgpub_metrics_open(const char *spec)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct xgpu_addr a;
	int fd, one = 1;

	if (xgpu_addr_parse(spec, "", 0, &a))
		goto bad;
	if (!strcmp(a.host, "localhost"))
		strcpy(a.host, "127.0.0.1");
	if (inet_pton(AF_INET, a.host, &sa.sin_addr) != 1)
		goto bad;
	sa.sin_port = htons(a.portnum);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 8) < 0) {
		int e = errno;

		close(fd);
		fprintf(stderr, "xen-gpubackd: --metrics %s: %s\n", spec,
			strerror(e));
		return -e;
	}
	return fd;
bad:
	fprintf(stderr, "xen-gpubackd: --metrics: '%s' is not IPV4:PORT "
		"(e.g. 127.0.0.1:9400)\n", spec);
	return -EINVAL;
}

/* a label value: backslash, quote and newline escaped */
static void label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

struct family {
	const char *name, *type, *help;
};

static const struct family fams[] = {
	{ "xgpu_guest_channels", "gauge",
	  "Channels (guest processes) connected." },
	{ "xgpu_guest_weight", "gauge", "Scheduler weight." },
	{ "xgpu_guest_cap_ratio", "gauge",
	  "Cap as a fraction of one GPU (0: none)." },
	{ "xgpu_guest_credit_seconds", "gauge",
	  "Scheduler credit (negative: debt)." },
	{ "xgpu_guest_state", "gauge",
	  "Scheduler state, 1 for the current one." },
	{ "xgpu_guest_gpu_seconds_total", "counter",
	  "GPU time the guest's work took." },
	{ "xgpu_guest_share_period_ratio", "gauge",
	  "Share of the GPU in the last accounting period." },
	{ "xgpu_guest_share_minute_ratio", "gauge",
	  "Share of the GPU in the last minute." },
	{ "xgpu_guest_memory_used_bytes", "gauge",
	  "Device memory the guest holds." },
	{ "xgpu_guest_memory_quota_bytes", "gauge",
	  "Device memory quota (0: none)." },
	{ "xgpu_guest_calls_total", "counter", "Calls served." },
	{ "xgpu_guest_calls_per_second", "gauge",
	  "Calls served per second, last second." },
	{ "xgpu_guest_queue_depth", "gauge", "Requests waiting on its rings." },
};

static void sample(FILE *f, const char *name, const struct xgpub_guest *g,
		   const char *extra, double v)
{
	fprintf(f, "%s{kind=\"%s\",id=\"%u\",name=\"", name,
		g->kind == XGPUB_CHILD_XEN ? "xen" : "local", g->id);
	label(f, g->name);
	fprintf(f, "\",key=\"");
	label(f, g->key);
	fprintf(f, "\"%s} %.9g\n", extra ? extra : "", v);
}

/* every sample of family i, one per guest (and per state) */
static void family(FILE *f, unsigned int i)
{
	static const char *const states[] = { "under", "over", "capped",
					      "idle" };
	struct xgpub_guest_view v;
	struct xgpub_guest *g;

	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fams[i].name, fams[i].help,
		fams[i].name, fams[i].type);
	xgpub_guest_for_each(g) {
		const struct xgpub_guest_chans *ch = &g->ch;
		uint64_t gpu_ns;

		xgpub_sched_view(g, &v);
		gpu_ns = ch->gpu_ns > v.gpu_ns ? ch->gpu_ns : v.gpu_ns;
		switch (i) {
		case 0: sample(f, fams[i].name, g, NULL, ch->connected); break;
		case 1: sample(f, fams[i].name, g, NULL, g->weight); break;
		case 2: sample(f, fams[i].name, g, NULL, g->cap / 100.0); break;
		case 3:
			sample(f, fams[i].name, g, NULL, v.credit_ns / 1e9);
			break;
		case 4:
			for (unsigned int k = 0; k < 4; k++) {
				char extra[32];

				snprintf(extra, sizeof(extra),
					 ",state=\"%s\"", states[k]);
				sample(f, fams[i].name, g, extra,
				       !strcmp(v.state, states[k]));
			}
			break;
		case 5: sample(f, fams[i].name, g, NULL, gpu_ns / 1e9); break;
		case 6:
			sample(f, fams[i].name, g, NULL,
			       v.share_period / 100.0);
			break;
		case 7:
			sample(f, fams[i].name, g, NULL,
			       v.share_minute / 100.0);
			break;
		case 8: sample(f, fams[i].name, g, NULL, (double)ch->mem); break;
		case 9:
			sample(f, fams[i].name, g, NULL, (double)ch->quota);
			break;
		case 10:
			sample(f, fams[i].name, g, NULL, (double)ch->calls);
			break;
		case 11: sample(f, fams[i].name, g, NULL, ch->rate); break;
		case 12: sample(f, fams[i].name, g, NULL, ch->qdepth); break;
		}
	}
}

static char *body(size_t *len)
{
	uint64_t kicks = 0, runs = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	xgpub_guests_update();
	for (unsigned int i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
		family(f, i);
	xgpub_sched_counters(&kicks, &runs);
	fprintf(f, "# HELP xgpu_scheduler_kicks_total Wake-ups of the GPU "
		"scheduler by workers.\n# TYPE xgpu_scheduler_kicks_total "
		"counter\nxgpu_scheduler_kicks_total %llu\n"
		"# HELP xgpu_scheduler_runs_total Steps of the GPU scheduler.\n"
		"# TYPE xgpu_scheduler_runs_total counter\n"
		"xgpu_scheduler_runs_total %llu\n",
		(unsigned long long)kicks, (unsigned long long)runs);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* write all of p within WRITE_MS, or give up */
static void put(int fd, const char *p, size_t n)
{
	int waited = 0;

	while (n && waited < WRITE_MS) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		ssize_t w;

		if (poll(&pfd, 1, 50) <= 0) {
			waited += 50;
			continue;
		}
		w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return;
		if (w > 0) {
			p += w;
			n -= (size_t)w;
		}
	}
}

void xgpub_metrics_serve(int lfd)
{
	char req[1024], head[256];
	size_t got = 0, blen = 0;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	int waited = 0;
	char *b = NULL;

	if (fd < 0)
		return;
	/* the request line is all we need */
	while (got < sizeof(req) - 1 && !memchr(req, '\n', got) &&
	       waited < READ_MS) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, 20) <= 0) {
			waited += 20;
			continue;
		}
		r = recv(fd, req + got, sizeof(req) - 1 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	req[got] = 0;
	if (!strncmp(req, "GET /metrics ", 13) ||
	    !strncmp(req, "GET /metrics\r", 13))
		b = body(&blen);
	if (b) {
		snprintf(head, sizeof(head), "HTTP/1.0 200 OK\r\nContent-Type: "
			 "text/plain; version=0.0.4\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n", blen);
		put(fd, head, strlen(head));
		put(fd, b, blen);
		free(b);
	} else {
		static const char nf[] = "HTTP/1.0 404 Not Found\r\n"
			"Content-Type: text/plain\r\nContent-Length: 19\r\n"
			"Connection: close\r\n\r\nonly /metrics here\n";

		put(fd, nf, sizeof(nf) - 1);
	}
	close(fd);
}
