// SPDX-License-Identifier: MIT
/*
 * memstress: a self-check of the emulated machine, no xgpu involved.
 * Several threads copy buffers of varied sizes and alignments with
 * memcpy and check every byte, for SECONDS seconds.  Under QEMU TCG with
 * Xen, a platform that corrupts memory shows up here, and then the xgpu
 * results of the same run mean little.
 *
 *   memstress [SECONDS [THREADS]]      (defaults 3 and 2)
 *
 * Prints "memstress: N copies, M bad" and exits 1 if any copy was bad.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXLEN (9u << 20)

static double seconds;
static unsigned long copies, bad;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 7919u + 1;
	unsigned long n = 0, b = 0;
	double end = now() + seconds;

	while (now() < end) {
		size_t len = (size_t)rand_r(&seed) % MAXLEN + 1;
		size_t so = (size_t)rand_r(&seed) % 64;
		size_t dof = (size_t)rand_r(&seed) % 64;
		unsigned char *s = malloc(len + 64), *d = malloc(len + 64);
		unsigned char k = (unsigned char)rand_r(&seed);

		if (!s || !d) {
			free(s);
			free(d);
			continue;
		}
		for (size_t i = 0; i < len; i++)
			s[so + i] = (unsigned char)(i * 131 + (i >> 12) + k);
		memcpy(d + dof, s + so, len);
		if (memcmp(d + dof, s + so, len)) {
			size_t i = 0;

			while (d[dof + i] == s[so + i])
				i++;
			printf("memstress: bad copy of %zu bytes (src+%zu, "
			       "dst+%zu): first difference at byte %zu\n",
			       len, so, dof, i);
			b++;
		}
		n++;
		free(s);
		free(d);
	}
	pthread_mutex_lock(&mu);
	copies += n;
	bad += b;
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	int nt = argc > 2 ? atoi(argv[2]) : 2;
	pthread_t t[16];

	seconds = argc > 1 ? atof(argv[1]) : 3;
	if (nt < 1 || nt > 16)
		nt = 2;
	for (int i = 0; i < nt; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	printf("memstress: %lu copies, %lu bad\n", copies, bad);
	return bad ? 1 : 0;
}
